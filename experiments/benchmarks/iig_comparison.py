"""The toolkit's loops side by side on the large imperfect-information games, measured exactly: PSRO against the
self-play learners users pick instead (PPO self-play, MMD, NFSP), each from a run config, and OpenSpiel's own
psro_v2 and NFSP, on one clock.

    python -m experiments.benchmarks.iig_comparison [--game phantom_ttt] [--sides NAME ...] [--seeds 0 1 2]
                                                     [--budget 600] [--at 60 120 300] [--processes 2]
                                                     [--set FIELD=VALUE ...] [--quick] [--out FILE]

Each side is a run config of :data:`SIDES` (a shipped config with the overrides named there; a PSRO side
runs the game's own deep config, :data:`DEEP_CONFIGS`) run by
``psro run CONFIG --set seed=S --time-limit BUDGET`` with ``exact_gap: true`` and ``exact_gap_every: 1000``: the
loop trains until the budget (wall seconds, checked between iterations), then measures the exact NashConv of its
output (:func:`psro.exact_nash_conv`: the compiled evaluator on phantom tic-tac-toe and dark hex; a PSRO run's
meta-strategy mixture, a self-play run's current or average policies) on its last row, after the clock. No
``approx_gap`` is measured (it would spend the budget). ``--processes`` runs go at once, each with one torch and
BLAS thread (the exact evaluation uses numba's threads); ``--game`` replaces each config's game (``dark_hex3_abrupt``:
abrupt 3x3 dark hex, ``gameversion=adh``), ``--set`` sets a field on every toolkit side (for tuning). The sides of
:data:`OPENSPIEL_SIDES` are OpenSpiel's psro_v2 and NFSP at the settings of its examples
(:func:`openspiel_side`), measured by the same evaluator.

``--at`` measures each output at earlier seconds of training too (``exact_at_<t>s``, off the clock): a toolkit run
stops there, is measured and resumed (``psro resume``, its limit raised by what the measurement took); an OpenSpiel
run keeps its output as it stood there.

The table gives, per side and seed, the iterations, the learner decisions (``env_steps``), the wall seconds of
training and where they went (the history's ``time_oracle``: responses or learners; ``time_evaluation``: the
meta-game; ``time_meta_solve``), and the exact NashConv of the last row with the evaluation's seconds (and, for a
loop with learned responses, ``response_error_<p>``: how far the last step's responses are from best responses to
their targets, exactly); the summary the median over seeds. ``--keep DIR`` keeps each run's ``history.csv`` there
(as ``<side>-<seed>.csv``).
The uniform profile's NashConv: 1.5775 on phantom tic-tac-toe, 1.8328 on 3x3 dark hex.

``--quick`` plays 2x2 dark hex with two sides, one seed and 10-second budgets, and writes under ``runs/``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import tempfile
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from experiments import harness

harness.pin_threads()

import pandas as pd  # noqa: E402

from experiments.benchmarks.kill_resume_offline import _env, _psro  # noqa: E402

CONFIGS = harness.REPO_ROOT / "experiments" / "configs"
#: name -> (run config, the fields it changes): the PSRO family with model_br responses (the game's shipped deep
#: config, DEEP_CONFIGS: its table keyed by the board as the player sees it, key_size: view; a response worse than
#: the uniform policy is recorded in response_ok, not an error), with its table keyed by the whole
#: information-state tensor (the config before) and with small PPO responses (its oracle before that), PPO and MMD
#: self-play at their shipped settings, NFSP at its Leduc-tuned ones
SIDES = {
    "psro_ppo": (None, {"oracle": "ppo", "oracle_options": "{total_steps: 4096, num_envs: 64, num_steps: 16, "
                        "eval_episodes: 128, hidden: [64]}"}),
    "psro_model_br": (None, {}),
    "psro_model_br_full": (None, {"oracle_options": "{total_steps: 100000, on_bad_response: warn}"}),
    "ppo_self_play": ("phantom_ttt_ppo_self_play.yaml", {}),
    "mmd": ("phantom_ttt_mmd.yaml", {}),
    "nfsp": ("leduc_nfsp_tuned.yaml", {"game": "phantom_ttt", "exact_gap": "true"}),
}
#: The PSRO sides' run config (None in SIDES) by the game's name: each game's shipped deep config
DEEP_CONFIGS = {"phantom_ttt": "phantom_ttt_deep.yaml", "dark_hex": "dark_hex3_deep.yaml"}
#: OpenSpiel's own learners, at the settings of its examples (the Leduc comparison's adapters,
#: experiments/benchmarks/leduc/): psro_v2 with its policy-gradient oracle (10,000 episodes a response, 100 episodes
#: a meta-game entry) and its torch NFSP; each in a process of its own (spawned, one thread), its output measured by
#: psro.exact_nash_conv after the budget (psro_v2: the meta-strategy of its last finished iteration; NFSP: the
#: average policies)
OPENSPIEL_SIDES = ("openspiel_psro_v2", "openspiel_nfsp")
#: What every side runs with (the budget and the seed are added per run)
COMMON = {"exact_gap": "true", "exact_gap_every": "1000", "approx_gap_every": "null", "iterations": "null",
          "target_gap": "null", "progress": "false"}
GAMES = {"phantom_ttt": "phantom_ttt", "dark_hex3": "dark_hex(num_rows=3,num_cols=3)",
         "dark_hex3_abrupt": "dark_hex(num_rows=3,num_cols=3,gameversion=adh)",
         "dark_hex2": "dark_hex(num_rows=2,num_cols=2)"}


def run_side(side: str, seed: int, game: str, budget: float, folder: Path, keep: Path | None = None,
             sets: dict | None = None, at: tuple = ()) -> dict:
    """One side and seed: ``psro run`` until ``budget`` wall seconds, then its last row (and the seconds of each
    kind of work, summed over the rows); ``keep``: a folder to copy the history into; ``sets``: fields set on top
    of the side's (``--set`` of the command line, for tuning); ``at``: earlier points (seconds of training) where
    the output is measured too (``exact_at_<t>s``): the run stops there, is measured, and ``psro resume`` goes on
    with the time its measurement took added to the limit. An OpenSpiel side runs :func:`openspiel_side`."""
    points = sorted(t for t in set(at) if 0 < t < budget)
    if side in OPENSPIEL_SIDES:
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            return pool.submit(openspiel_side, side, seed, game, budget, tuple(points)).result()
    config, fields = SIDES[side]
    config = config or DEEP_CONFIGS[game.split("(")[0]]
    fields = {**fields, **COMMON, "seed": str(seed), "game": game}
    fields.update(sets or {})
    run_dir = folder / f"{side}-{seed}"
    arguments = [arg for key, value in fields.items() for arg in ("--set", f"{key}={value}")]
    command = _psro("run", str(CONFIGS / config), "--out", str(run_dir), "--overwrite", *arguments)
    earlier, limits, history = {}, [*points, budget], None
    for k, limit in enumerate(limits):
        if k:   # (the limit counts the whole run: the parts before, their measurements included)
            command = _psro("resume", str(run_dir))
            limit = float(history["wall_time"].iloc[-1]) + limit - limits[k - 1]
        done = subprocess.run([*command, "--time-limit", str(limit)], env=_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        if done.returncode:   # (a failed run is a row: its error's last line, no NashConv)
            last_line = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}, nothing on stderr"])[-1]
            return {"side": side, "seed": seed, "error": last_line[:300]}
        history = pd.read_csv(run_dir / "history.csv")
        if k < len(points):
            earlier[f"exact_at_{points[k]:g}s"] = float(history["gap"].iloc[-1])
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        history.to_csv(keep / f"{side}-{seed}.csv", index=False)
    last = history.iloc[-1]
    measured = float(last["exact_gap_time"]) if "exact_gap_time" in last else float("nan")
    all_measures = float(history["exact_gap_time"].fillna(0).sum()) if "exact_gap_time" in history else measured
    spent = {f"{phase}_s": round(float(history[f"time_{phase}"].sum()), 1)
             for phase in ("oracle", "evaluation", "meta_solve") if f"time_{phase}" in history}
    errors = {column: round(float(last[column]), 4) for column in ("response_error_0", "response_error_1")
              if column in last and pd.notna(last[column])}   # (the last step's responses, measured exactly)
    return {"side": side, "seed": seed, "iterations": int(last["iteration"]), "decisions": int(last["env_steps"]),
            "training_wall_s": round(float(last["wall_time"]) - all_measures, 1), **spent, **earlier,
            "exact_nash_conv": float(last["gap"]), **errors, "exact_eval_s": round(measured, 1)}


def openspiel_side(side: str, seed: int, game: str, budget: float, at: tuple = ()) -> dict:
    """One of :data:`OPENSPIEL_SIDES` on ``game`` for ``budget`` wall seconds (the step running at the end does not
    count), then the exact NashConv of its output, and of its outputs at the seconds ``at`` (``exact_at_<t>s``:
    psro_v2's last meta-profile whose iteration ended before ``t``; NFSP's average networks copied at the end of
    the block of 1,000 episodes that crosses ``t``). Its ``iterations``:
    psro_v2's iterations, or NFSP's training episodes; its ``decisions``: NFSP's environment steps (psro_v2 does
    not count them)."""
    import pyspiel
    import torch

    from experiments.benchmarks.leduc import openspiel_nfsp_adapter, psro_v2_adapter
    from experiments.clock import Clock, until_budget
    from psro import exact_nash_conv

    torch.set_num_threads(1)
    game_obj, clock = pyspiel.load_game(game), Clock(budget)
    iterations, steps, profile, earlier = 0, math.nan, None, {}

    def passed(output):   # (the output as it stood at each point the clock has passed)
        for t in at:
            if clock.wall >= t and t not in earlier:
                earlier[t] = output()

    if side == "openspiel_psro_v2":
        with until_budget():
            with clock:
                solver = psro_v2_adapter.solver_for(game_obj, seed, psro_v2_adapter.Options())
            profile = psro_v2_adapter.meta_profile(solver)
            while True:
                with clock:
                    solver.iteration()
                passed(lambda: profile)
                iterations += 1
                profile = psro_v2_adapter.meta_profile(solver)
    else:
        from open_spiel.python import rl_environment

        options, steps = openspiel_nfsp_adapter.Options(), 0
        env = rl_environment.Environment(game_obj)
        env.seed(seed)
        agents = openspiel_nfsp_adapter.agents_for(env, seed, options)
        with until_budget():
            while True:
                with clock:
                    for _ in range(options.measure_every):
                        steps += openspiel_nfsp_adapter.play_episode(env, agents)
                passed(lambda: openspiel_nfsp_adapter.average_profile(agents, frozen=True))
                iterations += options.measure_every
        profile = openspiel_nfsp_adapter.average_profile(agents)
    if profile is None:
        return {"side": side, "seed": seed, "error": f"its setup did not finish within {budget:g} s"}
    for t in at:   # (no step finished after t: the output at t is the last one)
        earlier.setdefault(t, profile)
    points = {f"exact_at_{t:g}s": exact_nash_conv(game_obj, earlier[t]).nash_conv for t in at}
    result = exact_nash_conv(game_obj, profile)
    return {"side": side, "seed": seed, "iterations": iterations, "decisions": steps,
            "training_wall_s": round(clock.wall, 1), **points, "exact_nash_conv": result.nash_conv,
            "exact_eval_s": round(result.seconds, 1)}


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per side: the median over seeds of the exact NashConv, its lowest and highest, the median iterations."""
    rows = []
    for side, part in table.groupby("side", sort=False):
        part = part[part["exact_nash_conv"].notna()] if "exact_nash_conv" in part else part.iloc[:0]
        if part.empty:
            continue
        points = {f"median {column[len('exact_at_'):]}": round(statistics.median(part[column].dropna()), 4)
                  for column in part.columns if column.startswith("exact_at_") and part[column].notna().any()}
        rows.append({"side": side, "seeds": len(part), **points,
                     "median exact NashConv": round(statistics.median(part["exact_nash_conv"]), 4),
                     "lowest": round(float(part["exact_nash_conv"].min()), 4),
                     "highest": round(float(part["exact_nash_conv"].max()), 4),
                     "median iterations": statistics.median(part["iterations"]),
                     "median decisions": _median_count(part["decisions"])})
    return pd.DataFrame(rows)


def _median_count(values: pd.Series):
    """The median of the counts a side records, or NaN where it records none."""
    values = values.dropna()
    return int(statistics.median(values)) if len(values) else math.nan


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=list(GAMES), default="phantom_ttt")
    parser.add_argument("--sides", nargs="+", choices=[*SIDES, *OPENSPIEL_SIDES], default=list(SIDES))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--budget", type=float, default=600.0, help="wall seconds of training per side and seed")
    parser.add_argument("--processes", type=int, default=2, help="runs at once")
    parser.add_argument("--at", nargs="*", type=float, default=[],
                        help="earlier seconds of training where each output is measured too (e.g. 60 120 300)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--keep", type=Path, default=None, help="a folder to keep each run's history in")
    parser.add_argument("--set", dest="sets", action="append", default=[], metavar="FIELD=VALUE",
                        help="a config field set on every side, after the side's own (repeatable; for tuning)")
    parser.add_argument("--out", type=Path, default=None,
                        help="markdown table (default: results/iig_comparison_<game>.md for a default run)")
    args = parser.parse_args(argv)
    committed = harness.BENCHMARKS / "results" / f"iig_comparison_{args.game}.md"
    if args.quick:
        args.game, args.sides, args.seeds, args.budget = "dark_hex2", ["psro_ppo", "mmd"], [0], 10.0
    out = harness.output_path(parser, args, committed)
    sets = dict(item.split("=", 1) for item in args.sets)
    jobs = [(side, seed) for seed in args.seeds for side in args.sides]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.processes) as pool:
        rows = list(pool.map(lambda job: run_side(*job, GAMES[args.game], args.budget, Path(tmp), args.keep, sets,
                                                  tuple(args.at)), jobs))
    table = pd.DataFrame(rows)
    command = " ".join(["python -m experiments.benchmarks.iig_comparison", f"--game {args.game}",
                        "--sides " + " ".join(args.sides), "--seeds " + " ".join(map(str, args.seeds)),
                        f"--budget {args.budget:g}", f"--processes {args.processes}",
                        *([f"--at {' '.join(f'{t:g}' for t in args.at)}"] if args.at else []),
                        *[f"--set '{item}'" for item in args.sets],
                        *([f"--out {args.out}"] if args.out else [])])
    lines = [f"# Training loops on {GAMES[args.game]}, measured exactly", "",
             f"Command: `{command}`", "",
             f"Each side from its run config (experiments/benchmarks/iig_comparison.py, SIDES; OpenSpiel's from the "
             f"settings of its examples, OPENSPIEL_SIDES), {args.budget:g} wall seconds of training, "
             f"{args.processes} runs at once on this 2-core machine, then the exact NashConv of its output on the "
             "last row (off the clock).", "",
             harness.pipe_table(summary(table)), "", "Every run:", "", harness.pipe_table(table), ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    print(summary(table).to_string(index=False))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
