"""The tutorials of ``docs/tutorials/`` run as written, and the README's quick start runs.

Each tutorial page's ```` ```python ```` blocks run in order in one namespace, in a fresh working directory (the
runs they write land there); ```` ```bash ```` blocks are shown, not run. A page is a few seconds of work on one
core: tiny budgets, Kuhn poker and small boards.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md"))
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(path: Path) -> list:
    """The ```` ```python ```` blocks of a markdown file, in order."""
    return PYTHON_BLOCK.findall(path.read_text())


def run_blocks(path: Path) -> dict:
    """Run the python blocks of ``path`` in order in one namespace; returns the namespace."""
    namespace = {"__name__": f"docs_{path.stem}"}
    for number, block in enumerate(python_blocks(path), 1):
        exec(compile(block, f"{path.relative_to(ROOT)} (python block {number})", "exec"), namespace)
    return namespace


def test_the_tutorials_are_there():
    assert {p.name for p in TUTORIALS} >= {"first_run.md", "custom_game.md", "sweep_compare.md", "large_game.md"}
    nav = (ROOT / "mkdocs.yml").read_text()
    for path in TUTORIALS:
        assert python_blocks(path), f"{path.name} has no python block"
        assert f"tutorials/{path.name}" in nav, f"{path.name} is not in the nav of mkdocs.yml"


@pytest.mark.parametrize("page", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PSRO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sys, "path", list(sys.path))   # (psro's CLI adds the working directory)
    run_blocks(page)


def test_readme_quick_start_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    section = (ROOT / "README.md").read_text().split("## Quick start", 1)[1]
    block = PYTHON_BLOCK.search(section).group(1)
    exec(compile(block, "README.md (quick start)", "exec"), {"__name__": "readme_quick_start"})
