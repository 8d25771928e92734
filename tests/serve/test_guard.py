"""The pieces of `kenomem serve`'s defences that decide without a socket: the bound on
connections for a limit of open files, and the log of refusals kept at a bounded rate
(`tests/adversarial/test_serve_abuse.py` runs them against a real server)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from kenomem.serve.guard import FULL_LINES, QuietLogs, Tally
from kenomem.serve.plan import MAX_CONNECTIONS, RESERVED_FDS, connection_bound


def test_the_bound_stays_under_the_limit_of_open_files() -> None:
    assert connection_bound(1024) == 1024 - RESERVED_FDS
    assert connection_bound(400) == 400 - RESERVED_FDS
    assert connection_bound(1 << 20) == MAX_CONNECTIONS
    assert connection_bound(-1) == MAX_CONNECTIONS  # RLIM_INFINITY
    assert connection_bound(64) == 8  # a few, whatever the limit
    for limit in range(RESERVED_FDS + 8, 5000, 97):
        assert 8 <= connection_bound(limit) <= limit - RESERVED_FDS


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def tally() -> tuple[Tally, Clock, list[str], list[tuple[float, Callable[[], None]]]]:
    clock = Clock()
    lines: list[str] = []
    timers: list[tuple[float, Callable[[], None]]] = []
    made = Tally(
        lines.append,
        interval=10.0,
        clock=clock,
        schedule=lambda delay, call: timers.append((delay, call)),
    )
    return made, clock, lines, timers


def test_the_first_refusals_are_logged_then_counted_in_one_line() -> None:
    made, clock, lines, timers = tally()
    allowed = [made.allow("no token") for _ in range(1_200)]
    allowed += [made.allow("bad host") for _ in range(34)]
    assert allowed.count(True) == FULL_LINES and allowed[:FULL_LINES] == [True] * FULL_LINES
    assert lines == [] and len(timers) == 1 and timers[0][0] == 10.0
    clock.now += 10.0
    timers[0][1]()  # the interval is over, with nothing new: summed up all the same
    assert lines == [
        "refused 1,224 more in the last 10 s (not logged one by one): "
        "no token (1,190), bad host (34)"
    ]
    # A new interval logs its first refusals line by line again.
    assert made.allow("no token") is True


def test_a_quiet_interval_says_nothing_and_stopping_sums_up_the_rest() -> None:
    made, clock, lines, _timers = tally()
    for _ in range(FULL_LINES):
        assert made.allow("no token")
    clock.now += 30.0
    made.roll()
    assert lines == []  # nothing left unlogged
    for _ in range(FULL_LINES + 3):
        made.allow("headers too slow")
    clock.now += 2.0
    made.roll(now=True)  # the server stops
    assert lines == ["refused 3 more in the last 2 s (not logged one by one): headers too slow (3)"]


def test_the_warnings_of_each_bad_connection_go_through_the_tally() -> None:
    made, _clock, _lines, _timers = tally()
    quiet = QuietLogs(made)

    def record(message: str) -> logging.LogRecord:
        return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, (), None)

    accepted = [quiet.filter(record("socket.accept() out of system resource\nsocket: <s>"))]
    accepted += [quiet.filter(record("Invalid HTTP request received.")) for _ in range(50)]
    assert accepted.count(True) == FULL_LINES
    first = record("socket.accept() out of system resource\nsocket: <s>")
    made2, *_ = tally()
    assert QuietLogs(made2).filter(first)
    assert first.getMessage() == "refused a connection: no file descriptor to accept with"
    assert not quiet.filter(record("No supported WebSocket library detected. Please use ..."))
    assert quiet.filter(record("Started server process [1]"))  # anything else passes
