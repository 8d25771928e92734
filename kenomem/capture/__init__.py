"""Getting memories in: remember (with its classifier), extract from an LLM's reply, edit
by hand.
"""
