"""The repository is self-contained, and its design document's public-API block runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# how the repository used to reach data and documents outside itself
OUTSIDE = re.compile(r"\.\./shared|shared/data|shared/DESIGN|PSRO_DATA_DIR")


def tracked_text_files() -> list[Path]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    files = []
    for name in names.decode().split("\0"):
        path = ROOT / name
        if name and path.is_file() and path.suffix not in {".png", ".npz", ".whl"}:
            files.append(path)
    return files


def test_nothing_refers_to_a_path_outside_the_repository():
    this = Path(__file__).resolve()
    offenders = []
    for path in tracked_text_files():
        if path.resolve() == this:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        offenders += [f"{path.relative_to(ROOT)}:{i}" for i, line in enumerate(text.splitlines(), 1)
                      if OUTSIDE.search(line)]
    assert not offenders, f"references to paths outside the repository: {offenders}"


def test_the_checker_sees_an_outside_reference():
    assert OUTSIDE.search("data = Path('../shared/data')") and OUTSIDE.search("os.environ['PSRO_DATA_DIR']")
    assert not OUTSIDE.search("a shared helper in games/data/README.md")


def test_design_public_api_block_runs():
    text = (ROOT / "DESIGN.md").read_text()
    section = text.split("## Public API", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert block.count("import") >= 8
    # a fresh interpreter: the names must resolve through the packages' lazy exports, in any order
    proc = subprocess.run([sys.executable, "-c", block], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_readme_points_to_the_design_document():
    readme = (ROOT / "README.md").read_text()
    assert "DESIGN.md" in readme and (ROOT / "DESIGN.md").is_file()
