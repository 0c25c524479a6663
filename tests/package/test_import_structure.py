"""The import structure of the package, the tests, the benchmarks and the examples: no module
imports another's underscore name (``sliceflow._core``, the extension, aside), and no import
circle (function-level imports included). Reads the sources with ``ast``; imports nothing."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Script folders: their modules import each other by bare name (a module's own folder is on the
#: path), and the packages right below the folder by dotted name (tests/conftest.py puts tests/
#: on the path for tests/support and tests/jobs).
SCRIPT_FOLDERS = ("bench", "tests", "examples")


def _modules() -> dict[str, Path]:
    """Every module, by dotted name (package) or ``folder:name`` (scripts; ``folder`` is the
    script's own folder, or the script folder for a module of a package inside it)."""
    modules: dict[str, Path] = {}
    for path in (ROOT / "python").rglob("*.py"):
        parts = list(path.relative_to(ROOT / "python").with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    for folder in SCRIPT_FOLDERS:
        for path in (ROOT / folder).rglob("*.py"):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if (path.parent / "__init__.py").exists():
                modules[f"{folder}:{'.'.join(parts)}"] = path
            else:
                modules[f"{path.parent.relative_to(ROOT).as_posix()}:{parts[-1]}"] = path
    return modules


def _imports(modules: dict[str, Path]) -> dict[str, list[tuple[str, ast.ImportFrom | None]]]:
    """For each module, the modules of this tree it imports (and the ``from`` statement)."""

    def find(name: str, folder: str | None) -> str | None:
        if name in modules:
            return name
        if folder is None:
            return None
        for key in (f"{folder}:{name}", f"{folder.split('/')[0]}:{name}"):
            if key in modules:
                return key
        return None

    found: dict[str, list[tuple[str, ast.ImportFrom | None]]] = {}
    for name, path in modules.items():
        folder = name.split(":")[0] if ":" in name else None
        edges: list[tuple[str, ast.ImportFrom | None]] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges += [(t, None) for a in node.names if (t := find(a.name, folder))]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # ``from package import submodule`` depends on the submodule, not on the
                # package's __init__ (which Python runs first for any submodule anyway).
                subs = [find(f"{node.module}.{a.name}", folder) for a in node.names]
                edges += [(s, node) for s in subs if s]
                target = find(node.module, folder)
                if target and not all(subs):
                    edges.append((target, node))
        found[name] = [(t, n) for t, n in edges if t != name]
    return found


def test_no_module_imports_another_modules_private_name() -> None:
    modules = _modules()
    offences = set()
    for name, edges in _imports(modules).items():
        for target, node in edges:
            if node is None or target.endswith("._core"):
                continue
            private = [a.name for a in node.names if a.name.startswith("_") and a.name != "_core"]
            if private:
                offences.add((name, target, tuple(private)))
    assert not offences, f"private names imported across modules: {sorted(offences)}"


def test_no_import_circle() -> None:
    graph = {name: {t for t, _ in edges} for name, edges in _imports(_modules()).items()}
    # Tarjan's strongly connected components, iteratively.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    assert not circles, f"import circles: {circles}"


#: The package's layers, lowest first (docs/architecture.md): a module imports modules of its
#: own package and of lower layers only. Packages that share a layer never import each other:
#: no operator package imports another (nor ``spark``), no Spark operator folder another.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("_core", "errors", "aggregates", "memory")),
    ("runtime", ("_runtime",)),
    ("file-source rules", ("_io",)),
    ("operator", ("json", "window", "changelog", "topn", "dedup")),
    ("spark runtime", ("spark._runtime",)),
    ("spark input", ("spark.json",)),
    ("spark operator", ("spark.window", "spark.changelog", "spark.cdc")),
    ("spark operator", ("spark.topn", "spark.dedup")),
    ("entry points", ("", "spark", "testing")),
]


def _layer(module: str) -> tuple[int, str]:
    """The layer (its rank) and the package (the unit within which imports are free) of a
    module of the package, by its dotted name."""
    inner = module.removeprefix("sliceflow").removeprefix(".")
    best: tuple[int, str] | None = None
    for rank, (_, packages) in enumerate(LAYERS):
        for package in packages:
            matches = inner == package or inner.startswith(package + ".") or package == ""
            if matches and (best is None or len(package) > len(best[1])):
                best = (rank, package)
    assert best is not None, module
    # The base modules are one unit; the entry points each their own.
    return best if LAYERS[best[0]][0] != "base" else (best[0], "base")


def test_layers_import_downward_only() -> None:
    offences = []
    for name, edges in _imports(_modules()).items():
        if not name.startswith("sliceflow"):
            continue
        rank, package = _layer(name)
        for target, _ in edges:
            if not target.startswith("sliceflow"):
                continue
            target_rank, target_package = _layer(target)
            # Upward never; sideways (another package of the same layer) only among the
            # entry points.
            sideways = target_rank == rank and LAYERS[rank][0] != "entry points"
            if target_package != package and (target_rank > rank or sideways):
                offences.append(
                    f"{name} ({LAYERS[rank][0]}) imports {target} ({LAYERS[target_rank][0]})"
                )
    assert not offences, "imports against the layers:\n" + "\n".join(sorted(offences))


def test_every_package_module_has_a_layer() -> None:
    names = [n for n in _modules() if n.startswith("sliceflow")]
    assert "sliceflow._runtime.change_kinds" in names and "sliceflow.spark._runtime.recipe" in names
    ranks = {n: LAYERS[_layer(n)[0]][0] for n in names}
    assert ranks["sliceflow.window.plan"] == "operator"
    assert ranks["sliceflow.spark.window.agg"] == "spark operator"
    assert ranks["sliceflow.errors"] == "base" and ranks["sliceflow"] == "entry points"


def test_the_pyspark_entry_is_thin() -> None:
    """``pyspark_sliceflow`` (the module pyspark's data source lookup imports in every session)
    only names the source: it imports ``sliceflow.spark.json.source`` and nothing else."""
    edges = _imports(_modules())["pyspark_sliceflow"]
    assert {target for target, _ in edges} == {"sliceflow.spark.json.source"}
