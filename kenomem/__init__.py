"""kenomem: a long-term memory for LLM agents, kept as plain markdown files.

Importing the package is cheap on purpose: every command-line call pays for what this
module imports. `from kenomem import Vault` loads the Python API when it is asked for.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Not `typing.TYPE_CHECKING`: the change scanner (scan.py, in a bare interpreter) imports
# this package, and `typing` would cost it more than its own work at 1k files.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from kenomem.api import Vault
    from kenomem.errors import KenomemError

__all__ = ["KenomemError", "Vault", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "Vault":
        from kenomem.api import Vault

        return Vault
    if name == "KenomemError":
        from kenomem.errors import KenomemError

        return KenomemError
    raise AttributeError(f"module 'kenomem' has no attribute {name!r}")
