"""What a tool error tells an MCP client when a call fails unexpectedly (a kenomem bug): the
cause, without the server's absolute paths (its home folder, the vault's place, the
code's); the server's log keeps them, with the traceback. Over HTTP the client may be
on another machine.

`Calls.call` is where every tool's exception becomes the error the client receives; the
failures are raised there as the file system or a bug would raise them.
"""

from __future__ import annotations

import errno
import logging
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from kenomem.api import Vault
from kenomem.mcp_server import Calls, without_paths


def failing(exc: BaseException) -> object:
    def action(_vault: Vault) -> object:
        raise exc

    return action


def test_an_unexpected_error_gives_its_cause_without_the_servers_paths(
    vault_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = Path.home()
    outside = home / ".config" / "kenomem" / "tokens" / "0a1b2c3d" / "tokens.json"
    inside = vault_dir / "semantic" / "deploys.md"
    cases = [
        (OSError(errno.ELOOP, "Too many levels of symbolic links", str(outside)), "levels"),
        (NotADirectoryError(errno.ENOTDIR, "Not a directory", str(inside)), "semantic/deploys.md"),
        (ValueError(f"cannot parse {inside} (read by /usr/lib/python3/x.py)"), "cannot parse"),
        (KeyError(str(home / "My Vault" / "a b.md")), "KeyError"),
    ]
    calls = Calls(Vault(vault_dir))
    for exc, cause in cases:
        with caplog.at_level(logging.ERROR, "kenomem.mcp"), pytest.raises(ToolError) as raised:
            calls.call(failing(exc), "recall")
        message = str(raised.value)
        assert message.startswith(f"unexpected {type(exc).__name__}"), message
        assert cause in message, message
        for path in (str(home), str(vault_dir), str(vault_dir.resolve()), "/usr/lib", "/tmp"):
            assert path not in message, message
    # The server's own log keeps every path, with the traceback.
    assert str(outside) in caplog.text and str(inside) in caplog.text
    assert "Traceback" in caplog.text


def test_without_paths_keeps_what_is_not_a_path(tmp_path: Path) -> None:
    root = tmp_path / "the vault"
    assert without_paths(f"'{root}/semantic/a b.md' is gone", root) == "'semantic/a b.md' is gone"
    assert without_paths(f"{root} moved", root) == ". moved"
    kept = "expected int/str at http://example.com/a/b, 3/4 done, see docs/agents.md"
    assert without_paths(kept, root) == kept
    assert without_paths("/etc/passwd and /root/x", root) == "<path> and <path>"


def test_invalid_arguments_name_each_one_without_the_validators_links() -> None:
    """The text of an argument the schema refuses: the argument, what it must be, a
    number given; never a text given, nor pydantic's name or links."""
    from typing import Annotated

    from pydantic import BaseModel, Field, ValidationError

    from kenomem.mcp_server import invalid_arguments

    class Arguments(BaseModel):
        importance: Annotated[int, Field(ge=1, le=10)]
        tags: list[Annotated[str, Field(max_length=3)]]
        code: Annotated[str, Field(pattern="^[a-z]+$")]

    secret = "hunter2-is-my-password"
    with pytest.raises(ValidationError) as refused:
        Arguments.model_validate({"importance": 11, "tags": ["ok", secret], "code": secret})
    text = invalid_arguments("remember", refused.value)
    assert text.startswith("invalid arguments for remember: argument importance must be at ")
    assert "most 10 (got 11)" in text
    assert "argument tags[1] must have at most 3 characters (got 22)" in text
    assert "argument code is refused: String should match pattern" in text
    assert "\nhint: " in text
    for never in (secret, "pydantic", "http", "Arguments"):
        assert never not in text, never
