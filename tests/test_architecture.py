"""The shape of the package, checked on its source.

- subpackages of one concept each, with the few modules at the top of `kenomem/` named
  here; each package imports only the packages below it (`MAY_IMPORT`), so imports flow
  one way;
- no import circles between modules, lazy and type-only imports included;
- nothing imports the command line (`cli/`) but the entry point; Typer is declared only
  in `cli/`, rich is imported only by `cli/output.py` and only inside its functions, so a
  cold start pays for neither;
- the core reports through return values and exceptions, never by printing.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kenomem"

TOP = {
    "__init__",
    "__main__",
    "api",
    "errors",
    "config",
    "mcp_server",
    "llm_command",
}
MAX_TOP = 12

# What each part of kenomem may import, besides itself: the layers, bottom up.
BASE = {"errors"}
MAY_IMPORT: dict[str, set[str]] = {
    "errors": set(),
    "llm_command": set(),
    "files": BASE,
    "index": BASE | {"files"},
    "share": BASE | {"files"},
    "config": BASE | {"files"},
    "embed": BASE | {"files", "index", "config"},
    "vault": BASE | {"files", "index", "config", "embed", "share"},
    "capture": BASE | {"files", "index", "config", "embed", "vault"},
    "forget": BASE | {"files", "index", "config", "embed", "vault"},
    "watch": BASE | {"files", "index", "config", "embed", "vault"},
    "recall": BASE | {"files", "index", "config", "embed", "vault", "llm_command"},
    "sleep": BASE | {"files", "index", "config", "embed", "vault", "llm_command"},
    "ingest": BASE | {"files", "index", "config", "embed", "vault", "capture"},
    "agents": BASE
    | {"files", "index", "config", "embed", "vault", "capture", "forget", "recall", "sleep"},
    # Where agents live: the hook command's core and its install into an agent's settings.
    "hooks": BASE
    | {"files", "index", "config", "embed", "vault", "capture", "forget", "recall", "sleep"}
    | {"ingest", "agents"},
    "api": BASE
    | {"files", "index", "config", "embed", "vault", "capture", "forget", "recall", "sleep"}
    | {"ingest", "agents", "share", "hooks"},
    "mcp_server": BASE | {"files", "api"},
    # `kenomem serve`: the MCP server of `mcp_server` over HTTP, behind the vault's tokens.
    "serve": BASE | {"files", "api", "mcp_server"},
    "cli": BASE
    | {"files", "index", "config", "embed", "vault", "capture", "forget", "recall", "sleep"}
    | {"ingest", "agents", "watch", "api", "mcp_server", "llm_command", "share", "serve"}
    | {"hooks"},
    "__init__": {"api", "errors"},
    "__main__": {"cli"},
}
CORE = set(MAY_IMPORT) - {"cli", "__main__"}

# Circles still to be cut, each with where it is: the list only shrinks.
KNOWN_CIRCLES: list[set[str]] = []
KNOWN_LAYER_BREACHES: set[tuple[str, str]] = set()


def modules() -> list[Path]:
    found = sorted(PACKAGE.rglob("*.py"))
    assert len(found) > 10
    return found


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def part_of(module: str) -> str:
    """The package (or top-level module) of `kenomem.<part>...`."""
    if module == "kenomem":
        return "__init__"
    return module.split(".")[1]


class Import:
    def __init__(
        self, module: str, line: int, in_function: bool, names: tuple[str, ...] = ()
    ) -> None:
        self.module = module
        self.line = line
        self.in_function = in_function
        self.names = names  # of `from module import names`

    def is_of(self, name: str) -> bool:
        return self.module == name or self.module.startswith(name + ".")


def imports(path: Path) -> list[Import]:
    """Every module an import statement names (`from a import b` names a and a.b), at
    module level, in functions and under `if TYPE_CHECKING`; and every module a string
    names to be imported by name when it is needed ("kenomem.recall.search:RecallRequest",
    as the command line's table of operations does), as a lazy import."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
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
                names = tuple(a.name for a in child.names)
                found.append(Import(base, child.lineno, in_function, names))
                found.extend(
                    Import(f"{base}.{a.name}", child.lineno, in_function) for a in child.names
                )
            elif isinstance(child, ast.Constant) and isinstance(child.value, str):
                named = LOADED_BY_NAME.fullmatch(child.value)
                if named:
                    found.append(Import(named[1], child.lineno, True, (named[2],)))
                    found.append(Import(f"{named[1]}.{named[2]}", child.lineno, True))
            visit(child, nested)

    visit(tree, False)
    return found


LOADED_BY_NAME = re.compile(r"(kenomem(?:\.\w+)+):(\w+)")


def graph() -> dict[str, set[str]]:
    """Module -> the kenomem modules it imports (a name imported from a module counts as
    that module; importing a package counts as its `__init__`). `kenomem/__init__.py`
    is left out as a target: it is a lazy facade (the version, and `Vault` on demand)."""
    known = {module_name(p) for p in modules()}
    edges: dict[str, set[str]] = {}
    for path in modules():
        name = module_name(path)
        targets = set()
        for imp in imports(path):
            if not imp.is_of("kenomem"):
                continue
            if imp.names and all(f"{imp.module}.{n}" in known for n in imp.names):
                continue  # `from package import module`: the modules are the imports
            module = imp.module
            while module not in known:
                module = module.rpartition(".")[0]
            targets.add(module)
        edges[name] = targets - {name, "kenomem"}
    return edges


def circles(edges: dict[str, set[str]]) -> Iterator[set[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    counter = [0]

    def visit(v: str) -> Iterator[set[str]]:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                yield from visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                yield component

    for v in sorted(edges):
        if v not in index:
            yield from visit(v)


# -- the tests ----------------------------------------------------------------------------


def test_the_import_finder_sees_lazy_type_only_and_module_level_imports() -> None:
    found = imports(PACKAGE / "cli" / "output.py")
    assert any(i.is_of("rich") and i.in_function for i in found)
    assert any(i.module == "kenomem.files.fm" and not i.in_function for i in found)
    edges = graph()
    assert "kenomem.files.scan" in edges["kenomem.files.paths"]
    assert "kenomem.files.memory" in edges["kenomem.index.sync"]
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}).__next__() == {"a", "b", "c"}


def test_a_handful_of_modules_at_the_top_and_packages_below() -> None:
    top = {p.stem for p in PACKAGE.glob("*.py")}
    assert top == TOP and len(top) <= MAX_TOP, top ^ TOP
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(MAY_IMPORT) - TOP - {"errors"}, packages
    for name in packages:  # each says what it is
        assert ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))


def test_each_package_imports_only_the_packages_below_it() -> None:
    offenders = []
    for module, targets in graph().items():
        part = part_of(module)
        for target in targets:
            other = part_of(target)
            if other == part or other in MAY_IMPORT[part]:
                continue
            if (part, other) in KNOWN_LAYER_BREACHES:
                continue
            offenders.append(f"{module} imports {target}")
    assert not offenders, offenders


def test_nothing_imports_the_command_line_but_the_entry_point() -> None:
    offenders = [
        f"{module} imports {target}"
        for module, targets in graph().items()
        for target in targets
        if part_of(target) == "cli"
        and part_of(module) not in ("cli", "__main__")
        and (part_of(module), "cli") not in KNOWN_LAYER_BREACHES
    ]
    assert not offenders, offenders


def test_no_import_circles() -> None:
    found = [c for c in circles(graph()) if c not in KNOWN_CIRCLES]
    assert not found, found
    stale = [c for c in KNOWN_CIRCLES if c not in list(circles(graph()))]
    assert not stale, f"cut: remove from KNOWN_CIRCLES {stale}"


def test_the_command_server_is_handed_what_it_runs() -> None:
    # The watch handler passes the server its handler, parser and modules to preload: the
    # server does not import the command line above it, lazily or not.
    above = ("kenomem.cli.handlers", "kenomem.cli.app", "kenomem.cli.argspec")
    offenders = [
        f"{module} imports {target}"
        for module, targets in graph().items()
        if module.startswith("kenomem.cli.served.")
        for target in targets
        if target.startswith(above)
    ]
    assert not offenders, offenders
    assert "kenomem.cli.served.server" in graph()["kenomem.cli.handlers.upkeep"]


def test_only_cli_declares_typer() -> None:
    offenders = []
    for path in modules():
        if part_of(module_name(path)) == "cli":
            continue
        for imp in imports(path):
            if imp.is_of("typer") or imp.is_of("click"):
                offenders.append(f"{module_name(path)}:{imp.line} imports {imp.module}")
    assert not offenders, offenders


def test_only_output_imports_rich_and_only_inside_functions() -> None:
    output = PACKAGE / "cli" / "output.py"
    offenders = [
        f"{module_name(path)}:{imp.line} imports {imp.module}"
        + ("" if imp.in_function else " at module level")
        for path in modules()
        for imp in imports(path)
        if imp.is_of("rich") and (path != output or not imp.in_function)
    ]
    assert not offenders, offenders


def test_the_fast_path_imports_neither_typer_nor_rich_at_module_level() -> None:
    cli = PACKAGE / "cli"
    fast = [cli / f"{name}.py" for name in ("entry", "flags", "argspec", "kit", "output")]
    fast += [*(cli / "handlers").glob("*.py"), *(cli / "render").glob("*.py")]
    offenders = [
        f"{module_name(path)}:{imp.line} imports {imp.module}"
        for path in fast
        for imp in imports(path)
        if not imp.in_function
        and (
            imp.module.split(".")[0] in ("typer", "click", "rich")
            or imp.is_of("kenomem.cli.app")
            or imp.is_of("kenomem.cli.commands")
            or imp.is_of("kenomem.cli.introspect")
        )
    ]
    assert not offenders, offenders


def test_only_the_typer_side_imports_the_typer_side() -> None:
    """The Typer app and what reads it (`introspect`, for the generators) are imported
    by nothing else of kenomem but the entry point, for the calls the fast path leaves."""
    typer_side = ("kenomem.cli.app", "kenomem.cli.commands", "kenomem.cli.introspect")
    offenders = [
        f"{module} imports {target}"
        for module, targets in graph().items()
        for target in targets
        if any(target == t or target.startswith(t + ".") for t in typer_side)
        and not any(module == t or module.startswith(t + ".") for t in typer_side)
        and module != "kenomem.cli.entry"
    ]
    assert not offenders, offenders


def test_the_core_does_not_print() -> None:
    offenders = []
    for path in modules():
        if part_of(module_name(path)) not in CORE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("print", "input", "breakpoint")
            ):
                offenders.append(f"{module_name(path)}:{node.lineno} calls {node.func.id}()")
    assert not offenders, offenders


# The modules of the `mcp` and `serve` commands, the only ones that import the SDK.
SDK_USERS = ("kenomem.mcp_server", "kenomem.serve.http")


def test_only_the_mcp_and_serve_commands_import_the_sdk() -> None:
    offenders = [
        f"{module_name(path)}:{imp.line} imports {imp.module}"
        for path in modules()
        for imp in imports(path)
        if (imp.is_of("mcp") and module_name(path) not in SDK_USERS)
        or (any(imp.is_of(m) for m in SDK_USERS) and not imp.in_function)
    ]
    assert not offenders, offenders
