"""Settings: `kenomem.toml` in the vault, with a default for every key, and
`KENOMEM_<SECTION>_<KEY>` environment variables over it.

Only start-up reads the file and the environment; the frozen `Settings` is then passed
down. Sections that a newer kenomem knows and this one does not are reported as
warnings, never as errors, so one vault can be shared by several versions.

The environment is the user's own: what it sets wins over the file and is trusted (a
command it names runs), while a command or server named by a file others can write is
dropped (`_commands_if_trusted`).
"""

from __future__ import annotations

import marshal
import math
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from kenomem.errors import ConfigError
from kenomem.files.paths import state_dir
from kenomem.files.scan import RACY_NS

CONFIG_NAME = "kenomem.toml"


class RecallSettings(NamedTuple):
    limit: int = 10
    # How many BM25F hits are re-ranked by recency and importance.
    candidates: int = 50
    half_life_days: float = 30.0
    w_recency: float = 0.1
    w_importance: float = 0.5
    w_relevance: float = 1.0
    title_boost: float = 3.0
    tags_boost: float = 2.0
    body_boost: float = 1.0
    touch: bool = True
    # A query naming a time ("last week", "in May 2023") adds this much relevance to the
    # memories whose `when` falls in it.
    time_boost: float = 0.5
    # A memory within this many minutes of a hit in the same session gains this share of
    # the hit's relevance (fading with the gap).
    neighbour_share: float = 0.5
    neighbour_minutes: float = 6.0
    # A query naming a participant adds this much relevance to the memories they took
    # part in.
    person_boost: float = 0.3
    # Query words that stand together in a memory, as in a phrase or within
    # `proximity_chars` characters, add up to this much relevance (off by default: it
    # measured -0.3 R@10 on LoCoMo).
    proximity_boost: float = 0.0
    proximity_chars: int = 40
    # Pseudo-relevance feedback: a query of at most `feedback_max_terms` words is also
    # searched for `feedback_words` words its best `feedback_docs` hits share, whose
    # scores count `feedback_weight` as much (0 words: off; off by default, since it
    # measured neutral on LoCoMo and costs a second search).
    feedback_words: int = 0
    feedback_docs: int = 3
    feedback_weight: float = 0.3
    feedback_max_terms: int = 4
    # Spreading activation: the best `spread_from` hits lift the memories that share a
    # concept with them (a tag, a link, a name) by up to `spread_share` of the best score.
    spread_share: float = 0.3
    spread_from: int = 5
    # Query expansion by the language model of `consolidate.llm_command` (or of
    # `expand_command`): off unless asked for; answers cached in .kenomem/expansions/.
    llm_expand: bool = False
    expand_command: str = ""
    expand_weight: float = 0.5
    expand_timeout_seconds: float = 20.0
    # Recall by meaning (when [embeddings] names a provider): the vector search brings its
    # own `semantic_candidates` beside the keyword search's, and relevance fuses both.
    semantic: bool = True
    semantic_candidates: int = 50
    # "blend": the keyword relevance and the cosine (counted from the vault's median
    # cosine with the query, or from `semantic_floor` if higher, up to the best) mixed at
    # `semantic_weight`; "rrf": reciprocal rank fusion, 1 / (rrf_k + rank) from each list.
    fusion: str = "blend"
    rrf_k: float = 60.0
    semantic_weight: float = 0.5
    semantic_floor: float = 0.0


class EmbeddingsSettings(NamedTuple):
    # "none" (keyword recall only), "fastembed" (in-process ONNX, kenomem[semantic]) or
    # "openai" (any OpenAI-compatible /v1/embeddings server: Ollama, llama.cpp, vLLM...).
    provider: str = "none"
    model: str = ""  # "" = the provider's default model
    base_url: str = ""  # openai: e.g. http://127.0.0.1:11434/v1
    api_key_env: str = ""  # the NAME of the variable that holds the key, never the key
    query_prefix: str = ""  # what models such as e5 and nomic expect before a query
    document_prefix: str = ""  # ... and before a document
    # openai: send `input_type: query|passage` (servers that add the prefixes themselves).
    input_type: bool = False
    timeout_seconds: float = 10.0
    batch_size: int = 32
    model_path: str = ""  # fastembed: a local copy of the model instead of the cache
    cache_dir: str = ""  # fastembed: where models are kept ("" = the user's cache)


class MemorySettings(NamedTuple):
    default_importance: int = 5
    working_stale_days: float = 7.0


class RememberSettings(NamedTuple):
    # Share of stemmed words two texts must have in common to be "the same fact".
    reinforce_similarity: float = 0.8
    # With an embeddings provider: the cosine at which a text says the same as a memory
    # in other words (and names no other number or name), and the one at which it may
    # contradict it. Measured with multilingual-e5-small (bench/near_facts.py); another
    # model may want others.
    paraphrase_cosine: float = 0.955
    related_cosine: float = 0.88


class ConsolidateSettings(NamedTuple):
    # A command that reads the prompt on stdin and answers JSON ("" = heuristics only).
    llm_command: str = ""
    llm_timeout_seconds: float = 120.0


class PruneSettings(NamedTuple):
    summarize_after_days: float = 30.0
    archive_after_days: float = 90.0
    retention_threshold: float = 0.25
    half_life_days: float = 30.0
    keep_importance: int = 7
    keep_reinforced: int = 3
    summarize_min_group: int = 3
    summarize_max_group: int = 20
    max_active: int = 50_000
    # With recall by meaning: untagged episodes of a month are grouped by what they are
    # about, each joining a group whose centre is this share of the way from the month's
    # median cosine to 1 (higher: tighter groups).
    cluster_similarity: float = 0.5


class ContextSettings(NamedTuple):
    # Tokens of the whole block. The fixed parts come first, each with a guaranteed share
    # of the budget: the foundation (whatever the other shares leave it), the procedural
    # preferences, the session's working memory and its latest turns. The retrieved
    # memories share what the fixed parts leave, in order, each up to its share of that
    # (plus what the one before left unused); what is still left goes back to a part cut
    # short, fixed parts first.
    budget: int = 2000
    preferences_share: float = 0.15
    working_share: float = 0.1
    chat_share: float = 0.4
    patterns_share: float = 0.2
    facts_share: float = 0.5
    recent_share: float = 0.3
    # A memory enters only if its relevance is at least this share of the best hit's.
    min_relevance: float = 0.3
    # Episodes of the last days shown when there is no query.
    recent_days: float = 3.0
    # Buffer days searched for the session's entries.
    session_days: float = 30.0
    # "estimate" (4 characters a token) or "tiktoken:<encoding>" when tiktoken is installed.
    tokenizer: str = "estimate"


class ResetSettings(NamedTuple):
    trash_days: float = 30.0


class IndexSettings(NamedTuple):
    engine: str = "whoosh"


class WriteSettings(NamedTuple):
    fsync: bool = True
    lock_timeout_seconds: float = 30.0


class Settings:
    """Every section of `kenomem.toml`; each is a record of its keys with their defaults."""

    __slots__ = (
        "consolidate",
        "context",
        "embeddings",
        "from_env",
        "index",
        "memory",
        "prune",
        "recall",
        "remember",
        "reset",
        "warnings",
        "write",
    )

    def __init__(
        self,
        recall: RecallSettings = RecallSettings(),  # noqa: B008 - immutable records
        memory: MemorySettings = MemorySettings(),  # noqa: B008
        remember: RememberSettings = RememberSettings(),  # noqa: B008
        index: IndexSettings = IndexSettings(),  # noqa: B008
        write: WriteSettings = WriteSettings(),  # noqa: B008
        consolidate: ConsolidateSettings = ConsolidateSettings(),  # noqa: B008
        prune: PruneSettings = PruneSettings(),  # noqa: B008
        reset: ResetSettings = ResetSettings(),  # noqa: B008
        context: ContextSettings = ContextSettings(),  # noqa: B008
        embeddings: EmbeddingsSettings = EmbeddingsSettings(),  # noqa: B008
        warnings: tuple[str, ...] = (),
        from_env: tuple[EnvSetting, ...] = (),
    ) -> None:
        self.recall = recall
        self.memory = memory
        self.remember = remember
        self.index = index
        self.write = write
        self.consolidate = consolidate
        self.prune = prune
        self.reset = reset
        self.context = context
        self.embeddings = embeddings
        self.warnings = warnings
        self.from_env = from_env  # the keys set by environment variables, in name order

    def sections(self) -> dict[str, Any]:
        """Each section's record, by name."""
        return {name: getattr(self, name) for name in _SECTIONS}

    def replaced(self, **changes: Any) -> Settings:
        """These settings with some sections (or `warnings`, `from_env`) replaced."""
        fields = {**self.sections(), "warnings": self.warnings, "from_env": self.from_env}
        return Settings(**{**fields, **changes})


class EnvSetting(NamedTuple):
    """One key set by an environment variable."""

    variable: str  # KENOMEM_RECALL_LIMIT
    key: str  # recall.limit
    value: Any  # parsed to the key's type


_SECTIONS = (
    "recall",
    "memory",
    "remember",
    "index",
    "write",
    "consolidate",
    "prune",
    "reset",
    "context",
    "embeddings",
)


def load_settings(vault_root: Path, environ: Mapping[str, str] | None = None) -> Settings:
    """The vault's `kenomem.toml`, then the `KENOMEM_<SECTION>_<KEY>` variables of
    `environ` (the process's environment unless given) over it."""
    settings = _load_file(vault_root)
    return apply_environment(settings, os.environ if environ is None else environ)


def _load_file(vault_root: Path) -> Settings:
    path = vault_root / CONFIG_NAME
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    cache = state_dir(vault_root) / CACHE_NAME
    data = _cached(cache, stamp)
    if data is None:
        data = _parse(path)
        if data is None:
            return Settings()
        _save_cache(cache, stamp, data)
    settings = settings_from_dict(data, source=str(path))
    if _runs_or_sends(settings):
        settings = _commands_if_trusted(settings, path, st, vault_root)
    return settings


def _runs_or_sends(settings: Settings) -> bool:
    """Whether the settings name a command to run, or a place to send memories to or to
    load a model from: what only the caller's own file may ask for."""
    em = settings.embeddings
    return bool(
        settings.consolidate.llm_command
        or settings.recall.expand_command
        or em.provider == "openai"
        or em.base_url
        or em.api_key_env
        or em.model_path
        or em.cache_dir
    )


def _commands_if_trusted(
    settings: Settings, path: Path, st: os.stat_result, vault_root: Path
) -> Settings:
    """The settings, without the commands they name unless the file is the caller's own.

    A command in `kenomem.toml` runs as whoever runs kenomem on the vault: a file another
    user owns or can change (it, or the folder it is in, is writable by group or others)
    would run that user's command with the caller's rights and keys. Such a command is
    dropped, with a warning that says how to trust it (the LLM steps fall back to their
    heuristics, as with no command). So are an embeddings server (the text of every
    memory would go to it, with the key of the variable it names) and a model path: recall
    is by keywords then."""
    if os.name != "posix":
        return settings
    me = os.geteuid()
    why = ""
    if st.st_uid != me:
        why = f"it belongs to another user (uid {st.st_uid})"
    elif st.st_mode & 0o022:
        why = "group or others can write it"
    else:
        try:
            folder = os.stat(vault_root)
        except OSError:
            folder = None
        if folder is None or folder.st_uid not in (me, 0) or folder.st_mode & 0o022:
            why = "group or others can replace it (its folder is theirs or writable by them)"
    if not why:
        return settings
    warning = (
        f"{path}: the LLM command, embeddings server or model path it sets is not used, "
        f"since {why}; to use it, make the file and the vault folder yours and writable "
        "by you alone (chmod go-w)"
    )
    em = settings.embeddings
    if em.provider == "openai":
        em = em._replace(provider="none")
    # The server too: a provider set in the environment must not send to the file's.
    em = em._replace(base_url="", api_key_env="", model_path="", cache_dir="")
    return settings.replaced(
        recall=settings.recall._replace(expand_command="", llm_expand=False),
        consolidate=settings.consolidate._replace(llm_command=""),
        embeddings=em,
        warnings=(*settings.warnings, warning),
    )


def _parse(path: Path) -> dict[str, Any] | None:
    """The file's TOML; None when it sets nothing."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text") from exc
    if not _sets_anything(text):
        return None  # the template's all-comments file: skip loading a TOML parser
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


# The parsed file is kept in `.kenomem/settings.bin` (marshal), under the file's size,
# mtime, ctime and inode: importing tomllib and parsing cost a cold command ~5 ms. Like
# everything under `.kenomem/` it is derived: one that cannot be read, or that is for
# other bytes, is ignored and written again. A file changed less than 2 s before it is
# parsed is not cached: a second change in the same clock tick could keep its stamp (the
# "racily clean" files of scan.RACY_NS).
CACHE_NAME = "settings.bin"
_CACHE_VERSION = 1


def _cached(cache: Path, stamp: tuple[int, ...]) -> dict[str, Any] | None:
    try:
        version, saved, data = marshal.loads(cache.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if version != _CACHE_VERSION or saved != stamp or not isinstance(data, dict):
        return None
    return data


def _save_cache(cache: Path, stamp: tuple[int, ...], data: dict[str, Any]) -> None:
    if time.time_ns() - stamp[1] < RACY_NS or not cache.parent.is_dir():
        return
    try:
        blob = marshal.dumps((_CACHE_VERSION, stamp, data))
    except ValueError:
        return  # a TOML date or time, which marshal cannot hold: no cache
    from kenomem.files.atomic import write_bytes  # only when writing: not on every start-up

    try:
        write_bytes(cache, blob, fsync=False)
    except OSError:
        pass


def _sets_anything(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "[")):
            return True
    return False


def settings_from_dict(data: dict[str, Any], source: str = CONFIG_NAME) -> Settings:
    warnings: list[str] = []
    sections: dict[str, Any] = {}
    defaults = Settings()
    for name, value in data.items():
        if name not in _SECTIONS:
            warnings.append(f"{source}: unknown section [{name}] ignored")
            continue
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: [{name}] must be a table")
        sections[name] = _build_section(getattr(defaults, name), name, value, source, warnings)
    return Settings(warnings=tuple(warnings), **sections)


def _build_section(
    default: Any, name: str, values: dict[str, Any], source: str, warnings: list[str]
) -> Any:
    known = default._fields
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            warnings.append(f"{source}: unknown key {name}.{key} ignored")
            continue
        changes[key] = _coerce(value, type(getattr(default, key)), f"{name}.{key}", source)
    return default._replace(**changes)


def _coerce(value: Any, kind: type, key: str, source: str) -> Any:
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    # bool is a subclass of int: `limit = true` must not pass as a number.
    if isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
        return value
    raise ConfigError(f"{source}: {key} must be {kind.__name__}, not {value!r}")


# -- the environment ------------------------------------------------------------------

ENV_PREFIX = "KENOMEM_"
# kenomem's other variables, which are not settings (no warning for them): the vault,
# running a call without the watcher's server, and those of the tests and benchmarks.
OTHER_VARIABLES = frozenset(
    {"KENOMEM_VAULT", "KENOMEM_NO_SERVE", "KENOMEM_TEST_ENGINE", "KENOMEM_LOCOMO"}
)
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def env_variable(section: str, key: str) -> str:
    """The variable that sets `section.key`: KENOMEM_RECALL_LIMIT for recall.limit."""
    return f"{ENV_PREFIX}{section.upper()}_{key.upper()}"


def setting_variables() -> dict[str, tuple[str, str]]:
    """Every variable that sets a key, with that key's section and name."""
    defaults = Settings()
    return {
        env_variable(section, key): (section, key)
        for section in _SECTIONS
        for key in getattr(defaults, section)._fields
    }


def apply_environment(settings: Settings, environ: Mapping[str, str]) -> Settings:
    """`settings` with every key that a `KENOMEM_<SECTION>_<KEY>` variable of `environ`
    sets replaced by its value (a `ConfigError` naming the variable when the value is
    not of the key's type); a warning for each other `KENOMEM_` variable that is not
    one of kenomem's."""
    names = sorted(
        name for name in environ if name.startswith(ENV_PREFIX) and name not in OTHER_VARIABLES
    )
    if not names:  # the common case ($KENOMEM_VAULT at most): nothing to build
        return settings
    known = setting_variables()
    changes: dict[str, dict[str, Any]] = {}
    applied: list[EnvSetting] = []
    warnings: list[str] = []
    for name in names:
        where = known.get(name)
        if where is None:
            warnings.append(f"environment variable {name} is not a kenomem setting; ignored")
            continue
        section, key = where
        kind = type(getattr(getattr(settings, section), key))
        value = parse_env_value(environ[name], kind, name)
        changes.setdefault(section, {})[key] = value
        applied.append(EnvSetting(name, f"{section}.{key}", value))
    sections = {
        section: getattr(settings, section)._replace(**values)
        for section, values in changes.items()
    }
    return settings.replaced(
        **sections,
        warnings=(*settings.warnings, *warnings),
        from_env=(*settings.from_env, *applied),
    )


def parse_env_value(raw: str, kind: type, variable: str) -> Any:
    """The text of a variable as a value of the key's type: an int in decimal, a float
    (finite), a bool as 1/0, true/false, yes/no or on/off (any case), a str as it is. The
    blanks around a number or a bool are ignored. Settings hold no lists."""
    if kind is str:
        return raw
    text = raw.strip()
    if kind is bool:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
    elif kind is int:
        if text.lstrip("+-").isdigit() and text.isascii():
            return int(text)
    elif kind is float:
        try:
            number = float(text) if text.isascii() and "_" not in text else None
        except ValueError:
            number = None
        if number is not None and math.isfinite(number):
            return number
    else:  # a key of a type this parser does not know: a bug, not the user's
        raise TypeError(f"no environment parser for {kind.__name__} ({variable})")
    expected = {
        bool: "a bool (true or false, 1 or 0, yes or no, on or off)",
        int: "an int (a whole number, such as 5)",
        float: "a float (a number, such as 0.5)",
    }[kind]
    raise ConfigError(
        f"environment variable {variable}={raw[:60]!r}: expected {expected}",
        hint=f"fix or unset {variable}",
    )
