"""What an agent is given: the context block, working memory, procedural patterns, the
foundation.
"""
