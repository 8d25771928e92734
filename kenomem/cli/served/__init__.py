"""The watcher's command server: a call handed to a process that has already imported
kenomem.
"""
