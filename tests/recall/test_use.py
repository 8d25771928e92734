"""Use counts: `w_use * log(1 + access_count)` in the score (scoring.py, search.py)."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kenomem.api import Vault
from kenomem.recall.scoring import Weights, combine, use
from tests.conftest import Cli, write
from tests.recall.helpers import memory_file

NOW = "2026-03-02T12:00:00Z"
AT = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def _twins(vault_dir: Path, count: int = 50) -> None:
    """Two memories alike in all but their use: `b` recalled `count` times, `a` never (its
    id first, so that a tie puts it first)."""
    for name, extra in (("a", {}), ("b", {"access_count": count})):
        body = f"The staging database runs on host {name}lpha"
        write(vault_dir, f"semantic/{name}.md", memory_file(f"mem_{name}", body, body, **extra))


def test_use_grows_with_each_recall_less_each_time() -> None:
    assert use(0) == 0 and use(-3) == 0
    assert use(50) == pytest.approx(math.log(51))
    assert use(2) - use(1) < use(1) - use(0)
    assert use(10**100) == use(1000) == pytest.approx(math.log(1001))  # a count by hand
    terms = combine(Weights(0.1, 0.5, 1.0, 0.02), 1.0, 0.5, 1.0, use(50))
    assert terms.score == pytest.approx(0.1 + 0.25 + 1.0 + 0.02 * math.log(51))
    assert terms.use == pytest.approx(math.log(51))


@pytest.mark.both_engines
def test_a_memory_recalled_50_times_ranks_above_its_twin_never_recalled(vault_dir: Path) -> None:
    _twins(vault_dir)
    v = Vault(vault_dir)
    found = v.recall("staging database", now=AT, touch=False).results
    assert [item.id for item in found] == ["mem_b", "mem_a"]
    assert found[0].access_count == 50
    assert found[0].use == pytest.approx(math.log(51), abs=1e-4)
    assert found[1].use == 0
    assert found[0].score - found[1].score == pytest.approx(0.01 * math.log(51), abs=1e-3)
    # without the weight, the tie: by id
    plain = v.recall("staging database", now=AT, touch=False, w_use=0).results
    assert [item.id for item in plain] == ["mem_a", "mem_b"]


def test_explain_shows_use_as_its_own_part(cli: Cli, vault_dir: Path) -> None:
    _twins(vault_dir)
    shown = cli("recall", "staging", "database", "--now", NOW, "--no-touch", "--explain")
    assert shown.code == 0
    line = next(x for x in shown.out.splitlines() if "mem_b" not in x and "use " in x)
    assert f"+ use {math.log(51):.3f} x 0.01 =" in line
    assert "used 50 times" in line
    doc = json.loads(cli("recall", "staging", "database", "--now", NOW, "--no-touch", "--json").out)
    assert doc["weights"]["use"] == 0.01
    assert [r["use"] for r in doc["results"]] == [round(math.log(51), 4), 0.0]
    # a weight for one call
    doc = json.loads(
        cli("recall", "staging database", "--now", NOW, "--no-touch", "--w-use", "0", "--json").out
    )
    assert [r["id"] for r in doc["results"]] == ["mem_a", "mem_b"]
