"""``experiments/`` is a package indexed by question: INDEX.md is current and names every module, and no
module shadows a top-level package."""

from pathlib import Path

from experiments import index

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"psro", "solvers", "games", "ranking", "experiments"}


def test_the_index_is_current_and_names_every_module(capsys):
    assert index.main(["--check"]) == 0, capsys.readouterr().err
    text = index.INDEX.read_text()
    for module in index.scripts():
        assert f"`python -m experiments.{module.replace('/', '.')}`" in text
    assert "mgce_metagames" in text and "reproduce/results/fxp/" in text   # results found for both layouts


def test_the_check_fails_on_a_stale_index_or_an_unlisted_module(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(index, "INDEX", tmp_path / "INDEX.md")
    assert index.main(["--check"]) == 1                  # none written yet
    assert index.main([]) == 0 and index.main(["--check"]) == 0
    monkeypatch.setitem(index.QUESTIONS, "Shared code and tools (not experiments themselves)", ["harness"])
    assert index.main(["--check"]) == 1
    assert "add ['clock', 'index'" in capsys.readouterr().err


def test_no_file_under_experiments_is_named_after_a_top_level_package():
    named = [p for p in (ROOT / "experiments").rglob("*") if p.stem in PACKAGES]
    assert named == []


def test_every_import_of_a_sibling_script_goes_through_the_package():
    """``import deep_psro_leduc`` worked only with the script's folder on ``sys.path``; under ``python -m`` it fails,
    and it failed in worker processes of deep_psro_leduc.py (the psro_v2 side died at once). Every import, also one
    inside a function, names ``experiments.…``."""
    import ast

    scripts = {p.stem for p in (ROOT / "experiments").rglob("*.py")}
    bare = []
    for path in (ROOT / "experiments").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else []
            bare += [f"{path.relative_to(ROOT)}:{node.lineno} {name}" for name in names
                     if name.split(".")[0] in scripts - {"experiments"}]
    assert bare == []


def _options(module: str) -> set:
    """The option strings of every ``add_argument`` call in the module's source."""
    import ast

    tree = ast.parse((index.HERE / f"{module}.py").read_text())
    return {arg.value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
            for arg in node.args if isinstance(arg, ast.Constant)}


def test_every_benchmark_has_a_quick_form(capsys):
    """``make bench`` runs ``python -m <module> --quick`` for every module ``--benchmarks`` prints: each is a
    benchmarks/ module with a ``main`` and a ``--quick`` option, and only the tuning log is left out."""
    listed = index.benchmarks()
    under = {m for m in index.scripts() if m.startswith("benchmarks/")}
    assert set(listed) == under - set(index.NOT_BENCHMARKS) and len(listed) == len(set(listed))
    assert [m for m in listed if "--quick" not in _options(m)] == []
    assert index.main(["--benchmarks"]) == 0
    assert capsys.readouterr().out.split() == ["experiments." + m.replace("/", ".") for m in listed]
