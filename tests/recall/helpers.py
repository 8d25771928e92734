"""What the recall tests share."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import accept

# -- from test_recall.py

STAMP = "2026-03-01T12:00:00Z"


def memory_file(mem_id: str, title: str, body: str, **keys: object) -> str:
    values: dict[str, object] = {
        "id": mem_id,
        "title": title,
        "created": STAMP,
        "last_accessed": STAMP,
        "importance": 5,
    }
    values.update(keys)
    lines = ["---", *(f"{k}: {v}" for k, v in values.items()), "---", "", body, ""]
    return "\n".join(lines)


# -- from test_concepts.py


def recall_settings(vault_dir: Path, **values: object) -> None:
    config = vault_dir / "kenomem.toml"
    lines = "".join(
        f"{k} = {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in values.items()
    )
    config.write_text(config.read_text("utf-8").replace("[recall]\n", "[recall]\n" + lines, 1))
    accept(vault_dir)
