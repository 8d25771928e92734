"""Finding memories: the search, its scores and re-ranking, time in a query, expansion, and
the touch that strengthens what is found.
"""
