"""Forgetting without losing: archive, prune, restore, reset."""
