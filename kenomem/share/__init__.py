"""A vault shared through git: `kenomem sync` (commit, pull, merge, push) and the merge
driver git runs on memory files and buffer days so that two machines never meet conflict
markers (`merge.py` decides, `driver.py` writes, `sync.py` drives git)."""
