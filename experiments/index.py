"""Write ``experiments/INDEX.md``: every experiment by the question it answers, with its command and results.

Run ``python -m experiments.index`` after adding or renaming a module under ``experiments/``;
``python -m experiments.index --check`` exits 1 when the committed index is out of date (the
test suite runs the check). The first line of each module's docstring says what it measures.
``python -m experiments.index --benchmarks`` prints the benchmark scripts' module names, one a
line (``make bench`` runs each with ``--quick``).
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
INDEX = HERE / "INDEX.md"

#: The Leduc comparisons' package: its configs, adapters and measurement (run by ``benchmarks/deep_psro_leduc``)
LEDUC_COMPARISON = ["benchmarks/leduc/comparison", "benchmarks/leduc/toolkit_adapter",
                    "benchmarks/leduc/psro_v2_adapter", "benchmarks/leduc/openspiel_nfsp_adapter",
                    "benchmarks/leduc/measure"]

#: The questions, each with the modules (paths under ``experiments/``, without ``.py``) that answer it.
QUESTIONS: dict[str, list[str]] = {
    "Is the exact core faster than OpenSpiel on the same inputs?": [
        "benchmarks/solver_speed", "benchmarks/zero_sum_lp", "benchmarks/double_oracle", "benchmarks/dynamics",
        "benchmarks/ranking_speed", "benchmarks/ranking_ucb", "benchmarks/bench_elo_nash_averaging",
        "benchmarks/alpharank_scale", "benchmarks/psro_components", "benchmarks/psro_leduc", "benchmarks/jpsro",
        "benchmarks/rrps_tournament", "benchmarks/mgce_jpsro_metagames", "benchmarks/import_time",
        "benchmarks/mmd_speed",
    ],
    "Does the learned path reach the front on Leduc poker?": [
        "benchmarks/deep_psro_leduc", *LEDUC_COMPARISON, "benchmarks/deep_leduc_br_quality", "benchmarks/nxdo_leduc",
        "benchmarks/pipeline_psro_leduc", "benchmarks/top_up_leduc", "benchmarks/rl_oracle_kuhn",
        "benchmarks/deep_leduc_tuning/tuning_log", "benchmarks/mmd_neural",
    ],
    "Does population training win where no table fits (phantom tic-tac-toe, dark hex), measured exactly?": [
        "benchmarks/iig_comparison", "benchmarks/large_br_quality",
    ],
    "Is measurement on games without a tree cheap and valid?": [
        "benchmarks/approx_gap_validation", "benchmarks/approx_gap_share", "benchmarks/env_throughput",
        "benchmarks/exact_exploitability",
    ],
    "How much do more cores or machines buy?": [
        "benchmarks/parallel_oracles", "benchmarks/pipeline_psro_workers", "benchmarks/ray_speedup",
    ],
    "Does a run survive faults (SIGKILL, damaged run directories)?": [
        "benchmarks/kill_resume_offline", "benchmarks/kill_resume_variants", "benchmarks/run_dir_faults",
        "benchmarks/self_play_phantom",
    ],
    "Did a refactor keep behaviour (the shipped configs' histories against an earlier revision)?": [
        "benchmarks/same_histories",
    ],
    "Do the papers' claims hold (reproductions)?": [
        "reproduce/alpharank_incomplete_info", "reproduce/anytime_psro", "reproduce/diverse_psro", "reproduce/fxp",
        "reproduce/jpsro", "reproduce/league_vs_psro", "reproduce/minimax_exploiter", "reproduce/offline_psro",
        "reproduce/psro_vs_openspiel", "reproduce/rae", "reproduce/rectified_psro",
        "reproduce/rrps_population_eval", "reproduce/self_play_psro", "reproduce/symmetric_psro",
        "reproduce/xdo_vs_psro",
    ],
    "Shared code and tools (not experiments themselves)": [
        "harness", "clock", "index", "reproduce/common", "reproduce/readme_results", "notebooks/make_notebooks",
    ],
}


def summary(module: str) -> str:
    """The first sentence-line of a module's docstring."""
    doc = ast.get_docstring(ast.parse((HERE / f"{module}.py").read_text())) or ""
    return " ".join(doc.split("\n\n")[0].split())


#: Results whose names do not start with their module's.
OTHER_RESULTS = {"benchmarks/mgce_jpsro_metagames": "mgce_metagames"}


#: Modules under ``benchmarks/`` that are not benchmark scripts: the tuning log is rebuilt from the CSVs of earlier
#: runs, it measures nothing; the Leduc comparisons' modules are what ``benchmarks/deep_psro_leduc`` runs.
NOT_BENCHMARKS = ("benchmarks/deep_leduc_tuning/tuning_log", *LEDUC_COMPARISON)


def has_main(module: str) -> bool:
    """Whether the module defines a top-level function ``main``."""
    tree = ast.parse((HERE / f"{module}.py").read_text())
    return any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body)


def benchmarks() -> list[str]:
    """The benchmark scripts in the order of :data:`QUESTIONS`: every ``benchmarks/`` module with a ``main`` but
    :data:`NOT_BENCHMARKS`."""
    return [module for modules in QUESTIONS.values() for module in modules
            if module.startswith("benchmarks/") and module not in NOT_BENCHMARKS and has_main(module)]


def results(module: str) -> list[str]:
    """The committed results of a module: ``reproduce/results/<name>/`` or ``benchmarks/results/<name>*``."""
    folder, _, name = module.rpartition("/")
    name = OTHER_RESULTS.get(module, name)
    base = HERE / folder / "results"
    if not base.is_dir():
        return []
    found = sorted(p for p in base.iterdir() if p.name == name or p.stem == name or p.stem.startswith(name + "_"))
    return [p.relative_to(HERE).as_posix() + ("/" if p.is_dir() else "") for p in found]


def scripts() -> list[str]:
    """Every Python module under ``experiments/`` but the packages' ``__init__``, as written in :data:`QUESTIONS`."""
    return sorted(p.relative_to(HERE).with_suffix("").as_posix() for p in HERE.rglob("*.py")
                  if p.name != "__init__.py")


def render() -> str:
    lines = ["# Experiments", "",
             "Generated by `python -m experiments.index` from the modules' docstrings; do not edit by hand.",
             "Run each from the repository root with the command shown; `--help` lists its options, and",
             "`--quick` (every benchmark and reproduction has it) runs a small form that never writes over",
             "the committed results (it writes under `runs/`, or nothing); `make bench` runs the quick form",
             "of every benchmark in turn.", ""]
    for question, modules in QUESTIONS.items():
        lines += [f"## {question}", "", "| command | what it measures | results |", "|---|---|---|"]
        for module in modules:
            command = "python -m experiments." + module.replace("/", ".")
            files = ", ".join(f"[{f.rsplit('/', 2)[-2] if f.endswith('/') else f.rsplit('/', 1)[-1]}]({f})"
                              for f in results(module)) or "-"
            lines.append(f"| `{command}` | {summary(module).replace('|', '/')} | {files} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if INDEX.md is out of date; write nothing")
    parser.add_argument("--benchmarks", action="store_true",
                        help="print the benchmark scripts' module names (experiments.benchmarks.<name>), one a line")
    args = parser.parse_args(argv)
    listed = [m for modules in QUESTIONS.values() for m in modules]
    missing, unknown = sorted(set(scripts()) - set(listed)), sorted(set(listed) - set(scripts()))
    if missing or unknown:
        print(f"experiments/index.py QUESTIONS: add {missing}, remove {unknown}", file=sys.stderr)
        return 1
    if args.benchmarks:
        print("\n".join("experiments." + module.replace("/", ".") for module in benchmarks()))
        return 0
    text = render()
    if args.check:
        current = INDEX.read_text() if INDEX.is_file() else ""
        if current != text:
            print("experiments/INDEX.md is out of date: run python -m experiments.index", file=sys.stderr)
            return 1
        return 0
    INDEX.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
