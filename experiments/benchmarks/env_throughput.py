"""Environment steps per second on one core: the batched env with policy inference in the loop, side by side.

Measured in one process pinned to one core, with torch and BLAS on one thread,
in interleaved rounds (every method once per round), reported as medians over
the rounds. A step is one player decision (chance moves are not counted).

* ``pyspiel loop``: the plain loop: one game at a time, chance sampled from
  ``chance_outcomes()``, the acting player's ``information_state_tensor`` read
  at every decision, a uniform legal action drawn with Python's ``random``; no
  policy.
* ``rl_environment``: OpenSpiel's ``rl_environment.Environment`` with a uniform
  random agent (``random.choice`` of the legal actions in each time step).
* ``generic env + MLP``: :func:`games.environment.make_env` with ``num_envs``
  copies and ``kernel=False`` (the generic
  :class:`games.environment.OpenSpielEnv`); every seat is played by its own
  torch MLP policy (2 hidden layers of 64, ReLU, masked softmax; random
  weights), one forward pass per seat for all the envs where that seat must
  act, actions drawn with
  :func:`psro.oracles.learned.env.sample_rows`. Three cache settings:
  ``fresh cache`` (a new, private 128 MiB cache of visited histories for each
  measurement: what one short run gets), ``warm shared cache`` (the process's
  shared cache of the game, filled by ``--warm-steps`` decisions before the
  rounds: what the later runs of a long job get, e.g. the oracle and evaluation
  runs of PSRO iterations), and ``no cache`` (``cache_bytes=0``).
* ``generic env, uniform (no policy)``: the same env with uniform actions and
  no network, fresh cache (what the env alone costs).
* ``kernel env + MLP`` and ``kernel env, uniform (no policy)``: the same, on
  the game's numpy kernel (:mod:`games.kernels`, what ``make_env`` builds by
  default where there is one: phantom_ttt); only for games with a kernel.
* ``PPO oracle (training)``: what the learned oracle does with the env:
  :func:`psro.oracles.learned.ppo.train_ppo` for seat 0 against uniform
  opponents (32 envs, 16 steps a chunk, one hidden layer of 64, the settings
  of ``texas_holdem_pettingzoo.yaml``; 128 evaluation episodes), counting the
  **learner's** decisions only (the opponents' are played but not counted, so
  on a two-player game it understates the env steps by about half).

A PettingZoo game (``--games pettingzoo:texas_holdem_v4``) is measured against
``PettingZoo AEC loop``: one environment stepped through ``agent_iter()``
with a uniform legal action from the ``action_mask`` (its observation read
at every decision, as ``env.last()`` gives it), and the batched env there is
:class:`games.pettingzoo_env.PettingZooEnv` (no cache, no kernel).

The bar of issue #12: the batched env with the MLP (the kernel env where the
game has one, else the generic env with a fresh cache) at >= 1x the pyspiel
loop and >= 2x rl_environment, on the wall clock and the CPU clock.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.env_throughput

``--quick`` runs fewer, shorter rounds and writes under ``runs/``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import sys
import time
from pathlib import Path

from experiments import harness

harness.pin_threads()

import numpy as np  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
COMMITTED = RESULTS / "env_throughput.md"
DIAGNOSTICS: list = []   # per batched measurement: the cache's hit rate, CPU us per decision spent on the policy


class Clock:
    """Wall-clock and CPU time (this process) since construction."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def rates(self, steps: int) -> tuple:
        """``(steps per wall second, steps per CPU second)``."""
        return steps / (time.perf_counter() - self.wall), steps / (time.process_time() - self.cpu)


def pyspiel_loop(game, steps: int, seed: int) -> float:
    """Steps per second of the plain loop (see the module docstring)."""
    rnd = random.Random(seed)
    done = 0
    clock = Clock()
    while done < steps:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(rnd.choices(actions, probs)[0])
                continue
            state.information_state_tensor(state.current_player())
            state.apply_action(rnd.choice(state.legal_actions()))
            done += 1
    return clock.rates(done)


def rl_environment(game, steps: int, seed: int) -> float:
    """Steps per second of OpenSpiel's rl_environment with a uniform random agent."""
    from open_spiel.python import rl_environment as rl

    env = rl.Environment(game, seed=seed)
    rnd = random.Random(seed)
    done = 0
    clock = Clock()
    while done < steps:
        ts = env.reset()
        while not ts.last():
            p = ts.observations["current_player"]
            ts = env.step([rnd.choice(ts.observations["legal_actions"][p])])
            done += 1
    return clock.rates(done)


def pettingzoo_loop(game, steps: int, seed: int) -> tuple:
    """Steps per second of the plain PettingZoo AEC loop with uniform legal actions (see the module docstring)."""
    rng = np.random.default_rng(seed)
    env = game.new_env()
    done = episodes = 0
    clock = Clock()
    while done < steps:
        env.reset(seed=seed + episodes)
        episodes += 1
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
            done += 1
    return clock.rates(done)


def ppo_oracle(game, steps: int, seed: int) -> tuple:
    """Learner decisions per second of :func:`psro.oracles.learned.ppo.train_ppo` against uniform opponents."""
    from games.environment import num_actions
    from psro.oracles.learned.env import OpponentMixture
    from psro.oracles.learned.ppo import PPOConfig, train_ppo
    from psro.policies import UniformPolicy

    players = game.num_players() if callable(game.num_players) else game.num_players
    opponents = OpponentMixture.single([None] + [UniformPolicy(num_actions(game))] * (players - 1))
    config = PPOConfig(total_steps=steps, num_envs=32, num_steps=16, hidden=(64,), eval_episodes=128, seed=seed)
    clock = Clock()
    result = train_ppo(game, 0, opponents, config)
    return clock.rates(result.training_steps)


def make_policies(env, seed: int):
    import torch

    torch.manual_seed(seed)
    return [torch.nn.Sequential(torch.nn.Linear(env.obs_dim, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64),
                                torch.nn.ReLU(), torch.nn.Linear(64, env.num_actions))
            for _ in range(env.num_players)]


def batched(game, steps: int, seed: int, num_envs: int, cache_bytes: int, policy: bool,
            share_cache: bool = False, kernel: bool = False) -> tuple:
    """Steps per second of the batched env, with one MLP forward per seat and step (or uniform actions)."""
    import torch

    from games.environment import make_env
    from psro.oracles.learned.env import sample_rows

    options = {} if is_pettingzoo(game) else {"cache_bytes": cache_bytes, "share_cache": share_cache,
                                              "kernel": kernel}
    env = make_env(game, num_envs, rng=seed, **options)
    nets = make_policies(env, seed) if policy else None
    rng = np.random.default_rng(seed)
    s = env.reset()
    done = 0
    policy_cpu = 0.0
    clock = Clock()
    while done < steps:
        t0 = time.process_time()
        if policy:
            obs, mask = torch.from_numpy(s.obs), torch.from_numpy(s.mask)
            out = torch.empty(mask.shape)
            with torch.inference_mode():
                for p, net in enumerate(nets):   # one forward per seat, for all the envs where it acts
                    rows = torch.from_numpy(np.flatnonzero(s.player == p))
                    if rows.numel() == 0:
                        continue
                    logits = net(obs.index_select(0, rows))
                    logits.masked_fill_(~mask.index_select(0, rows), -1e9)
                    out.index_copy_(0, rows, torch.softmax(logits, dim=-1))
            probs = out.numpy()
        else:
            probs = s.mask
        actions = sample_rows(probs, s.mask, rng.random(s.envs.size))
        policy_cpu += time.process_time() - t0
        s = env.step(s.envs, actions)
        done += s.envs.size
    DIAGNOSTICS.append({"hit_rate": getattr(env, "cache_hit_rate", math.nan),
                        "policy_cpu_us": 1e6 * policy_cpu / done})
    return clock.rates(done)


def is_pettingzoo(game) -> bool:
    return type(game).__name__ == "PettingZooGame"


def baselines(game) -> tuple:
    """The labels of the plain loops the other rows are compared with."""
    return ("PettingZoo AEC loop",) if is_pettingzoo(game) else ("pyspiel loop", "rl_environment")


def methods(args, game) -> dict:
    """The measurements for ``game``: label -> ``fn(game, steps, seed)`` (kernel rows where it has a kernel); the
    :func:`baselines` first."""
    from games.kernels import kernel_for

    budget = args.cache_mib * 2**20
    if is_pettingzoo(game):
        out = {"PettingZoo AEC loop": pettingzoo_loop}
        for b in args.num_envs:
            out[f"batched env + MLP, {b} envs"] = lambda g, n, seed, b=b: batched(g, n, seed, b, 0, True)
            out[f"batched env, uniform (no policy), {b} envs"] = \
                lambda g, n, seed, b=b: batched(g, n, seed, b, 0, False)
        out["PPO oracle (training)"] = ppo_oracle
        return out
    out = {"pyspiel loop": lambda g, n, seed: pyspiel_loop(g, n, seed),
           "rl_environment": lambda g, n, seed: rl_environment(g, n, seed)}
    out["PPO oracle (training)"] = ppo_oracle
    for b in args.num_envs:
        if kernel_for(game) is not None:
            out[f"kernel env + MLP, {b} envs"] = lambda g, n, seed, b=b: batched(g, n, seed, b, budget, True,
                                                                                 kernel=True)
            out[f"kernel env, uniform (no policy), {b} envs"] = \
                lambda g, n, seed, b=b: batched(g, n, seed, b, budget, False, kernel=True)
        out[f"generic env + MLP, {b} envs, fresh cache"] = \
            lambda g, n, seed, b=b: batched(g, n, seed, b, budget, True)
        out[f"generic env + MLP, {b} envs, warm shared cache"] = \
            lambda g, n, seed, b=b: batched(g, n, seed, b, budget, True, share_cache=True)
        out[f"generic env + MLP, {b} envs, no cache"] = \
            lambda g, n, seed, b=b: batched(g, n, seed, b, 0, True)
        out[f"generic env, uniform (no policy), {b} envs, fresh cache"] = \
            lambda g, n, seed, b=b: batched(g, n, seed, b, budget, False)
    return out


def where_the_time_goes(rows: dict, num_envs: int, baseline: str) -> list:
    """A paragraph from the measured CPU times: the plain loop's step against the env's and the policy's shares."""
    loop = 1e6 / rows[baseline]["cpu"]
    out = []
    for name, label in [("kernel env", f"kernel env + MLP, {num_envs} envs"),
                        ("batched env", f"batched env + MLP, {num_envs} envs")] + [
            (f"generic env, {cache}", f"generic env + MLP, {num_envs} envs, {cache}")
            for cache in ("fresh cache", "warm shared cache", "no cache")]:
        row = rows.get(label)
        if row is None or row["policy_cpu_us"] is None:
            continue
        total = 1e6 / row["cpu"]
        hits = "" if row["hit_rate"] is None else f", {100 * row['hit_rate']:.0f}% of the actions stepped by the cache"
        plain = baseline.replace(" loop", "")
        out.append(f"- {name}: {total:.2f} CPU us per decision = {total - row['policy_cpu_us']:.2f} in the env "
                   f"+ {row['policy_cpu_us']:.2f} in the policy (forward passes, masking, sampling){hits}; "
                   f"the plain {plain} loop takes {loop:.2f} us per decision.")
    return ["Where the time goes (CPU time, medians):", "", *out, ""] if out else []


def the_bar(rows: dict, num_envs: int) -> list:
    """Issue #12's bar on the measured medians: the MLP row (kernel env if any) against the two baselines."""
    label = f"kernel env + MLP, {num_envs} envs"
    if label not in rows:
        label = f"generic env + MLP, {num_envs} envs, fresh cache"
    row = rows.get(label)
    if row is None:
        return []
    met = min(row["wall_vs_loop"], row["cpu_vs_loop"]) >= 1.0 and \
        min(row["wall_vs_rl_environment"], row["cpu_vs_rl_environment"]) >= 2.0
    return [f"The bar (>= 1x the pyspiel loop and >= 2x rl_environment, wall and CPU): {label}: "
            f"{row['wall_vs_loop']:.2f}x / {row['cpu_vs_loop']:.2f}x the loop, {row['wall_vs_rl_environment']:.2f}x "
            f"/ {row['cpu_vs_rl_environment']:.2f}x rl_environment: **{'met' if met else 'not met'}**.", ""]


def warm_up(game, args) -> int:
    """Fill the shared cache of ``game`` with ``--warm-steps`` decisions of the MLP policies; the nodes cached."""
    from games.environment import make_env

    if is_pettingzoo(game):
        return 0
    batched(game, args.warm_steps, 10_000, args.num_envs[0], args.cache_mib * 2**20, True, share_cache=True)
    return make_env(game, 1, cache_bytes=args.cache_mib * 2**20, kernel=False).cached_nodes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=["leduc_poker", "phantom_ttt"],
                        help="pyspiel game strings, or PettingZoo ones such as pettingzoo:texas_holdem_v4")
    parser.add_argument("--steps", type=int, default=300_000, help="decisions per measurement")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (the median is reported)")
    parser.add_argument("--num-envs", type=int, nargs="+", default=[1024])
    parser.add_argument("--cache-mib", type=int, default=128, help="cache budget of the batched env, MiB")
    parser.add_argument("--warm-steps", type=int, default=2_000_000,
                        help="decisions played to fill the shared cache before the rounds")
    parser.add_argument("--core", type=int, default=None, help="CPU to pin to (default: the first allowed)")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 30k steps")
    parser.add_argument("--out", default=None, help="output file (default: results/ or runs/)")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.rounds, args.warm_steps = 30_000, 2, 100_000
    out = harness.output_path(parser, args, COMMITTED)
    out.parent.mkdir(parents=True, exist_ok=True)

    import pyspiel
    import torch

    from games.pettingzoo_env import load_pettingzoo

    torch.set_num_threads(1)
    if hasattr(os, "sched_setaffinity"):
        core = args.core if args.core is not None else min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {core})
    raw: dict = {}
    warm: dict = {}
    games: dict = {}
    for name in args.games:
        game = load_pettingzoo(name) if name.startswith("pettingzoo:") else pyspiel.load_game(name)
        games[name] = game
        table = methods(args, game)
        for fn in table.values():   # warm-up: imports, first allocations
            fn(game, 2_000, 0)
        warm[name] = warm_up(game, args)
        if warm[name]:
            print(f"{name}: {warm[name]:,} nodes in the shared cache after {args.warm_steps:,} decisions",
                  file=sys.stderr)
        for r in range(args.rounds):
            for label, fn in table.items():
                DIAGNOSTICS.clear()
                wall, cpu = fn(game, args.steps, r)
                raw.setdefault(name, {}).setdefault(label, {"wall": [], "cpu": [], "hit_rate": [],
                                                            "policy_cpu_us": []})
                raw[name][label]["wall"].append(wall)
                raw[name][label]["cpu"].append(cpu)
                for d in DIAGNOSTICS:
                    raw[name][label]["hit_rate"].append(d["hit_rate"])
                    raw[name][label]["policy_cpu_us"].append(d["policy_cpu_us"])
                print(f"{name} round {r} {label}: {wall:,.0f} steps/s wall, {cpu:,.0f} per CPU second",
                      file=sys.stderr)
    command = " ".join(["OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python",
                        "-m experiments.benchmarks.env_throughput", *(argv if argv is not None else sys.argv[1:])])
    lines = ["# Environment throughput: steps per second on one core", "", f"Command: `{command}`", "",
             f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, the process pinned "
             f"to one core; load average at the end {os.getloadavg()[0]:.2f}. "
             f"{args.rounds} interleaved rounds of {args.steps:,} decisions per method (each round runs every "
             "method back to back, each with a fresh environment). Steps per second of wall-clock time and per "
             "second of the process's CPU time (on a shared machine the CPU time is the steadier of the two); "
             "medians over the rounds, and the medians of the per-round ratios.", ""]
    summary = {}
    for name, res in raw.items():
        bases = baselines(games[name])
        cached = (f"The warm shared cache held {warm[name]:,} nodes after the warm-up of {args.warm_steps:,} "
                  "decisions (it keeps filling during the rounds).") if warm[name] else ""
        lines += [f"## {name}", "", *([cached, ""] if cached else []),
                  "| method | steps/s (wall) | steps per CPU s | "
                  + "".join(f"vs {base} (wall / CPU) | " for base in bases)
                  + "CPU us per step | of which policy | cache hits |", "|---" * (6 + len(bases)) + "|"]
        summary[name] = {}
        for label, vals in res.items():
            row = {"runs": vals}
            for clock in ("wall", "cpu"):
                v = np.array(vals[clock])
                row[clock] = float(np.median(v))
                for base, key in zip(bases, ("loop", "rl_environment")):
                    row[f"{clock}_vs_{key}"] = float(np.median(v / np.array(res[base][clock])))
            summary[name][label] = row
            hits = [h for h in vals["hit_rate"] if h == h]
            pol = vals["policy_cpu_us"]
            row["hit_rate"] = float(np.median(hits)) if hits else None
            row["policy_cpu_us"] = float(np.median(pol)) if pol else None
            ratios = "".join(f"{row[f'wall_vs_{key}']:.2f}x / {row[f'cpu_vs_{key}']:.2f}x | "
                             for key in ("loop", "rl_environment")[:len(bases)])
            lines.append(f"| {label} | {row['wall']:,.0f} | {row['cpu']:,.0f} | {ratios}{1e6 / row['cpu']:.2f} | "
                         + (f"{row['policy_cpu_us']:.2f}" if pol else "") + " | "
                         + (f"{100 * row['hit_rate']:.0f}%" if hits else "") + " |")
        lines.append("")
        if not is_pettingzoo(games[name]):
            lines += the_bar(summary[name], args.num_envs[0])
        lines += where_the_time_goes(summary[name], args.num_envs[0], bases[0])
    out.write_text("\n".join(lines))
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
