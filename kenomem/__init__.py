"""kenomem: a long-term memory for LLM agents, kept as plain markdown files.

Importing the package is cheap on purpose: every command-line call pays for what this
module imports.
"""

__version__ = "0.1.0"
