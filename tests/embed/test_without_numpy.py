"""Recall by meaning on an install without numpy (a plain `pip install kenomem`, with an
embeddings server named in kenomem.toml): every command still works by words, warns once
naming the extra that brings numpy, and sends the server nothing. The real `kenomem`
entry point runs in a subprocess whose `import numpy` fails, against a real HTTP server
on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kenomem.embed.provider import EmbeddingsUnavailable, numpy_or_explain
from tests.conftest import write
from tests.embed.helpers import Misbehaving, use_embeddings
from tests.helpers import KENOMEM, env_for

VECTORS = "pip install 'kenomem[vectors]'"


def without_numpy(tmp_path: Path) -> Path:
    """A folder that, first on PYTHONPATH, makes `import numpy` fail as if it were not
    installed."""
    folder = tmp_path / "no-numpy"
    (folder / "numpy").mkdir(parents=True)
    (folder / "numpy" / "__init__.py").write_text(
        "raise ImportError(\"No module named 'numpy'\", name='numpy')\n", "utf-8"
    )
    return folder


def kenomem(vault_dir: Path, blocked: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = env_for(vault_dir)
    env["PYTHONPATH"] = str(blocked)
    return subprocess.run(
        [KENOMEM, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_entry_point_cannot_import_numpy_here(tmp_path: Path) -> None:
    """The premise of the tests below, checked in the same kind of process."""
    blocked = without_numpy(tmp_path)
    python = Path(KENOMEM).with_name(Path(sys.executable).name)
    probe = subprocess.run(
        [str(python), "-c", "import numpy"],
        env={"PYTHONPATH": str(blocked)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert probe.returncode == 1 and "No module named 'numpy'" in probe.stderr


def test_without_numpy_reindex_rebuilds_the_index_and_warns_once_naming_the_extra(
    vault_dir: Path, tmp_path: Path
) -> None:
    blocked = without_numpy(tmp_path)
    write(vault_dir, "semantic/db.md", "---\nid: mem_db\n---\nThe production database is db1.\n")
    write(vault_dir, "semantic/ux.md", "---\nid: mem_ux\n---\nMaria leads the design work.\n")
    with Misbehaving("ok") as server:
        use_embeddings(vault_dir, server.url)

        made = kenomem(vault_dir, blocked, "reindex", "--json")
        found = kenomem(vault_dir, blocked, "recall", "production", "database", "--json")
        kept = kenomem(vault_dir, blocked, "remember", "Deploys go out on Tuesdays.")

    assert made.returncode == 0, made.stderr
    doc = json.loads(made.stdout)
    assert (doc["indexed"], doc["embedded"], doc["without_vector"]) == (2, 0, 2)
    warnings = made.stderr.splitlines()
    assert len(warnings) == 1, made.stderr
    assert warnings[0].startswith("warning: ")
    assert "the openai provider needs numpy" in warnings[0] and VECTORS in warnings[0]
    assert "semantic" not in made.stderr and "Traceback" not in made.stderr

    assert found.returncode == 0, found.stderr  # the keyword index is whole
    assert [r["id"] for r in json.loads(found.stdout)["results"]] == ["mem_db"]
    assert VECTORS in found.stderr
    assert kept.returncode == 0, kept.stderr
    assert VECTORS in kept.stderr
    assert "semantic]" not in found.stderr + kept.stderr
    assert server.requests == []  # nothing is sent that could not be kept


@pytest.mark.parametrize(("provider", "extra"), [("openai", "vectors"), ("fastembed", "semantic")])
def test_the_hint_names_the_extra_each_provider_needs(
    provider: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "numpy", None)  # `import numpy` raises ImportError
    with pytest.raises(EmbeddingsUnavailable) as caught:
        numpy_or_explain(provider)
    assert f"the {provider} provider needs numpy" in str(caught.value)
    assert str(caught.value).endswith(f"pip install 'kenomem[{extra}]'")
