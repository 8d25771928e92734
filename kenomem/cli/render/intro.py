"""How the first meeting looks: `kenomem` alone, and the steps of `kenomem tour`."""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from kenomem.cli.output import Line, Output, inline

if TYPE_CHECKING:
    from kenomem.cli.demo import DemoVault
    from kenomem.vault.views import StatsResult

START: list[tuple[str, str]] = [
    ("kenomem tour", "a demo vault and the main commands run on it, explained (1 minute)"),
    ("kenomem init", "create your vault at the path above"),
    ('kenomem remember "Prefers short answers"', "then store a first memory"),
    ('kenomem recall "answer style" --explain', "and find it again"),
]


# Why the vault is the one chosen (`files/vaultfind.py`), as said under its path.
CHOSEN = {
    "flag": "named by --vault",
    "env": "named by $KENOMEM_VAULT",
    "here": "found in the folder you are in",
    "above": "found in a folder above the one you are in",
    "default": "the default: no $KENOMEM_VAULT, and no vault in this folder or above it",
}


def welcome(
    out: Output, root: Path, why: str, passed: list[str], stats: StatsResult | None
) -> None:
    """Without a vault: what kenomem is and how to begin. With one: where it stands.
    Either way, which vault the commands use here, and why (`why`: a key of CHOSEN;
    `passed`: vaults of other users the search from here passed over)."""
    lines: list[Line] = [
        [("kenomem", "bold"), (": a long-term memory for LLM agents, kept as markdown files.", "")],
        [("", "")],
    ]
    chosen: list[Line] = [[(f"  {CHOSEN.get(why, why)}", "dim")]]
    chosen += [
        [(f"  passed over {inline(p)}: another user's (name it with --vault to use it)", "dim")]
        for p in passed
    ]
    if stats is None:
        lines += [
            [("No vault yet at ", ""), (inline(str(root)), "bold")],
            *chosen,
            [("To begin:", "")],
            *_commands(START),
            [("", "")],
            [
                (
                    "Elsewhere: kenomem init PATH, then work in it (cd PATH), export "
                    "KENOMEM_VAULT=PATH or use --vault PATH",
                    "dim",
                )
            ],
        ]
    else:
        by_type = ", ".join(f"{n} {t}" for t, n in stats.by_type.items() if n) or "none yet"
        lines += [
            [("Vault ", ""), (inline(str(root)), "bold"), (f" ({stats.engine} index)", "dim")],
            *chosen,
            [(f"  {stats.memories} memor{'y' if stats.memories == 1 else 'ies'}: {by_type}", "")],
            [("", "")],
            *_commands(
                [
                    ('kenomem remember "..."', "store a memory"),
                    ("kenomem recall WORDS --explain", "find memories, ranked"),
                    ("kenomem list --since 7d", "the newest"),
                    ('kenomem context "topic" --session s1', "the block for an agent's prompt"),
                    ("kenomem doctor", "check the vault"),
                ]
            ),
        ]
    lines += [
        [("", "")],
        [("Every command: kenomem --help; one command: kenomem recall --help", "dim")],
    ]
    out.data({}, lines)  # no --json here: `kenomem --json` is Typer's


def _commands(rows: list[tuple[str, str]]) -> list[Line]:
    width = max(len(command) for command, _ in rows)
    return [[("  " + command.ljust(width), "cyan"), (f"  {what}", "dim")] for command, what in rows]


def tour_start(out: Output, demo: DemoVault, shown: str) -> None:
    made = "A demo vault" if demo.created else "The demo vault made earlier"
    out.data(
        {},
        [
            [
                (f"{made} at ", ""),
                (shown, "bold"),
                (f": {demo.memories} memories, a foundation,", ""),
            ],
            [("a session's scratchpad and today's log. Each step runs a real command on it.", "")],
        ],
    )


def tour_step(out: Output, n: int, total: int, why: str, command: str) -> None:
    head = f"── {n}/{total} "
    text = textwrap.wrap(why, 88 - len(head))
    lines: list[Line] = [[("", "")], [(head, "dim"), (text[0], "")]]
    lines += [[(" " * len(head) + more, "")] for more in text[1:]]
    lines.append([("$ ", "dim"), (command, "bold cyan")])
    out.data({}, lines)


def tour_end(out: Output, shown: str) -> None:
    vault = shlex.quote(shown)
    out.data(
        {},
        [
            [("", "")],
            [("That was the tour. The demo vault stays at ", ""), (shown, "bold"), (":", "")],
            [(f"  ls {vault}/semantic", "cyan"), ("  the memories are plain files", "dim")],
            [(f"  export KENOMEM_VAULT={vault}", "cyan"), ("  to try any command on it", "dim")],
            [(f"  rm -r {vault}", "cyan"), ("  when you are done", "dim")],
            [
                ("Your own vault: ", ""),
                ("kenomem init", "cyan"),
                ("; every command: ", ""),
                ("kenomem --help", "cyan"),
            ],
        ],
    )
