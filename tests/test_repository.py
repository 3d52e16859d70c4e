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


#: The README is the front door (issue 56): what it is, the two commands, a quick start, your own game, large games
#: and where the rest is; the reference and the results live in docs/.
MAX_README_LINES = 200
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def test_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= MAX_README_LINES, \
        f"README.md has {len(text.splitlines())} lines; keep it under {MAX_README_LINES} and move the rest to docs/"
    for heading in ("## The two commands", "## Quick start", "## Your own game", "## Large games"):
        assert heading in text
    assert "make run" in text and "make test" in text
    broken = []
    targets = [t for t in MARKDOWN_LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t)]   # no URLs
    for target in targets:
        path = target.split("#", 1)[0]
        if not path:        # an anchor of the README itself
            continue
        resolved = (ROOT / path).resolve()
        if not resolved.is_relative_to(ROOT) or not resolved.is_file():
            broken.append(target)
    assert targets, "the README links nowhere"
    assert not broken, f"relative links of README.md that name no file of the repository: {broken}"


def test_the_link_checker_sees_a_link():
    assert MARKDOWN_LINK.findall('see [the docs](docs/reference.md#x) and [y](https://a.b "t")') == \
        ["docs/reference.md#x", "https://a.b"]


# ---------------------------------------------------------------------------------------------------
# Size bar (issue #24): no module over MAX_MODULE_LINES lines and no function over MAX_FUNCTION_CODE_LINES
# code lines in the four packages (psro/, games/, solvers/, ranking/; issue #37 added the last two).
#
# A module's lines are its physical lines (what `wc -l` counts).
# A function's code lines are the lines from its `def` line (decorators excluded) to its last line that
# hold code: blank lines, comment-only lines and docstrings (its own and those of the functions and classes
# defined inside it) do not count; a line of a multi-line string that is not a docstring does. A nested
# function counts towards its own size and towards the function around it.
MAX_MODULE_LINES = 800
MAX_FUNCTION_CODE_LINES = 80
SIZE_CHECKED = ("psro", "games", "solvers", "ranking")
def code_lines(source: str) -> set[int]:
    """The line numbers of ``source`` that hold a token other than a comment (strings count in full)."""
    import io
    import tokenize

    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines


def docstring_lines(node) -> set[int]:
    import ast

    body = getattr(node, "body", None)
    if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)) and body
            and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        return set(range(body[0].lineno, body[0].end_lineno + 1))
    return set()


def function_sizes(source: str) -> list[tuple[str, int, int]]:
    """``(qualified name, first line, code lines)`` for every function and method in ``source``."""
    import ast

    tree = ast.parse(source)
    code = code_lines(source)
    sizes = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    docs = set().union(*(docstring_lines(n) for n in ast.walk(child)))
                    span = set(range(child.lineno, child.end_lineno + 1))
                    sizes.append((name, child.lineno, len((span & code) - docs)))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return sizes


def size_offenders() -> list[str]:
    offenders = []
    for folder in SIZE_CHECKED:
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            source = path.read_text()
            if (n := len(source.splitlines())) > MAX_MODULE_LINES:
                offenders.append(f"{name}: {n} lines")
            offenders += [f"{name}:{line} {func}: {n} code lines" for func, line, n in function_sizes(source)
                          if n > MAX_FUNCTION_CODE_LINES]
    return offenders


def test_no_module_or_function_in_the_packages_is_too_long():
    offenders = size_offenders()
    assert not offenders, "split these (see the size bar above):\n" + "\n".join(offenders)


def test_the_size_checker_counts_code_lines_only():
    source = (
        "def f(x):\n"            # 1 counts
        '    """Doc\n'
        '\n'
        '    string."""\n'
        "\n"
        "    # a comment\n"
        "    y = '''a\n"         # 7 counts: a string that is not a docstring
        "\n"                     # 8 counts
        "b'''\n"                 # 9 counts
        "    def g():\n"         # 10 counts (in f and in g)
        '        """g doc"""\n'
        "        return 1  # trailing\n"  # 12 counts
        "    return y\n"         # 13 counts
        "class C:\n"
        "    def m(self):\n"     # 15
        "        pass\n"         # 16
    )
    assert function_sizes(source) == [("f", 1, 7), ("f.g", 10, 2), ("C.m", 15, 2)]


def test_psro_is_laid_out_by_concept():
    # issue 56: at most three modules at the root of psro/ besides __init__.py; the rest live in folders by concept
    root_modules = sorted(p.name for p in (ROOT / "psro").glob("*.py") if p.name != "__init__.py")
    assert len(root_modules) <= 3, root_modules
