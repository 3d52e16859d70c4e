"""How far learned responses are from best responses late in a PSRO run on phantom tic-tac-toe or dark hex,
exactly: the large-game form of ``deep_leduc_br_quality`` (issue #55), on the compiled evaluator.

A PSRO run's output can only be as unexploitable as its responses are good. Where no tree fits, the compiled
evaluator (:func:`psro.exact_nash_conv` with ``responses=``) measures a response's exact error against its target:
the best response's value minus the response's value, both exact. This script

1. runs PSRO from ``--config`` (default ``experiments/configs/phantom_ttt_deep.yaml``) for ``--iterations``
   iterations on a tuning seed (``--seed``, default 10; never the comparison's 0-2), the exact gap and the step's
   ``response_error_<p>`` measured every ``--every`` iterations (the history's columns), or reads a finished run
   directory (``--run``);
2. trains each candidate oracle setting (:data:`CANDIDATES`) against the run's final meta-strategy, for both
   players (one training seed, ``--train-seed``), and measures every response exactly in one evaluation of the
   meta-strategy (the mixture's plans computed once). The cost is the CPU-seconds of the oracle's ``respond``.

Run (about 20 minutes on 2 cores: 16 for the run with its four measurements, 5 for the candidates)::

OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.large_br_quality

Results: ``results/large_br_quality_phantom_ttt.md``. ``--quick`` runs 2x2 dark hex for 4 iterations with two small
candidates and writes under ``runs/``.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

from experiments import harness
from experiments.benchmarks.kill_resume_offline import _psro

logger = logging.getLogger("large_br_quality")

CONFIG = harness.REPO_ROOT / "experiments" / "configs" / "phantom_ttt_deep.yaml"
RESULTS = harness.BENCHMARKS / "results" / "large_br_quality_phantom_ttt.md"

#: The settings tried: ``(oracle, options)``; ``view 100k`` is ``phantom_ttt_deep.yaml``'s.
CANDIDATES = {
    "model_br, view, 100k": ("model_br", {"total_steps": 100_000, "key_size": "view"}),
    "model_br, view, 300k": ("model_br", {"total_steps": 300_000, "key_size": "view"}),
    "model_br, view, 1M": ("model_br", {"total_steps": 1_000_000, "key_size": "view"}),
    "model_br, view, 3M": ("model_br", {"total_steps": 3_000_000, "key_size": "view"}),
    "model_br, whole tensor, 1M": ("model_br", {"total_steps": 1_000_000}),
    "model_br, whole tensor, 3M": ("model_br", {"total_steps": 3_000_000}),
    "neural_br (default, 300k)": ("neural_br", {}),
}
QUICK_CANDIDATES = {"model_br, view, 2k": ("model_br", {"total_steps": 2_000, "key_size": "view"}),
                    "model_br, view, 20k": ("model_br", {"total_steps": 20_000, "key_size": "view"})}


def make_run(config: Path, out: Path, seed: int, iterations: int, every: int, game: str | None = None) -> Path:
    """``psro run config`` for ``iterations`` iterations (no time limit) with the exact gap every ``every``."""
    sets = {"seed": seed, "iterations": iterations, "exact_gap": "true", "exact_gap_every": every,
            "time_limit": "null", "approx_gap_every": "null", "progress": "false", **({"game": game} if game else {})}
    command = _psro("run", str(config), "--out", str(out), "--overwrite",
                    *[arg for key, value in sets.items() for arg in ("--set", f"{key}={value}")])
    subprocess.run(command, check=True, cwd=harness.REPO_ROOT)
    return out


def along_the_run(run_dir: Path):
    """The history's rows whose exact gap was measured: the gap and the step's response errors."""
    import pandas as pd

    history = pd.read_csv(run_dir / "history.csv")
    columns = ["iteration", "gap", "response_error_0", "response_error_1", "exact_gap_time"]
    return history.loc[history["gap"].notna(), columns].reset_index(drop=True)


def candidate_errors(run_dir: Path, candidates: dict, train_seed: int) -> tuple:
    """``(rows, exploitability)``: each candidate's response per player against the run's final meta-strategy,
    measured exactly in one evaluation."""
    from psro.measures.exact import exact_nash_conv, mixture_profile
    from psro.measures.reference_opponents import final_run
    from psro.meta.targets import meta_targets
    from psro.oracles.base import make_oracle

    solver, game, _, strategy = final_run(run_dir)
    populations = solver.seat_populations()
    payoffs = solver.state.meta_game.mean_game().payoffs
    targets = [meta_targets(strategy, "product", populations, payoffs, p)[0] for p in (0, 1)]
    responses, seconds = [[], []], {}
    for name, (oracle_name, options) in candidates.items():
        oracle = make_oracle(oracle_name, None, seed=train_seed, game=game, on_bad_response="warn", **options)
        for p, target in enumerate(targets):
            start = time.process_time()
            responses[p].append(oracle.respond(p, target).policy)
            seconds[name, p] = time.process_time() - start
        logger.info("%s: trained in %.1f / %.1f CPU-s", name, seconds[name, 0], seconds[name, 1])
    result = exact_nash_conv(game, mixture_profile(populations, strategy.marginals), responses=responses)
    rows = [{"setting": name, "error_0": result.response_errors[0][k], "error_1": result.response_errors[1][k],
             "cpu_s_0": seconds[name, 0], "cpu_s_1": seconds[name, 1]} for k, name in enumerate(candidates)]
    return rows, result


def main() -> None:
    parser = harness.script_parser(__doc__)
    parser.add_argument("--config", default=str(CONFIG), help="the PSRO run config (default: phantom_ttt_deep)")
    parser.add_argument("--run", help="a finished run directory to use instead of making one")
    parser.add_argument("--seed", type=int, default=10, help="the run's seed (a tuning seed, not the benchmark's)")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--every", type=int, default=50, help="the exact gap and response errors every k rows")
    parser.add_argument("--train-seed", type=int, default=5, help="the candidates' oracle seed")
    parser.add_argument("--candidates", nargs="+", choices=list(CANDIDATES), default=list(CANDIDATES))
    parser.add_argument("--out", help="markdown summary path")
    parser.add_argument("--quick", action="store_true", help="2x2 dark hex, 4 iterations, QUICK_CANDIDATES")
    args = parser.parse_args()
    import pandas as pd

    out = harness.output_path(parser, args, RESULTS)
    candidates = {k: CANDIDATES[k] for k in args.candidates}
    iterations, every, game = args.iterations, args.every, None
    if args.quick:
        iterations, every, game, candidates = 4, 2, "dark_hex(num_rows=2,num_cols=2)", QUICK_CANDIDATES
    scratch = harness.SCRATCH / f"large_br_quality-run-{args.seed}{'-quick' if args.quick else ''}"
    run_dir = Path(args.run) if args.run else make_run(Path(args.config), scratch, args.seed, iterations, every, game)
    curve = along_the_run(run_dir)
    rows, result = candidate_errors(run_dir, candidates, args.train_seed)
    final = int(curve["iteration"].iloc[-1]) if len(curve) else "?"
    text = "\n".join([
        f"# Learned responses against a late PSRO meta-strategy, measured exactly ({run_dir.name})", "",
        f"Command: `{harness.command_line()}`", "",
        "The run's exact gap and its own responses' exact errors along the run (`response_error_<p>`: the best "
        "response's value against the step's target minus the response's value):", "",
        harness.pipe_table(curve), "",
        f"Each setting trained against the final meta-strategy (iteration {final}; its NashConv "
        f"{result.nash_conv:.4f}, the players' gains {result.gains[0]:.4f} and {result.gains[1]:.4f}), oracle seed "
        f"{args.train_seed}, then measured exactly (one evaluation, {result.seconds:.0f} s):", "",
        harness.pipe_table(pd.DataFrame(rows)), ""])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
