"""The service files shipped for running the watcher stay valid and run `kenomem watch`."""

from __future__ import annotations

import configparser
import plistlib

from tests.conftest import REPO


def test_systemd_unit_runs_the_watcher_and_stops_with_sigterm() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.read(REPO / "contrib" / "systemd" / "kenomem-watch.service", encoding="utf-8")
    service = unit["Service"]
    assert service["ExecStart"].split()[1:2] == ["watch"]
    assert service["ExecStart"].split()[0].endswith("/kenomem")
    assert service["KillSignal"] == "SIGTERM"
    assert "KENOMEM_VAULT=" in service["Environment"]
    assert unit["Install"]["WantedBy"] == "default.target"
    # Its command server's forks run other commands' recalls: at the watcher's priority.
    assert "Nice" not in service and "IOSchedulingClass" not in service


def test_launchd_agent_runs_the_watcher_and_restarts_it_on_failure() -> None:
    with open(REPO / "contrib" / "launchd" / "com.kenomem.watch.plist", "rb") as handle:
        agent = plistlib.load(handle)
    assert agent["ProgramArguments"][1] == "watch"
    assert agent["ProgramArguments"][0].endswith("/kenomem")
    assert "KENOMEM_VAULT" in agent["EnvironmentVariables"]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}


def test_systemd_timer_runs_the_sleep_cycle_nightly() -> None:
    folder = REPO / "contrib" / "systemd"
    service = (folder / "kenomem-sleep.service").read_text(encoding="utf-8").splitlines()
    starts = [line.split("=", 1)[1].split() for line in service if line.startswith("ExecStart=")]
    assert [argv[1:] for argv in starts] == [["consolidate", "--json"], ["prune", "--json"]]
    assert all(argv[0].endswith("/kenomem") for argv in starts)
    assert "Type=oneshot" in service
    timer = configparser.ConfigParser(strict=False, interpolation=None)
    timer.read(folder / "kenomem-sleep.timer", encoding="utf-8")
    assert timer["Timer"]["OnCalendar"] == "*-*-* 04:00:00"
    assert timer["Timer"]["Persistent"] == "true"
    assert timer["Install"]["WantedBy"] == "timers.target"
