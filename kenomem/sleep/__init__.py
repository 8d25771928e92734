"""The sleep cycle: the day's buffer turned into episodes, facts and patterns (heuristics
or an LLM), and the approval of learned patterns.
"""
