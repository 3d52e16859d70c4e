"""Deep PSRO on Leduc poker: ours (PPO oracle, sampled play) against OpenSpiel's psro_v2 with its torch
policy-gradient oracle, side by side, same wall budget, exact NashConv of each meta-strategy against wall time.

For every seed the two sides run at the same time, each in its own process on one core (``sched_setaffinity``
where the machine has two cores or more), with one BLAS / OpenMP / torch thread each.

**psro_v2** (``open_spiel.python.algorithms.psro_v2``) is set up as in OpenSpiel's
``examples/psro_v2_example.py`` with ``--oracle_type=PG``: an ``RLOracle`` over ``rl_environment.Environment``
training ``rl_policy`` policy-gradient agents (QPG loss, 4 hidden layers of 256, Adam, critic learning rate 1e-2,
policy learning rate 1e-3, entropy cost 0.001, 8 critic updates per policy update, batch 16), 10,000 episodes per
response (``--pg-episodes``), 100 simulations per meta-game entry (``--sims-per-entry``), the Nash meta-solver
(``--pg-meta``), the ``probabilistic`` training-strategy selector, no rectifier; the initial policies are the
untrained networks, as in the example. It needs these patches to run, and nothing else is changed:

1. ``rl_policy`` imports OpenSpiel's JAX agents at module level and JAX is not installed: stub modules stand in
   for ``open_spiel.python.jax.dqn`` and ``open_spiel.python.jax.policy_gradient`` during the import (their
   classes are never used), and the policy class is made with ``rl_policy.rl_policy_factory`` from the **torch**
   agent ``open_spiel.python.pytorch.policy_gradient.PolicyGradient``.
2. The torch agent's ``copy_with_noise`` (called by ``RLOracle.generate_new_policies`` on every new response)
   crashes: it reads ``.weight`` of the torso's ``nn.Sequential(Linear, ReLU)`` blocks. It is replaced by the
   same operation done on the ``Linear`` layers: a fresh agent with the same hyperparameters whose weights are
   multiplied by ``1 + sigma * N(0, 1)`` (sigma is 0 in the example, so: a fresh agent, as upstream intends).
3. OpenSpiel's LP (the Nash meta-solver) asks cvxpy for ECOS, which is not installed: it gets HiGHS
   (``psro_leduc._use_highs_for_openspiel_lp``).

**Ours** is ``psro.PSRO("leduc_poker", oracle="ppo", evaluator="monte_carlo", ...)`` with no exact gap
(:func:`our_solver` holds the call); it does not build the game tree for training or evaluation.

**openspiel_nfsp** (``--sides openspiel_nfsp``, or ``all``) is OpenSpiel's own NFSP, its torch agent
``open_spiel.python.pytorch.nfsp.NFSP`` (it needs ``dm-tree``, in the ``bench`` and ``dev`` extras), set up with the
flag defaults of OpenSpiel's ``examples/nfsp_leduc_pytorch.py`` (:class:`OpenSpielNFSPOptions`): one hidden layer of
128 for the average network and the Q-network, replay buffer 200,000, reservoir buffer 2,000,000, learning from
1,000 samples, anticipatory parameter 0.1, batches of 128, a learning step every 64 agent steps, SGD at 0.01 for both
the best response (DQN) and the average policy, MSE loss, target network updated every 19,200 steps, discount 1,
epsilon start 0.06, end 0.001, decay duration 20M steps (the DQN's default exponential schedule:
``0.001 + 0.059 exp(-min(t, 20M) / 20M)`` after ``t`` of its steps). Two agents train in self-play on
``rl_environment.Environment`` episode by episode, as the example does. Every 1,000 episodes
(``--openspiel-nfsp-measure-every``; the example evaluates every 10,000, too rarely for short budgets) the clock stops
and its output, the agents' average policies, is tabulated by one batched pass through each average network (as
average-policy mode acts: illegal logits penalised, softmax) and measured like the others; its rows' ``iteration``
is the episodes trained and ``env_steps`` the environment steps. Seed ``k`` gives both agents
``NFSP(seed=42 + k)`` (the example's 42 at seed 0) and seeds the environment's chance events with ``k``.

**Measuring.** After every iteration of each side the clock stops and the exact NashConv of the side's current
meta-strategy is computed (:class:`Measure`): every population member is tabulated over Leduc's information states
of a game tree built only for measuring (psro_v2's networks: a batched forward pass over all information-state
tensors with the agent's own masking and renormalisation; ours: ``psro.population.tabular_policy``), kept as its
realization plan, the plans are mixed with the meta-strategy and the mixture is measured with exact best responses
(``psro.metrics.nash_conv_of_plans``). The same code measures both sides. It equals OpenSpiel's
``policy_aggregator`` + ``exploitability.nash_conv`` on the same members (``--check-measure`` compares the two on
random populations) and takes milliseconds where that took seconds per iteration at 200 members. The reported
``wall_s`` excludes measuring.

Run (about ``seeds x (budget + measuring)`` seconds)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \\
        python -m experiments.benchmarks.deep_psro_leduc

``--quick``: 60 s, one seed. ``--sides psro_v2`` or ``--sides ours`` runs one side only; ``--sides all`` (or any
list of sides) adds the toolkit's other learned algorithms, each from its config in ``experiments/configs/``
(:data:`VARIANT_CONFIGS`: NXDO, P2SRO and NFSP; one process each, ``executor: serial``), and OpenSpiel's NFSP
(``openspiel_nfsp``, above; ``--variant-config nxdo=experiments/configs/leduc_nxdo_tuned.yaml`` runs a side from
another config: the ``model_br`` configs of NXDO and P2SRO, ``leduc_nxdo_tuned.yaml`` and
``leduc_pipeline_psro_tuned.yaml``), measured the same way: the exact NashConv of NXDO's restricted solution, the NFSPs'
average policies and P2SRO's meta-strategy over its fixed policies, against the clock and against environment steps
(the history's ``env_steps``; psro_v2 does not count them). All sides of a seed run at the same time
(``--concurrent-seeds``: all seeds too), so with more processes than cores use ``--clock cpu``; ``--processes N``
runs the (side, seed) processes N at a time instead, each on a core of its own when N is at most the number of
cores, so that the wall clock holds for one side alone (``--processes 2`` on 2 cores: seeds 0 and 1 together, then
seed 2)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.deep_psro_leduc \\
        --sides all --seeds 3 --clock cpu --budget 150 --config experiments/configs/leduc_deep_tuned.yaml \\
        --out experiments/benchmarks/results/deep_leduc_variants.md

Results: a CSV of ``(side, seed, wall_s, iteration, nash_conv, cpu_s, env_steps)`` (``cpu_s``: the side's process
CPU seconds, measuring excluded; on a shared machine it shows how much of its core each side got) and a markdown
summary (results/deep_psro_leduc.{csv,md} with the default options, else under ``runs/``): the median NashConv at
the report times and environment steps, then, for each NashConv target of :data:`TARGETS` (1.0, 0.5, 0.3), each
side's first time at or below it (median over seeds) and that time's ratio to ours's (``not reached`` where the
side's median never gets there, ``nan`` where ours's does not). Every row is also an INFO line of the log
(environment steps aside); ``--from-log LOG`` writes the summary from a log kept with ``2> LOG`` instead of running,
so that a crash at the end of a long run loses nothing (results/deep_psro_leduc_side_by_side.log: the rows of the
side-by-side run of issue #35).

``--config RUN.yaml`` runs ours as that run config says (its ``algorithm``: PSRO, self-play PSRO, ...; its oracle,
evaluator and meta-solver settings), with the benchmark's seed, clock and ``exact_gap: false``
(:data:`BENCHMARK_FIELDS`); ``--seed-offset 10`` runs seeds 10, 11, ... (the tuning seeds; the benchmark's are 0-2).
The tuned learned paths (issue #28, item 4): ``experiments/configs/leduc_nfsp_tuned.yaml``, NFSP (128 games side
by side, minibatches of 512, eta 0.2, the best response's Q-network stepped at 3e-3, 50,000 decisions per
iteration); and ``experiments/configs/leduc_deep_tuned.yaml`` (issue #35), PSRO with the model-based oracle
``model_br`` (200,000 sampled decisions per response), 300 episodes per meta-game profile and the Nash
meta-solver, no ``approx_gap`` (the PPO-tuned PSRO of issue #28 is ``deep_leduc_tuning/B.yaml``). The tuning log
of issue #28 (seed 10, every candidate tried) is results/deep_leduc_tuning.md, made by
``deep_leduc_tuning/tuning_log.py``. ``--executor serial`` runs a config's loop in one process, so that
``--processes 2`` gives each seed a core of its own. The benchmark's measurement of NFSP's (seeds 0-2, 15 minutes
of wall time, two seeds at a time, each alone on its core)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 python -m experiments.benchmarks.deep_psro_leduc \\
        --sides ours --seeds 3 --processes 2 --clock wall --budget 900 \\
        --config experiments/configs/leduc_nfsp_tuned.yaml --out experiments/benchmarks/results/deep_leduc_nfsp_tuned.md
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import re
import signal
import sys
import time
import types
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np

logger = logging.getLogger("deep_psro_leduc")

GAME = "leduc_poker"
REPORT_TIMES = (60, 120, 300, 600, 900)
STEP_MARKS = (2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7)
TARGETS = (1.0, 0.5, 0.3)   # the summary's first times at or below these NashConvs (0.5: issue #28's bar)
SIDES = ("psro_v2", "ours", "nxdo", "p2sro", "nfsp", "openspiel_nfsp")
#: The toolkit's other learned algorithms (``--sides``), each run from its config in ``experiments/configs/``
#: with the benchmark's fields (:data:`BENCHMARK_FIELDS`) and one process (``executor: serial``).
VARIANT_CONFIGS = {"nxdo": "leduc_nxdo.yaml", "p2sro": "leduc_pipeline_psro.yaml", "nfsp": "leduc_nfsp.yaml"}
RESULTS = Path(__file__).resolve().parent / "results" / "deep_psro_leduc.md"
CONFIGS = Path(__file__).resolve().parents[1] / "configs"


#: The clocks a budget can run on: wall seconds, or the process's CPU seconds.
CLOCKS = ("wall", "cpu")


class BudgetSpent(Exception):
    """The budget's clock ran out (raised by :class:`Clock`'s timer inside the step that was running)."""


def _budget_spent(signum, frame):
    raise BudgetSpent


class Clock:
    """The budget's clock: wall and process-CPU seconds between :meth:`start` and :meth:`stop` (or inside
    ``with clock:``), summed; measuring happens while it is stopped.

    With a ``budget`` (wall seconds; process-CPU seconds with ``clock="cpu"``), :meth:`start` arms a timer
    (``SIGALRM``, or ``SIGPROF`` for CPU time, where the platform has it) for the time left, so the step running
    when the budget ends is cut short by :class:`BudgetSpent` and never counts; starting with nothing left raises
    it at once. The CPU clock makes a run's budget independent of how loaded a shared machine is.

    Examples
    --------
    >>> clock = Clock()
    >>> with clock:
    ...     pass
    >>> clock.wall >= 0.0 and clock.cpu >= 0.0
    True
    >>> clock = Clock(budget=0.05)
    >>> try:
    ...     with clock:
    ...         while True:
    ...             pass
    ... except BudgetSpent:
    ...     print(round(clock.wall, 1))
    0.1
    """

    def __init__(self, budget: float | None = None, clock: str = "wall"):
        if clock not in CLOCKS:
            raise ValueError(f"clock: must be one of {CLOCKS}; got {clock!r}.")
        self.wall, self.cpu, self.budget, self.clock = 0.0, 0.0, budget, clock
        self._timer = budget is not None and hasattr(signal, "setitimer")
        self._signal, self._itimer = ((signal.SIGALRM, signal.ITIMER_REAL) if clock == "wall"
                                      else (signal.SIGPROF, signal.ITIMER_PROF))

    @property
    def spent(self) -> float:
        """Seconds of the budget's clock so far."""
        return self.wall if self.clock == "wall" else self.cpu

    def start(self) -> None:
        if self.budget is not None and self.spent >= self.budget:
            raise BudgetSpent
        self._wall0, self._cpu0 = time.perf_counter(), time.process_time()
        if self._timer:
            signal.signal(self._signal, _budget_spent)
            signal.setitimer(self._itimer, self.budget - self.spent)

    def stop(self) -> None:
        if self._timer:
            signal.setitimer(self._itimer, 0)
        self.wall += time.perf_counter() - self._wall0
        self.cpu += time.process_time() - self._cpu0

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


# ---------------------------------------------------------------- measuring (shared by both sides)

class Measure:
    """Exact NashConv of a meta-strategy over population members, in the sequence form of the game tree built for
    measuring (never given to a solver): each member is tabulated once over the tree's information states and kept
    as its realization plan (:func:`psro.policies.realization_plans`); a meta-strategy's mixture of members is the
    weighted sum of their plans (Kuhn's theorem), measured by :func:`psro.metrics.nash_conv_of_plans` (exact best
    responses on the tree). It equals OpenSpiel's ``policy_aggregator`` + ``exploitability.nash_conv`` of the same
    members (:func:`openspiel_meta_nash_conv`, the check in ``--check-measure``) and takes milliseconds where that
    takes seconds at 200 members.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.policies import uniform_policy
    >>> measure = Measure(pyspiel.load_game("kuhn_poker"))
    >>> uniform = [uniform_policy(measure.tree.infostates[p]) for p in range(2)]
    >>> round(measure.nash_conv([[measure.plan(("u", p), p, lambda u=u: u)] for p, u in enumerate(uniform)],
    ...                         [[1.0], [1.0]]), 6)
    0.916667
    """

    def __init__(self, game):
        from psro.game_tree import build_game_tree

        self.game, self.tree, self._plans = game, build_game_tree(game), {}

    def plan(self, key, player: int, table) -> np.ndarray:
        """The realization plan of the member ``key`` of ``player`` whose tabular policy ``table()`` gives,
        computed the first time ``key`` is seen (:meth:`plan_of`)."""
        if key not in self._plans:
            self._plans[key] = self.plan_of(player, table())
        return self._plans[key]

    def plan_of(self, player: int, table: np.ndarray) -> np.ndarray:
        """The realization plan of ``player``'s tabular policy ``table`` (an array ``(infostates, actions)`` in the
        tree's order), not kept."""
        from psro.policies import check_policy, realization_plans

        info = self.tree.infostates[player]
        return realization_plans(check_policy(table, info, argname="table"), info)[0]

    def nash_conv(self, plans: list, weights: list) -> float:
        """NashConv of each player's ``plans`` mixed with ``weights[player]``."""
        from psro.metrics import nash_conv_of_plans

        return nash_conv_of_plans(self.tree, [np.asarray(w, dtype=np.float64) @ np.stack(ps)
                                              for ps, w in zip(plans, weights)])

    def network_table(self, player: int, probabilities) -> np.ndarray:
        """The tabular policy of a network: ``probabilities(player, obs, mask)`` on the tree's information-state
        tensors of ``player``, masked and renormalised (uniform over the legal actions where its mass is zero)."""
        from psro.game_tree import infostate_tensors

        mask = self.tree.infostates[player].legal_mask.astype(bool)
        obs = np.asarray(infostate_tensors(self.tree, player), dtype=np.float32)
        probs = np.asarray(probabilities(player, obs, mask), dtype=np.float64) * mask
        total = probs.sum(axis=1, keepdims=True)
        return np.where(total > 0, probs / np.where(total > 0, total, 1.0), mask / mask.sum(axis=1, keepdims=True))


def openspiel_meta_nash_conv(measure: Measure, tables: list, weights: list) -> float:
    """The same NashConv by OpenSpiel alone (the reference :class:`Measure` is checked against): each member's
    tabular policy (``tables[p]``: arrays over ``measure.tree``'s information states of ``p``) as an OpenSpiel
    policy, mixed with ``weights`` by ``policy_aggregator``, measured by ``exploitability.nash_conv``."""
    from open_spiel.python.algorithms import exploitability, policy_aggregator

    from psro.openspiel_policy import to_openspiel_policy

    game, members = measure.game, []
    for p, arrays in enumerate(tables):
        members.append([])
        for array in arrays:
            profile = [None] * game.num_players()
            profile[p] = array
            members[p].append(to_openspiel_policy(profile, measure.tree))
    weights = [[float(w) for w in np.asarray(ws)] for ws in weights]
    aggregated = policy_aggregator.PolicyAggregator(game).aggregate(range(game.num_players()), members, weights)
    return float(exploitability.nash_conv(game, aggregated, use_cpp_br=True))


# ---------------------------------------------------------------- psro_v2 with the torch policy gradient

@dataclasses.dataclass(frozen=True)
class PSROv2Options:
    """psro_v2's settings (OpenSpiel's example's defaults for ``--oracle_type=PG``, 100 sims per entry)."""

    episodes: int = 10_000
    sims_per_entry: int = 100
    meta_solver: str = "nash"
    hidden: int = 256
    layers: int = 4


def _torch_pg_policy_class():
    """``rl_policy``'s policy class around the torch policy-gradient agent (patches 1 and 2, see the module)."""
    import torch
    from open_spiel.python.pytorch import policy_gradient

    stubs = {}
    for name in ("open_spiel.python.jax.dqn", "open_spiel.python.jax.policy_gradient"):
        if name not in sys.modules:
            stub = types.ModuleType(name)
            stub.DQN = type("DQN", (), {})
            stub.PolicyGradient = type("PolicyGradient", (), {})
            stubs[name] = sys.modules[name] = stub
    try:
        from open_spiel.python.algorithms.psro_v2 import rl_policy
    finally:
        for name in stubs:
            del sys.modules[name]

    def copy_with_noise(self, sigma=0.0, copy_weights=True):
        """A fresh agent with this one's hyperparameters, its Linear weights times ``1 + sigma * N(0, 1)``."""
        kwargs = {k: v for k, v in self._kwargs.items() if k not in ("self", "__class__")}
        fresh = policy_gradient.PolicyGradient(**kwargs)
        if copy_weights and sigma:
            with torch.no_grad():
                for module in fresh._critic_network.modules():
                    if isinstance(module, torch.nn.Linear):
                        module.weight *= 1 + sigma * torch.randn(module.weight.shape)
                for module in fresh._policy_logits_layer.modules():
                    module.weight *= 1 + sigma * torch.randn(module.weight.shape)
        return fresh

    policy_gradient.PolicyGradient.copy_with_noise = copy_with_noise
    return rl_policy.rl_policy_factory(policy_gradient.PolicyGradient)


def _pg_probabilities(agent):
    """The torch agent's action probabilities on a batch, computed as its ``_act`` does (softmax, then masked
    and renormalised; uniform over legal where the mass is zero, which :meth:`Measure.network_table` does)."""
    import torch

    def probabilities(player, obs, mask):
        with torch.no_grad():
            logits = agent._policy_logits_layer(agent._net_torso(torch.as_tensor(obs)))
            return torch.softmax(logits, dim=1).double().numpy()

    return probabilities


def run_psro_v2(seed: int, budget: float, options: PSROv2Options, clock: str = "wall") -> list:
    """psro_v2 with the torch PG oracle for ``budget`` wall seconds; one row per iteration (and the start)."""
    import pyspiel
    import torch
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms.psro_v2 import psro_v2, rl_oracle, strategy_selectors

    from experiments.benchmarks.psro_leduc import _use_highs_for_openspiel_lp

    _use_highs_for_openspiel_lp()
    np.random.seed(seed)
    torch.manual_seed(seed)
    game = pyspiel.load_game(GAME)
    clock = Clock(budget, clock)
    with clock:
        pg_policy = _torch_pg_policy_class()
        env = rl_environment.Environment(game)
        kwargs = dict(info_state_size=env.observation_spec()["info_state"][0],
                      num_actions=env.action_spec()["num_actions"], loss_str="qpg", loss_class=False,
                      hidden_layers_sizes=[options.hidden] * options.layers, entropy_cost=0.001,
                      critic_learning_rate=1e-2, pi_learning_rate=1e-3, num_critic_before_pi=8,
                      optimizer_str="adam")
        oracle = rl_oracle.RLOracle(env, pg_policy, kwargs, number_training_episodes=options.episodes,
                                    self_play_proportion=0.0, sigma=0.0)
        agents = [pg_policy(env, p, **kwargs) for p in range(game.num_players())]
        for agent in agents:
            agent.freeze()
        solver = psro_v2.PSROSolver(game, oracle, initial_policies=agents,
                                    training_strategy_selector=strategy_selectors.probabilistic, rectifier="",
                                    sims_per_entry=options.sims_per_entry, number_policies_selected=1,
                                    meta_strategy_method=options.meta_solver, sample_from_marginals=True,
                                    symmetric_game=False)
    exact = Measure(game)

    def measure(iteration):
        plans = [[exact.plan(id(pol), p, lambda p=p, pol=pol: exact.network_table(p, _pg_probabilities(pol._policy)))
                  for pol in pols] for p, pols in enumerate(solver.get_policies())]
        return _row("psro_v2", seed, clock, iteration, exact.nash_conv(plans, solver.get_meta_strategies()))

    rows, iteration = [measure(0)], 0
    with until_budget():   # the iteration running at the end of the budget does not count
        while True:
            with clock:
                solver.iteration()
            iteration += 1
            rows.append(measure(iteration))
    return rows


# ---------------------------------------------------------------- OpenSpiel's NFSP (torch)

@dataclasses.dataclass(frozen=True)
class OpenSpielNFSPOptions:
    """OpenSpiel's torch NFSP as its Leduc example ``examples/nfsp_leduc_pytorch.py`` sets it up: the example's flag
    defaults, given to ``open_spiel.python.pytorch.nfsp.NFSP`` (which passes the DQN ones on to its inner
    best-response agent), and how often the benchmark measures (``measure_every``, not the example's)."""

    hidden_layers_sizes: tuple = (128,)
    replay_buffer_capacity: int = 200_000
    reservoir_buffer_capacity: int = 2_000_000
    min_buffer_size_to_learn: int = 1000
    anticipatory_param: float = 0.1
    batch_size: int = 128
    learn_every: int = 64
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.01
    optimizer_str: str = "sgd"
    loss_str: str = "mse"
    update_target_network_every: int = 19_200
    discount_factor: float = 1.0
    epsilon_decay_duration: int = 20_000_000
    epsilon_start: float = 0.06
    epsilon_end: float = 0.001
    measure_every: int = 1000
    """training episodes between two measurements (the example evaluates every 10,000; measuring takes about
    10 ms, off the clock, against seconds for 1000 episodes)"""

    def agent_kwargs(self) -> dict:
        """The keyword arguments of ``nfsp.NFSP`` after its positional ones (everything but ``measure_every``)."""
        return {f.name: (list(getattr(self, f.name)) if f.name == "hidden_layers_sizes" else getattr(self, f.name))
                for f in dataclasses.fields(self) if f.name != "measure_every"}


#: The seed OpenSpiel's NFSP agents get by default (``NFSP(seed=42)``, as in the example): the benchmark's seed ``k``
#: gives both agents ``OPENSPIEL_NFSP_SEED + k``, so seed 0 builds the example's networks.
OPENSPIEL_NFSP_SEED = 42


def openspiel_nfsp_agents(env, seed: int, options: OpenSpielNFSPOptions) -> list:
    """One ``nfsp.NFSP`` agent per player of ``env`` (an ``rl_environment.Environment``), as the example makes
    them; both get the seed ``OPENSPIEL_NFSP_SEED + seed`` (the agent seeds numpy's and torch's global generators
    with it, which its sampling then uses)."""
    from open_spiel.python.pytorch import nfsp

    size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    kwargs = options.agent_kwargs()
    layers = kwargs.pop("hidden_layers_sizes")
    return [nfsp.NFSP(player, size, actions, layers, seed=OPENSPIEL_NFSP_SEED + seed, **kwargs)
            for player in range(env.num_players)]


def play_nfsp_episode(env, agents) -> int:
    """One training episode of self-play, as the example plays it: the player to move steps its agent, the
    environment takes the action; at the end every agent sees the final time step. Returns the episode's
    environment steps (transitions)."""
    time_step, steps = env.reset(), 0
    while not time_step.last():
        player = time_step.observations["current_player"]
        time_step = env.step([agents[player].step(time_step).action])
        steps += 1
    for agent in agents:
        agent.step(time_step)
    return steps


def _nfsp_average_probabilities(agents):
    """The agents' average policies on a batch, as ``NFSP._act`` computes them in average-policy mode: the
    average network's logits, illegal actions set to OpenSpiel's penalty logit, softmax."""
    import torch
    from open_spiel.python.pytorch import dqn

    def probabilities(player, obs, mask):
        with torch.no_grad():
            logits = agents[player]._avg_network(torch.tensor(obs, dtype=torch.float32))
            logits = torch.where(torch.as_tensor(mask), logits,
                                 torch.full_like(logits, dqn.ILLEGAL_ACTION_LOGITS_PENALTY))
            return torch.softmax(logits, dim=1).double().numpy()

    return probabilities


def run_openspiel_nfsp(seed: int, budget: float, options: OpenSpielNFSPOptions, clock: str = "wall") -> list:
    """OpenSpiel's torch NFSP in self-play on ``rl_environment.Environment("leduc_poker")`` for ``budget``
    seconds of ``clock``; a row at the start and after every ``options.measure_every`` episodes (its
    ``iteration``: the episodes trained; its ``env_steps``: the environment steps).

    The output measured is the agents' average policies, tabulated over the measuring tree's information states
    by one batched pass through each average network (:func:`_nfsp_average_probabilities`). The environment's
    chance events are seeded with ``seed`` (the example leaves them unseeded). The block of episodes running at
    the end of the budget does not count.
    """
    import pyspiel
    from open_spiel.python import rl_environment

    game = pyspiel.load_game(GAME)
    clock = Clock(budget, clock)
    with clock:
        env = rl_environment.Environment(game)
        env.seed(seed)
        agents = openspiel_nfsp_agents(env, seed, options)
    exact, average = Measure(game), _nfsp_average_probabilities(agents)

    def measure(episodes, steps):
        plans = [[exact.plan_of(p, exact.network_table(p, average))] for p in range(len(agents))]
        return _row("openspiel_nfsp", seed, clock, episodes, exact.nash_conv(plans, [[1.0]] * len(agents)), steps)

    rows, episodes, steps = [measure(0, 0)], 0, 0
    with until_budget():   # the block of episodes running at the end of the budget does not count
        while True:
            with clock:
                for _ in range(options.measure_every):
                    steps += play_nfsp_episode(env, agents)
            episodes += options.measure_every
            rows.append(measure(episodes, steps))
    return rows


# ---------------------------------------------------------------- ours

@dataclasses.dataclass(frozen=True)
class OurOptions:
    """Our run's settings (fields of ``psro.PSROConfig``; ``oracle_options`` goes to the PPO oracle). The
    defaults are the best of the settings tried (results/deep_psro_leduc.md lists them with their curves)."""

    oracle_steps: int = 20_000
    episodes_per_profile: int = 300
    meta_solver: str = "nash"
    oracle_options: tuple = (("eval_episodes", 200),)
    config: str | None = None
    """a run config (YAML, e.g. ``experiments/configs/leduc_deep_tuned.yaml``) that replaces the fields above"""
    executor: str | None = None
    """with ``config``: the executor instead of the config's (``serial`` for one process on one core)"""


#: The fields a ``--config`` cannot set: the benchmark's (its seed, its clock instead of a stopping rule, no
#: checkpoints or ranking, no game tree in training, and no ``approx_gap``, whose extra responses would train inside
#: the budget: the benchmark measures the exact NashConv itself, off the clock).
BENCHMARK_FIELDS = dict(iterations=None, target_gap=None, time_limit=None, checkpoint=False, progress=False,
                        rank_population=False, exact_gap=False, approx_gap_every=None)


def configured_solver(seed: int, path, game: str = GAME, **fields):
    """The training loop of the run config at ``path`` (its ``algorithm``, PSRO by default) on ``game`` (Leduc),
    with the benchmark's :data:`BENCHMARK_FIELDS`, ``seed`` and ``fields``."""
    import yaml

    from psro import PSROConfig
    from psro.algorithms import algorithm_class

    data = yaml.safe_load(Path(path).read_text()) or {}
    if data.get("game", game) != game:
        raise ValueError(f"--config: the benchmark plays {game}; {path} names game {data['game']!r}.")
    data.update(BENCHMARK_FIELDS, game=game, seed=seed, **fields)
    config = PSROConfig.from_dict(data, source=str(path))
    return algorithm_class(config.algorithm)(config)


def our_solver(seed: int, options: OurOptions):
    """``psro.PSRO`` with the PPO oracle and the Monte Carlo evaluator, and no exact gap (no game tree); with
    ``options.config``, that config's loop (:func:`configured_solver`)."""
    from psro import PSRO, PSROConfig

    if options.config:
        return configured_solver(seed, options.config, **({"executor": options.executor} if options.executor else {}))
    fields = dict(oracle="ppo", evaluator="monte_carlo", meta_solver=options.meta_solver,
                  oracle_steps=options.oracle_steps, episodes_per_profile=options.episodes_per_profile,
                  oracle_options=dict(options.oracle_options) or None, seed=seed, iterations=None,
                  target_gap=None, checkpoint=False, progress=False, rank_population=False)
    if "exact_gap" in {f.name for f in dataclasses.fields(PSROConfig)}:
        fields["exact_gap"] = False
    return PSRO(GAME, **fields)


def loop_output(solver, iteration: int) -> tuple:
    """What a training loop outputs, as ``(members, weights)`` per player, each member with a key under which
    its tabulation can be kept: XDO/NXDO's restricted solution and NFSP's average policies (one policy per
    player, new each iteration), else the populations mixed by the meta-strategy."""
    for method in ("restricted_solution", "average_policies"):
        if hasattr(solver, method):
            policies = getattr(solver, method)()
            return [[((iteration, p), pol)] for p, pol in enumerate(policies)], [[1.0]] * len(policies)
    state = solver.state
    return ([[((p, i), member) for i, member in enumerate(_members(pop))] for p, pop in enumerate(state.populations)],
            state.meta_strategy.marginals)


def run_ours(seed: int, budget: float, options: OurOptions, clock: str = "wall", side: str = "ours") -> list:
    """Our deep PSRO (or, for another ``side``, the variant of :data:`VARIANT_CONFIGS`, or of the config path
    ``options`` where given) for ``budget`` seconds of ``clock``; one row per iteration (row 0: the initial
    population).

    One ``run`` call; its history callback stops the clock, measures the output (:func:`loop_output`) and restarts
    it; the clock's timer ends the run at the budget (no per-call work, such as the last row's ``approx_gap``, is
    added; the iteration running at the end does not count).
    """
    import pyspiel
    import torch

    from psro.population import tabular_policy

    torch.manual_seed(seed)
    exact = Measure(pyspiel.load_game(GAME))   # its tree is for measuring only, never given to the solver
    rows, clock, solver = [], Clock(budget, clock), None

    def measure(row):
        clock.stop()
        members, weights = loop_output(solver, row["iteration"])
        plans = [[exact.plan(key, p, lambda p=p, member=member: tabular_policy(member, exact.tree, p))
                  for key, member in keyed] for p, keyed in enumerate(members)]
        rows.append(_row(side, seed, clock, row["iteration"], exact.nash_conv(plans, weights), row.get("env_steps")))
        clock.start()

    try:
        with until_budget():   # the iteration running at the end of the budget does not count
            clock.start()
            solver = our_solver(seed, options) if side == "ours" else configured_solver(
                seed, options or CONFIGS / VARIANT_CONFIGS[side], executor="serial")
            if getattr(solver, "tree", None) is not None:
                raise RuntimeError(f"the {side} solver built the game tree; the benchmark runs it without one "
                                   "(exact_gap=False).")
            solver.run(iterations=10**9, callback=measure)
    finally:
        if solver is not None:
            solver.close()
    return rows


@contextlib.contextmanager
def until_budget():
    """Run the block until the budget ends it: :class:`BudgetSpent` raised inside it, also wrapped by a library
    (dm-tree, inside OpenSpiel's replay buffer, raises a ``TypeError`` from it) or an executor, ends it quietly;
    any other exception propagates."""
    try:
        yield
    except Exception as exc:
        if not _from_budget(exc):
            raise


def _from_budget(exc: BaseException) -> bool:
    """Whether ``exc`` is :class:`BudgetSpent` or was raised from it (an executor wraps a job's exception)."""
    while exc is not None:
        if isinstance(exc, BudgetSpent):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _members(population) -> list:
    """A population's members in order (an array of tabular policies, or a list of policy objects)."""
    policies = population.policies
    return list(policies) if not isinstance(policies, np.ndarray) else [policies[i] for i in range(len(policies))]


# ---------------------------------------------------------------- running both sides

def _row(side, seed, clock: Clock, iteration, nash_conv, env_steps=None) -> dict:
    logger.info("%s seed %d: iteration %d at %.1f s (CPU %.1f s), NashConv %.4f", side, seed, iteration,
                clock.wall, clock.cpu, nash_conv)
    return {"side": side, "seed": seed, "wall_s": clock.wall, "iteration": iteration, "nash_conv": nash_conv,
            "cpu_s": clock.cpu, "env_steps": math.nan if env_steps is None else env_steps}


#: A row as :func:`_row` logs it (``--from-log`` reads the rows back from a run's log)
ROW_LINE = re.compile(r"(?P<side>\w+) seed (?P<seed>\d+): iteration (?P<iteration>\d+) at (?P<wall_s>[\d.]+) s "
                      r"\(CPU (?P<cpu_s>[\d.]+) s\), NashConv (?P<nash_conv>[\d.eE+-]+|nan)")


def rows_from_log(text: str) -> list:
    """The rows of a run from its log (the lines :func:`_row` writes; ``env_steps`` is not logged: NaN).

    Examples
    --------
    >>> rows_from_log("2026-12-03 14:59:44,715 ours seed 0: iteration 18 at 53.3 s (CPU 52.7 s), NashConv 1.4173")
    [{'side': 'ours', 'seed': 0, 'wall_s': 53.3, 'iteration': 18, 'nash_conv': 1.4173, 'cpu_s': 52.7, 'env_steps': nan}]
    """
    return [{"side": m["side"], "seed": int(m["seed"]), "wall_s": float(m["wall_s"]),
             "iteration": int(m["iteration"]), "nash_conv": float(m["nash_conv"]), "cpu_s": float(m["cpu_s"]),
             "env_steps": math.nan} for m in ROW_LINE.finditer(text)]


def _side_job(side: str, seed: int, budget: float, options, core: int | None, clock: str = "wall") -> list:
    """One side in its own process: one thread, on ``core`` when given."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    import torch

    torch.set_num_threads(1)
    if core is not None and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {core})
    if side == "psro_v2":
        return run_psro_v2(seed, budget, options, clock)
    if side == "openspiel_nfsp":
        return run_openspiel_nfsp(seed, budget, options, clock)
    return run_ours(seed, budget, options, clock, side)


def run_all(sides, seeds, budget, options: dict, clock: str = "wall", concurrent_seeds: bool = False,
            processes: int | None = None) -> list:
    """For each seed, the sides at the same time in their own processes (each on its own core when there are
    two and enough cores; one process alone is not pinned); with ``concurrent_seeds``, every seed's sides at once
    (for the CPU clock); with ``processes``, the (side, seed) jobs that many at a time, in order; all rows."""
    jobs = [[(side, seed) for side in sides] for seed in seeds]
    if concurrent_seeds or processes:
        every = [job for batch in jobs for job in batch]
        size = processes or len(every)
        jobs = [every[i:i + size] for i in range(0, len(every), size)]
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    rows = []
    with ProcessPoolExecutor(max_workers=len(jobs[0]), mp_context=get_context("spawn")) as pool:
        for batch in jobs:
            pinned = len(batch) > 1 and len(cores) >= len(batch)
            futures = [pool.submit(_side_job, side, seed, budget, options.get(side), cores[i] if pinned else None,
                                   clock) for i, (side, seed) in enumerate(batch)]
            for future in futures:
                rows.extend(future.result())
    return rows


# ---------------------------------------------------------------- the summary

def value_at(curve, t: float, key: str = "wall_s") -> float:
    """NashConv of the last iteration finished by wall time ``t`` (NaN before the first).

    Examples
    --------
    >>> curve = [{"wall_s": 5.0, "nash_conv": 4.0}, {"wall_s": 70.0, "nash_conv": 2.0}]
    >>> value_at(curve, 60), value_at(curve, 900), value_at(curve, 1)
    (4.0, 2.0, nan)
    """
    done = [r["nash_conv"] for r in curve if r[key] <= t]
    return done[-1] if done else math.nan


def first_time(curve, target: float, key: str = "wall_s") -> float:
    """Wall seconds of the first reported NashConv ``<= target`` (inf if never).

    Examples
    --------
    >>> curve = [{"wall_s": 5.0, "nash_conv": 4.0}, {"wall_s": 70.0, "nash_conv": 0.9}]
    >>> first_time(curve, 1.0), first_time(curve, 0.5)
    (70.0, inf)
    """
    return next((r[key] for r in curve if r["nash_conv"] <= target), math.inf)


def target_lines(curves: dict, sides: list, seeds: list, key: str = "wall_s") -> list:
    """The summary's two tables over :data:`TARGETS`: each side's first time at or below the target (median over
    ``seeds``, a seed that never gets there counting as infinite; per seed in brackets when there are several,
    ``-`` where it never does),
    and the ratio of that median to ours's: "not reached" where the side's median is infinite, ``nan`` where ours's
    is or ours did not run.

    Examples
    --------
    >>> curves = {("ours", 0): [{"wall_s": 10.0, "nash_conv": 0.9}, {"wall_s": 40.0, "nash_conv": 0.4}],
    ...           ("psro_v2", 0): [{"wall_s": 30.0, "nash_conv": 0.8}, {"wall_s": 90.0, "nash_conv": 0.2}]}
    >>> print("\\n".join(target_lines(curves, ["ours", "psro_v2"], [0])[-5:]))
    | NashConv <= | ours | psro_v2 |
    |---|---|---|
    | 1 | 1.00 | 3.00 |
    | 0.5 | 1.00 | 2.25 |
    | 0.3 | not reached | nan |
    """
    first = {(s, target): [first_time(curves[s, k], target, key) for k in seeds] for s in sides for target in TARGETS}
    median = {pair: float(np.median(times)) for pair, times in first.items()}

    def seconds(t, never="not reached"):
        return never if math.isinf(t) else f"{t:.1f}"

    def ratio(s, target):
        mine, ours = median[s, target], median.get(("ours", target), math.inf)
        return "not reached" if math.isinf(mine) else "nan" if math.isinf(ours) else f"{mine / ours:.2f}"

    head = ["| NashConv <= | " + " | ".join(sides) + " |", "|---" * (len(sides) + 1) + "|"]
    lines = ["", f"First {key[:-2]} seconds at or below each NashConv (median over seeds, a seed that never gets "
             "there counting as infinite" + ("; per seed in brackets, - where it never does" if len(seeds) > 1 else "")
             + "):", "", *head]
    lines += [f"| {target:g} | " + " | ".join(seconds(median[s, target]) + (
        f" [{', '.join(seconds(t, '-') for t in first[s, target])}]" if len(seeds) > 1 else "") for s in sides) + " |"
        for target in TARGETS]
    lines += ["", "Each side's median time to the target over ours's (not reached: the side's median never gets "
              "there; nan: ours's does not, or ours did not run):", "", *head]
    lines += [f"| {target:g} | " + " | ".join(ratio(s, target) for s in sides) + " |" for target in TARGETS]
    return lines


def summarise(rows: list, budget: float, command: str, clock: str = "wall") -> str:
    """The markdown summary: medians over seeds at the report times (and environment steps), each side's last
    row, the comparison with psro_v2, and the first times at or below :data:`TARGETS` with their ratios to ours's
    (:func:`target_lines`)."""
    sides = [s for s in SIDES if any(r["side"] == s for r in rows)]
    seeds = sorted({r["seed"] for r in rows})
    curves = {(s, k): [r for r in rows if r["side"] == s and r["seed"] == k] for s in sides for k in seeds}
    times = [t for t in REPORT_TIMES if t < budget] + [budget]
    key = f"{clock}_s"
    medians = {s: [float(np.median([value_at(curves[s, k], t, key) for k in seeds])) for t in times] for s in sides}
    together = (f"{sides[0]} alone" if len(sides) == 1 else "the sides ran at the same time, each in its own "
                "process" + (", one core each" if len(sides) == 2 else ""))
    lines = ["# Deep PSRO on Leduc poker: ours against psro_v2 (torch policy gradient)", "",
             f"Command: `{command}`", "",
             f"Exact NashConv of each side's output (PSRO: its meta-strategy) against {clock} time (measuring "
             f"excluded), median over {len(seeds)} seed(s) {seeds}; {together}.", "",
             f"| {clock} s | " + " | ".join(sides) + " |", "|---" * (len(sides) + 1) + "|"]
    lines += [f"| {t:g} | " + " | ".join(f"{medians[s][i]:.4g}" for s in sides) + " |" for i, t in enumerate(times)]
    stepped = [s for s in sides if all(not math.isnan(r["env_steps"]) for k in seeds for r in curves[s, k])]
    at_steps = {n: [float(np.median([value_at(curves[s, k], n, "env_steps") if curves[s, k][-1]["env_steps"] >= n
                                     else math.nan for k in seeds])) for s in stepped] for n in STEP_MARKS}
    marks = [n for n in STEP_MARKS if not all(math.isnan(v) for v in at_steps[n])]
    if marks:
        lines += ["", "Against environment steps (psro_v2 does not count them; blank: a seed's run ended before):",
                  "", "| env steps | " + " | ".join(stepped) + " |", "|---" * (len(stepped) + 1) + "|"]
        lines += [f"| {n:.0e} | " + " | ".join("" if math.isnan(v) else f"{v:.4g}" for v in at_steps[n]) + " |"
                  for n in marks]
    lines += target_lines(curves, sides, seeds, key)
    lines.append("")
    for s in sides:
        last = [curves[s, k][-1] for k in seeds]
        unit = "episodes" if s == "openspiel_nfsp" else "iterations"
        lines.append(f"- {s}: {unit} per seed {[r['iteration'] for r in last]}, final NashConv per seed "
                     f"{[round(r['nash_conv'], 4) for r in last]}, training wall s {[round(r['wall_s']) for r in last]}"
                     f", CPU s {[round(r['cpu_s']) for r in last]}")
    if {"ours", "psro_v2"} <= set(sides):
        below = all(o < v for o, v in zip(medians["ours"], medians["psro_v2"]))
        lines.append(f"- ours below psro_v2 at every reported time: {'yes' if below else 'no'}")
    return "\n".join(lines) + "\n"


def main() -> None:
    from experiments import harness

    parser = harness.script_parser(__doc__)
    parser.add_argument("--budget", type=float, default=900.0, help="seconds of training for each side")
    parser.add_argument("--clock", choices=CLOCKS, default="wall",
                        help="what the budget counts: wall seconds, or each side's process-CPU seconds")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="60 s, one seed")
    parser.add_argument("--sides", nargs="+", choices=("both", "all", *SIDES), default=["both"],
                        help="both: psro_v2 and ours; all: also NXDO, P2SRO and NFSP from their configs "
                             f"({', '.join(f'{k}: {v}' for k, v in VARIANT_CONFIGS.items())}, one process each) "
                             "and openspiel_nfsp (OpenSpiel's torch NFSP as in its Leduc example)")
    parser.add_argument("--pg-episodes", type=int, default=PSROv2Options.episodes)
    parser.add_argument("--sims-per-entry", type=int, default=PSROv2Options.sims_per_entry)
    parser.add_argument("--pg-meta", default=PSROv2Options.meta_solver, help="psro_v2's meta_strategy_method")
    parser.add_argument("--openspiel-nfsp-measure-every", type=int, default=OpenSpielNFSPOptions.measure_every,
                        metavar="EPISODES", help="openspiel_nfsp: training episodes between measurements")
    parser.add_argument("--oracle-steps", type=int, default=OurOptions.oracle_steps)
    parser.add_argument("--episodes-per-profile", type=int, default=OurOptions.episodes_per_profile)
    parser.add_argument("--meta-solver", default=OurOptions.meta_solver)
    parser.add_argument("--oracle-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option of our PPO oracle (repeatable; added to the defaults "
                             f"{dict(OurOptions.oracle_options)}), e.g. learning_rate=3e-4")
    parser.add_argument("--config", help="ours: the training loop and settings of this run config (YAML; its "
                        "algorithm, oracle, evaluator, ... replace the options above; the seed, the stopping rule "
                        "and exact_gap=false are the benchmark's)")
    parser.add_argument("--variant-config", action="append", default=[], metavar="SIDE=PATH",
                        help="run the side nxdo, p2sro or nfsp from this config instead of its own in "
                        "VARIANT_CONFIGS (repeatable), e.g. nxdo=experiments/configs/leduc_nxdo_tuned.yaml")
    parser.add_argument("--executor", help="ours with --config: this executor instead of the config's (serial: "
                        "one process, so that --processes 2 gives each seed one core of its own)")
    parser.add_argument("--concurrent-seeds", action="store_true",
                        help="run every seed at the same time (each side and seed in its own process; use with "
                             "--clock cpu when there are more processes than cores)")
    parser.add_argument("--processes", type=int, metavar="N",
                        help="run the (side, seed) processes N at a time, each on its own core when N is at most "
                             "the number of cores (the wall clock for one side alone on its core)")
    parser.add_argument("--seed-offset", type=int, default=0,
                        help="seeds are OFFSET, OFFSET+1, ... (tuning runs use seeds other than the benchmark's 0-2)")
    parser.add_argument("--out", help="markdown summary path (the CSV goes next to it)")
    parser.add_argument("--from-log", metavar="LOG", help="do not run: read the rows back from the log of an "
                        "earlier invocation with the same options (its INFO lines) and write its summary")
    parser.add_argument("--check-measure", action="store_true",
                        help="compare the measuring code with OpenSpiel's policy_aggregator + nash_conv on random "
                             "populations of Leduc and exit")
    args = parser.parse_args()
    if args.check_measure:
        check_measure()
        return
    if args.processes is not None and args.processes < 1:
        parser.error(f"--processes must be at least 1; got {args.processes}.")
    if args.openspiel_nfsp_measure_every < 1:
        parser.error(f"--openspiel-nfsp-measure-every must be at least 1; got {args.openspiel_nfsp_measure_every}.")
    budget, seeds = (60.0, 1) if args.quick else (args.budget, args.seeds)
    sides = {"both": SIDES[:2], "all": SIDES}.get(args.sides[0], tuple(args.sides))
    options = {"psro_v2": PSROv2Options(args.pg_episodes, args.sims_per_entry, args.pg_meta),
               "openspiel_nfsp": OpenSpielNFSPOptions(measure_every=args.openspiel_nfsp_measure_every),
               "ours": OurOptions(args.oracle_steps, args.episodes_per_profile, args.meta_solver,
                                  tuple({**dict(OurOptions.oracle_options),
                                         **dict(_parse_option(o) for o in args.oracle_option)}.items()),
                                  args.config, args.executor),
               **dict(_parse_variant_config(parser, text) for text in args.variant_config)}
    out = harness.output_path(parser, args, RESULTS)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.from_log:
        rows = [r for r in rows_from_log(Path(args.from_log).read_text()) if r["side"] in sides]
    else:
        rows = run_all(sides, range(args.seed_offset, args.seed_offset + seeds), budget, options, args.clock,
                       args.concurrent_seeds, args.processes)
    import pandas as pd

    pd.DataFrame(rows, columns=["side", "seed", "wall_s", "iteration", "nash_conv", "cpu_s", "env_steps"]).to_csv(
        out.with_suffix(".csv"), index=False)
    command = harness.command_line()
    out.write_text(summarise(rows, budget, command, args.clock))
    logger.info("wrote %s and %s", out, out.with_suffix(".csv"))
    sys.stdout.write(out.read_text())


def check_measure(trials: int = 5, members: int = 6, rng=0) -> None:
    """:class:`Measure` against :func:`openspiel_meta_nash_conv` on ``trials`` random populations of Leduc
    (``members`` random tabular policies per player, some nearly deterministic, random meta-strategies); raises
    if they differ by more than 1e-9."""
    import pyspiel

    rng = np.random.default_rng(rng)
    measure = Measure(pyspiel.load_game(GAME))
    for trial in range(trials):
        tables, plans, weights = [], [], []
        for p, info in enumerate(measure.tree.infostates):
            mask = info.legal_mask.astype(bool)
            arrays = [rng.dirichlet(np.full(mask.shape[1], 0.1 if k % 2 else 1.0), size=mask.shape[0]) * mask
                      for k in range(members)]
            arrays = [a / a.sum(axis=1, keepdims=True) for a in arrays]
            tables.append(arrays)
            plans.append([measure.plan((trial, p, k), p, lambda a=a: a) for k, a in enumerate(arrays)])
            weights.append(rng.dirichlet(np.ones(members)))
        ours, reference = measure.nash_conv(plans, weights), openspiel_meta_nash_conv(measure, tables, weights)
        logger.info("trial %d: NashConv %.12f (sequence form), %.12f (OpenSpiel)", trial, ours, reference)
        if abs(ours - reference) > 1e-9:
            raise AssertionError(f"the measures differ: {ours!r} against {reference!r}")


def _parse_variant_config(parser, text: str) -> tuple:
    """``(side, path)`` from ``--variant-config SIDE=PATH``."""
    side, _, path = text.partition("=")
    if side not in VARIANT_CONFIGS or not path:
        parser.error(f"--variant-config takes SIDE=PATH with SIDE one of {sorted(VARIANT_CONFIGS)}; got {text!r}.")
    if not Path(path).is_file():
        parser.error(f"--variant-config {side}: no file at {path!r}.")
    return side, str(Path(path).resolve())


def _parse_option(text: str) -> tuple:
    """``KEY=VALUE`` with VALUE read as a Python literal where it is one."""
    import ast

    key, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"--oracle-option: expected KEY=VALUE; got {text!r}.")
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


if __name__ == "__main__":
    main()
