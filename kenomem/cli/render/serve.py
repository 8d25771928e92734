"""How the tokens of `kenomem serve` look: the token made (shown once), the list (never
a hash), the token revoked. The JSON document and the lines for people."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kenomem.api import to_jsonable
from kenomem.cli.output import Output, Segment, when

if TYPE_CHECKING:
    from kenomem.serve.tokens import CreatedToken, TokenInfo, TokenList


def token_create(out: Output, made: CreatedToken) -> None:
    doc = {"name": made.name, "scope": made.scope, "token": made.token}
    if out.json_mode:
        out.data(doc, [])
        return
    out.text(made.token)  # alone on stdout, for a script to take
    out.message(
        f"made {made.scope} token {made.name!r}: it is shown this once; only its hash is kept"
    )


def token_list(out: Output, listed: TokenList) -> None:
    doc = to_jsonable({"tokens": [t._asdict() for t in listed.tokens]})
    rows: list[list[Segment]] = [
        [
            (t.name, "bold"),
            (t.scope, "green" if t.scope == "read" else "yellow"),
            (when(t.created, out.rich), "dim"),
            (when(t.last_used, out.rich) if t.last_used else "never", "dim"),
        ]
        for t in listed.tokens
    ]
    footer = [] if rows else [[("no tokens: kenomem serve answers this machine only", "dim")]]
    out.table(doc, ["name", "scope", "created", "last used"], rows, footer)


def token_revoke(out: Output, info: TokenInfo) -> None:
    doc = to_jsonable({"revoked": info.name, "scope": info.scope})
    out.data(doc, [[("revoked ", "red"), (info.name, "bold")]])
