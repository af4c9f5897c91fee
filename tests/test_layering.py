"""The import graph of uptime_server/: no cycles, and the layers point one way.

Read from the source (the AST), not from ``sys.modules``: every import counts,
including those under ``if TYPE_CHECKING:`` and inside functions, because a
type-only or deferred import still ties the two modules together for a reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "uptime_server"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module of ours that *name* (a module, or a name inside one) is, or None."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                # Relative: from the package (a module's own package is its parent).
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            # `from pkg import mod` imports the module pkg.mod; `from mod import name`
            # imports mod (resolved by walking up from mod.name).
            names = [f"{stem}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] != PACKAGE:
                continue
            target = _resolve(name, known)
            if target is not None and target != module:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    known = _modules()
    return {module: _imports(module, path, known) for module, path in known.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None (depth-first search, in name order)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)) is not None:
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)) is not None:
            return cycle
    return None


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per tangle: each group of modules that reach one another (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    cycles = []
    for group in groups:
        inner = {m: graph[m] & group for m in group}
        cycle = find_cycle(inner)
        assert cycle is not None
        cycles.append(cycle)
    return sorted(cycles)


def _short(module: str) -> str:
    return module.removeprefix(f"{PACKAGE}.")


def _edges(graph: dict[str, set[str]], source: str, target: str) -> list[str]:
    def inside(module: str, package: str) -> bool:
        return module == package or module.startswith(f"{package}.")

    return sorted(
        f"{_short(a)} -> {_short(b)}"
        for a, targets in graph.items()
        if inside(a, f"{PACKAGE}.{source}")
        for b in targets
        if inside(b, f"{PACKAGE}.{target}")
    )


def test_the_graph_is_read() -> None:
    # Guards the test itself: a walk that found nothing would pass everything below.
    graph = import_graph()
    assert "uptime_server.engine.recorder" in graph
    assert "uptime_server.models" in graph["uptime_server.engine.recorder"]
    assert "uptime_server.checks.state" in graph["uptime_server.engine.recorder"]


def test_there_are_no_import_cycles() -> None:
    cycles = find_cycles(import_graph())
    readable = [" -> ".join(_short(m) for m in cycle) for cycle in cycles]
    assert readable == [], "import cycles:\n  " + "\n  ".join(readable)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("engine", "api"),
        ("notify", "api"),
        ("notify", "engine"),
        # Services drop cached renders once they commit; views never do (render_purges).
        ("api", "render_purges"),
        ("web", "render_purges"),
    ],
)
def test_layers_point_one_way(source: str, target: str) -> None:
    assert _edges(import_graph(), source, target) == [], f"{source}/ must not import {target}/"


# Views, and what answers before them, only read cached renders: dropping one is
# the service's job, once its change is committed (render_purges).
VIEW_PACKAGES = ("api", "web", "fast_paths")


def _purges(path: Path) -> list[str]:
    """The forget_* calls and render_purges imports in *path*, as "line: name"."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name.startswith("forget"):
                found.append(f"{node.lineno}: {name}()")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names]
            module = getattr(node, "module", None) or ""
            if any("render_purges" in n for n in [module, *names]):
                found.append(f"{node.lineno}: import render_purges")
    return found


def test_views_never_drop_cached_renders() -> None:
    found = {
        str(path.relative_to(ROOT)): hits
        for package in VIEW_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if (hits := _purges(path))
    }
    assert found == {}, f"views must leave cache invalidation to the services: {found}"


def test_the_purge_walk_sees_a_call_and_an_import(tmp_path: Path) -> None:
    # Guards the test above: a walk that found nothing would pass everything.
    path = tmp_path / "view.py"
    path.write_text(
        "from uptime_server import render_purges\n"
        "def view(m):\n"
        "    render_purges.forget_badges([m.badge_token])\n"
        "    forget_pages_of([m.user_id])\n"
    )
    assert _purges(path) == [
        "1: import render_purges",
        "3: forget_badges()",
        "4: forget_pages_of()",
    ]
    assert any(_purges(module) for module in ROOT.rglob("*.py"))  # the services' purges


def test_cycle_finder_reports_a_readable_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
    two = {**graph, "x": {"y"}, "y": {"x"}}
    assert find_cycles(two) == [["a", "b", "c", "a"], ["x", "y", "x"]]


def test_type_checking_and_function_imports_count(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from uptime_server.engine.probe import Prober\n"
        "def f():\n"
        "    from uptime_server.checks import state\n"
        "    import uptime_server.models\n"
    )
    path = tmp_path / "m.py"
    path.write_text(source)
    known = _modules()
    found = _imports("uptime_server.fake", path, known)
    assert found == {
        "uptime_server.engine.probe",
        "uptime_server.checks.state",
        "uptime_server.models",
    }


# --- the whole order (../shared/style.md, "Target layout") -------------------------

# Each package imports only those in earlier layers; packages of one layer import
# nothing from each other. "" is the root's foundation modules (every module directly
# in uptime_server/ except app.py, the factory, which has its own layer).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("", "net"),
    ("db",),
    ("models", "migrations"),
    ("checks", "auth", "stats", "notify", "maintenance"),
    ("heartbeats",),
    ("engine",),
    ("schemas",),
    ("services", "wsgi"),
    ("web",),
    ("fast_paths",),
    ("api",),
    ("app",),
    ("daemon",),
)
RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}
# The probe agent runs checks far from the server: the foundation, what a check is,
# and the engine's probing parts, nothing with a database or a web framework.
AGENT_MAY_IMPORT = ("", "checks")
ENGINE_PROBE_PARTS = (f"{PACKAGE}.engine.probe", f"{PACKAGE}.engine.probes.")
ROOT_MODULES_AT_MOST = 8


def package_of(module: str) -> str:
    """The package a module belongs to: "" for the root's foundation, "app" for the factory."""
    parts = module.split(".")[1:]
    if not parts:
        return ""
    if len(parts) == 1 and (ROOT / f"{parts[0]}.py").is_file():
        return "app" if parts[0] == "app" else ""
    return parts[0]


def _agent_may_import(target: str) -> bool:
    return package_of(target) in AGENT_MAY_IMPORT or any(
        target == part.rstrip(".") or target.startswith(part) for part in ENGINE_PROBE_PARTS
    )


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for source, targets in graph.items():
        here = package_of(source)
        for target in targets:
            there = package_of(target)
            if here == there:
                continue
            if here == "probe_agent":
                allowed = _agent_may_import(target)
            else:
                allowed = here in RANK and there in RANK and RANK[there] < RANK[here]
            if not allowed:
                found.append(f"{_short(source)} -> {_short(target)}")
    return sorted(found)


def test_every_package_has_a_layer() -> None:
    packages = {package_of(module) for module in import_graph()}
    assert packages - set(RANK) - {"probe_agent"} == set()


def test_the_layers_point_one_way() -> None:
    found = layer_violations(import_graph())
    assert found == [], "imports against the layer order:\n  " + "\n  ".join(found)


def test_the_layer_check_catches_each_kind_of_wrong_import() -> None:
    # Guards the check itself, on made-up edges between real package names.
    p = PACKAGE
    graph = {
        f"{p}.engine.scheduler": {f"{p}.api.monitors"},  # upward
        f"{p}.notify.reminders": {f"{p}.maintenance.windows"},  # inside one layer
        f"{p}.config": {f"{p}.db"},  # the foundation reaching up
        f"{p}.probe_agent.runner": {
            f"{p}.engine.scheduler",  # not a probing part
            f"{p}.engine.probes.dns",  # allowed
            f"{p}.checks.wire",  # allowed
        },
        f"{p}.api.monitors": {f"{p}.services.monitors", f"{p}.config"},  # allowed
    }
    assert layer_violations(graph) == [
        "config -> db",
        "engine.scheduler -> api.monitors",
        "notify.reminders -> maintenance.windows",
        "probe_agent.runner -> engine.scheduler",
    ]


def test_the_root_holds_the_factory_and_the_foundation_only() -> None:
    modules = sorted(p.stem for p in ROOT.glob("*.py") if p.name != "__init__.py")
    assert len(modules) <= ROOT_MODULES_AT_MOST, modules


def test_every_package_says_what_it_owns() -> None:
    for init in sorted(ROOT.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        where = init.relative_to(ROOT.parent)
        assert len(doc.split()) >= 12, f"{where}: say in a few lines what the package owns"
        assert "TODO" not in doc, where
