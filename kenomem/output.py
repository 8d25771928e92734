"""Everything kenomem shows: one JSON document, plain text, or rich text on a terminal.

Data goes to stdout, messages and warnings to stderr. `--json` prints exactly one JSON
document on stdout. Plain text is used when stdout is not a terminal (or `NO_COLOR` is
set); rich, imported only then, formats for a terminal. Renderers build styled lines, so
the terminal and the pipe show the same layout.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kenomem.fm import format_time

Segment = tuple[str, str]  # (text, rich style or "")
Line = list[Segment]


class Output:
    def __init__(
        self, *, json_mode: bool = False, quiet: bool = False, verbose: bool = False
    ) -> None:
        self.json_mode = json_mode
        self.quiet = quiet  # only errors on stderr
        self.verbose = verbose and not quiet  # details on stderr too
        self.rich = sys.stdout.isatty() and not json_mode and "NO_COLOR" not in os.environ
        self._console: Any = None

    # -- messages on stderr ------------------------------------------------------------

    def message(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr)

    def detail(self, text: str) -> None:
        """What --verbose adds: how the command went (the vault, the engine, the time)."""
        if self.verbose:
            print(text, file=sys.stderr)

    def warn(self, text: str) -> None:
        if not self.quiet:
            print(f"warning: {text}", file=sys.stderr)

    def error(self, text: str, hint: str | None = None) -> None:
        print(f"error: {text}", file=sys.stderr)
        if hint:
            print(f"hint: {hint}", file=sys.stderr)

    def confirm(self, question: str) -> bool | None:
        """The user's answer, or None when nobody is at a terminal to answer."""
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return None
        print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
        try:
            answer = sys.stdin.readline()
        except KeyboardInterrupt:
            return False
        return answer.strip().lower() in ("y", "yes")

    @property
    def shows_progress(self) -> bool:
        """Whether progress bars are drawn: on a terminal's stderr, never with --json or
        --quiet (a command may skip counting the work when they are not)."""
        return not (self.quiet or self.json_mode) and sys.stderr.isatty()

    @contextmanager
    def progress(self, label: str, total: int | None) -> Iterator[Callable[[int], None]]:
        """A progress callback: a bar on a terminal's stderr, silence elsewhere (a pipe,
        --json, --quiet)."""
        if not self.shows_progress:
            yield lambda _done: None
            return
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(label, total=total)
            yield lambda done: bar.update(task, completed=done)

    # -- data on stdout ------------------------------------------------------------------

    def data(self, document: dict[str, Any], lines: list[Line]) -> None:
        if self.json_mode:
            sys.stdout.write(json.dumps(document, default=_json_default, ensure_ascii=False))
            sys.stdout.write("\n")
            return
        if self.rich:
            console = self._rich_console()
            from rich.text import Text

            for line in lines:
                console.print(Text.assemble(*line), soft_wrap=True, highlight=False)
            return
        sys.stdout.write("".join("".join(text for text, _ in line) + "\n" for line in lines))

    def text(self, text: str) -> None:
        """Text that is the command's product (a reply), written as it is."""
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")

    def table(
        self,
        document: dict[str, Any],
        headers: list[str],
        rows: list[list[Segment]],
        footer: list[Line] | None = None,
    ) -> None:
        """Rows of cells: a rich table on a terminal, aligned columns otherwise."""
        if self.json_mode or not self.rich:
            widths = [max([len(h), *(len(r[i][0]) for r in rows)]) for i, h in enumerate(headers)]
            lines: list[Line] = []
            if rows:
                lines.append(
                    [
                        (
                            "  ".join(
                                h.ljust(w) for h, w in zip(headers, widths, strict=True)
                            ).rstrip(),
                            "",
                        )
                    ]
                )
                lines.extend(
                    [
                        (
                            "  ".join(
                                c[0].ljust(w) for c, w in zip(r, widths, strict=True)
                            ).rstrip(),
                            "",
                        )
                    ]
                    for r in rows
                )
            self.data(document, lines + (footer or []))
            return
        from rich.table import Table
        from rich.text import Text

        grid = Table(box=None, header_style="bold", pad_edge=False)
        for header in headers:
            grid.add_column(header, overflow="fold")
        for row in rows:
            grid.add_row(*(Text(text, style=style) for text, style in row))
        console = self._rich_console()
        if rows:
            console.print(grid)
        for line in footer or []:
            console.print(Text.assemble(*line), highlight=False)

    def _rich_console(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(highlight=False)
        return self._console


def to_jsonable(value: Any) -> Any:
    if isinstance(value, tuple) and hasattr(value, "_asdict"):  # a NamedTuple record
        return {k: to_jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, Path):
        return str(value)
    return value


def _json_default(value: Any) -> Any:
    converted = to_jsonable(value)
    if converted is value:
        return str(value)
    return converted


def when(moment: datetime | None, rich: bool) -> str:
    """Relative on a terminal ("3 days ago"), ISO otherwise."""
    if moment is None:
        return ""
    if rich:
        from kenomem.timeparse import ago

        return ago(moment, datetime.now(UTC))
    return format_time(moment)
