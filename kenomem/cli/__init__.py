"""The command line. A call goes through:

- `entry.py`, the console script: hands a read-only call to a watcher's command server
  (`served/`) when one runs, else parses it with `argspec.py` (the fast parser, from
  argspec.json, without Typer), else with the Typer app (`app.py`, declared in
  `commands/`, which also gives --help, completion and usage errors);
- `handlers/`: `run` converts the parameters (`kit.py`), builds the request of the
  operation from them by name, and the command's handler calls one method of the Python
  API (`kenomem/api.py`) with it;
- `render/`: the typed result as a JSON document and as lines for people, printed by
  `output.py`.

`flags.py` defines the options every command takes; `introspect.py` reads the Typer app
for the generators of argspec.json, the man page and the docs. Nothing but the entry
point imports this package.
"""
