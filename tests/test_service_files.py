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


def test_launchd_agent_runs_the_watcher_and_restarts_it_on_failure() -> None:
    with open(REPO / "contrib" / "launchd" / "com.kenomem.watch.plist", "rb") as handle:
        agent = plistlib.load(handle)
    assert agent["ProgramArguments"][1] == "watch"
    assert agent["ProgramArguments"][0].endswith("/kenomem")
    assert "KENOMEM_VAULT" in agent["EnvironmentVariables"]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
