"""A demo vault: a small, believable memory to try kenomem on (`kenomem tour`).

A person, Sam, builds an app with a team; the vault holds a foundation, facts about Sam
and the project, two episodes, three procedures (one a pattern with a trigger), a
session's scratchpad and today's buffer. Most memories go in through the Python API, as
an agent's would; the pattern and one episode are written as files, as a person would.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from kenomem.errors import KenomemError
from kenomem.files import atomic

MARKER = ".kenomem-tour"  # a vault that `tour` made and may reuse
SESSION = "tour"

FOUNDATION = """---
title: Foundation
---

# Foundation

Sam builds Lumen, a reading app, with a small team. This file always comes first in
the context an agent is given; kenomem never changes it.

## Values

- Be honest about what you do not know; say so in one line.
- Prefer the simple solution that works over the clever one.

## Long-term goals

- Ship Lumen 1.0 this spring, with an onboarding people finish.
"""

# (text, type, tags, importance, days ago)
MEMORIES: list[tuple[str, str, tuple[str, ...], int, int]] = [
    ("Prefers short, direct answers without pleasantries", "semantic", ("preference",), 7, 40),
    ("Sam works from Lisbon (Europe/Lisbon); no meetings before 10:00", "semantic", (), 5, 35),
    ("The production database is PostgreSQL 15 on db1.internal", "semantic", ("infra",), 7, 30),
    ("Deploys go out on Tuesdays after the 10:00 stand-up", "semantic", ("work",), 6, 28),
    ("Mara is the design lead; she owns the onboarding flow", "semantic", ("people",), 6, 21),
    ("The API is written in Go; the web app in TypeScript with React", "semantic", (), 5, 20),
    ("Staging is staging.lumen.dev; its database resets every night", "semantic", ("infra",), 4, 9),
    (
        "Decided with Mara to move the launch to March 12, so that onboarding is finished",
        "episodic",
        ("launch",),
        8,
        2,
    ),
    (
        "To restart the API, run systemctl restart lumen-api, then check /healthz",
        "procedural",
        ("infra",),
        6,
        14,
    ),
    (
        "For a status update, answer in three bullets: done, next, blocked",
        "procedural",
        ("preference",),
        6,
        12,
    ),
]

OUTAGE = """---
id: mem_{id}_0d15
type: episodic
title: The db1 outage
tags: [incident, infra]
importance: 7
when: {when}
created: {when}
---

db1's disk filled up and stopped every write for 40 minutes. Fixed by rotating the WAL
archive; a disk alert at 80% now pages whoever is on call.
"""

DOCKER = """---
id: mem_{id}_d0c4
type: procedural
title: When docker says the port is in use
tags: [docker]
importance: 6
status: active
trigger: docker + port + in use
confidence: 0.8
created: {when}
---

Run `docker ps` to find the container that holds the port, stop it, then start again.
"""

SCRATCHPAD = """Task: prepare the March launch
Context: the date moved to March 12; onboarding must be done first
Pending:
- confirm the date with Mara
- book the Tuesday deploy slot
Notes: the launch slides are due on Friday"""


# The memories above and the two hand-written files (the outage episode, the Docker pattern).
DEMO_MEMORIES = len(MEMORIES) + 2


class DemoVault(NamedTuple):
    root: Path
    created: bool  # False: a demo vault made earlier, used as it is
    memories: int


def build_demo(root: Path, now: datetime | None = None) -> DemoVault:
    """Create the demo vault at `root`, or reuse the one an earlier tour made there.

    Refuses a folder that holds anything else: the demo never mixes with real memories.
    """
    now = now or datetime.now(UTC)
    if (root / MARKER).is_file():
        return DemoVault(root, False, DEMO_MEMORIES)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise KenomemError(
            f"{root} is not empty: the tour makes its demo vault in a new folder",
            hint="give the tour another folder: kenomem tour /tmp/kenomem-tour",
        )
    try:
        _fill(root, now)
    except BaseException:
        import shutil

        shutil.rmtree(root, ignore_errors=True)  # it was new or empty: leave no half demo
        raise
    return DemoVault(root, True, DEMO_MEMORIES)


def _fill(root: Path, now: datetime) -> None:
    from kenomem.api import Vault

    Vault.init(root)
    atomic.write_bytes(root / "foundation.md", FOUNDATION.encode())  # over the template's
    then = now - timedelta(days=18)
    fields = {"when": then.strftime("%Y-%m-%dT%H:%M:%SZ"), "id": then.strftime("%Y%m%d_%H%M%S")}
    atomic.create_bytes(root / "episodic" / "db1-outage.md", OUTAGE.format(**fields).encode())
    atomic.create_bytes(root / "procedural" / "docker-port.md", DOCKER.format(**fields).encode())
    vault = Vault(root, source="tour")
    for text, mem_type, tags, importance, days in MEMORIES:
        vault.remember(
            text,
            type=mem_type,
            tags=tags,
            importance=importance,
            now=now - timedelta(days=days, hours=3),
        )
    vault.set_working(SESSION, SCRATCHPAD, now=now - timedelta(hours=2))
    vault.log("Can you draft the launch announcement?", who="Sam", session=SESSION)
    vault.log("Drafted it; it waits for Mara's screenshots.", who="assistant", session=SESSION)
    atomic.create_bytes(root / MARKER, b"made by kenomem tour; delete the folder when done\n")
