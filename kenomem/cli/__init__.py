"""The command line: the Typer app, the handlers, rendering, the fast argument parser and
the served call. Nothing but the entry point imports it.
"""
