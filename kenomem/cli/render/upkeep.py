"""How the results of the vault's upkeep look: the sleep cycle (log, extract,
consolidate, approve/reject), forgetting (prune, restore, reset), doctor, watch and the
embeddings model (model show|pull). The
JSON document and the lines for people."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kenomem.api import to_jsonable
from kenomem.cli.output import Line, Output, Segment
from kenomem.cli.render.memory import TYPE_STYLE
from kenomem.files.plural import counted

if TYPE_CHECKING:  # only for annotations: a command imports just the core it runs
    from kenomem.agents.decide import DecideResult
    from kenomem.capture.extract import ExtractResult
    from kenomem.capture.log import LogResult
    from kenomem.config import TrustReport
    from kenomem.embed.model import ModelInfo, PullResult
    from kenomem.forget.prune import PruneResult
    from kenomem.forget.reset import ResetResult
    from kenomem.forget.restore import RestoreResult
    from kenomem.sleep.consolidate import ConsolidateResult
    from kenomem.vault.doctor import DoctorResult
    from kenomem.watch.watcher import WatchSummary


def log(out: Output, result: LogResult) -> None:
    doc = to_jsonable(result)
    out.data(
        doc, [[("logged ", "green"), (result.path, "bold"), (f"  {result.at:%H:%M:%S}", "dim")]]
    )


def extract(out: Output, result: ExtractResult) -> None:
    """The reply, as it was without the tags: that is the output, for the user to see."""
    doc = to_jsonable(
        {
            "text": result.text,
            "stored": result.stored,
            "problems": result.problems,
            "logged": result.logged,
        }
    )
    if out.json_mode:
        out.data(doc, [])
        return
    out.text(result.text)
    for item in result.stored:
        out.message(f"{item.action} {item.type} memory {item.id} from <{item.tag}>")
        for old in item.superseded:
            out.message(f"  supersedes {old.id} {old.title!r}")
        if item.pinned_by:
            out.message(f"  pinned: the text says {item.pinned_by!r}")
        for near in item.may_contradict:
            out.message(f"  may contradict {near.id} {near.title!r}; if it replaces it:")
            out.message(f"    {near.command}")


def consolidate(out: Output, result: ConsolidateResult) -> None:
    doc = to_jsonable(result)
    lines: list[Line] = []
    for plan in result.days:
        lines.append(
            [
                (plan.day, "bold"),
                (
                    f"  {counted(plan.entries, 'entry')}, {plan.trivia} trivia, by {plan.method}",
                    "dim",
                ),
            ]
        )
        for d in plan.dropped:
            said = f"{d.who}: {d.text}" if d.who else d.text
            lines.append(
                [("  dropped   ", "yellow"), (f"{'trivia':<11}", "dim"), (f"{d.at[:5]} {said}", "")]
            )
        for a in plan.actions:
            detail = f" (supersedes {a.target})" if a.target else ""
            chat = f"  [chat {a.scope}]" if a.scope != "global" and a.memory else ""
            lines.append(
                [
                    (f"  {a.action:<10}", "green"),
                    (f"{a.type:<11}", TYPE_STYLE.get(a.type, "")),
                    (a.title, ""),
                    (f"  {a.why}{detail}{chat}", "dim"),
                ]
            )
    verb = "would be" if result.dry_run else "was" if result.created == 1 else "were"
    lines.append(
        [
            (
                f"{counted(len(result.days), 'day')}: {counted(result.created, 'memory')} "
                f"{verb} created, {result.reinforced} reinforced, {result.superseded} "
                f"superseded, {counted(result.proposed, 'pattern')} proposed "
                f"({result.seconds:.1f}s)",
                "",
            )
        ]
    )
    if not result.days:
        out.message("nothing to consolidate: every buffer entry due is consolidated")
    out.data(doc, lines)


def decided(out: Output, result: DecideResult) -> None:
    doc = to_jsonable(result)
    verb = "approved" if result.status == "active" else "rejected"
    out.data(
        doc,
        [
            [
                (f"{verb} ", "green"),
                (result.id, "bold"),
                (f"  {result.title}", ""),
                (f"  -> {result.path}", "dim"),
            ]
        ],
    )


def prune(out: Output, result: PruneResult) -> None:
    plan = result.plan
    doc = to_jsonable(
        {
            "dry_run": result.dry_run,
            "deleted": result.deleted,
            "retire": plan.retire,
            "summaries": [
                {"id": s.id, "title": s.title, "members": s.members} for s in plan.summaries
            ],
            "active": plan.active,
            "kept": plan.kept,
            "over_max": plan.over_max,
            "archived": result.archived,
            "summarized": result.summarized,
            "resumed": result.resumed,
            "trash_emptied": result.trash_emptied,
            "seconds": result.seconds,
        }
    )
    verb = "delete" if result.deleted else "archive"
    rows: list[list[Segment]] = [
        [
            (verb, "yellow"),
            (r.why, ""),
            (r.type, TYPE_STYLE.get(r.type, "")),
            (f"{r.retention:.2f}", "dim"),
            (r.title, ""),
            (r.id, "dim"),
            (r.detail, "dim"),
        ]
        for r in plan.retire
    ]
    rows += [
        [
            ("summarize", "green"),
            (counted(len(s.members), "episode"), ""),
            ("episodic", ""),
            ("", ""),
            (s.title, "bold"),
            (s.id, "dim"),
            ("", ""),
        ]
        for s in plan.summaries
    ]
    done = "would" if result.dry_run else "did"
    footer: list[Line] = [
        [
            (
                f"{counted(plan.active, 'active memory')}; prune {done} {verb} "
                f"{len(plan.retire)} and write {counted(len(plan.summaries), 'summary')}, "
                f"leaving {plan.kept} ({result.seconds:.1f}s)",
                "",
            )
        ]
    ]
    if plan.over_max:
        footer.append(
            [
                (
                    f"still {plan.over_max} over prune.max_active: what is left is pinned, "
                    "important, reinforced, procedural, working memory or a summary",
                    "yellow",
                )
            ]
        )
    if result.resumed:
        footer.append(
            [
                (
                    "an interrupted prune will be finished first: up to "
                    f"{counted(result.resumed, 'memory')}"
                    if result.dry_run
                    else "an interrupted prune was finished first: "
                    f"{counted(result.resumed, 'memory')}",
                    "yellow",
                )
            ]
        )
    if not rows and not result.resumed:
        out.message("nothing to prune")
    out.table(doc, ["action", "why", "type", "retention", "title", "id", "detail"], rows, footer)


def restored(out: Output, result: RestoreResult) -> None:
    out.data(
        to_jsonable(result),
        [
            [
                ("restored ", "green"),
                (result.id, "bold"),
                (f"  {result.old_path} -> {result.path}", "dim"),
            ]
        ],
    )


def reset(out: Output, result: ResetResult) -> None:
    doc = to_jsonable(result)
    if result.action == "undo":
        line: Line = [(f"brought back {result.files} files from {result.trash}", "green")]
    else:
        line = [
            (f"moved {result.files} files to {result.trash}", "yellow"),
            ("  kenomem reset --undo brings them back", "dim"),
        ]
    lines = [line]
    lines.extend([("  in the way, left in the trash: ", "red"), (c, "")] for c in result.conflicts)
    out.data(doc, lines)


def doctor(out: Output, result: DoctorResult) -> None:
    doc = to_jsonable(
        {
            "vault": result.vault,
            "files": result.files,
            "healthy": result.healthy,
            "findings": result.findings,
            "fixed": result.fixed,
        }
    )
    lines: list[Line] = []
    for f in result.findings:
        where = f"{f.path}:{f.line}" if f.line else f.path
        lines.append([(f"{f.kind:<13}", "yellow"), (where, "bold"), (f"  {f.message}", "")])
    lines.extend([("fixed        ", "green"), (action, "")] for action in result.fixed)
    if result.healthy:
        read = f"all {result.files} files" if result.files != 1 else "the 1 file"
        lines.append([(f"{read} read, index in step: nothing to fix", "green")])
    out.data(doc, lines)
    if result.problems:  # the exit code is 1: say why on stderr, --json or not
        left = "left" if result.fixed else "found"
        fixable = not result.fixed and any(f.fixable for f in result.findings)
        out.error(
            f"{counted(result.problems, 'problem')} {left} in the vault",
            hint="kenomem doctor --fix repairs what is safe to repair"
            if fixable
            else "the findings above say which files need a person",
        )


def watch(out: Output, result: WatchSummary) -> None:
    doc = to_jsonable(result)
    out.data(
        doc,
        [
            [
                (
                    f"stopped after {result.seconds:g}s: {counted(result.batches, 'batch')}, "
                    f"{result.reindexed} reindexed, {result.removed} removed",
                    "dim",
                )
            ]
        ],
    )


def model_show(out: Output, result: ModelInfo) -> None:
    doc = to_jsonable(result)
    if result.provider == "none":
        out.data(
            doc,
            [
                [("provider ", "dim"), ("none", "bold"), ("  recall is by keywords alone", "")],
                [('  provider = "fastembed" in [embeddings] recalls by meaning too', "dim")],
            ],
        )
        return
    lines: list[Line] = [[("provider ", "dim"), (result.provider, "bold")]]
    model: Line = [("model    ", "dim"), (result.model or "(none named)", "bold")]
    if result.dimension:
        model.append((f"  {counted(result.dimension, 'dimension')}", "dim"))
    lines.append(model)
    if result.provider == "openai":
        lines.append([("server   ", "dim"), (result.path, "")])
    else:
        state = ("here", "green") if result.present else ("not here", "yellow")
        lines.append([("path     ", "dim"), (result.path, ""), ("  ", ""), state])
        if result.size_bytes:
            lines.append([("size     ", "dim"), (_megabytes(result.size_bytes), "")])
        if result.source:
            lines.append([("source   ", "dim"), (result.source, "")])
        lines.append([("threads  ", "dim"), (str(result.threads), "")])
    if result.query_prefix or result.document_prefix:
        lines.append(
            [
                ("prefixes ", "dim"),
                (f"query {result.query_prefix!r}, document {result.document_prefix!r}", ""),
            ]
        )
    if result.problem:
        lines.append([("problem  ", "dim"), (result.problem, "yellow")])
    out.data(doc, lines)


def model_pull(out: Output, result: PullResult) -> None:
    doc = to_jsonable(result)
    if not result.path:
        out.data(doc, [[(result.note, "")]])
        return
    size = _megabytes(result.size_bytes)
    if result.fetched:
        head: Line = [
            ("fetched ", "green"),
            (result.model, "bold"),
            (f" ({size}) into {result.path} in {result.seconds:.1f}s", ""),
        ]
    else:
        head = [
            (result.model, "bold"),
            (f" is here already ({size}, {result.path})", ""),
        ]
    lines: list[Line] = [head]
    if result.note:
        lines.append([(result.note, "dim")])
    lines.append([(f"it loads: vectors of {counted(result.dimension, 'dimension')}", "dim")])
    out.data(doc, lines)


def trust(out: Output, result: TrustReport, action: str) -> None:
    """`action`: accept, dry-run or revoke."""
    doc = {
        "vault": str(result.vault),
        "action": action,
        "asked": result.asked,
        "accepted": result.accepted,
        "changed": result.changed,
        "record": str(result.where),
    }
    settings: list[Line] = [
        [("  ", ""), (key, "bold"), (f" = {value!r}", "")] for key, value in result.asked.items()
    ]
    if action == "revoke":
        head: Line = (
            [
                ("forgot", "green"),
                (" what was accepted for this vault; its commands and ", ""),
                ("servers are not used until `kenomem trust`", ""),
            ]
            if result.accepted
            else [("nothing was accepted for this vault", "")]
        )
        out.data(doc, [head])
        return
    if not result.asked:
        out.data(
            doc,
            [[("kenomem.toml names no command, server or model path: nothing to accept", "")]],
        )
        return
    if action == "dry-run":
        state = (
            ("accepted", "green")
            if result.accepted
            else ("changed since accepted", "yellow")
            if result.changed
            else ("not accepted", "yellow")
        )
        out.data(doc, [[("kenomem.toml asks for these: ", ""), state], *settings])
        return
    out.data(doc, [[("accepted", "green"), (" for this vault, as they are now:", "")], *settings])


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB" if size < 10e6 else f"{size / 1e6:,.0f} MB"
