"""`kenomem serve`: the MCP tools over streamable HTTP (`http.py`), open only to the
holders of the vault's tokens (`tokens.py`) once any exist."""
