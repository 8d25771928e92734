"""The vault's files: paths, the memory model, frontmatter read and edit, atomic writes,
the lock, ignore rules, and the checks on what may be stored.
"""
