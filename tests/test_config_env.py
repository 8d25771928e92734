"""Settings from the environment: `KENOMEM_<SECTION>_<KEY>` over `kenomem.toml`."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenomem.cli.served import client as forkclient
from kenomem.config import (
    OTHER_VARIABLES,
    Settings,
    accept_settings,
    apply_environment,
    env_variable,
    load_settings,
    parse_env_value,
    setting_variables,
)
from kenomem.errors import ConfigError
from tests.conftest import Cli
from tests.helpers import KENOMEM, env_for

GOOD = [
    ("5", int, 5),
    (" 12 ", int, 12),
    ("+3", int, 3),
    ("-1", int, -1),
    ("0.25", float, 0.25),
    ("7", float, 7.0),
    ("1e3", float, 1000.0),
    ("-0.5", float, -0.5),
    ("true", bool, True),
    ("TRUE", bool, True),
    ("1", bool, True),
    ("yes", bool, True),
    ("On", bool, True),
    ("false", bool, False),
    ("0", bool, False),
    ("no", bool, False),
    (" off ", bool, False),
    ("", str, ""),
    ("  spaced  ", str, "  spaced  "),
    ("tiktoken:cl100k_base", str, "tiktoken:cl100k_base"),
]


@pytest.mark.parametrize(("raw", "kind", "expected"), GOOD)
def test_values_parse_to_the_keys_type(raw: str, kind: type, expected: Any) -> None:
    value = parse_env_value(raw, kind, "KENOMEM_X_Y")
    assert value == expected and type(value) is kind


BAD = [
    ("", int),
    ("five", int),
    ("5.0", int),
    ("1_000", int),
    ("٣", int),  # an Arabic-Indic digit: isdigit, but not a number anyone means here
    ("true", int),
    ("0x10", int),
    ("", float),
    ("half", float),
    ("nan", float),
    ("inf", float),
    ("-Infinity", float),
    ("1_0.5", float),
    ("", bool),
    ("2", bool),
    ("yep", bool),
    ("truee", bool),
]


@pytest.mark.parametrize(("raw", "kind"), BAD)
def test_a_bad_value_is_an_error_naming_the_variable_and_the_type(raw: str, kind: type) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_env_value(raw, kind, "KENOMEM_RECALL_LIMIT")
    assert "KENOMEM_RECALL_LIMIT" in caught.value.message
    assert f"expected a{'n' if kind is int else ''} {kind.__name__}" in caught.value.message
    assert caught.value.hint and "KENOMEM_RECALL_LIMIT" in caught.value.hint


@given(st.integers())
def test_any_int_round_trips(number: int) -> None:
    assert parse_env_value(str(number), int, "V") == number


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_any_finite_float_round_trips(number: float) -> None:
    assert parse_env_value(repr(number), float, "V") == number


@given(st.text())
def test_any_text_is_a_str_as_it_is(text: str) -> None:
    assert parse_env_value(text, str, "V") == text


@given(st.text(), st.sampled_from([int, float, bool]))
def test_any_text_is_a_value_or_a_clean_error(text: str, kind: type) -> None:
    try:
        value = parse_env_value(text, kind, "KENOMEM_V")
    except ConfigError as exc:
        assert "KENOMEM_V" in exc.message
    else:
        assert type(value) is kind
        assert kind is not float or math.isfinite(value)


def test_every_key_has_a_variable_that_takes_its_default() -> None:
    defaults = Settings()
    variables = setting_variables()
    count = sum(len(record._fields) for record in defaults.sections().values())
    assert len(variables) == count  # no two keys share a variable
    environ = {}
    for name, (section, key) in variables.items():
        assert name == env_variable(section, key) == f"KENOMEM_{section}_{key}".upper()
        default = getattr(getattr(defaults, section), key)
        environ[name] = str(default).lower() if isinstance(default, bool) else str(default)
    settings = apply_environment(defaults, environ)
    assert settings.sections() == defaults.sections()
    assert settings.warnings == ()
    assert [s.variable for s in settings.from_env] == sorted(variables)


def test_the_environment_wins_over_the_file(tmp_path: Path) -> None:
    (tmp_path / "kenomem.toml").write_text(
        "[recall]\nlimit = 3\nhalf_life_days = 14.5\n[write]\nfsync = false\n", encoding="utf-8"
    )
    environ = {
        "KENOMEM_RECALL_LIMIT": "5",
        "KENOMEM_EMBEDDINGS_PROVIDER": "none",
        "KENOMEM_WRITE_FSYNC": "yes",
        "PATH": "/bin",
    }
    settings = load_settings(tmp_path, environ)
    assert settings.recall.limit == 5
    assert settings.recall.half_life_days == 14.5  # the file's, not set in the environment
    assert settings.write.fsync is True
    assert settings.embeddings.provider == "none"
    assert [(s.key, s.value) for s in settings.from_env] == [
        ("embeddings.provider", "none"),
        ("recall.limit", 5),
        ("write.fsync", True),
    ]
    assert load_settings(tmp_path, {}).recall.limit == 3


def test_no_file_and_the_environment(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, {"KENOMEM_CONTEXT_BUDGET": "800"})
    assert settings.context.budget == 800


def test_unknown_variables_are_warnings_but_kenomems_others_are_not(tmp_path: Path) -> None:
    environ = {name: "x" for name in OTHER_VARIABLES}
    environ.update(
        KENOMEM_RECALL_LIMITT="5",  # a slip
        KENOMEM_BOGUS_KEY="1",  # no such section
        KENOMEM_="1",
        KENOMEM_RECALL="1",
        kenomem_recall_limit="2",  # not kenomem's: variables are upper case
    )
    settings = load_settings(tmp_path, environ)
    assert settings.recall.limit == 10
    assert settings.warnings == tuple(
        f"environment variable {name} is not a kenomem setting; ignored"
        for name in ("KENOMEM_", "KENOMEM_BOGUS_KEY", "KENOMEM_RECALL", "KENOMEM_RECALL_LIMITT")
    )
    assert settings.from_env == ()


def test_the_served_client_knows_the_same_other_variables() -> None:
    assert forkclient.NOT_SETTINGS == OTHER_VARIABLES
    assert forkclient.settings_in({"KENOMEM_VAULT": "v", "KENOMEM_NO_SERVE": "1"}) == ""
    assert forkclient.settings_in({"KENOMEM_RECALL_LIMIT": "5"}) == "KENOMEM_RECALL_LIMIT"


def test_a_bad_value_in_the_environment_stops_loading(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"KENOMEM_PRUNE_MAX_ACTIVE='lots'.*an int"):
        load_settings(tmp_path, {"KENOMEM_PRUNE_MAX_ACTIVE": "lots"})


# -- trust: the environment is the user's; a file's commands only once accepted -----------


def test_a_command_from_the_environment_runs_though_the_file_is_not_trusted(
    tmp_path: Path,
) -> None:
    (tmp_path / "kenomem.toml").write_text('[consolidate]\nllm_command = "theirs"\n')
    settings = load_settings(tmp_path, {"KENOMEM_CONSOLIDATE_LLM_COMMAND": "mine"})
    assert settings.consolidate.llm_command == "mine"
    assert "not used" in settings.warnings[0]  # the file's command was still dropped
    alone = load_settings(tmp_path, {})
    assert alone.consolidate.llm_command == ""


def test_a_provider_from_the_environment_never_sends_to_a_server_others_named(
    tmp_path: Path,
) -> None:
    # A file not accepted names only a server: with the provider from the environment,
    # memories and the key would go there. The server is dropped.
    (tmp_path / "kenomem.toml").write_text(
        '[embeddings]\nbase_url = "http://theirs.invalid/v1"\n', encoding="utf-8"
    )
    environ = {"KENOMEM_EMBEDDINGS_PROVIDER": "openai", "KENOMEM_EMBEDDINGS_API_KEY_ENV": "K"}
    settings = load_settings(tmp_path, environ)
    assert settings.embeddings.provider == "openai"
    assert settings.embeddings.base_url == ""
    assert "embeddings.base_url" in settings.warnings[0]
    accept_settings(tmp_path)
    trusted = load_settings(tmp_path, environ)
    assert trusted.embeddings.base_url == "http://theirs.invalid/v1"
    both = load_settings(tmp_path, {**environ, "KENOMEM_EMBEDDINGS_BASE_URL": "http://mine/v1"})
    assert both.embeddings.base_url == "http://mine/v1"


# -- through the command line --------------------------------------------------------------

LLAMAS = [
    "The llama Pedro eats hay in the morning",
    "Our second llama was bought in Cusco in 2019",
    "A llama spits when it feels threatened",
    "The vet checks the llama herd every spring",
]


def test_verbose_says_which_keys_the_environment_set(
    cli: Cli, vault_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for text in LLAMAS:
        assert cli("remember", text).code == 0
    assert len(json.loads(cli("recall", "llama", "--json").out)["results"]) == 4
    monkeypatch.setenv("KENOMEM_RECALL_LIMIT", "1")
    monkeypatch.setenv("KENOMEM_WRITE_FSYNC", "off")
    monkeypatch.setenv("KENOMEM_RECALL_NOPE", "1")
    result = cli("recall", "llama", "--json", "--verbose")
    assert result.code == 0, result.err
    assert len(json.loads(result.out)["results"]) == 1
    assert "settings from the environment" in result.err
    assert "recall.limit = 1  (KENOMEM_RECALL_LIMIT)" in result.err
    assert "write.fsync = false  (KENOMEM_WRITE_FSYNC)" in result.err
    assert "KENOMEM_RECALL_NOPE is not a kenomem setting" in result.err
    quiet = cli("recall", "llama", "--json")
    assert "settings from the environment" not in quiet.err
    monkeypatch.setenv("KENOMEM_RECALL_LIMIT", "one")
    bad = cli("recall", "llama")
    assert bad.code == ConfigError.exit_code
    assert "KENOMEM_RECALL_LIMIT='one': expected an int" in bad.err
    assert "Traceback" not in bad.err


def test_a_real_process_reads_its_environment(vault_dir: Path) -> None:
    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        environ = env_for(vault_dir)
        environ.update(extra, KENOMEM_NO_SERVE="1")
        return subprocess.run(
            [KENOMEM, *args],
            env=environ,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    for text in LLAMAS:
        assert run("remember", text).returncode == 0
    found = run("recall", "llama", "--json")
    assert len(json.loads(found.stdout)["results"]) == 4
    limited = run("recall", "llama", "--json", KENOMEM_RECALL_LIMIT="2")
    assert limited.returncode == 0, limited.stderr
    assert len(json.loads(limited.stdout)["results"]) == 2
    bad = run("recall", "llama", KENOMEM_CONTEXT_BUDGET="2k")
    assert bad.returncode == 1 and bad.stdout == ""
    assert "error: environment variable KENOMEM_CONTEXT_BUDGET='2k'" in bad.stderr
    assert "Traceback" not in bad.stderr


names = st.text(st.characters(codec="ascii", exclude_characters="=\0"), min_size=1)


@given(st.dictionaries(names, st.text(), max_size=20))
def test_variables_that_are_not_kenomems_change_nothing(environ: dict[str, str]) -> None:
    environ = {k: v for k, v in environ.items() if not k.startswith("KENOMEM_")}
    settings = apply_environment(Settings(), environ)
    assert settings.sections() == Settings().sections()
    assert settings.warnings == () and settings.from_env == ()
