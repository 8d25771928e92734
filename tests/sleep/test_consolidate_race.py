"""`consolidate` runs that overlap (a cron run and a manual one) or are killed: each day is
done once, and the vault ends as one run alone leaves it. True processes, started together."""

from __future__ import annotations

import json
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from kenomem.capture.log import LogRequest
from kenomem.capture.log import log as log_entry
from kenomem.files import buffer, fm
from kenomem.files.buffer import Entry, format_entry
from kenomem.files.paths import MEMORY_DIRS
from kenomem.sleep import cycle as consolidate_cycle
from kenomem.sleep.consolidate import ConsolidateRequest, consolidate
from kenomem.sleep.pending import Pending
from kenomem.vault.core import CoreVault
from tests.helpers import KENOMEM, finish, memory_ids, start
from tests.sleep.helpers import NOW, assert_same_vault, clean_copy, failing_after

DAYS = 12
PER_DAY = 30
CITIES = ["Lisbon", "Porto", "Lyon", "Kyoto"]
PEOPLE = ["Ana", "Bruno", "Carla", "Dmitri", "Elena", "Farid", "Grace", "Hiroshi"]
TOPICS = ["billing", "roadmap", "hiring", "garden", "kafka", "postgres", "budget", "sailing"]
PROBLEMS = [
    (
        "The deploy failed with a timeout error on the build step.",
        "Cleared the build cache, fixed.",
    ),
    (
        "The nightly postgres backup failed with a disk full error.",
        "Fixed: cleared the old WAL files and ran the backup again.",
    ),
]
TRIVIA = ["ok thanks", "cool", "good morning", "lol", "sounds good"]


def entry_text(rng: random.Random, day: int) -> tuple[str, str]:
    """(who, text) of one generated entry: facts that change, repeat or are new, problems
    that recur with their fix, decisions, plans, trivia and the assistant's replies."""
    topic, person = rng.choice(TOPICS), rng.choice(PEOPLE)
    kind = rng.choice(("fact", "fact", "decision", "plan", "explicit", "trivia", "trivia", "bot"))
    if kind == "fact":
        return "Adrian", rng.choice(
            (
                f"I live in {CITIES[day // 4 % len(CITIES)]} now.",
                "I work at Acme Corp.",
                f"My sister is called {rng.choice(PEOPLE[:3])}.",
                f"I like {topic}, honestly.",
                f"I don't like {topic} anymore.",
                f"{person}'s birthday is on {rng.randint(1, 28)} May.",
            )
        )
    if kind == "decision":
        return "Adrian", f"We decided to move the {topic} review to Friday, {person} agreed."
    if kind == "plan":
        return "Adrian", f"Meeting with {person} about the {topic} on the {rng.randint(1, 28)}th."
    if kind == "explicit":
        return "Adrian", f"Remember this: {person} owns the {topic} budget now."
    if kind == "bot":
        return "assistant", f"Noted, the {topic} sounds interesting."
    return "Adrian", rng.choice(TRIVIA)


def write_days(vault: Path, days: int = DAYS, per_day: int = PER_DAY, seed: int = 1) -> list[str]:
    """`days` buffer files ending yesterday, written as `kenomem log` writes them."""
    last = datetime.now(UTC).date() - timedelta(days=1)
    paths = []
    for k in range(days):
        day = last - timedelta(days=days - 1 - k)
        rng = random.Random(f"{seed}-{k}")
        texts = [entry_text(rng, k) for _ in range(per_day)]
        if k % 3 == 0:  # a problem and its fix, every third day
            problem, fix = PROBLEMS[k // 3 % 2]
            at = rng.randrange(per_day - 2)
            texts[at : at + 2] = [("Adrian", problem), ("Adrian", fix)]
        clock = sorted(rng.sample(range(7 * 3600, 23 * 3600), per_day))
        start_of = datetime(day.year, day.month, day.day, tzinfo=UTC)
        entries = [
            Entry(start_of + timedelta(seconds=s), who, "s1", "chat", text, i)
            for i, ((who, text), s) in enumerate(zip(texts, clock, strict=True))
        ]
        head = fm.emit({"date": day, "consolidated": None})
        rel = buffer.day_path(day)
        (vault / rel).parent.mkdir(exist_ok=True)
        (vault / rel).write_text(head + "".join(map(format_entry, entries)), encoding="utf-8")
        paths.append(rel)
    return paths


_RUN_TIME = re.compile(r"^(?:last_accessed|consolidated): .*$", re.MULTILINE)


def contents(root: Path) -> dict[str, str]:
    """Every memory and buffer file, without the times that say when a run ran."""
    return {
        p.relative_to(root).as_posix(): _RUN_TIME.sub("", p.read_text(encoding="utf-8"))
        for folder in (*MEMORY_DIRS, "buffer")
        for p in sorted((root / folder).rglob("*.md"))
    }


def indexed(vault: Path) -> None:
    """The index built, so that runs started together start their work together."""
    code, _, err = finish(start(vault, "stats"))
    assert code == 0, err


def consolidate_alone(vault: Path, copy: Path) -> dict[str, str]:
    shutil.copytree(vault, copy)
    code, _, err = finish(start(copy, "consolidate", "--json"))
    assert code == 0, err
    return contents(copy)


def assert_each_day_once(vault: Path, days: list[str], alone: dict[str, str]) -> None:
    on_disk = memory_ids(vault)
    assert len(set(on_disk.values())) == len(on_disk), "an id is in two files"
    assert contents(vault) == alone
    for rel in days:
        assert buffer.parse_day(rel, (vault / rel).read_text("utf-8")).consolidated is not None
    code, out, err = finish(start(vault, "doctor", "--json"))
    # A killed run may leave a temporary file: reported, and cleared by `doctor --fix`.
    assert {f["kind"] for f in json.loads(out)["findings"]} <= {"leftover"}, out
    if code != 0:
        assert finish(start(vault, "doctor", "--fix"))[0] == 0
        code, out, err = finish(start(vault, "doctor", "--json"))
    assert code == 0, (err, out)
    doctor = json.loads(out)
    assert (doctor["healthy"], doctor["findings"], doctor["files"]) == (True, [], len(on_disk))


@pytest.mark.slow
def test_three_runs_at_once_do_each_day_once(tmp_path: Path, vault_dir: Path) -> None:
    days = write_days(vault_dir)
    indexed(vault_dir)
    alone = consolidate_alone(vault_dir, tmp_path / "alone")

    runs = [start(vault_dir, "-q", "consolidate", "--json") for _ in range(3)]
    results = [finish(run) for run in runs]
    for code, _, err in results:
        assert code == 0, err
    done = [day["day"] for _, out, _ in results for day in json.loads(out)["days"]]
    assert sorted(done) == days  # each day by one run
    assert_each_day_once(vault_dir, days, alone)


def kill_mid_run(run: subprocess.Popen[str], vault: Path, rng: random.Random) -> None:
    """SIGKILL once the run has written its first memory, after a random short delay."""
    deadline = time.monotonic() + 60
    while run.poll() is None and time.monotonic() < deadline:
        if any(next((vault / d).rglob("*.md"), None) for d in ("episodic", "semantic")):
            break
        time.sleep(0.005)
    time.sleep(rng.uniform(0, 0.5))
    run.send_signal(signal.SIGKILL)  # or it has finished already: the rerun checks either way
    run.communicate(timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_a_run_killed_at_a_random_point_then_run_again_ends_as_one_run(
    tmp_path: Path, vault_dir: Path, seed: int
) -> None:
    days = write_days(vault_dir, days=8)
    alone = consolidate_alone(vault_dir, tmp_path / "alone")
    rng = random.Random(seed)

    kill_mid_run(start(vault_dir, "consolidate"), vault_dir, rng)
    code, _, err = finish(start(vault_dir, "consolidate"))
    assert code == 0, err
    assert_each_day_once(vault_dir, days, alone)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_a_run_killed_beside_another_then_run_again_ends_as_one_run(
    tmp_path: Path, vault_dir: Path, seed: int
) -> None:
    days = write_days(vault_dir, days=8)
    indexed(vault_dir)
    alone = consolidate_alone(vault_dir, tmp_path / "alone")
    rng = random.Random(seed)

    other = start(vault_dir, "consolidate")
    kill_mid_run(start(vault_dir, "consolidate"), vault_dir, rng)
    code, _, err = finish(other)
    assert code == 0, err
    code, _, err = finish(start(vault_dir, "consolidate"))
    assert code == 0, err
    assert_each_day_once(vault_dir, days, alone)


@pytest.mark.slow
def test_the_generated_days_give_every_kind_of_action(tmp_path: Path, vault_dir: Path) -> None:
    """What the tests above race over: facts created, reinforced and superseded, a
    pattern proposed, trivia left out."""
    write_days(vault_dir)
    code, out, err = finish(start(vault_dir, "consolidate", "--json"))
    assert code == 0, err
    result = json.loads(out)
    assert result["reinforced"] and result["superseded"] and result["proposed"]
    assert len(result["days"]) == DAYS
    assert all(day["trivia"] for day in result["days"])
    assert date.fromisoformat(result["days"][-1]["day"][-13:-3]) < datetime.now(UTC).date()


# -- another run overtakes this one, between its plan and its apply (in one process) ----------

DAY1, DAY2 = "buffer/2026-03-01.md", "buffer/2026-03-02.md"


def two_days(vault: CoreVault) -> None:
    said = [
        (1, "I work at Acme Corp."),
        (1, "Remember this: the staging password rotates every Monday."),
        (1, "The deploy failed with a timeout error on the build step."),
        (2, "As I said, I work at Acme Corp."),
        (2, "We decided to ship the release on Friday."),
    ]
    for n, (day, text) in enumerate(said):
        at = datetime(2026, 3, day, 9, n, tzinfo=UTC)
        log_entry(vault, LogRequest(text, who="Adrian", session="s1", channel="chat", at=at))


def overtaken(monkeypatch: pytest.MonkeyPatch, other: Callable[[], object]) -> None:
    """Run `other` (another run of the cycle) once, when this run has planned its first
    day and before it takes the lock to apply it."""
    original = consolidate_cycle.plan_day
    calls = [0]

    def plan_then_overtake(*args: Any, **kwargs: Any) -> Any:
        plan = original(*args, **kwargs)
        calls[0] += 1
        if calls[0] == 1:
            other()
        return plan

    monkeypatch.setattr(consolidate_cycle, "plan_day", plan_then_overtake)


def test_a_day_another_run_did_meanwhile_is_dropped_and_what_it_wrote_is_reinforced(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, vault_dir: Path
) -> None:
    two_days(CoreVault.open(vault_dir))
    clean = clean_copy(vault_dir, tmp_path)

    def other_run_still_going() -> None:
        # It did the first day and has not indexed it yet (a run indexes at its end).
        with monkeypatch.context() as patch:
            patch.setattr(Pending, "flush", lambda self, vault: None)
            done = consolidate(
                CoreVault.open(vault_dir), ConsolidateRequest(date=date(2026, 3, 1)), now=NOW
            )
        assert [d.day for d in done.days] == [DAY1]

    overtaken(monkeypatch, other_run_still_going)
    result = consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NOW)
    assert [d.day for d in result.days] == [DAY2]
    assert result.reinforced == 1  # the fact the other run wrote, not yet indexed
    assert_same_vault(vault_dir, clean)


def test_a_run_killed_in_the_middle_of_a_day_beside_this_one_is_not_doubled(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, vault_dir: Path
) -> None:
    two_days(CoreVault.open(vault_dir))
    clean = clean_copy(vault_dir, tmp_path)

    def other_run_dies() -> None:
        with monkeypatch.context() as patch:
            failing_after(patch, "create", 2)  # two memories of the first day, then no more
            with pytest.raises(OSError, match="disk on fire"):
                consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NOW)

    overtaken(monkeypatch, other_run_dies)
    result = consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NOW)
    assert [d.day for d in result.days] == [DAY1, DAY2]
    assert_same_vault(vault_dir, clean)


# An LLM command that, while it is asked, lets another run do a day: the one it was asked
# about, or the one it is given.
_OVERTAKING_LLM = """
import json, os, re, subprocess, sys
from pathlib import Path

vault, kenomem, here, day = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4]
asked = re.search(r"Entries of (\\S+):", sys.stdin.read()).group(1)
day = asked if day == "asked" else day
other = subprocess.run(
    [kenomem, "consolidate", "--vault", vault, "--date", day, "--json"],
    capture_output=True, text=True,
)
with open(here / "other.txt", "a") as out:
    out.write(f"asked {asked}, {day} done: {other.returncode} {other.stderr.strip()}\\n")
print(json.dumps({"summary": "Planned by the LLM."}))
"""


def overtaking_llm(tmp_path: Path, vault_dir: Path, day: str) -> str:
    """The command of an LLM that lets another run do `day` ("asked": the day asked)."""
    script = tmp_path / "llm.py"
    script.write_text(_OVERTAKING_LLM, encoding="utf-8")
    return shlex.join([sys.executable, str(script), str(vault_dir), KENOMEM, str(tmp_path), day])


def lock_timeout(vault_dir: Path, seconds: float) -> None:
    text = (vault_dir / "kenomem.toml").read_text("utf-8")
    text = text.replace("# lock_timeout_seconds = 30.0", f"lock_timeout_seconds = {seconds}")
    (vault_dir / "kenomem.toml").write_text(text, "utf-8")


def test_the_llm_is_asked_outside_the_lock_and_a_day_done_meanwhile_is_dropped(
    tmp_path: Path, vault_dir: Path
) -> None:
    lock_timeout(vault_dir, 3.0)
    two_days(CoreVault.open(vault_dir))
    clean = tmp_path / "clean"
    shutil.copytree(vault_dir, clean, ignore=shutil.ignore_patterns(".kenomem"))
    consolidate(
        CoreVault.open(clean), ConsolidateRequest()
    )  # the heuristics, as the other run does it

    result = consolidate(
        CoreVault.open(vault_dir),
        ConsolidateRequest(llm=overtaking_llm(tmp_path, vault_dir, "asked")),
    )
    # Each day was done by the other run, while this one waited for the LLM without the
    # lock (or the other would have timed out); this one dropped its plans.
    assert (tmp_path / "other.txt").read_text("utf-8").splitlines() == [
        "asked 2026-03-01, 2026-03-01 done: 0 ",
        "asked 2026-03-02, 2026-03-02 done: 0 ",
    ]
    assert result.days == []
    assert contents(vault_dir) == contents(clean)
    assert sorted(memory_ids(vault_dir).values()) == sorted(memory_ids(clean).values())


def test_a_day_planned_by_the_llm_is_planned_again_from_its_answer_when_the_vault_moved(
    tmp_path: Path, vault_dir: Path
) -> None:
    two_days(CoreVault.open(vault_dir))
    log_entry(
        CoreVault.open(vault_dir),
        LogRequest("Remember this: I live in Porto.", at=datetime(2026, 3, 3, 9, tzinfo=UTC)),
    )
    command = overtaking_llm(tmp_path, vault_dir, "2026-03-03")

    result = consolidate(CoreVault.open(vault_dir), ConsolidateRequest(llm=command))
    # While it was asked about days 1 and 2, another run did day 3 (twice): this run read
    # what it wrote, planned each day again from the answer it had, without asking again.
    assert (tmp_path / "other.txt").read_text("utf-8").splitlines() == [
        "asked 2026-03-01, 2026-03-03 done: 0 ",
        "asked 2026-03-02, 2026-03-03 done: 0 ",
    ]
    assert [(d.day, d.method) for d in result.days] == [(DAY1, "llm"), (DAY2, "llm")]
    ids = memory_ids(vault_dir)
    assert len(set(ids.values())) == len(ids)
    summaries = [p for p in ids if "day-summary" in p]
    assert len(summaries) == 3


def test_what_another_process_saved_meanwhile_survives_the_runs_indexing(
    monkeypatch: pytest.MonkeyPatch, vault_dir: Path
) -> None:
    from kenomem.capture.remember import RememberRequest, remember
    from kenomem.recall.search import RecallRequest, recall

    vault = CoreVault.open(vault_dir)
    note = remember(
        vault, RememberRequest("The boiler is serviced in May.", type="semantic", now=NOW)
    )
    log_entry(vault, LogRequest("I work at Acme Corp.", at=datetime(2026, 3, 1, 9, tzinfo=UTC)))
    consolidate(vault, ConsolidateRequest(), now=datetime(2026, 3, 2, 4, tzinfo=UTC))
    log_entry(
        vault, LogRequest("As I said, I work at Acme Corp.", at=datetime(2026, 3, 3, 9, tzinfo=UTC))
    )

    def another_process_recalls() -> None:  # it notes the access in the state's journal
        found = recall(CoreVault.open(vault_dir), RecallRequest("boiler", touch=True, now=NOW))
        assert [item.id for item in found.results] == [note.id]

    overtaken(monkeypatch, another_process_recalls)
    result = consolidate(CoreVault.open(vault_dir), ConsolidateRequest(), now=NOW)
    assert result.reinforced == 1  # a file rewritten: indexing it saves the state

    again = CoreVault.open(vault_dir)
    again.sync()
    assert again.state.accessed(note.path, 0.0, 0) == (NOW.timestamp(), 1)
