"""kenomem.config: `kenomem.toml`, a default for every key."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

from kenomem.config import (
    CACHE_NAME,
    IndexSettings,
    MemorySettings,
    RecallSettings,
    RememberSettings,
    Settings,
    WriteSettings,
    load_settings,
    settings_from_dict,
)
from kenomem.errors import ConfigError
from tests.conftest import TEMPLATE

DEFAULT_SECTIONS = {
    "recall": RecallSettings(),
    "memory": MemorySettings(),
    "remember": RememberSettings(),
    "index": IndexSettings(),
    "write": WriteSettings(),
}


def _sections(settings: Settings) -> dict[str, object]:
    return {name: getattr(settings, name) for name in DEFAULT_SECTIONS}


def _load(tmp_path: Path, text: str) -> Settings:
    (tmp_path / "kenomem.toml").write_text(text, encoding="utf-8")
    return load_settings(tmp_path)


def test_documented_defaults() -> None:
    recall = RecallSettings()
    assert recall.limit == 10
    assert recall.candidates == 50
    assert recall.half_life_days == 30.0
    assert (recall.w_recency, recall.w_importance, recall.w_relevance) == (0.1, 0.5, 1.0)
    assert recall.touch is True
    assert MemorySettings().default_importance == 5
    assert MemorySettings().working_stale_days == 7.0
    assert RememberSettings().reinforce_similarity == 0.8
    assert IndexSettings().engine == "whoosh"
    assert WriteSettings().fsync is True


def test_no_file_gives_defaults(tmp_path: Path) -> None:
    settings = load_settings(tmp_path)
    assert _sections(settings) == DEFAULT_SECTIONS
    assert settings.warnings == ()


def test_template_file_gives_defaults() -> None:
    text = (TEMPLATE / "kenomem.toml").read_text(encoding="utf-8")
    assert "[recall]" in text and "# limit = 10" in text
    settings = load_settings(TEMPLATE)
    assert _sections(settings) == DEFAULT_SECTIONS
    assert settings.warnings == ()


def test_template_comments_show_the_defaults(tmp_path: Path) -> None:
    # Uncommenting every line of the template must give the defaults too.
    text = (TEMPLATE / "kenomem.toml").read_text(encoding="utf-8")
    lines = []
    for line in text.splitlines():
        candidate = line[2:] if line.startswith("# ") else line
        if "=" in candidate and not candidate.startswith(("#", "score")):
            lines.append(candidate)
        elif line.startswith("["):
            lines.append(line)
    uncommented = "\n".join(lines) + "\n"
    assert "limit = 10" in uncommented
    settings = _load(tmp_path, uncommented)
    assert _sections(settings) == DEFAULT_SECTIONS
    assert settings.warnings == ()


def test_values_override(tmp_path: Path) -> None:
    settings = _load(
        tmp_path,
        "[recall]\nlimit = 3\nhalf_life_days = 14.5\ntouch = false\n"
        "[memory]\ndefault_importance = 7\n"
        '[index]\nengine = "other"\n'
        "[write]\nfsync = false\nlock_timeout_seconds = 2.0\n",
    )
    assert settings.recall == RecallSettings(limit=3, half_life_days=14.5, touch=False)
    assert settings.memory == MemorySettings(default_importance=7)
    assert settings.index == IndexSettings(engine="other")
    assert settings.write == WriteSettings(fsync=False, lock_timeout_seconds=2.0)
    assert settings.remember == RememberSettings()
    assert settings.warnings == ()


def test_int_accepted_for_float(tmp_path: Path) -> None:
    settings = _load(tmp_path, "[recall]\nhalf_life_days = 10\nw_relevance = 2\n")
    assert settings.recall.half_life_days == 10.0
    assert isinstance(settings.recall.half_life_days, float)
    assert isinstance(settings.recall.w_relevance, float)


@pytest.mark.parametrize(
    "text",
    [
        "[recall]\nlimit = true\n",
        "[recall]\nlimit = 2.5\n",
        '[recall]\nlimit = "10"\n',
        "[recall]\nhalf_life_days = true\n",
        '[recall]\nhalf_life_days = "30"\n',
        "[recall]\ntouch = 1\n",
        '[recall]\ntouch = "yes"\n',
        "[index]\nengine = 5\n",
        "[memory]\ndefault_importance = [5]\n",
        "recall = 5\n",
    ],
)
def test_wrong_type_is_an_error(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    assert "kenomem.toml" in str(info.value)


def test_wrong_type_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, "[recall]\nlimit = true\n")
    assert "recall.limit" in str(info.value)
    assert info.value.exit_code == 1


def test_invalid_toml_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        _load(tmp_path, "[recall]\nlimit = \n")


def test_not_utf8_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "kenomem.toml").write_bytes(b"[recall]\nlimit = 3 # \xff\xfe\n")
    with pytest.raises(ConfigError):
        load_settings(tmp_path)


def test_unknown_section_and_key_are_warnings(tmp_path: Path) -> None:
    settings = _load(
        tmp_path, "[future]\nthing = 1\n[recall]\nlimit = 4\nbogus = 2\n[recall.sub]\nx = 1\n"
    )
    assert settings.recall.limit == 4
    assert len(settings.warnings) == 3
    joined = "\n".join(settings.warnings)
    assert "[future]" in joined
    assert "recall.bogus" in joined
    assert "recall.sub" in joined


def test_settings_from_dict() -> None:
    settings = settings_from_dict({"remember": {"reinforce_similarity": 1}})
    assert settings.remember.reinforce_similarity == 1.0
    assert settings.recall == RecallSettings()
    with pytest.raises(ConfigError):
        settings_from_dict({"write": {"fsync": "no"}})
    with pytest.raises(ConfigError):
        settings_from_dict({"memory": ["default_importance"]})


# -- the parsed file, kept under .kenomem/ -------------------------------------------------


def _aged(path: Path, seconds: float = 10.0) -> None:
    """Set the file's mtime back, past the window in which it is too fresh to cache."""
    st = path.stat()
    old = st.st_mtime_ns - int(seconds * 1e9)
    os.utime(path, ns=(old, old))


def _vault_with(tmp_path: Path, text: str) -> Path:
    (tmp_path / ".kenomem").mkdir(exist_ok=True)
    toml = tmp_path / "kenomem.toml"
    toml.write_text(text, encoding="utf-8")
    _aged(toml)
    return toml


def test_settings_are_cached_and_the_cache_gives_the_same(tmp_path: Path) -> None:
    _vault_with(tmp_path, "[recall]\nlimit = 7\n[index]\nengine = 'tantivy'\n")
    first = load_settings(tmp_path)
    assert (tmp_path / ".kenomem" / CACHE_NAME).is_file()
    second = load_settings(tmp_path)
    assert _sections(second) == _sections(first)
    assert second.recall.limit == 7 and second.index.engine == "tantivy"


def test_cache_is_not_used_once_the_file_changes(tmp_path: Path) -> None:
    toml = _vault_with(tmp_path, "[recall]\nlimit = 7\n")
    assert load_settings(tmp_path).recall.limit == 7
    toml.write_text("[recall]\nlimit = 8\n", encoding="utf-8")  # same size, new bytes
    assert load_settings(tmp_path).recall.limit == 8
    _aged(toml, 20.0)
    assert load_settings(tmp_path).recall.limit == 8


def test_cache_keeps_warnings_and_errors(tmp_path: Path) -> None:
    _vault_with(tmp_path, "[recall]\nbogus = 1\n")
    assert load_settings(tmp_path).warnings == load_settings(tmp_path).warnings != ()
    _vault_with(tmp_path, "[recall]\nlimit = 'x'\n")
    for _ in range(2):
        with pytest.raises(ConfigError, match=r"recall\.limit"):
            load_settings(tmp_path)


@pytest.mark.parametrize(
    "blob",
    [
        b"",
        b"not marshal at all",
        marshal.dumps((1, (1, 2, 3, 4), {"recall": {"limit": 99}})),  # another file's
        marshal.dumps("a string"),
        marshal.dumps((99, None, None)),
    ],
)
def test_a_corrupt_or_stale_cache_is_ignored_and_rewritten(tmp_path: Path, blob: bytes) -> None:
    _vault_with(tmp_path, "[recall]\nlimit = 7\n")
    cache = tmp_path / ".kenomem" / CACHE_NAME
    cache.write_bytes(blob)
    assert load_settings(tmp_path).recall.limit == 7
    assert cache.read_bytes() != blob
    assert load_settings(tmp_path).recall.limit == 7


def test_a_fresh_file_is_not_cached(tmp_path: Path) -> None:
    (tmp_path / ".kenomem").mkdir()
    (tmp_path / "kenomem.toml").write_text("[recall]\nlimit = 7\n", encoding="utf-8")
    assert load_settings(tmp_path).recall.limit == 7
    assert not (tmp_path / ".kenomem" / CACHE_NAME).exists()


def test_no_state_folder_no_cache(tmp_path: Path) -> None:
    toml = tmp_path / "kenomem.toml"
    toml.write_text("[recall]\nlimit = 7\n", encoding="utf-8")
    _aged(toml)
    assert load_settings(tmp_path).recall.limit == 7
    assert not (tmp_path / ".kenomem").exists()
