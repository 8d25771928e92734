"""Does recall find what is still in the buffer, and does the buffer cost recall? LoCoMo.

    python bench/buffer_locomo.py [PATH_TO_JSON] [--conversations ID ...]

For each conversation, two vaults (built as `bench/locomo.py` builds them, keyword only):
every session imported as memories ("memories"), and every session but the last
imported with the last one logged to the buffer, not consolidated ("last in buffer").
Every question is asked of both at the same moment (the day after the last session).
R@10 (categories 1-4) over all questions, over those whose evidence is all in the last
session, and over the others: the last shows whether pending entries crowd memories out.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo

from kenomem.capture.log import LogRequest, log
from kenomem.recall import today
from kenomem.recall.search import RecallRequest, recall
from kenomem.vault.core import CoreVault


def buffered_vault(conv: locomo.Conversation, root: Path) -> tuple[CoreVault, dict[str, str]]:
    """The vault with the last session in the buffer; memory or entry id -> dia_id."""
    last = conv.turns[-1].session
    source = dict(conv.source)
    source["conversation"] = {
        k: v
        for k, v in conv.source["conversation"].items()
        if k != last and k != f"{last}_date_time"
    }
    earlier = [t for t in conv.turns if t.session != last]
    vault, turn_of, _ = locomo.build_vault(conv._replace(turns=earlier, source=source), root)
    pending = [t for t in conv.turns if t.session == last]
    for turn in pending:
        text = turn.text + (f" (shares a photo: {turn.caption})" if turn.caption else "")
        log(vault, LogRequest(text, who=turn.speaker, session=turn.session, at=turn.time))
    asked = moment(conv)
    entries = today.pending(vault, asked)
    assert len(entries) == len(pending), (len(entries), len(pending))
    for item, turn in zip(entries, pending, strict=True):
        turn_of[today.entry_id(item.day, item.entry)] = turn.dia_id
    return vault, turn_of


def moment(conv: locomo.Conversation) -> datetime:
    day = conv.last_session.date() + timedelta(days=1)
    return datetime.combine(day, datetime.min.time(), UTC)


def recall_at_10(vault: CoreVault, turn_of: dict[str, str], conv: locomo.Conversation) -> list:
    rows = []
    for q in conv.questions:
        if q.category == 5 or not q.evidence:
            continue
        found = recall(vault, RecallRequest(q.text, limit=10, touch=False, now=moment(conv)))
        turns = {turn_of.get(item.id, "") for item in found.results}
        rows.append(len(turns.intersection(q.evidence)) / len(q.evidence))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", default=None, metavar="PATH_TO_JSON")
    parser.add_argument("--conversations", nargs="+", metavar="ID")
    args = parser.parse_args(argv)
    path = Path(args.path) if args.path else locomo.DEFAULT_DATA
    conversations, _ = locomo.load_data(path, args.conversations or [], None)
    groups: dict[str, dict[str, list[float]]] = {
        name: {"all": [], "last": [], "earlier": []} for name in ("memories", "last in buffer")
    }
    with tempfile.TemporaryDirectory() as tmp:
        for conv in conversations:
            last = conv.turns[-1].session
            in_last = {t.dia_id for t in conv.turns if t.session == last}
            asked = [q for q in conv.questions if q.category != 5 and q.evidence]
            where = ["last" if set(q.evidence) <= in_last else "earlier" for q in asked]
            plain, plain_of, _ = locomo.build_vault(conv, Path(tmp) / f"{conv.sample_id}-m")
            mixed, mixed_of = buffered_vault(conv, Path(tmp) / f"{conv.sample_id}-b")
            for name, vault, turn_of in (
                ("memories", plain, plain_of),
                ("last in buffer", mixed, mixed_of),
            ):
                for value, group in zip(recall_at_10(vault, turn_of, conv), where, strict=True):
                    groups[name]["all"].append(value)
                    groups[name][group].append(value)
            locomo.log(f"{conv.sample_id}: {len(in_last)} turns in the last session")
    print("| vault | R@10 all | R@10 last session (n) | R@10 earlier (n) |")
    print("|---|---:|---:|---:|")
    for name, got in groups.items():
        cells = [
            f"{100 * sum(v) / len(v):.1f}" + (f" ({len(v)})" if key != "all" else "")
            for key, v in got.items()
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
