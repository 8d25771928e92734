"""Everything kenomem shows: one JSON document, plain text, or rich text on a terminal.

Data goes to stdout, messages and warnings to stderr. `--json` prints exactly one JSON
document on stdout. Plain text is used when stdout is not a terminal (or `NO_COLOR` is
set); rich, imported only then, formats for a terminal. Renderers build styled lines, so
the terminal and the pipe show the same layout.

Titles, bodies, tags, paths and the warnings that quote a file come from files anyone
may have written. Everything printed goes through `visible` here, and only here: a
control character (an ESC starting a terminal escape sequence, a carriage return, a
bell, C1 controls) is shown as `^[`, `^M`, `\\x9b`..., never sent, in plain text to a
pipe as well as to a terminal (a pipe often ends on one, through `less -R` or `cat`);
newlines and tabs stay. Rich gets `Text` objects, never markup, so a title such as
`[bold red]x` is printed as written. `--json` escapes controls by JSON's rules, DEL and
C1 controls included.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from kenomem.files.fm import format_time

Segment = tuple[str, str]  # (text, rich style or "")
Line = list[Segment]

# The C0 controls but tab and newline, DEL and the C1 controls, as they are shown.
_SHOWN = {
    **{code: "^" + chr(code + 64) for code in range(32) if code not in (9, 10)},
    127: "^?",
    **{code: f"\\x{code:02x}" for code in range(0x80, 0xA0)},
}
# In a JSON document: JSON escapes C0 controls itself, not DEL and C1.
_JSON_ESCAPED = {code: f"\\u{code:04x}" for code in (127, *range(0x80, 0xA0))}


def visible(text: str) -> str:
    """`text` with every control character shown (ESC as `^[`), never sent; a CRLF line
    ending is a newline."""
    return text.replace("\r\n", "\n").translate(_SHOWN)


# A name shown within a line: newlines and tabs shown too.
_SHOWN_INLINE = {**_SHOWN, 9: "^I", 10: "^J"}


def inline(text: str) -> str:
    """`text` on one line, every control character shown, newlines and tabs included:
    a file name, whose newline would otherwise split the line it is named in."""
    return text.translate(_SHOWN_INLINE)


def _visible_line(line: Line) -> Line:
    return [(visible(text), style) for text, style in line]


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
            print(visible(text), file=sys.stderr)

    def detail(self, text: str) -> None:
        """What --verbose adds: how the command went (the vault, the engine, the time)."""
        if self.verbose:
            print(visible(text), file=sys.stderr)

    def warn(self, text: str) -> None:
        if not self.quiet:
            print(f"warning: {visible(text)}", file=sys.stderr)

    def error(self, text: str, hint: str | None = None) -> None:
        print(f"error: {visible(text)}", file=sys.stderr)
        if hint:
            print(f"hint: {visible(hint)}", file=sys.stderr)

    def confirm(self, question: str) -> bool | None:
        """The user's answer, or None when nobody is at a terminal to answer."""
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return None
        print(f"{visible(question)} [y/N] ", end="", file=sys.stderr, flush=True)
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

    @contextmanager
    def phases(self) -> Iterator[Callable[[str, int | None], Callable[[int], None]]]:
        """Progress in steps, one bar after the other: `phase(label, total)` starts the
        next and gives its callback."""
        if not self.shows_progress:
            yield lambda _label, _total: lambda _done: None
            return
        from rich.console import Console
        from rich.progress import Progress

        with Progress(console=Console(stderr=True), transient=True) as bar:
            tasks: list[Any] = []

            def phase(label: str, total: int | None) -> Callable[[int], None]:
                for old in tasks:
                    bar.remove_task(old)
                tasks[:] = [bar.add_task(label, total=total)]
                task = tasks[0]
                return lambda done: bar.update(task, completed=done)

            yield phase

    # -- data on stdout ------------------------------------------------------------------

    def data(self, document: dict[str, Any], lines: list[Line]) -> None:
        if self.json_mode:
            text = json.dumps(document, default=_json_default, ensure_ascii=False)
            sys.stdout.write(text.translate(_JSON_ESCAPED))
            sys.stdout.write("\n")
            return
        lines = [_visible_line(line) for line in lines]
        if self.rich:
            console = self._rich_console()
            from rich.text import Text

            for line in lines:
                console.print(Text.assemble(*line), soft_wrap=True, highlight=False)
            return
        sys.stdout.write("".join("".join(text for text, _ in line) + "\n" for line in lines))

    def text(self, text: str) -> None:
        """Text that is the command's product (a reply), written as it is but for its
        control characters."""
        text = visible(text)
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")

    def table(
        self,
        document: dict[str, Any],
        headers: list[str],
        rows: list[list[Segment]],
        footer: list[Line] | None = None,
    ) -> None:
        """Rows of cells: a rich table on a terminal, aligned columns otherwise."""
        rows = [_visible_line(row) for row in rows]  # before the widths are measured
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
            console.print(Text.assemble(*_visible_line(line)), highlight=False)

    def _rich_console(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(highlight=False)
        return self._console


def _json_default(value: Any) -> Any:
    from kenomem.api import to_jsonable

    converted = to_jsonable(value)
    if converted is value:
        return str(value)
    return converted


def when(moment: datetime | None, rich: bool) -> str:
    """Relative on a terminal ("3 days ago"), ISO otherwise."""
    if moment is None:
        return ""
    if rich:
        from kenomem.files.timeparse import ago

        return ago(moment, datetime.now(UTC))
    return format_time(moment)
