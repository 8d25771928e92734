"""Shared fixtures: every test works on a real vault copied from `vault-template/`.

The vault uses the Whoosh engine, or the engine named by `KENOMEM_TEST_ENGINE`; a module
marked `pytestmark = pytest.mark.both_engines` runs each of its tests on every engine.

Property tests draw the same examples on every run (the `default` Hypothesis profile, what
`make test` and CI use): a red run is the code's doing, never the draw's. `make fuzz` explores
instead (`--hypothesis-profile=fuzz`): random draws, ten times each test's examples, and the
failures kept in `.hypothesis/` to be tried first the next time.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from kenomem.vault.core import CoreVault

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "vault-template"
ENGINES = ("whoosh", "tantivy")

# -- property tests ---------------------------------------------------------------------------
# Loaded here, before any test module is imported: a settings object a module makes
# (`DOORS`, `PROPERTY`) takes what it does not set from the profile loaded when it is made.
# No deadline and no health check on time: on a shared machine they measure the machine.
FUZZ_FACTOR = 10
_STEADY = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("default", _STEADY)
settings.register_profile("ci", _STEADY)  # what Hypothesis loads by itself when CI is set
settings.register_profile(
    "fuzz",
    _STEADY,
    derandomize=False,
    database=DirectoryBasedExampleDatabase(REPO / ".hypothesis" / "examples"),
    max_examples=100 * FUZZ_FACTOR,
)
settings.load_profile("default")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "both_engines: run each test on every index engine")
    config.addinivalue_line("markers", "slow: a test that takes seconds (real disks, many runs)")
    if config.getoption("hypothesis_profile", None) != "fuzz":
        _no_local_constants()


def _no_local_constants() -> None:
    """Hypothesis also draws the literals of the project's modules imported so far: which
    those are depends on the tests run before in the same process (and on every edit to
    kenomem), so a test's examples would too. Outside `fuzz` it draws none of them; its
    own constants (empty strings, NaN, boundaries) it still draws."""
    from hypothesis.internal.conjecture import providers

    if hasattr(providers, "_get_local_constants") and hasattr(providers, "Constants"):
        empty = providers.Constants()
        providers._get_local_constants = lambda: empty


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Property tests under the profile chosen. Under `default`, a test whose own settings
    draw at random or keep a database is refused: the run would not be the same twice.
    Under `fuzz`, every property test explores: its own settings (a count of examples,
    `derandomize`) would otherwise override the profile's.

    In a worker of `pytest -n`, the files with the most slow tests come first (each keeps
    the order of its tests): the workers take files in this order, and a long file taken
    last would leave the other workers idle until it ends."""
    if hasattr(config, "workerinput"):
        slow = Counter(item.path for item in items if item.get_closest_marker("slow"))
        items.sort(key=lambda item: -slow[item.path])  # a stable sort: each file in order
    profile = config.getoption("hypothesis_profile", None)
    seen: set[int] = set()
    for item in items:
        test = getattr(item, "obj", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is None or id(test) in seen:
            continue
        seen.add(id(test))
        if profile == "fuzz":
            test._hypothesis_internal_use_settings = settings(
                own,
                max_examples=own.max_examples * FUZZ_FACTOR,
                derandomize=False,
                database=settings.get_profile("fuzz").database,
            )
        elif profile in (None, "default", "ci") and (
            not own.derandomize or own.database is not None
        ):
            raise pytest.UsageError(
                f"{item.nodeid}: its settings draw at random or keep a database; a settings "
                "object made before tests/conftest.py loads its profile, or one that sets "
                "derandomize or database, makes the suite give a different answer each run"
            )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "engine_name" in metafunc.fixturenames and metafunc.definition.get_closest_marker(
        "both_engines"
    ):
        metafunc.parametrize("engine_name", ENGINES, indirect=True)


@pytest.fixture
def engine_name(request: pytest.FixtureRequest) -> str:
    """The index engine of the test's vault."""
    name: str = getattr(request, "param", os.environ.get("KENOMEM_TEST_ENGINE", "whoosh"))
    if name == "tantivy":
        pytest.importorskip("tantivy")
    return name


def set_engine(vault_dir: Path, name: str) -> None:
    """Choose the vault's index engine in its kenomem.toml, as a person would."""
    config = vault_dir / "kenomem.toml"
    text = config.read_text("utf-8")
    if "\nengine = " in text:
        text = "\n".join(
            f'engine = "{name}"' if line.startswith("engine = ") else line
            for line in text.split("\n")
        )
    else:
        text = text.replace('# engine = "whoosh"', f'engine = "{name}"', 1)
    assert f'engine = "{name}"' in text
    config.write_text(text, "utf-8")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test reads the developer's real vault, settings or editor. The home of each test
    is its own, beside its `tmp_path` rather than in it: kenomem keeps the user's own
    files there (`~/.config/kenomem/`: tokens, accepted settings, the sealing secret),
    which the checks that nothing changed around a vault do not count."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KENOMEM_VAULT", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.fixture
def vault_dir(tmp_path: Path, engine_name: str) -> Path:
    """A fresh vault folder, as `kenomem init` makes it (with `engine_name` chosen)."""
    target = tmp_path / "vault"
    shutil.copytree(TEMPLATE, target)
    if engine_name != "whoosh":
        set_engine(target, engine_name)
    return target


def index_files(vault_dir: Path) -> list[Path]:
    """The data files of the vault's index (not its locks, not its table of contents),
    whichever engine wrote them: what a test damages."""
    folder = vault_dir / ".kenomem" / "index"
    whoosh = [p for p in folder.glob("whoosh/MAIN_*") if "LOCK" not in p.name]
    tantivy = [p for p in folder.glob("tantivy/*.*") if not p.name.startswith((".", "meta"))]
    return whoosh + tantivy


@pytest.fixture
def vault(vault_dir: Path) -> CoreVault:
    return CoreVault.open(vault_dir)


def write(vault_dir: Path, rel: str, text: str) -> Path:
    """Write a file into the vault the way a person's editor would."""
    path = vault_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class CliResult(NamedTuple):
    code: int
    out: str
    err: str


Cli = Callable[..., CliResult]


@pytest.fixture
def cli(
    vault_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Cli:
    """Run the console script's `main` in-process against `vault_dir`.

    This goes through the same entry point as the installed `kenomem` (the fast argument
    path, falling back to Typer), with `KENOMEM_VAULT` pointing at the test vault.
    """
    from kenomem.cli.entry import main

    monkeypatch.setenv("KENOMEM_VAULT", str(vault_dir))

    def run(*args: str, input: str | None = None) -> CliResult:
        capsys.readouterr()
        if input is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(input))
        code = 0
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def reap() -> Iterator[list[subprocess.Popen[str]]]:
    """Processes a test started, killed at its end if they still run."""
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait(30)
