"""Neural XDO (NXDO, McAleer et al. 2021): XDO with learned best responses and NFSP on the restricted game.

:class:`psro.variants.xdo.XDO` with a learned oracle (``ppo``, ``dqn``) is NXDO. Its restricted game is played on
the game's own environment (:func:`games.environment.make_env`), no tree needed: at each decision the acting
player picks a **meta-action**, one of its population's policies, and the game goes on with an action drawn from
that policy (:class:`RestrictedEnv`). NFSP (:func:`psro.family.nfsp.play_and_learn`, fresh learners every
iteration, ``algorithm_options: {nfsp: {...}}`` as :class:`psro.family.nfsp.NFSPOptions`, e.g.
``steps_per_iteration``: the decisions it plays) learns an average meta-policy per player; the restricted solution
is :class:`MetaPolicy`: the average meta-policy's mixture of the members' action probabilities at each decision,
a policy of the full game. The responses are trained (by the run's oracle) against the other player's
:class:`MetaPolicy`. A player with one policy plays it (no NFSP is needed while both have one: row 0).

Randomness: the NFSP of iteration ``t`` draws from generators seeded by ``(seed, t)`` (torch and numpy), so the
restricted solution is a function of the populations and the iteration, recomputed after a resume as it was.
"""

from __future__ import annotations

import dataclasses
import logging
import math

import numpy as np

from games.environment import make_env, observation_size
from psro.measures.approx_gap_schedule import approx_gap_due, share_allows
from psro.measures.approx_gap_settings import approx_gap_settings, unvalued
from psro.measures.approximate_gap import measure_with_oracle, responder_seed
from psro.oracles.base import Target
from psro.oracles.jobs import PolicyList
from psro.policies import as_tabular, batch_probabilities, policy_input
from psro.variants.xdo import XDO, XDOExtra

logger = logging.getLogger(__name__)

__all__ = ["NXDO", "MetaPolicy", "RestrictedEnv", "RestrictedNFSP", "NXDO_STREAM", "restricted_approx_gap"]

#: The spawn key of NXDO's restricted-game NFSP generators: ``SeedSequence(seed, spawn_key=(NXDO_STREAM, t))``.
NXDO_STREAM = 0x4E58444F


class MetaPolicy:
    """A policy of the full game from a restricted-game policy: a meta-policy network over ``members`` (the
    population's policies) picks whose action distribution to play at each decision.

    Parameters
    ----------
    meta : NeuralPolicy
        Scores at least ``len(members)`` meta-actions; the extra outputs are masked out.
    members : list
        Policies that act on observations (neural networks, the uniform policy).

    Examples
    --------
    >>> from psro.oracles.learned.networks import NeuralPolicy
    >>> from psro.policies import UniformPolicy
    >>> import torch; _ = torch.manual_seed(0)
    >>> policy = MetaPolicy(NeuralPolicy(11, 3, (8,)), [UniformPolicy(2), UniformPolicy(2)])
    >>> policy.probabilities_np(np.zeros((1, 11), np.float32), np.array([[True, True]])).tolist()
    [[0.5, 0.5]]
    """

    def __init__(self, meta, members: list):
        if meta.num_actions < len(members) or not members:
            raise ValueError(f"meta scores {meta.num_actions} meta-actions; it needs one per member "
                             f"({len(members)}, at least one).")
        for member in members:
            if policy_input(member) != "obs":
                raise ValueError(f"NXDO's members must act on observations; {type(member).__name__} does not.")
        self.meta, self.members = meta, list(members)

    def meta_probabilities(self, obs: np.ndarray) -> np.ndarray:
        """``(b, len(members))``: the meta-policy's probability of each member at observations ``obs``."""
        mask = np.zeros((len(obs), self.meta.num_actions), bool)
        mask[:, :len(self.members)] = True
        return self.meta.probabilities_np(obs, mask)[:, :len(self.members)]

    def probabilities_np(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``(b, num_actions)``: ``sum_m meta(m | obs) member_m(. | obs)``."""
        weights = self.meta_probabilities(obs)
        out = np.zeros(np.shape(mask))
        for m, member in enumerate(self.members):
            out += weights[:, m:m + 1] * batch_probabilities(member, obs, mask)
        return out

    probabilities = probabilities_np

    def to_tabular(self, tree, player: int) -> np.ndarray:
        """The policy over ``tree``'s infostates of ``player`` (the meta-policy on each infostate's tensor)."""
        from psro.sequence_form.game_tree import infostate_tensors

        weights = self.meta_probabilities(np.array(infostate_tensors(tree, player), dtype=np.float32))
        tables = np.stack([as_tabular(member, tree, player) for member in self.members])
        out = np.einsum("sm,msa->sa", weights, tables)
        return out / out.sum(axis=1, keepdims=True)

    # ---------------------------------------------------------------- the codec protocol (checkpoints, jobs)
    def architecture(self) -> dict:
        """JSON-able: the meta-network's and every member's description."""
        from psro.policies.codec import encode_policy

        return {"meta": encode_policy(self.meta)[0], "members": [encode_policy(m)[0] for m in self.members]}

    def to_arrays(self) -> dict:
        """Every weight, named ``meta__<name>`` and ``member_<m>__<name>``."""
        from psro.policies.codec import encode_policy

        arrays = {f"meta__{k}": v for k, v in encode_policy(self.meta)[1].items()}
        for m, member in enumerate(self.members):
            arrays.update({f"member_{m}__{k}": v for k, v in encode_policy(member)[1].items()})
        return arrays

    @classmethod
    def from_arrays(cls, architecture: dict, arrays: dict) -> "MetaPolicy":
        """The policy :meth:`architecture` and :meth:`to_arrays` describe."""
        from psro.policies.codec import decode_policy

        def part(head):
            return {k[len(head):]: v for k, v in arrays.items() if k.startswith(head)}

        members = [decode_policy(d, part(f"member_{m}__")) for m, d in enumerate(architecture["members"])]
        return cls(decode_policy(architecture["meta"], part("meta__")), members)


class RestrictedEnv:
    """The restricted game of NXDO as a batched env: the acting seat's action is a member of its population
    (``num_actions``: the largest population; a smaller one's extra meta-actions are illegal), played as an action
    of the game drawn from that member's probabilities at the seat's observation.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.policies import UniformPolicy
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> rng = np.random.default_rng(0)
    >>> env = RestrictedEnv(make_env(game, 4, rng=rng), [[UniformPolicy(2)], [UniformPolicy(2)] * 3], rng)
    >>> s = env.reset()
    >>> env.num_actions, s.mask.sum(axis=1).tolist()   # player 0 to move: one member
    (3, [1, 1, 1, 1])
    """

    def __init__(self, env, members: list, rng: np.random.Generator):
        self.env, self.members, self.rng = env, [list(m) for m in members], rng
        self.num_envs, self.num_players, self.obs_dim = env.num_envs, env.num_players, env.obs_dim
        self.num_actions = max(len(m) for m in self.members)
        self._obs = np.zeros((env.num_envs, env.obs_dim), np.float32)
        self._mask = np.zeros((env.num_envs, env.num_actions), bool)
        self._player = np.zeros(env.num_envs, np.int64)

    def _restricted(self, s):
        import dataclasses

        self._obs[s.envs], self._mask[s.envs], self._player[s.envs] = s.obs, s.mask, s.player
        sizes = np.array([len(m) for m in self.members])[s.player]
        return dataclasses.replace(s, mask=np.arange(self.num_actions)[None, :] < sizes[:, None])

    def reset(self, rng=None):
        return self._restricted(self.env.reset())

    def step(self, envs: np.ndarray, meta_actions: np.ndarray):
        """Step ``envs`` with each seat's chosen member's action."""
        from psro.oracles.learned.env import sample_rows

        envs, meta_actions = np.asarray(envs), np.asarray(meta_actions)
        actions = np.zeros(len(envs), np.int64)
        u = self.rng.random(len(envs))
        players = self._player[envs]
        for q in range(self.num_players):
            for m in np.unique(meta_actions[players == q]):
                rows = np.flatnonzero((players == q) & (meta_actions == m))
                e = envs[rows]
                probs = batch_probabilities(self.members[q][m], self._obs[e], self._mask[e])
                actions[rows] = sample_rows(probs, self._mask[e], u[rows])
        return self._restricted(self.env.step(envs, actions))


class RestrictedNFSP:
    """NXDO's restricted-game solver for an :class:`psro.variants.xdo.XDO` loop with a learned oracle (module
    docstring): ``solve(t)`` -> one policy per player, ``targets``, ``exact_targets``, ``tabular``."""

    def __init__(self, loop, options: dict):
        from psro.family.nfsp import NFSPOptions

        self.loop = loop
        self.options = NFSPOptions.from_options(options)
        self.decisions = 0   # the last solve's

    def solve(self, iteration: int) -> list:
        """The restricted solution of the populations now: per player a :class:`MetaPolicy` (its one member
        while it has one)."""
        import torch

        from psro.family.nfsp import NFSPLearner, play_and_learn
        from psro.oracles.learned.oracle import isolated_torch

        loop = self.loop
        members = [list(pop.policies) for pop in loop.state.populations]
        self.decisions = 0
        if all(len(m) == 1 for m in members):
            return [m[0] for m in members]
        seeds = np.random.SeedSequence(loop.seed, spawn_key=(NXDO_STREAM, iteration))
        torch_seed, np_seed = (int(x) for x in seeds.generate_state(2))
        rng = np.random.default_rng(np_seed)
        env = RestrictedEnv(make_env(loop.game, self.options.num_envs, rng=rng), members, rng)
        counters = {"decisions": 0}
        with isolated_torch():
            torch.manual_seed(torch_seed)
            obs_dim = observation_size(loop.game)
            learners = [NFSPLearner(obs_dim, env.num_actions, self.options) for _ in members]
            play_and_learn(env, learners, self.options, rng, counters)
        self.decisions = counters["decisions"]
        return [m[0] if len(m) == 1 else MetaPolicy(learner.avg.copy(), m) for m, learner in zip(members, learners)]

    def targets(self, solution: list) -> list:
        """Per player one target: the other's restricted policy (its own population kept for a warm start); the
        on-policy value is exact where the tree is built, else NaN."""
        values = self._values(solution)
        n = len(solution)
        return [[Target(player=p, populations=[loop_pop if q == p else PolicyList([solution[q]])
                                               for q, loop_pop in enumerate(self.loop.state.populations)],
                        mixtures=(np.ones(1),) * n, on_policy_value=values[p])] for p in range(n)]

    def tabular(self, solution: list) -> list:
        """The solution's tabular policies over the tree's infostates."""
        return [as_tabular(policy, self.loop.tree, p) for p, policy in enumerate(solution)]

    def exact_targets(self, solution: list) -> list:
        """Per player the target of the solution's tabular form (exact values): for the exact gap."""
        from psro.variants.restricted_game import fixed_solution, solution_targets

        return [t[0] for t in solution_targets(self.loop.tree, fixed_solution(self.loop.tree, self.tabular(solution)),
                                               self.loop.state.iteration)]

    def _values(self, solution: list) -> list:
        if self.loop.tree is None:
            return [math.nan] * len(solution)
        from psro.variants.restricted_game import fixed_solution

        return [float(v) for v in fixed_solution(self.loop.tree, self.tabular(solution)).values]


def restricted_approx_gap(loop, solution: list, oracle=None) -> tuple:
    """``(columns, oracle)``: the history's ``approx_gap``, ``approx_gap_stderr`` and ``approx_gap_time`` of NXDO's
    restricted solution (:func:`psro.measures.approximate_gap.measure_with_oracle` on the profile of ``solution``, one
    policy per player, with the loop's ``approx_gap_options``), and the learned oracle it used (built when
    ``oracle`` is None); its episodes count as the loop's measurement."""
    import time

    from games.normal_form import NormalFormGame
    from psro.errors import with_field
    from psro.loop.state import EpisodeCounter
    from psro.oracles import make_oracle
    from solvers import make_equilibrium

    start = time.perf_counter()
    settings, options = approx_gap_settings(loop.config.oracle_settings(), loop.config.approx_gap_options,
                                            loop.oracle_name)
    if oracle is None:
        oracle = unvalued(with_field("approx_gap_options", make_oracle, settings["responder"], None,
                                     seed=responder_seed(loop.seed), game=loop.game, **options),
                          loop.config.approx_gap_options)
    n = len(solution)
    profile = make_equilibrium(NormalFormGame(np.zeros((n,) + (1,) * n)), marginals=[np.ones(1)] * n,
                               concept="nash", method="xdo restricted solution")
    counter = EpisodeCounter()
    result = measure_with_oracle(loop.game, "product", profile, [PolicyList([policy]) for policy in solution], oracle,
                                 settings, seed=loop.seed, iteration=loop.state.iteration, counter=counter)
    loop.state.measure_episodes += counter.episodes
    return ({"approx_gap": result.gap, "approx_gap_stderr": result.stderr,
             "approx_gap_time": time.perf_counter() - start}, oracle)


@dataclasses.dataclass
class NXDOExtra(XDOExtra):
    """NXDO's own state: XDO's, and per iteration the decisions NFSP took on the restricted game."""

    nfsp_decisions: list = dataclasses.field(default_factory=list)


class NXDO(XDO):
    """Neural XDO: the loop of algorithm ``xdo`` with a learned oracle (``psro.algorithm_class("xdo", oracle)``;
    module docstring). The
    restricted game is solved by NFSP on sampled play (:class:`RestrictedNFSP`), the responses answer its average
    policy, and ``approx_gap`` is the restricted solution's."""

    Extra = NXDOExtra
    #: The seconds of the latest measurement of the restricted solution's approx_gap, while the run is in memory
    _restricted_cost = 0.0

    def __init__(self, config, /, *, executor=None, checkpoint_dir=None, **fields):
        super().__init__(config, executor=executor, checkpoint_dir=checkpoint_dir, **fields)
        self._nfsp = RestrictedNFSP(self, self.xdo_options.nfsp)

    def _solve(self):
        return self._nfsp.solve(self.state.iteration)

    def _note_solution(self, solution) -> None:
        """NFSP's decisions on the restricted game count as the run's environment steps."""
        self.state.env_steps += self._nfsp.decisions
        self.state.extra.nfsp_decisions.append(int(self._nfsp.decisions))

    def targets(self, meta_game) -> list:
        self._targets = self._nfsp.targets(self.restricted_solution())
        return self._targets

    def _restricted_nash_conv(self, gains: list) -> float:
        """From fresh exact responses to the restricted solution (the learned ones only bound it from below)."""
        exact = self._nfsp.exact_targets(self.restricted_solution())
        return float(sum(self.metric_oracle.respond(p, t).value - t.on_policy_value for p, t in enumerate(exact)))

    def row(self, times: dict) -> dict:
        """PSRO's row, with ``approx_gap`` columns of the restricted solution (on ``approx_gap_every``'s schedule),
        not of the meta-game's mixture."""
        config = self.config
        self.config = config.replace(approx_gap_every=None)   # (PSRO's own measure is of its meta-strategy)
        try:
            row = super().row(times)
        finally:
            self.config = config
        if self._measures_restricted_gap() and approx_gap_due(config.approx_gap_every, self.state.iteration,
                                                              self.state.gap):
            share = approx_gap_settings(config.oracle_settings(), config.approx_gap_options, config.oracle)[0]["share"]
            if share_allows(share, self.state.rows, self.state.wall, self._restricted_cost):
                row.update(self._restricted_approx_gap())
                row["eval_episodes"] = self.state.eval_episodes()
            else:
                self.skip_by_share(share)
        return row

    def finish_run(self) -> bool:
        """The last row of a ``run`` call has the restricted solution's approximate gap."""
        row = self.state.rows[-1] if self.state.rows else None
        if row is not None and self._measures_restricted_gap() and math.isnan(row["approx_gap"]):
            row.update(self._restricted_approx_gap())
            row["eval_episodes"] = self.state.eval_episodes()
            return True
        return False

    def _measures_restricted_gap(self) -> bool:
        return self.config.approx_gap_every is not None and self._measures_approx_gap()

    def _restricted_approx_gap(self) -> dict:
        columns, self._restricted_oracle = restricted_approx_gap(self, self.restricted_solution(),
                                                                 getattr(self, "_restricted_oracle", None))
        self._restricted_cost = columns["approx_gap_time"]
        return columns

    def aggregate_policies(self) -> list:
        """The run's output: the NFSP average policies of the restricted game, one ``(I, A)`` per player."""
        if self.state.meta_strategy is None:
            raise ValueError("run() has not evaluated any population yet; call run() first.")
        return [np.asarray(t) for t in self._nfsp.tabular(self.restricted_solution())]
