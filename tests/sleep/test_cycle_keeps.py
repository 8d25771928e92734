"""The sleep cycle keeps what it was told: through the command line, a logged entry is
recallable after `consolidate` as the episode it became, with its speaker; trivia is
listed, never silently dropped; the day's summary says what happened; facts keep their
subject; participants are people."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from kenomem.sleep.facts import extract
from kenomem.sleep.salience import is_trivia, names
from tests.conftest import Cli, write
from tests.sleep.helpers import of


def logged(cli: Cli, *entries: tuple[str, str, str]) -> None:
    """Each (time, who, text) logged on 23 November 2026."""
    for at, who, text in entries:
        args = ["log", text, "--at", f"2026-11-23T{at}"]
        result = cli(*([*args, "--who", who] if who else args))
        assert result.code == 0, result.err


def test_a_logged_fact_is_recalled_after_the_sleep_cycle(cli: Cli) -> None:
    logged(
        cli,
        ("09:00", "", "The office wifi network is called Otter5G"),
        ("09:01", "", "The release train leaves every second Thursday"),
    )
    done = cli("consolidate")
    assert done.code == 0, done.err
    found = cli("recall", "wifi network", "--json")
    assert found.code == 0, found.err
    results = json.loads(found.out)["results"]
    assert results and results[0]["type"] == "episodic"
    assert "Otter5G" in results[0]["title"] + results[0]["snippet"]
    train = json.loads(cli("recall", "release train", "--json").out)["results"]
    assert any("second Thursday" in r["title"] + r["snippet"] for r in train)


def test_trivia_is_listed_in_the_output(cli: Cli) -> None:
    logged(
        cli,
        ("21:58", "Andrew", "We booked the cabin at Lake Tahoe for 14 March."),
        ("21:59", "Audrey", "Sounds great!"),
        ("22:07", "Andrew", "Thanks!"),
    )
    plan = cli("consolidate", "--dry-run", "--json")
    assert plan.code == 0, plan.err
    (day,) = json.loads(plan.out)["days"]
    assert day["trivia"] == 2
    assert [(d["at"], d["who"], d["text"]) for d in day["dropped"]] == [
        ("21:59:00", "Audrey", "Sounds great!"),
        ("22:07:00", "Andrew", "Thanks!"),
    ]
    said = cli("consolidate")
    assert said.code == 0, said.err
    assert "dropped   trivia     21:59 Audrey: Sounds great!" in said.out
    assert "dropped   trivia     22:07 Andrew: Thanks!" in said.out


def test_the_summary_says_what_happened_and_episodes_name_their_speaker(
    cli: Cli, vault_dir: Path
) -> None:
    logged(
        cli,
        ("21:50", "Andrew", "Hey Audrey, how was your week?"),
        ("21:55", "Audrey", "I adopted a second dog yesterday, a beagle called Pixie."),
        ("21:58", "Andrew", "I recently started a blog on car mods, mostly about exhausts."),
        ("21:59", "Audrey", "Sounds great!"),
        ("22:01", "Audrey", "Wow, Andrew!"),
        ("22:05", "Andrew", "Cool"),
        ("22:07", "Andrew", "Thanks!"),
    )
    assert cli("consolidate").code == 0
    (summary,) = [m for m in of(vault_dir, type="episodic") if "summary" in m["tags"]]
    body = summary["body"]
    assert "Audrey: I adopted a second dog yesterday" in body
    assert "Andrew: I recently started a blog on car mods" in body
    for thanks in ("Sounds great", "Wow", "Thanks!", "Cool", "Highlights"):
        assert thanks not in body
    episodes = {m["body"] for m in of(vault_dir, type="episodic") if "summary" not in m["tags"]}
    assert "Andrew: I recently started a blog on car mods, mostly about exhausts." in episodes
    assert "Andrew: Hey Audrey, how was your week?" in episodes  # low, but kept
    lowest = min(
        int(m["importance"]) for m in of(vault_dir, type="episodic") if "summary" not in m["tags"]
    )
    assert int(summary["importance"]) <= max(lowest, 4)


def test_facts_keep_their_subject(cli: Cli, vault_dir: Path) -> None:
    logged(
        cli,
        ("10:00", "Caroline", "I live in Lisbon and I love hiking."),
        ("10:01", "Nate", "Buddy and I have a great time doing walks."),
        ("10:02", "Nate", "I like those games too!"),
        ("10:03", "", "I work at Acme Corp."),
    )
    assert cli("consolidate").code == 0
    facts = sorted(m["title"] for m in of(vault_dir, type="semantic"))
    assert facts == ["Caroline likes hiking", "Caroline lives in Lisbon", "Works at Acme Corp"]


def test_participants_are_people(cli: Cli, vault_dir: Path) -> None:
    logged(
        cli,
        ("11:00", "Dana", "We discussed the Kafka migration with Priya and Tom."),
        ("11:05", "Dana", "Marcus bought a Tesla Model 3 last week."),
        ("11:06", "Dana", "I upgraded Postgres and the Kafka cluster went down."),
    )
    assert cli("consolidate").code == 0
    people = {
        p
        for m in of(vault_dir, type="episodic")
        if "summary" not in m["tags"]
        for p in m.get("participants", [])
    }
    assert people == {"Dana", "Priya", "Tom"}


def test_names_of_things_are_not_people() -> None:
    assert names("We discussed the Kafka migration with Anna") == ["Anna"]
    assert names("I saw Adrian drive a red Tesla Model 3") == ["Adrian"]
    assert names("Then I upgraded Postgres, and Redis too") == []


# -- the trivia rule ---------------------------------------------------------------------------

_ACKS = ["ok", "thanks", "Thanks!", "Sounds great!", "cool", "hi", "bye", "got it", "wow"]


@given(
    st.sampled_from(_ACKS),
    st.one_of(
        st.integers(0, 10_000).map(str),
        st.from_regex(r"[A-Z][a-z]{2,9}", fullmatch=True),
        st.sampled_from(["Otter5G", "v2", "401", "n8n", "Pixie", "Lisbon"]),
    ),
    st.sampled_from([" ", ", ", " at ", " to ", "! "]),
    st.booleans(),
)
def test_an_entry_with_a_number_or_a_name_is_never_trivia(
    ack: str, fact: str, glue: str, first: bool
) -> None:
    text = f"{fact}{glue}{ack}" if first else f"{ack}{glue}{fact}"
    if fact.lower() in {a.lower().strip("!") for a in _ACKS} | {"bye", "thanks", "okay", "yes"}:
        return  # a capitalised acknowledgement ("Thanks") is one of the words, not a name
    assert not is_trivia(text), text


def test_the_labelled_entries_never_lose_a_fact() -> None:
    """bench/data/trivia-entries.jsonl: no fact-bearing entry is judged trivia, and most
    trivia is."""
    path = Path(__file__).resolve().parents[2] / "bench" / "data" / "trivia-entries.jsonl"
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    facts = [r["text"] for r in rows if r["label"] == "fact-bearing"]
    trivia = [r["text"] for r in rows if r["label"] == "trivia"]
    assert len(rows) >= 150 and len(facts) >= 75
    assert [t for t in facts if is_trivia(t)] == []
    assert sum(map(is_trivia, trivia)) >= 0.8 * len(trivia)


def test_a_fact_without_a_clear_subject_is_not_made() -> None:
    assert extract("Buddy and I have a great time doing walks", "nate", "Nate") == []
    assert extract("I like those games too", "nate", "Nate") == []
    assert extract("I have a great time with my kids", "nate", "Nate") == []
    (fact,) = extract("Buddy is fine, and I live in Porto now", "nate", "Nate")
    assert fact.text == "Nate lives in Porto"


def test_a_long_entry_is_judged_in_time_proportional_to_it() -> None:
    """Every input is hostile: an entry of 100,000 characters of capitalised words after
    articles is judged in well under a second, not in time growing with its square."""
    import time

    text = "the Kafka " * 10_000
    started = time.perf_counter()
    assert names(text) == []
    assert not is_trivia(text)
    extract(text, "nate", "Nate")
    assert time.perf_counter() - started < 10


PORTO = """---
id: mem_20261101_090000_0a0b
type: semantic
created: 2026-11-01T09:00:00+00:00
---
Lives in Porto
"""


def test_a_fact_said_otherwise_supersedes_the_one_stored_before(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/lives-in-porto.md", PORTO)
    old = "mem_20261101_090000_0a0b"
    logged(cli, ("09:00", "", "I moved to Madrid last month, the flat is great"))
    plan = json.loads(cli("consolidate", "--json").out)
    (day,) = plan["days"]
    [superseding] = [a for a in day["actions"] if a["action"] == "supersede"]
    assert superseding["target"] == old
    found = json.loads(cli("recall", "where do I live", "--json").out)["results"]
    assert [r["id"] for r in found if r["type"] == "semantic"] == [superseding["id"]]


def test_a_fact_that_only_looks_alike_supersedes_nothing(cli: Cli, vault_dir: Path) -> None:
    write(vault_dir, "semantic/lives-in-porto.md", PORTO)
    logged(cli, ("09:00", "", "I work at Shopify now"))
    plan = json.loads(cli("consolidate", "--json").out)
    (day,) = plan["days"]
    assert not [a for a in day["actions"] if a["action"] == "supersede"]


def test_a_day_older_than_the_fact_stored_supersedes_nothing(cli: Cli) -> None:
    # Stored today, after the day logged: the day's older word does not replace it.
    assert cli("remember", "Lives in Porto", "--type", "semantic").code == 0
    logged(cli, ("09:00", "", "I moved to Madrid last month, the flat is great"))
    plan = json.loads(cli("consolidate", "--json").out)
    (day,) = plan["days"]
    assert not [a for a in day["actions"] if a["action"] == "supersede"]
