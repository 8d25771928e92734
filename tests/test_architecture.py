"""The layering of the package, checked on its source.

- the command-line layer (cli, commands, entry, argspec, output, render, the command
  server and its client, __main__) sits on top of the core and the core never reaches
  back up;
- Typer is declared only in `cli.py` and `cli_upkeep.py` (and read by
  `argspec.generate`, which regenerates the table from it); rich is imported only by
  `output.py`, only when it prints for a terminal, so a cold start pays for neither;
- the core reports through return values and exceptions, never by printing.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kenomem"
INTERFACE = {
    "cli.py",
    "cli_upkeep.py",
    "cli_agents.py",
    "cli_intro.py",
    "commands.py",
    "commands_intro.py",
    "commands_upkeep.py",
    "commands_agents.py",
    "command_kit.py",
    "entry.py",
    "forkclient.py",
    "forkserver.py",
    "forkcall.py",
    "argspec.py",
    "output.py",
    "render.py",
    "render_upkeep.py",
    "render_agents.py",
    "render_intro.py",
    "mcp_server.py",
    "__main__.py",
}
FORBIDDEN_IN_CORE = {
    "typer",
    "click",
    "rich",
    "kenomem.cli",
    "kenomem.cli_upkeep",
    "kenomem.cli_agents",
    "kenomem.cli_intro",
    "kenomem.commands_intro",
    "kenomem.render_intro",
    "kenomem.commands_agents",
    "kenomem.render_agents",
    "kenomem.commands",
    "kenomem.entry",
    "kenomem.forkclient",
    "kenomem.forkserver",
    "kenomem.forkcall",
    "kenomem.argspec",
    "kenomem.output",
    "kenomem.render",
}
MAX_LINES = 450


def modules() -> list[Path]:
    found = sorted(PACKAGE.rglob("*.py"))
    assert len(found) > 10
    return found


def rel(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class Import:
    def __init__(self, module: str, line: int, in_function: bool) -> None:
        self.module = module
        self.line = line
        self.in_function = in_function

    def top(self) -> str:
        return self.module.split(".")[0]

    def is_of(self, name: str) -> bool:
        return self.module == name or self.module.startswith(name + ".")


def imports(path: Path) -> list[Import]:
    """Every module an import statement names (`from a import b` names a and a.b)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    if package is None:
        package = module_name(path)
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            )
            if isinstance(child, ast.Import):
                found.extend(Import(a.name, child.lineno, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (child.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                found.append(Import(base, child.lineno, in_function))
                found.extend(
                    Import(f"{base}.{a.name}", child.lineno, in_function) for a in child.names
                )
            visit(child, nested)

    visit(tree, False)
    return found


def test_the_import_finder_sees_lazy_and_module_level_imports() -> None:
    found = imports(PACKAGE / "output.py")
    assert any(i.is_of("rich") and i.in_function for i in found)
    assert any(i.module == "kenomem.fm" and not i.in_function for i in found)
    cli = imports(PACKAGE / "cli.py")
    assert any(i.module == "kenomem.commands" for i in cli)


def test_only_cli_declares_typer() -> None:
    offenders = []
    for path in modules():
        for imp in imports(path):
            if not (imp.is_of("typer") or imp.is_of("click")):
                continue
            if rel(path) in ("cli.py", "cli_upkeep.py", "cli_agents.py", "cli_intro.py"):
                continue
            if rel(path) == "argspec.py" and imp.in_function:
                continue  # generate(): reads the Typer app to regenerate argspec.json
            offenders.append(f"{rel(path)}:{imp.line} imports {imp.module}")
    assert not offenders, offenders


def test_only_output_imports_rich_and_only_inside_functions() -> None:
    offenders = [
        f"{rel(path)}:{imp.line} imports {imp.module}"
        + ("" if imp.in_function else " at module level")
        for path in modules()
        for imp in imports(path)
        if imp.is_of("rich") and (rel(path) != "output.py" or not imp.in_function)
    ]
    assert not offenders, offenders


def test_the_fast_path_imports_neither_typer_nor_rich_at_module_level() -> None:
    offenders = [
        f"{name}:{imp.line} imports {imp.module}"
        for name in ("entry.py", "argspec.py", "commands.py", "output.py", "render.py")
        for imp in imports(PACKAGE / name)
        if not imp.in_function
        and (imp.top() in ("typer", "click", "rich") or imp.is_of("kenomem.cli"))
    ]
    assert not offenders, offenders


def test_the_core_does_not_import_the_command_line_layer() -> None:
    core = [path for path in modules() if rel(path) not in INTERFACE]
    assert any(rel(p) == "recall.py" for p in core)
    offenders = [
        f"{rel(path)}:{imp.line} imports {imp.module}"
        for path in core
        for imp in imports(path)
        if any(imp.is_of(name) for name in FORBIDDEN_IN_CORE)
    ]
    assert not offenders, offenders


def test_the_core_does_not_print() -> None:
    offenders = []
    for path in modules():
        if rel(path) in INTERFACE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("print", "input", "breakpoint")
            ):
                offenders.append(f"{rel(path)}:{node.lineno} calls {node.func.id}()")
    assert not offenders, offenders


def test_modules_stay_small() -> None:
    sizes = {rel(path): len(path.read_text(encoding="utf-8").splitlines()) for path in modules()}
    offenders = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not offenders, f"modules over {MAX_LINES} lines (split them): {offenders}"
