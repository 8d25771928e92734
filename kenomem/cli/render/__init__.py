"""How each command's result looks, one module per family of commands (as in
`cli/commands/` and `cli/handlers/`): the JSON document and the lines for people, both
handed to `cli/output.py`, which prints one of them.
"""
