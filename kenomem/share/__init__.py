"""A vault shared through git: `kenomem sync` (commit, pull, merge, push: `sync.py`, git
run by `git.py`) and the merge driver git runs on memory files and buffer days so that
two machines never meet conflict markers (`merge.py` decides, `driver.py` writes,
`premerge.py` merges ahead in one process, `setup.py` installs the driver)."""
