"""OpenSpiel's psro_v2 with its torch policy-gradient oracle as a side of a Leduc comparison (adapter ``psro_v2``).

``open_spiel.python.algorithms.psro_v2`` is set up as in OpenSpiel's ``examples/psro_v2_example.py`` with
``--oracle_type=PG``: an ``RLOracle`` over ``rl_environment.Environment`` training ``rl_policy`` policy-gradient
agents (QPG loss, 4 hidden layers of 256, Adam, critic learning rate 1e-2, policy learning rate 1e-3, entropy cost
0.001, 8 critic updates per policy update, batch 16), 10,000 episodes per response (``episodes``), 100 simulations
per meta-game entry (``sims_per_entry``), the Nash meta-solver (``meta_solver``; :class:`Options`), the
``probabilistic`` training-strategy selector, no rectifier; the initial policies are the untrained networks, as in
the example. It needs these patches to run, and nothing else is changed:

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

After every iteration the clock stops and the meta-strategy over the networks is measured exactly
(:class:`~experiments.benchmarks.leduc.measure.Measure`: each network tabulated by one batched forward pass over
the information-state tensors, with the agent's own masking and renormalisation).
"""

from __future__ import annotations

import dataclasses
import sys
import types

import numpy as np

from experiments.benchmarks.leduc.measure import GAME, Measure, NetworkPolicy, row
from experiments.clock import Clock, until_budget

__all__ = ["Options", "run", "solver_for", "meta_profile"]

#: What a row's ``iteration`` counts.
UNIT = "iterations"


@dataclasses.dataclass(frozen=True)
class Options:
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


def solver_for(game, seed: int, options: Options):
    """psro_v2's solver on ``game`` (a ``pyspiel.Game``) with the torch PG oracle, seeded with ``seed``, its
    initial meta-game computed."""
    import torch
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms.psro_v2 import psro_v2, rl_oracle, strategy_selectors

    from experiments.benchmarks.psro_leduc import _use_highs_for_openspiel_lp

    _use_highs_for_openspiel_lp()
    np.random.seed(seed)
    torch.manual_seed(seed)
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
    return psro_v2.PSROSolver(game, oracle, initial_policies=agents,
                              training_strategy_selector=strategy_selectors.probabilistic, rectifier="",
                              sims_per_entry=options.sims_per_entry, number_policies_selected=1,
                              meta_strategy_method=options.meta_solver, sample_from_marginals=True,
                              symmetric_game=False)


def meta_profile(solver) -> list:
    """The solver's output as :func:`psro.exact_nash_conv` takes it: per player, its networks
    (:class:`~experiments.benchmarks.leduc.measure.NetworkPolicy`) and their meta-strategy weights. Trained members
    are frozen, so the profile of a finished iteration stays what it was while the next one trains."""
    return [([NetworkPolicy(_pg_probabilities(pol._policy), p) for pol in pols], np.array(weights, dtype=np.float64))
            for p, (pols, weights) in enumerate(zip(solver.get_policies(), solver.get_meta_strategies()))]


def run(seed: int, budget: float, options: Options, clock: str = "wall", side: str = "psro_v2") -> list:
    """psro_v2 with the torch PG oracle for ``budget`` seconds of ``clock``; one row per iteration (and the start),
    named ``side``."""
    import pyspiel

    game = pyspiel.load_game(GAME)
    clock = Clock(budget, clock)
    with clock:
        solver = solver_for(game, seed, options)
    exact = Measure(game)

    def measure(iteration):
        plans = [[exact.plan(id(pol), p, lambda p=p, pol=pol: exact.network_table(p, _pg_probabilities(pol._policy)))
                  for pol in pols] for p, pols in enumerate(solver.get_policies())]
        return row(side, seed, clock, iteration, exact.nash_conv(plans, solver.get_meta_strategies()))

    rows, iteration = [measure(0)], 0
    with until_budget():   # the iteration running at the end of the budget does not count
        while True:
            with clock:
                solver.iteration()
            iteration += 1
            rows.append(measure(iteration))
    return rows
