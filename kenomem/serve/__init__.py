"""`kenomem serve`: the MCP tools over streamable HTTP (`http.py`, which alone imports
the SDK), as decided from its options (`plan.py`), open only to the holders of the
vault's tokens (`tokens.py`) once any exist."""
