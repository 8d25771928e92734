"""kenomem: a long-term memory for LLM agents, kept as plain markdown files.

Importing the package is cheap on purpose: every command-line call pays for what this
module imports. `from kenomem import Vault` loads the Python API when it is asked for.
"""

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
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
