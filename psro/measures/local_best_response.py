"""A local best response (LBR; Lisy & Bowling 2017), generalised beyond poker: a policy that answers fixed
opponents by one-step lookahead on sampled play, without the game tree, one more candidate of the approximate gap
(:func:`psro.measures.approximate_gap.approximate_gap`, ``approx_gap_options.lbr``).

At each of its decisions the responder in seat ``player``

1. forms its **belief**: the histories consistent with its information state, over the chance outcomes it has not
   seen, each with its chance probability times the probability that each opponent profile of the target (drawn
   once per episode, as a meta-strategy plays) takes the actions that were played;
2. values each legal action by ``rollouts`` playouts: a history and an opponent profile drawn from the belief, the
   action, then the opponents' members and its own ``continuation`` policy to the end, every action playing the
   same draws with the same random numbers;
3. plays the action with the best mean.

Lisy & Bowling's LBR continues with check/call in poker; a generic game has no such action, so the continuation is
a policy of the responder (the approximate gap passes its best member), which makes this one step of policy
improvement over that policy (a rollout policy, Bertsekas 1997). A decision depends on the information state
alone (its random numbers are keyed by it and the ``seed``, and it is remembered), so the responder is a pure
policy: what it gains, measured by play like any other candidate's, is at most a best response's.

The belief is exact where every player sees every action and only chance outcomes are private (poker, liar's
dice): the histories are the true one's actions with every chance outcome the responder cannot tell apart. The
responder checks this on a few random episodes when it is built and along every history it meets, and refuses a
game with hidden actions (dark hex, phantom tic-tac-toe) or simultaneous moves. Beliefs of more than
``max_histories`` histories keep a random subset of that size, reweighted.

:func:`psro.measures.approximate_gap.nash_conv_lower_bound` gives the NashConv lower bound of any policy profile this
way,
without a tree and without training.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from psro.oracles.learned.env import sample_rows
from psro.policies.acting import batch_probabilities, policy_input

__all__ = ["LocalBestResponse", "check_observable_actions", "state_probabilities"]


def state_probabilities(policy, states: Sequence, players: Sequence) -> np.ndarray:
    """``(len(states), num_actions)`` action probabilities of ``policy`` at pyspiel ``states`` for the seats
    ``players``, in one call where the policy takes a batch (networks read the information-state tensor, as they
    were trained on).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.policies import UniformPolicy
    >>> state = pyspiel.load_game("kuhn_poker").new_initial_state()
    >>> state.apply_action(0); state.apply_action(1)
    >>> state_probabilities(UniformPolicy(2), [state], [0]).tolist()
    [[0.5, 0.5]]
    """
    kind = policy_input(policy)
    mask = np.array([s.legal_actions_mask(int(q)) for s, q in zip(states, players)], dtype=bool)
    obs = np.array([s.information_state_tensor(int(q)) for s, q in zip(states, players)], dtype=np.float32) \
        if kind == "obs" else np.zeros((len(states), 0), np.float32)
    keys = [s.information_state_string(int(q)) for s, q in zip(states, players)] if kind == "keys" else None
    return batch_probabilities(policy, obs, mask, keys=keys, states=list(states), players=list(players))


def check_observable_actions(game, episodes: int = 16, seed: int = 0, what: str = "approx_gap_options.lbr") -> None:
    """``ValueError`` unless ``game`` is a turn-based OpenSpiel game in which, on ``episodes`` random episodes,
    every player's information state tells every other player's actions apart (what :class:`LocalBestResponse`'s
    belief assumes).

    Examples
    --------
    >>> import pyspiel
    >>> check_observable_actions(pyspiel.load_game("leduc_poker"))
    >>> check_observable_actions(pyspiel.load_game("dark_hex(num_rows=3,num_cols=3)"))
    Traceback (most recent call last):
    ...
    ValueError: approx_gap_options.lbr needs a game whose actions every player sees (only chance outcomes private, \
as in poker or liar's dice); in dark_hex(num_cols=3,num_rows=3) player 1 cannot tell player 0's actions apart. \
Set approx_gap_options.lbr to null for this game.
    """
    import pyspiel

    if not isinstance(game, pyspiel.Game):
        raise ValueError(f"{what} needs an OpenSpiel game (it replays histories of pyspiel states); got "
                         f"{type(game).__name__}. Set {what} to null for this game.")
    if game.get_type().dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"{what} needs a turn-based game; {game} has simultaneous moves. Set {what} to null.")
    rng = np.random.default_rng(seed)
    for _ in range(episodes):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(outcomes[rng.choice(len(outcomes), p=np.asarray(probs) / sum(probs))]))
                continue
            _check_public(game, state, what)
            state.apply_action(int(rng.choice(state.legal_actions())))


def _check_public(game, state, what: str) -> None:
    """``ValueError`` where some seat's information state after ``state``'s actions does not tell them apart."""
    actor = state.current_player()
    for p in range(game.num_players()):
        if p == actor:
            continue
        seen = {state.child(a).information_state_string(p) for a in state.legal_actions()}
        if len(seen) < len(state.legal_actions()):
            raise ValueError(f"{what} needs a game whose actions every player sees (only chance outcomes private, "
                             f"as in poker or liar's dice); in {game} player {p} cannot tell player {actor}'s "
                             f"actions apart. Set {what} to null for this game.")


class LocalBestResponse:
    """The local best response of seat ``player`` to a distribution over the others' population members (see the
    module docstring): a policy on pyspiel states (``action_probabilities(state, player)``, one-hot).

    Parameters
    ----------
    game : pyspiel.Game
        Turn-based, every action seen by every player (checked, :func:`check_observable_actions`).
    player : int
    populations : sequence
        Each seat's population (its ``policies``, or a list of policies).
    profiles : ndarray of int, shape (k, num_players)
        The opponents' profiles (population indices; column ``player`` is ignored) ...
    weights : ndarray, shape (k,)
        ... and their probabilities (an episode plays one profile).
    continuation : policy
        What the responder plays after the action it values (any policy :func:`state_probabilities` serves).
    rollouts : int
        Playouts per legal action, at least 1.
    seed : int
        Keys every random number (with the information state).
    max_histories : int
        The largest belief kept whole.

    Examples
    --------
    Against an opponent that always folds to a bet in Kuhn poker, betting wins the ante whatever the cards: the
    responder bets first with every card (a uniform continuation would lose some of it).

    >>> import pyspiel
    >>> from psro.policies import UniformPolicy
    >>> class Folds:
    ...     def probabilities_np(self, obs, mask):
    ...         return np.tile([1.0, 0.0], (len(obs), 1))   # pass (= fold facing a bet)
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> lbr = LocalBestResponse(game, 0, [[UniformPolicy(2)], [Folds()]], np.array([[0, 0]]), np.ones(1),
    ...                         UniformPolicy(2), rollouts=8)
    >>> state = game.new_initial_state(); state.apply_action(0); state.apply_action(2)   # a jack against a king
    >>> lbr.action_probabilities(state, 0).tolist()
    [0.0, 1.0]
    """

    def __init__(self, game, player: int, populations: Sequence, profiles, weights, continuation, *,
                 rollouts: int = 32, seed: int = 0, max_histories: int = 20_000):
        check_observable_actions(game, seed=seed)
        if isinstance(rollouts, bool) or not isinstance(rollouts, (int, np.integer)) or rollouts < 1:
            raise ValueError(f"rollouts must be a positive int (playouts per legal action); got {rollouts!r}.")
        self.game, self.player, self.rollouts, self.seed = game, int(player), int(rollouts), int(seed)
        self.max_histories = int(max_histories)
        self.continuation = continuation
        self.num_actions = game.num_distinct_actions()
        others = np.delete(np.asarray(profiles, dtype=np.int64), self.player, axis=1)
        self.profiles, inverse = np.unique(others, axis=0, return_inverse=True)
        self.weights = np.bincount(inverse.ravel(), weights=np.asarray(weights, np.float64),
                                   minlength=len(self.profiles))
        self.seats = [q for q in range(game.num_players()) if q != self.player]
        self._members = [populations[q].policies if hasattr(populations[q], "policies") else populations[q]
                         for q in range(game.num_players())]
        self._decided: dict = {}

    def action_probabilities(self, state, player: int) -> np.ndarray:
        """One-hot on the decision at ``state`` (``player`` must be the responder's seat)."""
        if int(player) != self.player:
            raise ValueError(f"this local best response plays seat {self.player}, not {player}.")
        key = state.information_state_string(self.player)
        action = self._decided.get(key)
        if action is None:
            action = self._decide(state, key)
            if len(self._decided) < 1 << 20:
                self._decided[key] = action
        out = np.zeros(self.num_actions)
        out[action] = 1.0
        return out

    def _decide(self, state, key: str) -> int:
        rng = np.random.default_rng([self.seed, zlib.crc32(key.encode())])
        histories, belief = self._belief(state, rng)
        legal = state.legal_actions(self.player)
        total = belief.sum()
        if len(legal) == 1 or not total > 0:   # (no opponent profile explains the history: play the continuation)
            probs = state_probabilities(self.continuation, [state], [self.player])
            return int(sample_rows(probs, probs > 0, rng.random(1))[0])
        draws = rng.choice(belief.size, size=self.rollouts, p=(belief / total).ravel())
        h, k = np.divmod(draws, len(self.profiles))
        starts = [histories[i].child(a) for a in legal for i in h.tolist()]
        values = self._play_out(starts, np.tile(k, len(legal)), np.tile(np.arange(self.rollouts), len(legal)), rng)
        return int(legal[int(np.argmax(values.reshape(len(legal), -1).mean(axis=1)))])

    def _belief(self, state, rng) -> tuple:
        """``(histories, weights)``: the histories consistent with the responder's information state at
        ``state`` and the weight ``(len(histories), num_profiles)`` of each with each opponent profile."""
        me, true = self.player, self.game.new_initial_state()
        histories = [(true.clone(), 1.0, [])]   # (state, chance probability, the opponents' decisions)
        for action in state.history():
            if true.is_chance_node():
                grown = [(h.child(o), prob * po, steps) for h, prob, steps in histories for o, po in
                         h.chance_outcomes()]
            else:
                if true.current_player() != me:
                    _check_public(self.game, true, "approx_gap_options.lbr")
                actor = true.current_player()
                grown = [(h.child(action), prob, steps + ([(h, action)] if actor != me else []))
                         for h, prob, steps in histories
                         if h.current_player() == actor and h.legal_actions_mask(actor)[action]]
            true.apply_action(action)
            seen = true.information_state_string(me)
            histories = [x for x in grown if x[0].information_state_string(me) == seen]
            if len(histories) > self.max_histories:
                keep = rng.choice(len(histories), size=self.max_histories, replace=False)
                scale = len(histories) / self.max_histories
                histories = [(histories[i][0], histories[i][1] * scale, histories[i][2]) for i in np.sort(keep)]
        weights = np.outer([prob for _, prob, _ in histories], self.weights)
        self._weigh(weights, [steps for _, _, steps in histories])
        return [h for h, _, _ in histories], weights

    def _weigh(self, weights: np.ndarray, steps: list) -> None:
        """Multiply ``weights[i, k]`` by the probability that profile ``k`` took history ``i``'s opponent actions
        (each member asked once for all the states where it acts)."""
        rows = [(i, h, a) for i, hs in enumerate(steps) for h, a in hs]
        if not rows:
            return
        seat = np.array([h.current_player() for _, h, _ in rows])
        index = np.array([i for i, _, _ in rows])
        action = np.array([a for _, _, a in rows])
        for column, q in enumerate(self.seats):
            mine = np.flatnonzero(seat == q)
            if not mine.size:
                continue
            for m in np.unique(self.profiles[:, column]).tolist():
                probs = state_probabilities(self._members[q][m], [rows[j][1] for j in mine.tolist()], [q] * mine.size)
                taken = probs[np.arange(mine.size), action[mine]]
                factor = np.ones(weights.shape[0])
                np.multiply.at(factor, index[mine], taken)
                ks = self.profiles[:, column] == m
                weights[:, ks] *= factor[:, None]

    def _play_out(self, states: list, profiles: np.ndarray, lanes: np.ndarray, rng) -> np.ndarray:
        """The responder's returns of ``states`` played to the end in lockstep, state ``j`` against profile
        ``profiles[j]``; the ``t``-th random number of state ``j`` is ``u[lanes[j], t]`` (equal lanes: common
        random numbers)."""
        u = rng.random((int(lanes.max()) + 1, 64))
        step = np.zeros(len(states), dtype=np.int64)
        live = [j for j, s in enumerate(states) if not s.is_terminal()]
        while live:
            groups: dict = {}
            for j in live:
                s = states[j]
                if s.is_chance_node():
                    outcomes, probs = zip(*s.chance_outcomes())
                    cdf = np.cumsum(probs)
                    s.apply_action(int(outcomes[min(int(np.searchsorted(cdf, u[lanes[j], step[j]] * cdf[-1],
                                                                        side="right")), len(cdf) - 1)]))
                    step[j] += 1
                    continue
                q = s.current_player()
                member = None if q == self.player else int(self.profiles[profiles[j], self.seats.index(q)])
                groups.setdefault((q, member), []).append(j)
            for (q, member), js in groups.items():
                policy = self.continuation if member is None else self._members[q][member]
                probs = state_probabilities(policy, [states[j] for j in js], [q] * len(js))
                actions = sample_rows(probs, probs > 0, u[lanes[js], step[js]])
                for j, a in zip(js, actions.tolist()):
                    states[j].apply_action(a)
                step[js] += 1
            if step.max() >= u.shape[1]:
                u = np.concatenate([u, rng.random(u.shape)], axis=1)
            live = [j for j in live if not states[j].is_terminal()]
        return np.array([s.returns()[self.player] for s in states])

