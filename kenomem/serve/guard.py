"""What keeps `kenomem serve` answering under abuse: deadlines on each request, a bound on
open connections, and a log of refusals that stays small.

uvicorn gives a connection no deadline until its first request is whole (its keep-alive
timer starts after a response), so a client that opens connections and sends their
headers a byte at a time (slowloris) holds them, and their file descriptors, for as long
as it likes; at the process's limit of open files the server stops accepting, `/health`
included. `watched` makes the HTTP protocol class that serves each connection
(uvicorn's h11 one, subclassed) with:

- **deadlines**: a request's headers must arrive whole within `HEADERS_SECONDS` of its
  first byte (of the connection, for the first), and its body within `BODY_SECONDS` of
  its headers; else the connection is closed. Between requests, uvicorn's keep-alive
  timeout applies;
- **a bound** (`plan.connection_bound`, under the limit of open files): past it, a new
  connection closes the oldest one still sending its request (a slow client, most
  likely), so that a client that sends its request at once, a `/health` probe say, is
  served through a slowloris; when every connection has its request in, the new one is
  closed at once;
- `TCP_NODELAY`, which asyncio sets only on sockets it made itself.

`Tally` keeps the log of refusals (the gate's and these) at a bounded rate: the first
few of each interval line by line, then one line that counts the rest by kind.
`QuietLogs` routes the per-connection warnings of uvicorn and asyncio (an invalid
request, an accept that found no file descriptor) through it.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from kenomem.serve.plan import BODY_SECONDS, HEADERS_SECONDS

# Refusals logged line by line in each interval; the rest are counted.
FULL_LINES = 10
INTERVAL_SECONDS = 10.0


class Tally:
    """Refusals logged at a bounded rate (see the module's docstring).

    `allow(kind)` counts one refusal and says whether to log it line by line; the rest of
    the interval's are summed up in one line through `emit`, when the interval is over
    (`schedule`, when given, arranges a call of `roll` then, so that a burst followed by
    silence is summed up too)."""

    def __init__(
        self,
        emit: Callable[[str], None],
        *,
        interval: float = INTERVAL_SECONDS,
        full: int = FULL_LINES,
        clock: Callable[[], float] = time.monotonic,
        schedule: Callable[[float, Callable[[], None]], Any] | None = None,
    ) -> None:
        self.emit = emit
        self.interval = interval
        self.full = full
        self.clock = clock
        self.schedule = schedule
        self._start: float | None = None
        self._logged = 0
        self._unlogged: Counter[str] = Counter()
        self._armed = False

    def allow(self, kind: str) -> bool:
        """Count a refusal of `kind`; whether to log it line by line."""
        self.roll()
        if self._start is None:
            self._start = self.clock()
        if self._logged < self.full:
            self._logged += 1
            return True
        self._unlogged[kind] += 1
        if self.schedule is not None and not self._armed:
            self._armed = True
            self.schedule(self._start + self.interval - self.clock(), self._timer)
        return False

    def roll(self, *, now: bool = False) -> None:
        """End the interval if it is over (or `now`, when the server stops): the summary
        of what was not logged."""
        if self._start is None:
            return
        took = self.clock() - self._start
        if took < self.interval and not now:
            return
        if self._unlogged:
            self.emit(summary(self._unlogged, min(took, self.interval)))
        self._start, self._logged = None, 0
        self._unlogged.clear()

    def _timer(self) -> None:
        self._armed = False
        self.roll()


def summary(unlogged: Counter[str], interval: float) -> str:
    """`refused 1,234 more in the last 10 s (not logged one by one): no token (1,200), ...`"""
    kinds = ", ".join(f"{kind} ({n:,})" for kind, n in unlogged.most_common())
    total = sum(unlogged.values())
    took = f"{interval:.0f}" if interval >= 1 else "1"
    return f"refused {total:,} more in the last {took} s (not logged one by one): {kinds}"


# The warnings uvicorn and asyncio log for each bad connection (by how they start), and
# the kind each is counted as; None: dropped (advice to install a WebSocket library).
NOISY: tuple[tuple[str, str | None], ...] = (
    ("Invalid HTTP request received.", "invalid HTTP"),
    ("Unsupported upgrade request.", "upgrade asked"),
    ("No supported WebSocket library detected.", None),
    ("socket.accept() out of system resource", "no file descriptor to accept with"),
)


class QuietLogs(logging.Filter):
    """Routes the warnings of `NOISY` through a `Tally`: the first few of an interval
    pass (one line, without a traceback), the rest are counted in its summary."""

    def __init__(self, tally: Tally) -> None:
        super().__init__()
        self.tally = tally

    def filter(self, record: logging.LogRecord) -> bool:
        text = str(record.msg)
        for start, kind in NOISY:
            if text.startswith(start):
                if kind is None or not self.tally.allow(kind):
                    return False
                record.msg, record.args = f"refused a connection: {kind}", ()
                record.exc_info, record.exc_text = None, None
                return True
        return True


class Watch:
    """What the connections of one server share: the bound, the deadlines, the tally and
    the connections still sending a request, oldest first."""

    def __init__(
        self,
        bound: int,
        tally: Tally,
        log: Callable[[str], None],
        *,
        headers_seconds: float = HEADERS_SECONDS,
        body_seconds: float = BODY_SECONDS,
    ) -> None:
        self.bound = bound
        self.tally = tally
        self.log = log
        self.seconds = {"headers": headers_seconds, "body": body_seconds}
        self.waiting: dict[WatchedProtocol, None] = {}

    def refuse(self, kind: str, line: str) -> None:
        if self.tally.allow(kind):
            self.log(line)


class WatchedProtocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines and the bound of `Watch`."""

    watch: ClassVar[Watch]
    _phase = ""  # headers | body (a deadline runs) | done | idle | gone
    _timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        _no_delay(transport)
        watch = self.watch
        if len(self.connections) > watch.bound:
            oldest = next(iter(watch.waiting), None)
            if oldest is None:
                why = "every connection open has its request in"
                watch.refuse("too many connections", self._line(why, count=True))
                self._drop()
                return
            why = "the oldest connection still sending its request"
            watch.refuse("too many connections", oldest._line(why, count=True))
            oldest._drop()
        self._enter("headers")

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._enter("gone")
        super().connection_lost(exc)

    def _follow(self) -> None:
        """The phase the request is in now, by h11's view of the client's side."""
        if self.transport.is_closing():
            phase = "gone"
        elif self.conn.their_state is h11.IDLE:
            started = bool(self.conn.trailing_data[0]) or self._phase == "headers"
            phase = "headers" if started else "idle"  # idle: uvicorn's keep-alive timer
        elif self.conn.their_state is h11.SEND_BODY:
            phase = "body"
        else:
            phase = "done"
        self._enter(phase)

    def _enter(self, phase: str) -> None:
        if phase == self._phase:
            return
        self._phase = phase
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        watch = self.watch
        watch.waiting.pop(self, None)
        if phase in watch.seconds:
            self._timer = self.loop.call_later(watch.seconds[phase], self._too_slow)
            watch.waiting[self] = None

    def _too_slow(self) -> None:
        self._timer = None
        phase = self._phase
        seconds = self.watch.seconds.get(phase, 0.0)
        self.watch.refuse(
            f"{phase} too slow", self._line(f"its request's {phase} not whole in {seconds:g} s")
        )
        self._drop()

    def _drop(self) -> None:
        self._enter("gone")
        self.transport.abort()  # its file descriptor free now, whatever was left to send

    def _line(self, why: str, count: bool = False) -> str:
        client = self.client[0] if self.client else "?"
        line = f"closed a connection from {client}: {why}"
        if count:
            line += f" ({len(self.connections)} open, at most {self.watch.bound})"
        return line


def watched(watch: Watch) -> type[WatchedProtocol]:
    """The protocol class for uvicorn's `http` option, bound to `watch`."""
    return type("Watched", (WatchedProtocol,), {"watch": watch})


def _no_delay(transport: asyncio.BaseTransport) -> None:
    sock = transport.get_extra_info("socket")
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass  # closed already
