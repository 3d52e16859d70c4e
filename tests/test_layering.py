"""The layering of DESIGN.md holds: games <- solvers <- ranking <- psro <- experiments.

A module never imports from a package to its right, no two modules of a package
import each other (directly or around a cycle), and no submodule is hidden by a
same-named attribute of its package. The checks parse every source file's import
statements (including imports inside functions).
"""

import ast
import importlib
import pkgutil
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
ORDER = ["games", "solvers", "ranking", "psro", "experiments"]


def imported_top_levels(path: Path) -> set:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def source_files(package: str):
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", ORDER[:-1])
def test_no_import_from_a_package_to_the_right(package):
    forbidden = set(ORDER[ORDER.index(package) + 1:])
    files = source_files(package)
    assert files, f"package {package} has no source files"
    offenders = {
        str(f.relative_to(ROOT)): sorted(imported_top_levels(f) & forbidden)
        for f in files
        if imported_top_levels(f) & forbidden
    }
    assert not offenders, f"imports against the layering: {offenders}"


def test_checker_detects_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from psro import PSRO\n    import ranking.elo\n")
    assert imported_top_levels(bad) == {"psro", "ranking"}


# -- Inside a package: no import cycle, no submodule shadowed by an attribute -----------------------------------------


def module_names(root: Path, package: str) -> dict:
    """Every module of ``package`` under ``root``: dotted name -> file (a package is its ``__init__.py``)."""
    names = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def lazy_attributes(init: Path) -> dict:
    """``name -> submodule`` of a ``lazy_loader.attach(__name__, submodules=[...], submod_attrs={...})`` call."""
    found = {}
    for node in ast.walk(ast.parse(init.read_text(), filename=str(init))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "attach":
            for keyword in node.keywords:
                value = ast.literal_eval(keyword.value)
                if keyword.arg == "submodules":
                    found.update({name: name for name in value})
                elif keyword.arg == "submod_attrs":
                    found.update({name: submodule for submodule, names in value.items() for name in names})
    return found


def import_graph(root: Path, package: str) -> nx.DiGraph:
    """Which module of ``package`` imports which, from the AST of every file (imports inside functions included).

    ``from pkg import name`` is an edge to ``pkg.name`` when that is a submodule, to the submodule a lazy
    ``__init__`` loads ``name`` from when it is one of its lazy attributes, and to ``pkg`` itself otherwise.
    """
    modules = module_names(root, package)
    lazy = {name: lazy_attributes(path) for name, path in modules.items() if path.name == "__init__.py"}

    def known(dotted):  # the longest prefix of ``dotted`` that is a module of the package
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in modules:
                return ".".join(parts[:end])
        return None

    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for source, path in modules.items():
        here = source if path.name == "__init__.py" else source.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [known(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = here.split(".")[:len(here.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:
                    if f"{base}.{alias.name}" in modules:
                        targets.append(f"{base}.{alias.name}")
                    elif alias.name in lazy.get(base, {}):
                        targets.append(f"{base}.{lazy[base][alias.name]}")
                    else:
                        targets.append(known(base))
            graph.add_edges_from((source, target) for target in targets if target and target != source)
    return graph


def import_cycles(root: Path, package: str) -> list:
    """One cycle (a list of modules, first repeated last) per strongly connected group of modules."""
    graph = import_graph(root, package)
    cycles = []
    for group in nx.strongly_connected_components(graph):
        if len(group) > 1:
            cycle = [edge[0] for edge in nx.find_cycle(graph.subgraph(group), source=min(group))]
            cycles.append(cycle + cycle[:1])
    return sorted(cycles)


def shadowed_submodules(package: str) -> dict:
    """``submodule -> what the attribute of its package is`` where importing it leaves something else there."""
    shadowed = {}
    top = importlib.import_module(package)
    for info in pkgutil.walk_packages(top.__path__, prefix=package + "."):
        module = importlib.import_module(info.name)
        parent, _, last = info.name.rpartition(".")
        attribute = getattr(sys.modules[parent], last, None)
        if attribute is not None and attribute is not module:
            shadowed[info.name] = repr(attribute)
    return shadowed


@pytest.mark.parametrize("package", ORDER[:-1])
def test_no_import_cycle_inside_a_package(package):
    cycles = import_cycles(ROOT, package)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(cycle) for cycle in cycles)


@pytest.mark.parametrize("package", ORDER[:-1])
def test_no_submodule_is_shadowed_by_an_attribute(package):
    shadowed = shadowed_submodules(package)
    assert not shadowed, f"submodules hidden by a same-named attribute of their package: {shadowed}"


def write_package(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_cycle_checker_detects_a_function_level_cycle(tmp_path):
    write_package(tmp_path, {
        "pkg/__init__.py": "import lazy_loader\n__getattr__, __dir__, __all__ = lazy_loader.attach("
                           "__name__, submod_attrs={'b': ['helper']})\n",
        "pkg/a.py": "from pkg import helper\n",                   # the lazy attribute resolves to pkg.b
        "pkg/b.py": "def helper():\n    from pkg.sub import c\n",  # a function-level import
        "pkg/sub/__init__.py": "",
        "pkg/sub/c.py": "from .. import a\n",                      # relative, back to pkg.a
        "pkg/d.py": "import pkg.a\n",                             # into the cycle, not part of it
    })
    cycles = import_cycles(tmp_path, "pkg")
    assert len(cycles) == 1
    assert set(cycles[0]) == {"pkg.a", "pkg.b", "pkg.sub.c"} and cycles[0][0] == cycles[0][-1]
    (tmp_path / "pkg/sub/c.py").write_text("import pkg.sub\n")  # the package above, not a module of the cycle
    assert import_cycles(tmp_path, "pkg") == []


def test_shadowing_checker_detects_a_function_named_like_its_module(tmp_path, monkeypatch):
    write_package(tmp_path, {
        "planted/__init__.py": "from planted.score import score\nfrom planted.tools import helper\n",
        "planted/score.py": "def score():\n    return 1\n",
        "planted/tools.py": "def helper():\n    return 2\n",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [name for name in sys.modules if name == "planted" or name.startswith("planted.")]:
        monkeypatch.delitem(sys.modules, name)
    shadowed = shadowed_submodules("planted")
    assert list(shadowed) == ["planted.score"] and "function score" in shadowed["planted.score"]


def imported_modules(path: Path) -> set:
    """Every module a source file imports by absolute name (including imports inside functions)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_loop_knows_none_of_its_variants():
    # psro/variants/ holds subclasses of the loop: nothing else under psro/ imports from it (the registry of
    # psro.loop.algorithms names them as strings, imported on first use), and only psro/loop/seating.py asks whether the
    # seats share a population
    outside = [p for p in source_files("psro") if "variants" not in p.relative_to(ROOT / "psro").parts]
    assert ROOT / "psro" / "loop" / "psro_loop.py" in outside
    importing = {p.relative_to(ROOT).as_posix(): sorted(m for m in imported_modules(p)
                                                        if m == "psro.variants" or m.startswith("psro.variants."))
                 for p in outside}
    assert {k: v for k, v in importing.items() if v} == {}
    asking = [p.relative_to(ROOT).as_posix() for p in source_files("psro")
              if p.name != "seating.py" and ("seats is None" in p.read_text() or "seats is not None" in p.read_text())]
    assert asking == []
    # one function checks that a game is two-player zero-sum (psro/loop/requirements.py)
    defining = [p.relative_to(ROOT).as_posix() for p in source_files("psro")
                if "def check_two_player_zero_sum" in p.read_text()]
    assert defining == ["psro/loop/requirements.py"]
    # nor does the base loop know its family: the team view a team game is played on is psro/sequence_form/team_view.py
    base = ["loop/psro_loop.py", "loop/measures.py", "loop/state.py", "loop/training.py", "loop/seating.py",
            "sequence_form/team_view.py"]
    assert {name: sorted(m for m in imported_modules(ROOT / "psro" / name) if m.startswith("psro.family"))
            for name in base} == dict.fromkeys(base, [])


# -- Inside psro/: the folders by concept (issue 56) ----------------------------------------------------------------
#: What a PSRO loop is built on: these folders never import a training loop or the run around it
FOUNDATION = ("sequence_form", "policies", "evaluation", "oracles", "meta")
LOOPS_AND_RUNS = ("loop", "family", "variants", "offline", "run")


def psro_folder(module: str) -> str | None:
    """The folder of psro/ that ``module`` lives in (None for psro's root modules)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (ROOT / "psro" / parts[1]).is_dir() else None


def test_the_foundation_folders_never_import_a_loop():
    graph = import_graph(ROOT, "psro")
    crossing = sorted(f"{a} -> {b}" for a, b in graph.edges()
                      if psro_folder(a) in FOUNDATION and psro_folder(b) in LOOPS_AND_RUNS)
    assert crossing == [], crossing


def test_psro_folder_names_the_folder():
    assert [psro_folder(m) for m in ("psro.loop.state", "psro.sequence_form", "psro.errors", "psro")] == \
        ["loop", "sequence_form", None, None]
