"""Handlers of `install` and `uninstall`: the request made from the options, the core
(`kenomem.hooks.install`) run, its result handed to the renderer."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from kenomem.cli.output import Output
from kenomem.files import vaultfind
from kenomem.files.paths import require_marker, require_vault


def install(
    out: Output,
    *,
    agent: str,
    project: bool = False,
    user: bool = False,
    dry_run: bool = False,
    vault: str | None = None,
) -> None:
    from kenomem.cli.render import install as render
    from kenomem.hooks import install as core

    scope = core.check_request(agent, user, project)
    path, why = vaultfind.choose(vault, discover=False)
    named = None
    if why in (vaultfind.FLAG, vaultfind.ENV):
        root = require_vault(Path(path))
        require_marker(root, "install")
        named = str(root)
    executable = core.executable(sys.argv[0], shutil.which("kenomem"))
    request = core.Request(agent, core.INSTALL, scope, executable, named)
    made, applied = core.run(request, dry_run=dry_run)
    render.installed(out, made, applied, core.diff(made), dry_run=dry_run)


def uninstall(
    out: Output,
    *,
    agent: str,
    project: bool = False,
    user: bool = False,
    dry_run: bool = False,
) -> None:
    from kenomem.cli.render import install as render
    from kenomem.hooks import install as core

    scope = core.check_request(agent, user, project)
    request = core.Request(agent, core.UNINSTALL, scope, "", None)
    made, applied = core.run(request, dry_run=dry_run)
    render.installed(out, made, applied, core.diff(made), dry_run=dry_run)
