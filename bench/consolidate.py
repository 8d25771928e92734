"""Benchmark `kenomem consolidate`: what it keeps of labelled entries, and how fast it is.

    python bench/consolidate.py                        # both parts
    python bench/consolidate.py --part labelled        # the labelled entries only
    python bench/consolidate.py --part timing --runs 5 # the timing only

1. Labelled: the hand-labelled buffer entries of bench/data/labelled-entries.jsonl are
   logged into a fresh vault, `kenomem consolidate --json` runs once, and each episode it
   created is traced back to its entry (by the `buffer:` reference in its frontmatter):
   how many of the salient entries were kept (recall), how many of the trivial ones
   slipped through (leak), the facts and patterns it found, and every miss and leak.
2. Timing: 30 buffer days of 200 entries each (generated, deterministic) are consolidated
   into a vault of 10,000 generated memories, as a whole `kenomem consolidate --json`
   process on a fresh copy of the indexed vault each run; then a second run on the same
   vault, which has nothing left to do.

Markdown tables go to stdout, progress to stderr, and the raw results to a JSON file
(see bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, NamedTuple

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(BENCH.parent))

from gen_vault import SUBJECTS, TOPICS, sentence  # noqa: E402
from run import (  # noqa: E402
    BenchError,
    Runner,
    Timer,
    cached_vault,
    log,
    machine_facts,
    render_facts,
    secs,
    stats,
    table,
    verdict,
    working_copy,
)

from kenomem.capture.log import LogRequest  # noqa: E402
from kenomem.capture.log import log as log_entry  # noqa: E402
from kenomem.files import buffer, fm  # noqa: E402
from kenomem.files.buffer import Entry, format_entry  # noqa: E402
from kenomem.vault.core import CoreVault  # noqa: E402

TEMPLATE = BENCH.parent / "vault-template"
LABELLED = BENCH / "data" / "labelled-entries.jsonl"
TARGET_SECONDS = 10.0  # the target: 30 days of 200 entries into 10k memories
TARGET = (10_000, 30, 200)  # size, days, entries per day the target is stated for
FIELDS = ("day", "time", "who", "session", "text", "salient", "kind")


class Ran(NamedTuple):
    seconds: float  # wall time
    cpu: float  # user + system CPU seconds of the process
    load: float  # the machine's load average (1 minute) when it started
    proc: subprocess.CompletedProcess[str]


# -- running commands --------------------------------------------------------------------------


def attempt(runner: Runner, cmd: list[str]) -> Ran:
    """One run, timed, with its output; no retry."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    with Timer() as t:
        proc = subprocess.run(cmd, capture_output=True, env=runner.env, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Ran(t.seconds, cpu, load, proc)


def twice(runner: Runner, prepare: Callable[[], None], cmd: list[str]) -> Ran:
    """`prepare()` then `cmd`; if it fails, prepare again (a fresh vault) and run it once
    more, reporting the failure (kept in the JSON); a second failure stops the benchmark."""
    prepare()
    ran = attempt(runner, cmd)
    if ran.proc.returncode == 0:
        return ran
    first, first_stderr = ran.proc.returncode, ran.proc.stderr
    prepare()
    ran = attempt(runner, cmd)
    runner._failed(cmd, first, first_stderr, ran.proc)  # records it; raises if failed again
    return ran


def consolidate_cmd(runner: Runner, vault: Path) -> list[str]:
    return [runner.kenomem, "consolidate", "--vault", str(vault), "--json"]


def fresh_vault(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    shutil.copytree(TEMPLATE, path)
    return path


def yesterday() -> date:
    return datetime.now(UTC).date() - timedelta(days=1)


def percent(part: int, whole: int) -> str:
    return f"{part}/{whole} = {100 * part / whole:.0f}%" if whole else f"{part}/0"


def short(text: str, width: int = 110) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1].rstrip() + "…"


def cell(text: str) -> str:
    return text.replace("|", "\\|")


# -- part 1: the labelled entries --------------------------------------------------------------


def load_labelled(path: Path) -> list[dict[str, Any]]:
    """The labelled entries, checked: every field, a real day and time, no two at once."""
    rows = []
    seen: set[tuple[str, str]] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        missing = [f for f in FIELDS if f not in row]
        if missing:
            raise SystemExit(f"{path}:{number}: missing {', '.join(missing)}")
        date.fromisoformat(row["day"])
        time.fromisoformat(row["time"])
        key = (row["day"], row["time"])
        if key in seen:
            raise SystemExit(f"{path}:{number}: a second entry at {row['day']} {row['time']}")
        seen.add(key)
        rows.append(row)
    if not rows:
        raise SystemExit(f"{path}: no entries")
    return rows


def import_labelled(vault: Path, rows: list[dict[str, Any]], shift: timedelta) -> None:
    """Log every entry, at its time moved by `shift`, into a fresh vault."""
    fresh_vault(vault)
    v = CoreVault.open(vault)
    for row in rows:
        day = date.fromisoformat(row["day"]) + shift
        at = datetime.combine(day, time.fromisoformat(row["time"]), UTC)
        log_entry(v, LogRequest(row["text"], who=row["who"], session=row["session"], at=at))


def buffer_ref(row: dict[str, Any], shift: timedelta) -> str:
    day = date.fromisoformat(row["day"]) + shift
    return f"{buffer.day_path(day)}#{time.fromisoformat(row['time']):%H:%M:%S}"


def frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    parts = fm.split(text, str(path))
    return fm.parse(parts.fm_text, path=str(path), first_line=parts.first_line)


def run_labelled(runner: Runner, args: argparse.Namespace, doc: dict[str, Any]) -> None:
    rows = load_labelled(args.labelled)
    last = max(date.fromisoformat(r["day"]) for r in rows)
    shift = yesterday() - last
    vault = args.cache_dir / "consolidate-labelled"
    days = sorted({r["day"] for r in rows})
    log(f"\n== labelled: {len(rows)} entries over {len(days)} days ({args.labelled}) ==")
    log(f"  days moved by {shift.days} days, to end yesterday; vault: {vault}")

    ran = twice(runner, lambda: import_labelled(vault, rows, shift), consolidate_cmd(runner, vault))
    seconds, proc = ran.seconds, ran.proc
    result = json.loads(proc.stdout)
    log(f"  consolidate: {seconds:.2f} s, {result['created']} memories created")
    _, listed = runner.output(
        [
            runner.kenomem,
            *("list", "--vault", str(vault), "--json", "--type", "episodic"),
            *("--limit", "1000"),
        ]
    )

    by_ref = {buffer_ref(r, shift): r for r in rows}
    whys = {
        a["id"]: a["why"]
        for day in result["days"]
        for a in day["actions"]
        if a["type"] == "episodic" and a["action"] == "create"
    }
    kept: dict[str, dict[str, Any]] = {}  # buffer reference -> the episode
    summaries = 0
    unmapped = []
    for mem in json.loads(listed.stdout)["memories"]:
        meta = frontmatter(vault / mem["path"])
        ref = str(meta.get("buffer") or "")
        if "summary" in (meta.get("tags") or []) or "#" not in ref:
            summaries += 1
            continue
        if ref not in by_ref:
            unmapped.append({"id": mem["id"], "buffer": ref, "title": mem["title"]})
            continue
        kept[ref] = {
            "id": mem["id"],
            "importance": mem["importance"],
            "why": whys.get(mem["id"], ""),
            "path": mem["path"],
        }

    entries = []
    for r in rows:
        ref = buffer_ref(r, shift)
        entries.append({**r, "buffer": ref, "kept": ref in kept, "episode": kept.get(ref)})
    salient = [e for e in entries if e["salient"]]
    trivia = [e for e in entries if not e["salient"]]
    hits = sum(e["kept"] for e in salient)
    leaks = sum(e["kept"] for e in trivia)

    facts = []
    patterns = []
    for day in result["days"]:
        for a in day["actions"]:
            if a["type"] == "semantic":
                mem = a.get("memory") or {}
                source = a.get("source") or ((mem.get("extra") or {}).get("sources") or [""])[0]
                entry = by_ref.get(source)
                facts.append(
                    {
                        "action": a["action"],
                        "title": a["title"],
                        "why": a["why"],
                        "source": source,
                        "from": entry["text"] if entry else "",
                    }
                )
            elif a["action"] == "propose":
                extra = (a.get("memory") or {}).get("extra") or {}
                patterns.append(
                    {
                        "title": a["title"],
                        "trigger": extra.get("trigger"),
                        "confidence": extra.get("confidence"),
                        "learned_from": extra.get("learned_from"),
                    }
                )
    summary = {
        "entries": len(entries),
        "salient": len(salient),
        "trivia": len(trivia),
        "salient_kept": hits,
        "trivia_kept": leaks,
        "recall": hits / len(salient) if salient else None,
        "leak": leaks / len(trivia) if trivia else None,
        "precision": hits / (hits + leaks) if hits + leaks else None,
        "episodes": len(kept),
        "summaries": summaries,
        "unmapped_episodes": unmapped,
        "facts": Counter(f["action"] for f in facts),
        "patterns": len(patterns),
        "consolidate_seconds": seconds,
        "consolidate_totals": {
            k: result[k] for k in ("created", "reinforced", "superseded", "proposed")
        },
        "trivia_by_consolidate": sum(d["trivia"] for d in result["days"]),
    }
    doc["labelled"] = {
        "file": str(args.labelled),
        "vault": str(vault),
        "shift_days": shift.days,
        "entries": entries,
        "facts": facts,
        "patterns": patterns,
        "summary": summary,
        "consolidate": result,
    }
    print(render_labelled(doc["labelled"], days), flush=True)
    if not args.keep_work:
        shutil.rmtree(vault, ignore_errors=True)


def render_labelled(lab: dict[str, Any], days: list[str]) -> str:
    s = lab["summary"]
    entries = lab["entries"]
    out = [f"### Labelled buffer entries ({s['entries']} entries, {len(days)} days)", ""]
    out.append(
        f"`{Path(lab['file']).name}`: {s['salient']} entries labelled salient, {s['trivia']} "
        f"trivia; {sum(e['who'] == 'assistant' for e in entries)} of the {s['entries']} said by "
        f"the assistant. One `kenomem consolidate --json` run ({secs(s['consolidate_seconds'])} s)."
    )
    out.append("")
    rows = [
        ["kept as an episode", str(s["salient_kept"]), str(s["trivia_kept"])],
        [
            "not kept",
            str(s["salient"] - s["salient_kept"]),
            str(s["trivia"] - s["trivia_kept"]),
        ],
    ]
    out += [table(["", "labelled salient", "labelled trivia"], rows, "lrr"), ""]
    nf = s["facts"]
    precision = s["precision"]
    rows = [
        ["recall: salient entries kept", percent(s["salient_kept"], s["salient"])],
        ["leak: trivia entries kept", percent(s["trivia_kept"], s["trivia"])],
        [
            "precision: kept entries that are salient",
            percent(s["salient_kept"], s["salient_kept"] + s["trivia_kept"])
            if precision is not None
            else "–",
        ],
        ["entries consolidate itself called trivia", str(s["trivia_by_consolidate"])],
        [
            "facts (semantic memories)",
            f"{nf.get('create', 0)} created, {nf.get('supersede', 0)} superseding an older "
            f"one, {nf.get('reinforce', 0)} reinforcements",
        ],
        ["patterns proposed", str(s["patterns"])],
        ["day summaries (left out above)", str(s["summaries"])],
    ]
    if s["unmapped_episodes"]:
        rows.append(["episodes with no matching entry", str(len(s["unmapped_episodes"]))])
    out += [table(["figure", "value"], rows, "lr"), ""]

    kinds: dict[tuple[bool, str], list[int]] = {}
    for e in entries:
        counts = kinds.setdefault((e["salient"], e["kind"]), [0, 0])
        counts[0] += 1
        counts[1] += e["kept"]
    rows = [
        [kind, "salient" if salient else "trivia", str(n), str(k)]
        for (salient, kind), (n, k) in sorted(
            kinds.items(), key=lambda kv: (not kv[0][0], kv[0][1])
        )
    ]
    out += [table(["kind", "label", "entries", "kept"], rows, "llrr"), ""]

    def listing(title: str, items: list[dict[str, Any]], why: bool) -> None:
        out.append(f"{title} ({len(items)}):")
        out.append("")
        for e in items:
            line = f"- {e['day']} {e['time']} {e['who']} ({e['kind']}): {e['text']}"
            if why and e["episode"]:
                line += f" — {e['episode']['why']}"
            out.append(line)
        if not items:
            out.append("- none")
        out.append("")

    listing(
        "Misses, salient entries not kept",
        [e for e in entries if e["salient"] and not e["kept"]],
        False,
    )
    listing(
        "Leaks, trivia entries kept", [e for e in entries if not e["salient"] and e["kept"]], True
    )
    out.append(f"Facts ({len(lab['facts'])}):")
    out.append("")
    for f in lab["facts"]:
        source = f" ← {short(f['from'], 90)}" if f["from"] else ""
        out.append(f"- {f['action']} “{f['title']}” ({f['why']}){source}")
    if not lab["facts"]:
        out.append("- none")
    out += ["", f"Patterns proposed ({len(lab['patterns'])}):", ""]
    for p in lab["patterns"]:
        learned = ", ".join(str(x) for x in p["learned_from"] or [])
        out.append(
            f"- “{p['title']}” (trigger `{p['trigger']}`, confidence {p['confidence']}, "
            f"from {learned})"
        )
    if not lab["patterns"]:
        out.append("- none")
    out.append("")
    return "\n".join(out)


# -- part 2: the timing ------------------------------------------------------------------------

USER = "Adrian"
AGENT = "assistant"
CHANNELS = ("telegram", "telegram", "telegram", "cli", "email")
ACKS = (
    "ok",
    "ok thanks",
    "thanks!",
    "thank you",
    "lol",
    "haha",
    "sounds good",
    "sure, go ahead",
    "got it",
    "good morning",
    "good night",
    "nice",
    "cool",
    "yep",
    "no problem",
    "hmm",
    "right",
    "great, thanks",
    "makes sense",
    "one sec",
)
CITIES = ("Lisbon", "Porto", "Berlin", "Leeds", "Lyon")
COMPANIES = ("Northwind", "Globex", "Initech", "Umbrella Labs", "Hooli")
KIN = ("sister", "brother", "boss", "manager", "best friend", "dentist", "doctor", "cat", "dog")
ALLERGENS = ("penicillin", "peanuts", "shellfish", "pollen", "cats")
FAVOURITES = (("book", "Dune"), ("band", "Radiohead"), ("city", "Kyoto"), ("food", "ramen"))
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
# (problem, fix): the same few recur across days, as they do, so habits can be proposed.
PROBLEMS = (
    (
        "redis connection refused on the billing worker again",
        "restarted redis on the billing host, works now",
    ),
    (
        "the nightly postgres backup failed with a disk full error",
        "fixed: cleared the old WAL files and ran the backup again",
    ),
    (
        "kafka consumer lag alert, the dashboard stopped updating",
        "restarted the kafka consumer group and it caught up",
    ),
    (
        "grafana shows a 502 error behind nginx",
        "the fix was to bump the nginx proxy timeout to 60s",
    ),
    (
        "terraform plan failed with a state lock error",
        "ran terraform force-unlock, resolved",
    ),
    (
        "the laptop keyboard stopped working after the update",
        "rebooted twice, the keyboard works now",
    ),
)
# Kinds of generated entries and their weights (errors come with their fix a little later).
MIX = (
    ("ack", 38),
    ("chatter", 20),
    ("assistant", 12),
    ("fact", 9),
    ("decision", 6),
    ("plan", 6),
    ("explicit", 3),
    ("emotion", 3),
    ("error", 3),
)


def name(rng: random.Random) -> str:
    return rng.choice(SUBJECTS).capitalize()


def fact_text(rng: random.Random, home: tuple[str, str]) -> str:
    topic = rng.choice(TOPICS)
    choices = (
        f"I live in {home[0]} now",
        f"I work at {home[1]}",
        f"my {rng.choice(KIN)} is called {name(rng)}",
        f"I like {topic}, honestly",
        f"I don't like {topic} anymore",
        f"I'm allergic to {rng.choice(ALLERGENS)}",
        "my favourite {} is {}".format(*rng.choice(FAVOURITES)),
        f"{name(rng)}'s birthday is on {rng.randint(1, 28)} {rng.choice(('May', 'June', 'July'))}",
    )
    return rng.choice(choices)


def day_entries(day: date, index: int, per_day: int, seed: int) -> tuple[list[Entry], Counter[str]]:
    """The entries of the index-th buffer day: the same texts every time for the same
    index and seed (only the dates they mention follow the day)."""
    rng = random.Random(f"consolidate-{seed}-{index}-{per_day}")
    # Where one lives and works changes now and then: the same for nine days in a row.
    slow = random.Random(f"home-{seed}-{index // 9}")
    home = (slow.choice(CITIES), slow.choice(COMPANIES))
    clock = sorted(rng.sample(range(7 * 3600, 23 * 3600), per_day))
    kinds, weights = zip(*MIX, strict=True)
    texts: list[tuple[str, str, str]] = []  # who, text, kind
    fixes: dict[int, str] = {}
    while len(texts) < per_day:
        i = len(texts)
        if i in fixes:
            texts.append((USER, fixes.pop(i), "fix"))
            continue
        kind = rng.choices(kinds, weights)[0]
        soon = day + timedelta(days=rng.randint(1, 20))
        topic, other = rng.choice(TOPICS), rng.choice(TOPICS)
        if kind == "ack":
            texts.append((rng.choice((USER, USER, AGENT)), rng.choice(ACKS), kind))
        elif kind == "chatter":
            texts.append((rng.choice((USER, name(rng))), sentence(rng), kind))
        elif kind == "assistant":
            texts.append((AGENT, sentence(rng), kind))
        elif kind == "fact":
            texts.append((USER, fact_text(rng, home), kind))
        elif kind == "decision":
            texts.append(
                (
                    USER,
                    rng.choice(
                        (
                            f"We decided to move the {topic} {other} to {rng.choice(WEEKDAYS)}, "
                            f"{name(rng)} agreed",
                            f"I'll finish the {topic} review by {soon.isoformat()}",
                            f"The deadline for the {topic} migration is {soon:%d %B}",
                        )
                    ),
                    kind,
                )
            )
        elif kind == "plan":
            texts.append(
                (
                    USER,
                    rng.choice(
                        (
                            f"Meeting with {name(rng)} about the {topic} on {soon.isoformat()} "
                            f"at {rng.randint(1, 5)}pm",
                            f"{topic.capitalize()} appointment tomorrow at {rng.randint(8, 11)}am",
                            f"Next week: {topic} workshop with {name(rng)} and {name(rng)}",
                        )
                    ),
                    kind,
                )
            )
        elif kind == "explicit":
            texts.append(
                (
                    USER,
                    rng.choice(
                        (
                            f"Remember this: the {topic} {other} password rotates every "
                            f"{rng.choice((30, 60, 90))} days",
                            f"Don't forget to send {name(rng)} the {topic} report",
                            f"Important: {name(rng)} owns the {topic} budget now",
                        )
                    ),
                    kind,
                )
            )
        elif kind == "emotion":
            texts.append(
                (
                    USER,
                    rng.choice(
                        (
                            f"I'm really frustrated with the {topic} {other}",
                            f"So happy the {topic} launch went well",
                            f"A bit worried about the {topic} deadline",
                        )
                    ),
                    kind,
                )
            )
        else:
            problem, fix = rng.choice(PROBLEMS)
            texts.append((USER, problem, kind))
            fixes[i + rng.randint(1, 3)] = fix
    session = 0
    entries = []
    for i, ((who, text, _kind), seconds) in enumerate(zip(texts, clock, strict=True)):
        if i and rng.random() < 0.02:
            session += 1
        at = datetime.combine(day, time(), UTC) + timedelta(seconds=seconds)
        channel = CHANNELS[(index + session) % len(CHANNELS)]
        entries.append(Entry(at, who, f"chat-{day:%m%d}-{session}", channel, text, i))
    return entries, Counter(kind for _, _, kind in texts)


def write_days(vault: Path, days: int, per_day: int, seed: int, last: date) -> dict[str, Any]:
    """`days` buffer files of `per_day` entries, the last one `last`, written as `kenomem
    log` would write them (one header, then the entries)."""
    folder = vault / "buffer"
    folder.mkdir(exist_ok=True)
    mix: Counter[str] = Counter()
    for k in range(days):
        day = last - timedelta(days=days - 1 - k)
        entries, kinds = day_entries(day, k, per_day, seed)
        mix.update(kinds)
        head = fm.emit({"date": day, "consolidated": None})
        text = head + "".join(format_entry(e) for e in entries)
        (vault / buffer.day_path(day)).write_text(text, encoding="utf-8")
    first = last - timedelta(days=days - 1)
    return {"first": first.isoformat(), "last": last.isoformat(), "mix": dict(mix)}


def copy_vault(base: Path, run: Path) -> None:
    """A fresh copy of the indexed vault with its buffer days (index included; the copy
    keeps sizes and mtimes, so the index stays in step)."""
    if run.exists():
        shutil.rmtree(run)
    shutil.copytree(base, run)


def warm_up(runner: Runner, cache_dir: Path, seed: int) -> None:
    """One consolidate on a tiny vault, for the bytecode caches."""
    log("warm-up: consolidate once on a tiny vault")
    vault = fresh_vault(cache_dir / "consolidate-warmup")
    write_days(vault, 2, 30, seed, yesterday())
    runner.output(consolidate_cmd(runner, vault))
    shutil.rmtree(vault, ignore_errors=True)


def tally(result: dict[str, Any]) -> dict[str, Any]:
    """What a consolidate run did, from its JSON."""
    actions: Counter[str] = Counter()
    for day in result["days"]:
        for a in day["actions"]:
            actions[f"{a['action']} {a['type']}"] += 1
    return {
        "days": len(result["days"]),
        "entries": sum(d["entries"] for d in result["days"]),
        "trivia": sum(d["trivia"] for d in result["days"]),
        "created": result["created"],
        "reinforced": result["reinforced"],
        "superseded": result["superseded"],
        "proposed": result["proposed"],
        "seconds_reported": result["seconds"],
        "actions": dict(actions),
        "warnings": [w for d in result["days"] for w in d["warnings"]],
    }


def run_timing(runner: Runner, args: argparse.Namespace, doc: dict[str, Any]) -> None:
    n, days, per_day = args.size, args.days, args.per_day
    log(f"\n== timing: {days} days of {per_day} entries into {n:,} memories ==")
    warm_up(runner, args.cache_dir, args.seed)
    vault = cached_vault(n, args.cache_dir, args.fresh)
    base = working_copy(vault, args.cache_dir / f"consolidate-base-{n}")
    log(f"  working copy: {base}; indexing ...")
    reindex, _ = runner.output(runner.reindex(base))
    log(f"  indexed in {reindex:.1f} s; writing {days} buffer days of {per_day} entries")
    with Timer() as t:
        written = write_days(base, days, per_day, args.seed, yesterday())
    log(f"  written in {t.seconds:.2f} s ({written['first']} to {written['last']})")
    tim: dict[str, Any] = {
        "size": n,
        "days": days,
        "per_day": per_day,
        "vault": str(vault),
        "base": str(base),
        "reindex": reindex,
        "buffer": written,
        "runs": [],
    }
    doc["timing"] = tim
    run = args.cache_dir / f"consolidate-run-{n}"
    stats_cmd = [runner.kenomem, "stats", "--vault", str(run), "--json"]

    def prepare() -> None:
        copy_vault(base, run)
        seconds, proc = runner.output(stats_cmd)
        prepared.update(stats=seconds, memories=json.loads(proc.stdout)["memories"])

    for i in range(args.runs):
        prepared: dict[str, Any] = {}
        ran = twice(runner, prepare, consolidate_cmd(runner, run))
        seconds = ran.seconds
        first = tally(json.loads(ran.proc.stdout))
        again_seconds, again = runner.output(consolidate_cmd(runner, run))
        second = tally(json.loads(again.stdout))
        _, after = runner.output(stats_cmd)
        memories = json.loads(after.stdout)["memories"]
        tim["runs"].append(
            {
                "before": prepared,
                "seconds": seconds,
                "cpu": ran.cpu,
                "load": ran.load,
                "result": first,
                "second_seconds": again_seconds,
                "second": second,
                "memories_after": memories,
            }
        )
        log(
            f"  run {i + 1}/{args.runs}: {seconds:.2f} s ({ran.cpu:.2f} s CPU, load "
            f"{ran.load:.2f}), {first['created']} created; "
            f"again: {again_seconds:.2f} s, {second['days']} days, {second['created']} created"
        )
    if not args.keep_work:
        shutil.rmtree(run, ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)
    tim["summary"] = summarize_timing(tim)
    print(render_timing(tim), flush=True)


def summarize_timing(tim: dict[str, Any]) -> dict[str, Any]:
    runs = tim["runs"]
    entries = tim["days"] * tim["per_day"]
    first = stats([r["seconds"] for r in runs])
    results = [r["result"] for r in runs]
    same = all(
        {k: v for k, v in r.items() if k != "seconds_reported"}
        == {k: v for k, v in results[0].items() if k != "seconds_reported"}
        for r in results
    )
    return {
        "consolidate": first,
        "reported": stats([r["result"]["seconds_reported"] for r in runs]),
        "cpu": stats([r["cpu"] for r in runs]),
        "load": [r["load"] for r in runs],
        "entries_per_second": entries / first["median"],
        "second": stats([r["second_seconds"] for r in runs]),
        "second_idle": all(r["second"]["days"] == 0 and r["second"]["created"] == 0 for r in runs),
        "stats_before": stats([r["before"]["stats"] for r in runs]),
        "same_result_every_run": same,
        "memories_before": runs[0]["before"]["memories"],
        "memories_after": runs[0]["memories_after"],
    }


def render_timing(tim: dict[str, Any]) -> str:
    s = tim["summary"]
    n, days, per_day = tim["size"], tim["days"], tim["per_day"]
    r = tim["runs"][0]["result"]
    c = s["consolidate"]
    at_target = (n, days, per_day) == TARGET
    note = f"{s['entries_per_second']:,.0f} entries/s"
    if at_target:
        note += f"; target < {TARGET_SECONDS:.0f} s: {verdict(c['median'] < TARGET_SECONDS)}"
    second = tim["runs"][0]["second"]
    idle = "did nothing" if s["second_idle"] else "DID SOMETHING"
    runs = c["n"]
    load = ", ".join(f"{x:.2f}" for x in s["load"])

    def row(label: str, st: dict[str, float], text: str) -> list[str]:
        return [
            label,
            f"{secs(st['median'])} s",
            f"{secs(st['min'])} s",
            f"{secs(st['max'])} s",
            text,
        ]

    rows = [
        row("consolidate --json (whole process)", c, note),
        row("consolidate's own `seconds` (no start-up)", s["reported"], ""),
        row("its CPU time (user + system)", s["cpu"], f"load average at each start: {load}"),
        row(
            "second consolidate --json, same vault",
            s["second"],
            f"{idle}: {second['days']} days, {second['created']} created",
        ),
        row("kenomem stats on each fresh copy (not timed above)", s["stats_before"], ""),
    ]
    out = [f"### consolidate: {days} buffer days × {per_day} entries into {n:,} memories", ""]
    out.append(
        f"Medians of {runs} run{'s' if runs > 1 else ''}, each on a fresh copy of the indexed "
        f"vault (buffer days {tim['buffer']['first']} to {tim['buffer']['last']})."
    )
    out += ["", table(["measurement", "median", "min", "max", "note"], rows, "lrrrl"), ""]
    acts = r["actions"]
    rows = [
        ["buffer days consolidated", f"{r['days']}"],
        ["entries", f"{r['entries']:,} ({r['trivia']:,} called trivia)"],
        ["memories created", f"{r['created']:,}"],
        ["of which episodes", f"{acts.get('create episodic', 0):,}"],
        ["of which day summaries", f"{acts.get('summarize episodic', 0):,}"],
        [
            "of which facts",
            f"{acts.get('create semantic', 0):,} new, {acts.get('supersede semantic', 0):,} "
            "superseding an older one",
        ],
        ["facts reinforced", f"{r['reinforced']:,}"],
        ["facts superseded", f"{r['superseded']:,}"],
        ["patterns proposed", f"{r['proposed']:,}"],
        [
            "memories indexed before → after",
            f"{s['memories_before']:,} → {s['memories_after']:,}",
        ],
        ["the same result in every run", "yes" if s["same_result_every_run"] else "NO"],
    ]
    if r["warnings"]:
        rows.append(["warnings", str(len(r["warnings"]))])
    out += [table(["what the first run did", "count"], rows, "lr"), ""]
    mix = tim["buffer"]["mix"]
    kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(mix.items(), key=lambda kv: -kv[1]))
    out += [f"Generated entries by kind: {kinds}.", ""]
    return "\n".join(out)


# -- the command line --------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    here = Path(sys.executable).parent
    today = datetime.now().strftime("%Y-%m-%d")
    default_out = BENCH / "results" / f"{today}-{socket.gethostname()}-consolidate.json"
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "--part", choices=("both", "labelled", "timing"), default="both", help="what to run"
    )
    p.add_argument("--labelled", type=Path, default=LABELLED, help="the labelled entries")
    p.add_argument("--size", type=int, default=10_000, help="memories in the timed vault")
    p.add_argument("--days", type=int, default=30, help="buffer days consolidated")
    p.add_argument("--per-day", type=int, default=200, help="entries in each buffer day")
    p.add_argument("--runs", type=int, default=3, help="timed consolidate runs (medians)")
    p.add_argument("--seed", type=int, default=7, help="seed of the generated buffer days")
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=Path("/tmp/kenomem-bench"),
        help="generated vaults (<cache-dir>/<size>) and working copies",
    )
    p.add_argument("--fresh", action="store_true", help="generate the vault again")
    p.add_argument("--keep-work", action="store_true", help="keep the vaults consolidated")
    p.add_argument("--python", default=str(here / "python"), help="the Python for probes")
    p.add_argument("--kenomem", default=str(here / "kenomem"), help="the kenomem command")
    p.add_argument("--out", type=Path, default=default_out, help="the JSON file of raw results")
    args = p.parse_args(argv)
    if min(args.size, args.days, args.per_day, args.runs) < 1:
        p.error("--size, --days, --per-day and --runs must be positive")
    if args.per_day > 16 * 3600:
        p.error("--per-day: at most one entry a second between 07:00 and 23:00")
    for name_ in ("python", "kenomem"):
        if not shutil.which(getattr(args, name_)):
            p.error(f"--{name_}: not found: {getattr(args, name_)}")
    return args


def write(out: Path, doc: dict[str, Any]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runner = Runner(args.python, args.kenomem, None)
    facts = machine_facts(runner)
    print(render_facts(facts) + "\n", flush=True)
    doc: dict[str, Any] = {
        "started": datetime.now().isoformat(timespec="seconds"),
        "machine": facts,
        "settings": {
            k: str(v) if isinstance(v, Path) else v
            for k, v in vars(args).items()
            if k not in ("python", "kenomem")
        },
        "incidents": runner.incidents,
    }
    try:
        if args.part in ("both", "labelled"):
            run_labelled(runner, args, doc)
            write(args.out, doc)
        if args.part in ("both", "timing"):
            run_timing(runner, args, doc)
    except BenchError as exc:
        log(f"stopped: {exc}")
        return 1
    finally:
        doc["finished"] = datetime.now().isoformat(timespec="seconds")
        write(args.out, doc)
        log(f"\nraw results: {args.out}")
    if runner.incidents:
        log(f"{len(runner.incidents)} command(s) failed once and were re-run; see the JSON")
    return 0


if __name__ == "__main__":
    sys.exit(main())
