"""A vault shared through git: `kenomem sync` (commit, pull, merge, push: `sync.py`, git
run by `git.py`) and the merge driver git runs on memory files and buffer days so that
two machines never meet conflict markers (`merge.py` decides, `driver.py` writes,
`premerge.py` merges in one process what git leaves it, `setup.py` installs the
driver); what a remote may bring is checked before any merge (`incoming.py`), and a
merge a stopped sync left is finished by the next (`resume.py`)."""
