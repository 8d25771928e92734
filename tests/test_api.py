"""The Python API: `from kenomem import Vault`, the same operations as the command line."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import kenomem
from kenomem import KenomemError, Vault
from kenomem.agents.context import ContextRequest
from kenomem.api import to_jsonable
from kenomem.capture.remember import RememberRequest
from kenomem.recall.search import RecallRequest
from kenomem.vault.views import ListRequest
from tests.conftest import Cli


def test_package_exports_vault_lazily() -> None:
    code = (
        "import sys, kenomem; assert 'kenomem.api' not in sys.modules; "
        "from kenomem import Vault; assert 'kenomem.api' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert kenomem.Vault is Vault


def test_init_then_open_by_path_and_by_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = Vault.init(tmp_path / "v")
    assert (tmp_path / "v" / "foundation.md").is_file() and made.created
    assert Vault(tmp_path / "v").root == tmp_path / "v"
    monkeypatch.setenv("KENOMEM_VAULT", str(tmp_path / "v"))
    assert Vault().root == tmp_path / "v"


def test_missing_vault_is_a_kenomem_error(tmp_path: Path) -> None:
    with pytest.raises(KenomemError) as caught:
        Vault(tmp_path / "nowhere")
    assert caught.value.exit_code == 1


def test_remember_recall_forget_restore(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    made = v.remember("The staging cluster lives in Frankfurt", tags=["infra"])
    assert made.action == "created" and made.type == "semantic"
    again = v.remember("The staging cluster lives in Frankfurt")
    assert again.action == "reinforced" and again.id == made.id
    hits = v.recall("where is staging", limit=3)
    assert hits.results[0].id == made.id
    assert v.show(made.id).memory.access_count == 1
    assert v.forget(made.id).action == "archived"
    assert v.recall("staging cluster").results == []
    assert v.recall("staging cluster", archive=True).results[0].id == made.id
    v.restore(made.id)
    assert v.recall("staging cluster").results[0].id == made.id
    doc = to_jsonable(hits)
    assert doc["results"][0]["id"] == made.id  # JSON-able, as an agent would send it on


def test_source_says_who_wrote_it(vault_dir: Path) -> None:
    made = Vault(vault_dir, source="my-agent").remember("Likes tea", type="semantic")
    text = (vault_dir / made.path).read_text(encoding="utf-8")
    assert "source: my-agent" in text


def test_log_consolidate_and_list(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    yesterday = datetime.now(UTC) - timedelta(days=1)
    v.log("remember this: the release is on Friday", session="s1", who="Dana", at=yesterday)
    v.log("ok thanks", session="s1", who="Dana", at=yesterday + timedelta(minutes=1))
    result = v.consolidate()
    assert result.created >= 1
    episodes = v.list(types=("episodic",)).memories
    assert any("release is on Friday" in m.preview or "release" in m.title for m in episodes)
    assert v.consolidate().created == 0


def test_working_memory_and_patterns(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    assert v.working("s1") is None
    v.set_working("s1", "Task: ship v2\nPending:\n- tag the release\n")
    view = v.working("s1")
    assert view is not None and view.fields["task"] == "ship v2" and not view.stale
    assert v.clear_working("s1").cleared
    assert v.working("s1") is None
    (vault_dir / "procedural" / "port.md").write_text(
        "---\ntype: procedural\ntitle: Port\ntrigger: docker + port\n---\n\nStop Postgres.\n",
        encoding="utf-8",
    )
    assert [p.title for p in v.patterns("the docker port is taken").patterns] == ["Port"]
    assert v.patterns("nothing here").patterns == []


def test_prune_and_reset(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    v.remember("Likes tea", type="semantic")
    v.remember("Went to the market", type="episodic")
    assert v.prune(dry_run=True).dry_run
    done = v.reset()
    assert done.files >= 1
    assert v.list(types=("episodic",)).memories == []
    assert len(v.list(types=("semantic",)).memories) == 1
    v.undo_reset()
    assert len(v.list(types=("episodic",)).memories) == 1


def test_context_and_foundation(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    foundation = v.foundation()
    assert foundation and not foundation.startswith("---")
    block = v.context("anything", budget=2000)
    assert block.text.startswith(foundation.splitlines()[0])


def test_the_command_line_goes_through_the_api(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = Vault.remember

    def spy(self: Vault, request: object, /, **fields: object) -> object:
        calls.append(request)
        return real(self, request, **fields)  # type: ignore[arg-type]

    monkeypatch.setattr(Vault, "remember", spy)
    assert cli("remember", "Prefers tea to coffee", "--tag", "drinks", "--pin").code == 0
    assert calls == [RememberRequest("Prefers tea to coffee", tags=("drinks",), pinned=True)]


def test_a_method_takes_its_request_or_the_request_s_fields(vault_dir: Path) -> None:
    v = Vault(vault_dir)
    v.remember(RememberRequest("The boiler is serviced in May", type="semantic"))
    by_fields = v.recall("boiler service", limit=3, types=["semantic"], touch=False)
    by_request = v.recall(RecallRequest("boiler service", limit=3, types=("semantic",)))
    assert [h.id for h in by_fields.results] == [h.id for h in by_request.results]
    assert len(by_fields.results) == 1
    # Fields given with a request replace its own.
    assert v.recall(RecallRequest("boiler"), query="nothing like it").results == []
    assert v.recall(query="boiler").results  # the first field by name, too
    assert v.list(ListRequest(types=("semantic",))).total == v.list(types=["semantic"]).total
    with pytest.raises(TypeError):
        v.recall("boiler", limt=3)  # a misspelt field is refused at once
    assert v.context(ContextRequest("boiler", budget=500)).tokens <= 500


def test_what_the_vault_remembers_has_the_vault_s_source(vault_dir: Path) -> None:
    made = Vault(vault_dir, source="my-agent").remember(RememberRequest("Likes green tea"))
    assert "source: my-agent" in (vault_dir / made.path).read_text(encoding="utf-8")
