"""How the results of the everyday commands look: the JSON document and the lines for
people.

Every function takes the typed result a core function returned and hands both forms to
`Output`, which decides which one to print.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from kenomem.api import to_jsonable
from kenomem.cli.output import Line, Output, Segment, when
from kenomem.files.plural import counted

if TYPE_CHECKING:  # only for annotations: a command imports just the core it runs
    from kenomem.capture.edit import EditResult
    from kenomem.capture.remember import RememberResult
    from kenomem.forget.archive import ForgetResult
    from kenomem.recall.search import RecallResult
    from kenomem.vault.init import InitResult
    from kenomem.vault.reindex import ReindexResult
    from kenomem.vault.views import ListResult, ShowResult, StatsResult

TYPE_STYLE = {
    "semantic": "cyan",
    "episodic": "magenta",
    "procedural": "green",
    "working": "yellow",
    "buffer": "blue",
}


def recall(out: Output, result: RecallResult, explain: bool = False, archived: int = 0) -> None:
    """`archived`: how many archived or superseded memories match, when nothing else
    did (said on stderr, with the command that finds them)."""
    for warning in result.warnings:
        out.warn(warning)
    doc = to_jsonable(
        {
            "query": result.query,
            "results": result.results,
            "terms": result.terms,
            "weights": result.weights,
            "candidates": result.candidates,
            "time": result.time,
            "period": result.period.described() if result.period is not None else None,
            "confidence": result.confidence,
            "cut": result.cut,
        }
    )
    if result.period is not None and not out.json_mode:
        out.message(_period_line(result))
    lines: list[Line] = []
    w = result.weights
    for n, item in enumerate(result.results, 1):
        lines.append(
            [
                (f"{n:>2}. ", "dim"),
                (item.title, "bold"),
                ("  ", ""),
                (item.type, TYPE_STYLE.get(item.type, "")),
                ("  ", ""),
                (item.id, "dim"),
                (f"  {item.score:.3f}", "dim"),
            ]
        )
        if item.snippet and item.snippet != item.title:
            lines.append([("    " + item.snippet, "")])
        if item.day is not None:  # a buffer entry: when it was logged, by whom, where
            said = " ".join(
                x
                for x in (item.day, item.time, item.who, f"@{item.session}" * bool(item.session))
                if x
            )
            lines.append([(f"    logged {said}", "dim")])
        if explain:
            parts = [f"bm25 {item.bm25:.2f}"]
            if item.spread > 0:
                parts.append(f"spread {item.spread:.2f} via {item.via}")
            parts += [f"{name} +{value:.2f}" for name, value in item.lifts.items()]
            if item.semantic is not None:
                parts.append(f"semantic {item.semantic:.3f}")
            parts.append(f"used {counted(item.access_count, 'time')}")
            parts.append(f"accessed {when(item.last_accessed, out.rich)}")
            lines.append(
                [
                    (
                        f"    recency {item.recency:.3f} x {w.recency:g} + importance "
                        f"{item.importance:.3f} x {w.importance:g} + relevance {item.relevance:.3f}"
                        f" x {w.relevance:g} + use {item.use:.3f} x {w.use:g} = {item.score:.3f}"
                        f"   ({', '.join(parts)}, {item.path})",
                        "dim",
                    )
                ]
            )
    if explain and result.time is not None:
        cue = result.time
        lines.append(
            [(f"    time named: {cue.said!r}, {cue.since:%Y-%m-%d} to {cue.until:%Y-%m-%d}", "dim")]
        )
    if not result.results:
        out.message(f"no memory matches {result.query!r}")
        if archived:
            match = "matches" if archived == 1 else "match"
            out.message(
                f"{counted(archived, 'archived memory')} {match}: "
                f"kenomem recall {shlex.quote(result.query)} --archive"
            )
    elif not out.json_mode:
        out.message(f"confidence: {result.confidence}")
    if result.cut and not out.json_mode:
        out.message(
            f"{counted(result.cut, 'result')} left out: by meaning alone, no nearer than most"
        )
    out.data(doc, lines)


def _period_line(result: RecallResult) -> str:
    """One line for people (on stderr): the period understood and how it was used."""
    period = result.period
    assert period is not None
    start, end = period.since, period.until
    span = (
        f"{start:%Y-%m-%d %H:%M} to {end:%H:%M}"
        if start.date() == end.date()
        else f"{start:%Y-%m-%d} to {end:%Y-%m-%d}"
    )
    if period.alone:
        how = "what happened then, most important first"
    elif period.kept:
        how = "only what happened then"
    else:
        how = "what happened then first"
    return f"period: {period.said!r}, {span} ({how})"


def remember(out: Output, result: RememberResult) -> None:
    doc = to_jsonable(result)
    verb = {
        "created": "remembered",
        "reinforced": "reinforced",
        "superseded": "remembered",
        "updated": "updated",
    }[result.action]
    line: Line = [(f"{verb} ", "green"), (result.id, "bold"), (f"  {result.type}", "")]
    if result.classified:
        line.append((" (classified from the text)", "dim"))
    lines = [line, [(f"  {result.path}", "dim")]]
    if result.action == "reinforced":
        lines.append([(f"  already known: reinforced {counted(result.reinforced, 'time')}", "")])
    for old in result.superseded:
        why = f" ({old.why})" if old.why else ""
        lines.append([(f"  supersedes {old.id} ", ""), (repr(old.title), ""), (why, "dim")])
    if result.supersedes and not result.superseded:
        lines.append([(f"  supersedes {result.supersedes}", "")])
    if result.pinned_by:
        lines.append([(f"  pinned: the text says {result.pinned_by!r}", "")])
    if result.when is not None:
        lines.append([(f"  when {result.when.isoformat().replace('+00:00', 'Z')}", "")])
    if result.trigger is not None:
        lines.append([(f"  trigger {result.trigger!r}: an active pattern", "")])
    for near in result.may_contradict:
        why = f" ({near.why})" if near.why else ""
        lines.append(
            [(f"  may contradict {near.id} ", "yellow"), (repr(near.title), ""), (why, "dim")]
        )
        lines.append([(f"    if it replaces it: {near.command}", "dim")])
    out.data(doc, lines)


def show(out: Output, result: ShowResult) -> None:
    mem = result.memory
    doc = to_jsonable(mem)
    doc.pop("has_frontmatter", None)
    doc.pop("has_id", None)
    lines: list[Line] = [[(mem.title, "bold")]]
    fields = [
        ("id", mem.id),
        ("type", mem.type),
        ("path", mem.path),
        ("status", mem.status),
        ("tags", ", ".join(mem.tags)),
        ("scope", mem.scope),
        ("importance", str(mem.importance)),
        ("pinned", "yes" if mem.pinned else ""),
        ("created", when(mem.created, out.rich)),
        ("last accessed", when(mem.last_accessed, out.rich)),
        ("accessed", counted(mem.access_count, "time")),
        ("reinforced", str(mem.reinforced or "")),
        ("when", when(mem.when, out.rich)),
        ("session", mem.session or ""),
        ("supersedes", mem.supersedes or ""),
        ("superseded by", mem.superseded_by or ""),
    ]
    lines.extend([(f"{name:>14}  ", "dim"), (value, "")] for name, value in fields if value)
    lines.append([("", "")])
    lines.extend([(text, "")] for text in mem.body.rstrip("\n").splitlines())
    out.data(doc, lines)


def list_(out: Output, result: ListResult) -> None:
    """The date shown is the one --since and --until filter on: a memory's `when` (an
    episode's day), else when it was created (`when` is null in the JSON then)."""
    doc = to_jsonable({"memories": result.memories, "total": result.total})
    rows: list[list[Segment]] = [
        [
            (item.id, "dim"),
            (item.type, TYPE_STYLE.get(item.type, "")),
            (when(item.when or item.created, out.rich), ""),
            (item.title, "bold"),
            (", ".join(item.tags), "dim"),
        ]
        for item in result.memories
    ]
    footer: list[Line] = []
    if result.total > len(result.memories):
        footer.append([(f"{result.total - len(result.memories)} more not shown (--limit)", "dim")])
    if not result.memories:
        out.message("no memories match")
    out.table(doc, ["id", "type", "when", "title", "tags"], rows, footer)


def forget(out: Output, result: ForgetResult) -> None:
    doc = to_jsonable(result)
    if result.action == "deleted":
        lines: list[Line] = [
            [("deleted ", "red"), (result.id, "bold"), (f"  ({result.old_path})", "dim")]
        ]
    else:
        lines = [
            [("archived ", "yellow"), (result.id, "bold"), (f"  -> {result.path}", "dim")],
            [("  kenomem recall --archive finds it", "dim")],
        ]
    out.data(doc, lines)


def edit(out: Output, result: EditResult) -> None:
    doc = {"id": result.id, "path": result.path, "changed": result.changed}
    text = "saved and reindexed" if result.changed else "unchanged"
    out.data(doc, [[(f"{text} ", ""), (result.id, "bold"), (f"  {result.path}", "dim")]])


def reindex(out: Output, result: ReindexResult) -> None:
    doc = to_jsonable(result)
    lines: list[Line] = [
        [
            (
                f"indexed {counted(result.indexed, 'memory')} from "
                f"{counted(result.files, 'file')} in "
                f"{result.seconds:.2f}s ({result.per_second:,.0f}/s)",
                "",
            )
        ]
    ]
    if result.embedded:
        rate = result.embedded / result.embed_seconds if result.embed_seconds > 0 else 0.0
        lines.append(
            [(f"embedded {result.embedded} in {result.embed_seconds:.2f}s ({rate:,.0f}/s)", "")]
        )
    if result.without_vector:
        lines.append([(f"without a vector: {counted(result.without_vector, 'memory')}", "")])
    out.data(doc, lines)


def stats(out: Output, result: StatsResult) -> None:
    doc = to_jsonable(result)
    lines: list[Line] = [
        [("vault    ", "dim"), (result.vault, "bold")],
        [
            ("memories ", "dim"),
            (str(result.memories), "bold"),
            (f"  ({counted(result.files, 'file')}, {result.pinned} pinned)", "dim"),
        ],
    ]
    lines.append([("types    ", "dim"), (_counts(result.by_type), "")])
    lines.append([("status   ", "dim"), (_counts(result.by_status), "")])
    if result.oldest and result.newest:
        lines.append(
            [
                ("span     ", "dim"),
                (f"{when(result.oldest, out.rich)} .. {when(result.newest, out.rich)}", ""),
            ]
        )
    lines.append(
        [("index    ", "dim"), (f"{result.engine}, {result.index_bytes / 1e6:.1f} MB", "")]
    )
    if result.unreadable:
        lines.append(
            [
                ("skipped  ", "dim"),
                (f"{counted(len(result.unreadable), 'unreadable file')} (see warnings)", "red"),
            ]
        )
    out.data(doc, lines)


def init(out: Output, result: InitResult) -> None:
    doc = to_jsonable(result)
    lines: list[Line] = [[("vault ready at ", "green"), (result.path, "bold")]]
    lines.extend(
        [("  created ", "dim"), (path, "")]
        for path in result.created
        if not path.endswith(".gitkeep")
    )
    if result.kept:
        lines.append([(f"  kept {counted(len(result.kept), 'existing file')} untouched", "dim")])
    lines.extend([("  git: ", "dim"), (step, "")] for step in result.git)
    lines += [
        [("", "")],
        [("next:", "bold")],
        [(f"  export KENOMEM_VAULT={result.path}", "")],
        [('  kenomem remember "Prefers short answers without pleasantries"', "")],
        [('  kenomem recall "answer style" --explain', "")],
    ]
    out.data(doc, lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items() if n) or "none"
