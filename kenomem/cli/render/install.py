"""How `install` and `uninstall` look: each file created, changed, removed or left as it
was (with its backup), the diff of a dry run, and what is left to do by hand. The JSON
document and the lines for people."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kenomem.cli.output import Line, Output, inline

if TYPE_CHECKING:
    from kenomem.hooks.install import Applied, Plan


def installed(
    out: Output, made: Plan, applied: Applied | None, diff: str, *, dry_run: bool
) -> None:
    backups = applied.backups if applied else {}
    files: list[dict[str, Any]] = []
    for change in made.changes:
        kind = "create" if change.before is None else "remove" if change.after is None else "change"
        backup = backups.get(change.path)
        files.append(
            {
                "path": str(change.path),
                "real": str(change.real),
                "what": change.what,
                "change": kind,
                "backup": str(backup) if backup else None,
            }
        )
    files += [
        {"path": str(p), "real": str(p), "what": "", "change": "none", "backup": None}
        for p in made.unchanged
    ]
    doc = {
        "agent": made.agent,
        "action": made.action,
        "scope": made.scope,
        "dry_run": dry_run,
        "executable": made.executable or None,
        "files": files,
        "backups": [str(b) for b in backups.values()],
        "diff": diff,
        "notes": made.notes,
    }
    lines: list[Line] = []
    if dry_run:
        lines += [[(line, _diff_style(line))] for line in diff.splitlines()]
        if not made.changes:
            lines.append([("nothing to change: ", ""), (_done(made), "")])
    else:
        verb = {"create": "created", "remove": "removed", "change": "changed", "none": "unchanged"}
        for file in files:
            line: Line = [
                (verb[file["change"]], "dim" if file["change"] == "none" else "green"),
                (" ", ""),
                (inline(file["path"]), "bold"),
            ]
            if file["what"]:
                line.append((f" ({file['what']})", ""))
            if file["backup"]:
                line.append((f"; backup {inline(file['backup'])}", "dim"))
            lines.append(line)
        if not made.changes:
            lines.append([(_done(made), "")])
    lines += [[("note: ", "yellow"), (note, "")] for note in made.notes]
    out.data(doc, lines)


def _done(made: Plan) -> str:
    if made.action == "install":
        return f"kenomem is installed in {made.agent} as asked"
    return f"there is nothing of kenomem's in {made.agent}'s settings"


def _diff_style(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("@@"):
        return "cyan"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    return ""
