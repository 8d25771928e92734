"""The command line as Typer declares it: each command's options, help and examples, one
module per family of commands, assembled into one app by `cli/app.py`. No logic: each
command hands its parameters to the handlers (`cli/handlers/`).
"""
