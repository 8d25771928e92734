"""The options every command takes, defined once: the Typer app declares them from here,
the fast parser and the served client read which of them may come before the command.

Imports nothing: the served client (`served/client.py`) imports only built-in modules.
"""

# name -> (its option strings, its help). Each command takes all of them but `mcp` (no
# --json: stdout is the protocol) and `tour` (no --vault, no --json: it makes its own vault
# and prints a tour).
FLAGS = {
    "vault": (
        ("--vault",),
        "The vault folder (default: $KENOMEM_VAULT, else the vault this folder is in, else "
        "~/kenomem).",
    ),
    "json": (("--json",), "Print one JSON document on stdout."),
    "debug": (("--debug",), "Show the traceback of an error."),
    "quiet": (("--quiet", "-q"), "Only errors on stderr: no messages, warnings or progress."),
    "verbose": (
        ("--verbose", "-v"),
        "More on stderr: the vault, its index engine, the settings the environment set, what "
        "was rescanned, the time taken.",
    ),
}

# The flags the app itself also takes before the command (`kenomem -q recall x`), which
# then count for the command: option string -> name.
GLOBAL_FLAGS = {option: name for name in ("quiet", "verbose") for option in FLAGS[name][0]}
