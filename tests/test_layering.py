"""The layering of DESIGN.md holds: games <- solvers <- ranking <- psro <- experiments.

A module never imports from a package to its right. The check parses every
source file's import statements (including imports inside functions).
"""

import ast
from pathlib import Path

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
