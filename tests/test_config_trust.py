"""kenomem.config: the keys that run a command or send memories elsewhere are used from a
vault's `kenomem.toml` only once this machine's user accepted their values."""

from __future__ import annotations

import json
import marshal
import os
from pathlib import Path

import pytest

from kenomem.config import (
    CACHE_NAME,
    accept_settings,
    load_settings,
    revoke_settings,
    trust_record,
)
from kenomem.errors import ConfigError

COMMANDS = '[recall]\nllm_expand = true\nexpand_command = "x"\n[consolidate]\nllm_command = "y"\n'
SERVER = (
    '[embeddings]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    'model = "m"\napi_key_env = "OPENAI_API_KEY"\n'
)


def _write(vault: Path, text: str) -> None:
    (vault / "kenomem.toml").write_text(text, encoding="utf-8")


def test_commands_not_accepted_are_dropped_with_one_warning_naming_them(tmp_path: Path) -> None:
    _write(tmp_path, COMMANDS)
    settings = load_settings(tmp_path)
    assert settings.consolidate.llm_command == ""
    assert settings.recall.expand_command == "" and not settings.recall.llm_expand
    (warning,) = settings.warnings
    for key in ("consolidate.llm_command", "recall.expand_command", "recall.llm_expand"):
        assert key in warning
    assert "kenomem trust" in warning and "not accepted" in warning


def test_accepted_commands_are_used(tmp_path: Path) -> None:
    _write(tmp_path, COMMANDS)
    report = accept_settings(tmp_path)
    assert report.accepted and set(report.asked) == {
        "consolidate.llm_command",
        "recall.expand_command",
        "recall.llm_expand",
    }
    settings = load_settings(tmp_path)
    assert (settings.consolidate.llm_command, settings.recall.expand_command) == ("y", "x")
    assert settings.recall.llm_expand and settings.warnings == ()


def test_the_record_is_outside_the_vault_and_private(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    _write(vault, COMMANDS)
    where = accept_settings(vault).where
    assert where == trust_record(vault) and where.is_file()
    assert not where.is_relative_to(vault)
    assert where.stat().st_mode & 0o077 == 0
    assert where.parent.stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(
    "change",
    [
        ('"y"', '"sh -c evil"'),  # the command
        ("llm_expand = true", "llm_expand = false"),  # any trusted key's value
    ],
)
def test_a_changed_value_is_not_used_until_accepted_again(
    tmp_path: Path, change: tuple[str, str]
) -> None:
    _write(tmp_path, COMMANDS)
    accept_settings(tmp_path)
    _write(tmp_path, COMMANDS.replace(*change))
    settings = load_settings(tmp_path)
    assert settings.consolidate.llm_command == "" and settings.recall.expand_command == ""
    (warning,) = settings.warnings
    assert "changed since you accepted them" in warning
    accept_settings(tmp_path)
    assert load_settings(tmp_path).recall.expand_command == "x"


def test_other_keys_change_freely(tmp_path: Path) -> None:
    _write(tmp_path, COMMANDS)
    accept_settings(tmp_path)
    _write(tmp_path, COMMANDS + "[memory]\ndefault_importance = 6\n")
    settings = load_settings(tmp_path)
    assert settings.consolidate.llm_command == "y" and settings.memory.default_importance == 6


def test_a_revoked_acceptance_drops_them_again(tmp_path: Path) -> None:
    _write(tmp_path, COMMANDS)
    accept_settings(tmp_path)
    assert revoke_settings(tmp_path).accepted
    assert load_settings(tmp_path).consolidate.llm_command == ""


def test_an_embeddings_server_not_accepted_is_not_used(tmp_path: Path) -> None:
    _write(tmp_path, SERVER)
    settings = load_settings(tmp_path)
    em = settings.embeddings
    assert (em.provider, em.base_url, em.api_key_env) == ("none", "", "")
    assert "embeddings.base_url" in settings.warnings[0]
    accept_settings(tmp_path)
    assert load_settings(tmp_path).embeddings.provider == "openai"


def test_a_provider_from_the_environment_never_sends_to_the_files_server(
    tmp_path: Path,
) -> None:
    """The user's own variable names the provider; the file, not accepted, names the
    server and the key: neither is used (the default server is)."""
    _write(tmp_path, SERVER)
    settings = load_settings(tmp_path, {"KENOMEM_EMBEDDINGS_PROVIDER": "openai"})
    assert settings.embeddings.provider == "openai"
    assert settings.embeddings.base_url == "" and settings.embeddings.api_key_env == ""


def test_the_environment_is_the_users_own(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, {"KENOMEM_CONSOLIDATE_LLM_COMMAND": "mine"})
    assert settings.consolidate.llm_command == "mine" and settings.warnings == ()


def test_a_fastembed_provider_alone_asks_for_nothing(tmp_path: Path) -> None:
    _write(tmp_path, '[embeddings]\nprovider = "fastembed"\n')
    settings = load_settings(tmp_path)
    assert settings.embeddings.provider == "fastembed" and settings.warnings == ()


def test_a_record_others_can_write_accepts_nothing(tmp_path: Path) -> None:
    _write(tmp_path, COMMANDS)
    where = accept_settings(tmp_path).where
    os.chmod(where, 0o666)
    assert load_settings(tmp_path).consolidate.llm_command == ""


def test_a_record_for_other_values_accepts_nothing(tmp_path: Path) -> None:
    """A record copied from elsewhere (or hand-written) holds the digest of what was
    accepted: one that does not match the file's values accepts nothing."""
    _write(tmp_path, COMMANDS)
    where = accept_settings(tmp_path).where
    record = json.loads(where.read_text())
    record["settings"] = "0" * 64
    where.write_text(json.dumps(record))
    assert load_settings(tmp_path).consolidate.llm_command == ""


def test_a_planted_settings_cache_cannot_bring_a_command(tmp_path: Path) -> None:
    """`.kenomem/settings.bin` is derived: one that someone else wrote (a clone of a vault
    whose remote force-added it) for the file's exact stamp still passes through the
    check of what the user accepted."""
    toml = tmp_path / "kenomem.toml"
    _write(tmp_path, "[recall]\nlimit = 7\n")
    old = toml.stat().st_mtime_ns - 10**10
    os.utime(toml, ns=(old, old))
    st = toml.stat()
    (tmp_path / ".kenomem").mkdir()
    stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    planted = {"consolidate": {"llm_command": "evil"}, "recall": {"limit": 7}}
    (tmp_path / ".kenomem" / CACHE_NAME).write_bytes(marshal.dumps((1, stamp, planted)))
    settings = load_settings(tmp_path)
    assert settings.consolidate.llm_command == ""


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("KENOMEM_MEMORY_DEFAULT_IMPORTANCE", "11"),
        ("KENOMEM_MEMORY_DEFAULT_IMPORTANCE", "-3"),
        ("KENOMEM_EMBEDDINGS_TIMEOUT_SECONDS", "0"),
        ("KENOMEM_RECALL_LIMIT", "0"),
        ("KENOMEM_CONTEXT_CHAT_SHARE", "1.5"),
    ],
)
def test_values_out_of_their_limits_are_refused_from_the_environment(
    tmp_path: Path, variable: str, value: str
) -> None:
    with pytest.raises(ConfigError, match=variable):
        load_settings(tmp_path, {variable: value})


def test_values_out_of_their_limits_are_refused_from_the_file(tmp_path: Path) -> None:
    _write(tmp_path, "[memory]\ndefault_importance = 11\n")
    with pytest.raises(ConfigError, match=r"memory\.default_importance = 11: must be from 1 to 10"):
        load_settings(tmp_path)
