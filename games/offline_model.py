"""A tabular game model learned from an offline dataset, with its uncertainty.

:func:`fit_model` reads a trajectory table (:mod:`games.trajectories`) and
rebuilds the **empirical tree**: every history the data visited, with, at
chance histories, the counts of each outcome, at decision histories the
actor's information state and legal actions, and at terminal histories the
returns observed. A model is the tree with a weight per episode: the
**count-based model** weights every episode once; the ``members`` **bootstrap
members** weight them by a seeded resample of the episodes with replacement.
Chance probabilities are the weighted outcome frequencies and terminal
returns the weighted means.

A history the model has not seen cannot be predicted. How each kind of gap is
treated (documented once here, used everywhere below):

* an **unobserved chance outcome** has probability 0 in the model (the count
  interval below pays for it through its L1 width);
* an **unobserved action at an observed decision** (legal there, never taken
  in the data) leads to an *unknown leaf*: in the ``"mean"`` model it pays
  every player the mean return of the episodes through that decision; in the
  ``"pessimistic"`` model the actor gets ``penalty`` (default the game's
  ``min_utility``) and, in a zero- or constant-sum game, the others share the
  rest of the constant sum (otherwise they keep their mean); in the count
  interval it is worth ``min_utility`` (lower bound) or ``max_utility``
  (upper bound) to the player bounded.

**Policies** are tabular: per player, a dict ``{infostate: probabilities}``
(probabilities over ``num_actions``, or a dict ``{action: probability}``),
an array ``(len(model.infostates(p)), num_actions)`` in the order of
:meth:`GameModel.infostates`, or ``None`` (uniform). An infostate a policy
does not name plays uniformly over its legal actions; probabilities are
renormalised over the legal actions.

**Intervals.** :meth:`GameModel.payoff_interval` is the min and max of a
profile's expected payoffs over the ensemble (bootstrap members and the
count-based model). :meth:`GameModel.count_interval` is a confidence interval
from the visit counts: at a chance history visited ``n`` times with ``k``
possible outcomes (the chance row's ``legal_actions``), the true outcome
distribution is within L1 distance ``eps = sqrt(2 ln((2**k - 2) M / delta) / n)``
of the empirical one (Weissman et al. 2003, with a union bound over the ``M``
chance histories and stochastic terminals of the data), so each chance history
shifts any continuation value in ``[min_utility, max_utility]`` by at most
``eps * (max_utility - min_utility) / 2``. Summing these widths along the way
to each leaf (the simulation lemma) and valuing unknown leaves at the utility
bounds gives, with probability at least ``1 - delta``, an interval holding the
true expected payoff of **every** profile at once. Terminal returns are taken
as exact when all observations of a terminal agree (as in every OpenSpiel game,
whose returns are a function of the history); otherwise a Hoeffding width is
added. :meth:`GameModel.best_response` maximises the same bounds exactly on the
model's tree (imperfect information respected), so the pessimistic gap of
``psro.offline`` is built from it.

**As a game.** :meth:`GameModel.model_game` turns the count-based model, a
member, or a bound into a :class:`games.SequentialGame` whose information-state
strings are the dataset's, so exact machinery (``psro.sequence_form.game_tree.build_game_tree``,
``PSRO(model.model_game(...), oracle="exact")``, OpenSpiel's best responses)
runs inside the model and its policies apply to the real game unchanged. Such a
game is not registered with OpenSpiel, so it is played through its
``to_pyspiel()`` game in this process (the serial executor).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from games.custom_sequential import SequentialGame
from games.memory_limit import check_memory
from games.offline_bounds import CountBounds, Deviation, PayoffInterval
from games.offline_tree import CHANCE_NODE as _CHANCE
from games.offline_tree import DECISION_NODE as _DECISION
from games.offline_tree import TERMINAL_NODE as _TERMINAL
from games.offline_tree import UNKNOWN_NODE as _UNKNOWN
from games.offline_tree import EmpiricalTree, NodeCounts, model_game_class, node_counts
from games.trajectories import episodes as parse_episodes
from games.trajectories import load_trajectories
from games.validation import check_int, check_real, check_seed

__all__ = ["Deviation", "GameModel", "PayoffInterval", "fit_model"]



class GameModel(CountBounds):
    """The empirical game model of a dataset and its bootstrap ensemble (build it with :func:`fit_model`).

    Attributes
    ----------
    num_players, num_actions : int
        Players, and the size of a policy's probability vector.
    min_utility, max_utility : float
        The utility range used for unknown leaves and widths (the game's, or
        the range of the observed returns when no game is given).
    members : int
        The number of bootstrap members (the ensemble also holds the
        count-based model).
    num_episodes : int
        Episodes in the dataset.
    constant_sum : float or None
        The players' constant sum of returns when every observed episode has it
        (or the game declares it), else None.
    """

    def __init__(self, tree: EmpiricalTree, counts: NodeCounts, member_counts: list, *, num_actions: int,
                 min_utility: float, max_utility: float, constant_sum: float | None) -> None:
        self._tree = tree
        self._counts = counts
        self._members = member_counts
        self.num_players = tree.num_players
        self.num_actions = num_actions
        self.min_utility = float(min_utility)
        self.max_utility = float(max_utility)
        self.constant_sum = constant_sum
        self.members = len(member_counts)
        self.num_episodes = len(tree.returns)

    # ------------------------------------------------------------------ what the data saw
    def infostates(self, player: int) -> list[str]:
        """The information-state strings of ``player`` seen in the data, in order of first visit.

        Examples
        --------
        >>> import pyspiel
        >>> from games.datasets import collect
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> model = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 200, seed=0), game=game)
        >>> sorted(model.infostates(0))
        ['0', '0pb', '1', '1pb', '2', '2pb']
        """
        player = check_int(player, "player", minimum=0, maximum=self.num_players - 1)
        return list(self._tree.infosets[player])

    def legal_actions(self, player: int, infostate: str) -> tuple[int, ...]:
        """The legal actions recorded at ``infostate`` of ``player``."""
        j = self._tree.infoset_index[player].get(infostate)
        if j is None:
            raise ValueError(f"infostate {infostate!r} of player {player} is not in the dataset.")
        node = int(np.flatnonzero((self._tree.node_infoset == j) & (self._tree.player == player))[0])
        return self._tree.legal[node]

    def action_counts(self, player: int, infostate: str) -> np.ndarray:
        """How often each action was taken at ``infostate`` of ``player`` in the data (over ``num_actions``).

        Examples
        --------
        >>> import pyspiel
        >>> from games.datasets import collect
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> data = collect(game, pyspiel.UniformRandomPolicy(game), 300, seed=0)
        >>> counts = fit_model(data).action_counts(0, "0")
        >>> int(counts.sum()) == int(((data["player"] == 0) & (data["infostate"] == "0")).sum())
        True
        """
        t = self._tree
        player = check_int(player, "player", minimum=0, maximum=self.num_players - 1)
        j = t.infoset_index[player].get(infostate)
        if j is None:
            raise ValueError(f"infostate {infostate!r} of player {player} is not in the dataset.")
        child = np.arange(1, len(t.kind))
        par = t.parent[child]
        mine = child[(t.kind[par] == _DECISION) & (t.player[par] == player) & (t.node_infoset[par] == j)]
        return np.bincount(t.action[mine], weights=self._counts.count[mine], minlength=self.num_actions)

    def __repr__(self) -> str:
        return (f"GameModel(episodes={self.num_episodes}, histories={self.num_histories}, "
                f"players={self.num_players}, members={self.members})")

    @property
    def num_histories(self) -> int:
        """Histories the data visited (chance, decision and terminal)."""
        return int((self._tree.kind != _UNKNOWN).sum())

    def visits(self, history) -> int:
        """How many episodes of the dataset passed through ``history`` (a tuple or ``"0 1 2"``).

        Examples
        --------
        >>> import pyspiel
        >>> from games.datasets import collect
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> model = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 300, seed=0))
        >>> model.visits(()), model.visits("0 1") + model.visits("0 2") == model.visits("0")
        (300, True)
        """
        if isinstance(history, str):
            history = tuple(int(t) for t in history.split())
        n = self._tree.index.get(tuple(history))
        return 0 if n is None or self._tree.kind[n] == _UNKNOWN else int(round(self._counts.count[n]))

    # ------------------------------------------------------------------ policies
    def _edge_probs(self, profile, counts: NodeCounts, skip: int | None = None) -> np.ndarray:
        """Probability of each node's incoming edge (1 on ``skip``'s edges; 0 below unvisited nodes)."""
        t = self._tree
        pe = np.zeros(len(t.kind))
        pe[0] = 1.0
        child = np.arange(1, len(t.kind))
        par = t.parent[child]
        active = counts.count[par] > 0
        chance = (t.kind[par] == _CHANCE) & active
        with np.errstate(invalid="ignore", divide="ignore"):
            pe[child[chance]] = counts.count[child[chance]] / counts.count[par[chance]]
        tables = self._tables(profile)
        dec = (t.kind[par] == _DECISION) & active
        for p in range(self.num_players):
            mine = dec & (t.player[par] == p)
            if skip == p:
                pe[child[mine]] = 1.0
            else:
                pe[child[mine]] = tables[p][t.node_infoset[par[mine]], t.action[child[mine]]]
        return pe

    def _tables(self, profile) -> list[np.ndarray]:
        """The profile as per-player arrays over the model's infostates, normalised over legal actions."""
        if profile is None:
            profile = [None] * self.num_players
        if not isinstance(profile, (list, tuple)) or len(profile) != self.num_players:
            raise ValueError(
                f"profile must be a list with one policy per player ({self.num_players}); a policy is a dict "
                "{infostate: probabilities}, an array over model.infostates(player), or None (uniform)."
            )
        return [self._table(p, policy) for p, policy in enumerate(profile)]

    def _table(self, player: int, policy) -> np.ndarray:
        t = self._tree
        keys = t.infosets[player]
        table = np.full((len(keys), self.num_actions), np.nan)
        if isinstance(policy, np.ndarray):
            if policy.shape != table.shape:
                raise ValueError(
                    f"the policy array of player {player} has shape {policy.shape}; expected {table.shape} "
                    "(model.infostates(player) x model.num_actions)."
                )
            table[:] = policy
        elif isinstance(policy, dict):
            for j, key in enumerate(keys):
                probs = policy.get(key)
                if probs is None:
                    continue
                if isinstance(probs, dict):
                    row = np.zeros(self.num_actions)
                    for a, q in probs.items():
                        row[int(a)] = float(q)
                    probs = row
                probs = np.asarray(probs, dtype=np.float64)
                if probs.shape != (self.num_actions,):
                    raise ValueError(
                        f"policy of player {player} at infostate {key!r}: {probs.shape[0] if probs.ndim else 1} "
                        f"probabilities; expected {self.num_actions} (one per distinct action) or a dict."
                    )
                table[j] = probs
        elif callable(policy):
            for j, key in enumerate(keys):
                table[j] = np.asarray(policy(key), dtype=np.float64)
        elif policy is not None:
            raise TypeError(
                f"the policy of player {player} must be a dict, an array, a callable infostate -> "
                f"probabilities or None; got {type(policy).__name__}."
            )
        mask = np.zeros_like(table, dtype=bool)
        first = {}
        for n in np.flatnonzero((t.kind == _DECISION) & (t.player == player)):
            first.setdefault(int(t.node_infoset[n]), n)
        for j, n in first.items():
            mask[j, list(t.legal[n])] = True
        table = np.where(np.isnan(table), 1.0, table)  # rows not given: uniform
        if not np.isfinite(table).all() or (table < 0).any():
            raise ValueError(f"the policy of player {player} has negative or non-finite probabilities.")
        table = np.where(mask, table, 0.0)
        total = table.sum(axis=1, keepdims=True)
        if (total <= 0).any():
            j = int(np.flatnonzero(total[:, 0] <= 0)[0])
            raise ValueError(
                f"the policy of player {player} gives no probability to a legal action at infostate {keys[j]!r}."
            )
        return table / total

    # ------------------------------------------------------------------ values
    def _reach(self, pe: np.ndarray) -> np.ndarray:
        t = self._tree
        reach = np.zeros(len(t.kind))
        reach[0] = 1.0
        for level in t.levels[1:]:
            reach[level] = reach[t.parent[level]] * pe[level]
        return reach

    def _leaves(self, counts: NodeCounts) -> np.ndarray:
        """Leaf nodes of a model: visited terminals, and unknown leaves below visited decisions."""
        t = self._tree
        leaf = np.zeros(len(t.kind), dtype=bool)
        leaf[(t.kind == _TERMINAL) & (counts.count > 0)] = True
        child = np.arange(1, len(t.kind))
        par = t.parent[child]
        unknown = (t.kind[par] == _DECISION) & (counts.count[par] > 0) & (counts.count[child] <= 0)
        leaf[child[unknown]] = True
        return leaf

    def _leaf_values(self, counts: NodeCounts, kind: str, player: int | None = None, penalty=None,
                     delta: float = 0.05, widths: np.ndarray | None = None) -> np.ndarray:
        """Per-node leaf payoffs ``(nodes, players)`` of a model kind (NaN off the leaves)."""
        t = self._tree
        leaf = self._leaves(counts)
        values = np.full((len(t.kind), self.num_players), np.nan)
        terminal = leaf & (t.kind == _TERMINAL) & (counts.count > 0)
        values[terminal] = counts.mean_return[terminal]
        unknown = np.flatnonzero(leaf & ~terminal)
        values[unknown] = counts.mean_return[t.parent[unknown]]
        if kind == "pessimistic" and len(unknown):
            actor = t.player[t.parent[unknown]]
            pen = self.min_utility if penalty is None else float(penalty)
            if self.constant_sum is not None and self.num_players > 1:
                values[unknown] = (self.constant_sum - pen) / (self.num_players - 1)
            values[unknown, actor] = pen
        if kind in ("lower", "upper"):
            w = self._widths(counts, delta) if widths is None else widths
            sign = -1.0 if kind == "lower" else 1.0
            bound = self.min_utility if kind == "lower" else self.max_utility
            values[unknown, player] = bound
            values[leaf, player] += sign * w[leaf]
        return values

    def _value(self, profile, counts: NodeCounts, values: np.ndarray) -> np.ndarray:
        reach = self._reach(self._edge_probs(profile, counts))
        leaf = ~np.isnan(values[:, 0])
        return reach[leaf] @ values[leaf]

    def _counts_of(self, which) -> NodeCounts:
        if isinstance(which, str) and which in ("mean", "pessimistic", "lower", "upper"):
            return self._counts
        index = check_int(which, "kind (a member index)", minimum=0, maximum=self.members - 1)
        return self._members[index]

    def expected_payoffs(self, profile, kind="mean", penalty=None) -> np.ndarray:
        """Expected payoffs of ``profile`` in the count-based model (``"mean"`` / ``"pessimistic"``) or a member.

        Examples
        --------
        >>> import pyspiel
        >>> from games.datasets import collect
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> model = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 500, seed=0), members=3)
        >>> v = model.expected_payoffs(None)    # uniform play: the data's mean return
        >>> bool(abs(v[0] + v[1]) < 1e-12)
        True
        """
        counts = self._counts_of(kind)
        leaf_kind = kind if kind in ("mean", "pessimistic") else ("mean" if penalty is None else "pessimistic")
        return self._value(profile, counts, self._leaf_values(counts, leaf_kind, penalty=penalty))

    def payoff_interval(self, profile, penalty=None) -> PayoffInterval:
        """Min and max of ``profile``'s expected payoffs over the ensemble (members and count-based model).

        Unknown leaves pay the mean of the observed returns at their decision
        (or, with ``penalty``, the actor gets ``penalty``: the pessimistic model).

        Examples
        --------
        >>> import pyspiel
        >>> from games.datasets import collect
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> model = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 500, seed=0), members=4, seed=1)
        >>> low, high = model.payoff_interval(None)
        >>> bool((low <= high).all()), model.payoff_interval(None).values.shape
        (True, (5, 2))
        """
        kind = "mean" if penalty is None else "pessimistic"
        values = np.array([self._value(profile, c, self._leaf_values(c, kind, penalty=penalty))
                           for c in (*self._members, self._counts)])
        return PayoffInterval(low=values.min(axis=0), high=values.max(axis=0), values=values)

    def count_interval(self, profile, delta: float = 0.05, method: str = "robust") -> PayoffInterval:
        """A ``1 - delta`` confidence interval of ``profile``'s true expected payoffs from the visit counts.

        With probability ``>= 1 - delta`` over the draw of the data (whatever
        the behaviour policy), every chance history's true distribution is in
        its L1 ball (module docstring); the interval holds then for every
        profile at once. Untried actions and unseen chance outcomes are worth
        ``min_utility`` (low end) or ``max_utility`` (high end).

        Parameters
        ----------
        profile : profile or list of (weight, profile)
            A mixture is valued as a whole (the chance distributions are shared).
        delta : float
            In ``(0, 1)``.
        method : {"robust", "additive"}
            ``"robust"`` (tighter): backward induction with each chance history's
            distribution at its worst (best) within its ball.
            ``"additive"``: the model's value minus (plus) the widths
            ``eps * (max_utility - min_utility) / 2`` summed along the way (the
            simulation lemma); linear in the profile, so it is what
            :meth:`best_response` maximises exactly.

        Returns
        -------
        PayoffInterval
            Clipped to the utility range; ``values`` holds the count-based
            model's expected payoffs.

        Examples
        --------
        >>> import pyspiel
        >>> from games.datasets import collect
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> small = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 200, seed=0), game=game)
        >>> large = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 2000, seed=0), game=game)
        >>> low, high = large.count_interval(None)
        >>> bool(low[0] <= 0.125 <= high[0])      # uniform Kuhn is worth 1/8 to player 0
        True
        >>> bool((small.count_interval(None).width > large.count_interval(None).width).all())
        True
        >>> bool((large.count_interval(None).width < large.count_interval(None, method="additive").width).all())
        True
        """
        delta = check_real(delta, "delta", minimum=0.0, maximum=1.0, strict=True)
        if method not in ("robust", "additive"):
            raise ValueError(f"method must be 'robust' or 'additive'; got {method!r}.")
        mixture = _as_mixture(profile)
        low = np.empty(self.num_players)
        high = np.empty(self.num_players)
        if method == "additive":
            widths = self._widths(self._counts, delta)
        for p in range(self.num_players):
            if method == "robust":
                low[p] = self._robust(mixture, p, "lower", delta)
                high[p] = self._robust(mixture, p, "upper", delta)
                continue
            lower = self._leaf_values(self._counts, "lower", p, widths=widths)
            upper = self._leaf_values(self._counts, "upper", p, widths=widths)
            low[p] = sum(w * self._value(q, self._counts, lower)[p] for w, q in mixture)
            high[p] = sum(w * self._value(q, self._counts, upper)[p] for w, q in mixture)
        mean = self._mixture_value(mixture)
        return PayoffInterval(low=np.clip(low, self.min_utility, self.max_utility),
                              high=np.clip(high, self.min_utility, self.max_utility), values=mean[None])

    def _mixture_value(self, mixture: list) -> np.ndarray:
        values = self._leaf_values(self._counts, "mean")
        return sum(w * self._value(q, self._counts, values) for w, q in mixture)

    def deviation_interval(self, player: int, opponents, delta: float = 0.05) -> tuple[float, float, Deviation]:
        """Bounds of the true value of ``player``'s best deviation against ``opponents``, and the deviation used.

        The high end is the smaller of two upper bounds of every policy's value:
        the exact best response to the additive upper bound, and the robust
        bound of a deviator who sees the whole history; the low end is the
        larger robust lower bound of two deviations that exist (the best
        responses to the lower bound and to the count-based model). Both hold
        with probability ``>= 1 - delta`` (with :meth:`count_interval`), and are
        clipped to the utility range.

        Parameters
        ----------
        player : int
        opponents : profile or list of (weight, profile)
            As for :meth:`best_response` (the deviator's entries are ignored).

        Returns
        -------
        (float, float, Deviation)
            ``low``, ``high`` and the best response to the upper bound (whose reach
            :meth:`uncovered` checks).

        Examples
        --------
        >>> import pyspiel
        >>> from games.datasets import collect
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> model = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 2000, seed=0), game=game)
        >>> low, high, deviation = model.deviation_interval(0, None)
        >>> bool(low <= 0.5 <= high)    # the best response to uniform play is worth 1/2
        True
        """
        delta = check_real(delta, "delta", minimum=0.0, maximum=1.0, strict=True)
        mixture = _as_mixture(opponents)
        upper = self.best_response(player, mixture, bound="upper", delta=delta)
        high = min(upper.value, self._robust(mixture, player, "upper", delta, deviator=player))
        low = -np.inf
        for bound in ("lower", "mean"):
            policy = self.best_response(player, mixture, bound=bound, delta=delta).policy
            low = max(low, self._robust([(w, _replace(q, player, policy, self.num_players)) for w, q in mixture],
                                        player, "lower", delta))
        return (float(np.clip(low, self.min_utility, self.max_utility)),
                float(np.clip(high, self.min_utility, self.max_utility)), upper)

    # ------------------------------------------------------------------ best responses
    def best_response(self, player: int, opponents, bound: str = "mean", delta: float = 0.05,
                      penalty=None, kind="mean") -> Deviation:
        """``player``'s exact best response on the model's tree against ``opponents``.

        Parameters
        ----------
        player : int
            The deviator.
        opponents : profile or list of (weight, profile)
            One profile, or a mixture of profiles (a correlated joint, as for a
            CCE deviation): the deviator does not see which was drawn. The
            deviator's own entry of each profile is ignored.
        bound : str
            What is maximised: ``"mean"`` (the model's expected payoff; see
            ``kind``), ``"upper"`` or ``"lower"`` (the count interval's ends
            for ``player``, at confidence ``delta``).
        penalty : float, optional
            With ``bound="mean"``: the pessimistic model with this penalty.
        kind : "mean" or int
            With ``bound="mean"``: the count-based model or a member.

        Returns
        -------
        Deviation
            Ties between actions go to the lowest action index. Its ``value``
            is not clipped to the utility range.

        Examples
        --------
        >>> import pyspiel
        >>> from games.datasets import collect
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> model = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 1500, seed=0), game=game)
        >>> br = model.best_response(0, None)        # against uniform play
        >>> round(br.value, 1), br.policy["0"].tolist()   # true value 0.5; bluff with the jack
        (0.5, [0.0, 1.0])
        >>> model.best_response(0, None, bound="upper").value > br.value
        True
        """
        t = self._tree
        player = check_int(player, "player", minimum=0, maximum=self.num_players - 1)
        if bound not in ("mean", "lower", "upper"):
            raise ValueError(f"bound must be 'mean', 'lower' or 'upper'; got {bound!r}.")
        counts = self._counts if bound != "mean" else self._counts_of(kind)
        if bound == "mean":
            values = self._leaf_values(counts, "mean" if penalty is None else "pessimistic", penalty=penalty)
        else:
            delta = check_real(delta, "delta", minimum=0.0, maximum=1.0, strict=True)
            values = self._leaf_values(counts, bound, player, delta=delta)
        mixture = _as_mixture(opponents)
        leaf = ~np.isnan(values[:, 0])
        contrib = np.zeros(len(t.kind))
        for weight, profile in mixture:
            cf = self._reach(self._edge_probs(profile, counts, skip=player))
            contrib[leaf] += weight * cf[leaf] * values[leaf, player]
        mine = np.flatnonzero((t.kind == _DECISION) & (t.player == player) & (counts.count > 0))
        keep = np.ones(len(t.kind))  # weight of each node's incoming edge under the response
        child = np.arange(1, len(t.kind))
        my_edges = child[np.isin(t.parent[child], mine)]
        num_sets = len(t.infosets[player])
        table = np.zeros((num_sets, self.num_actions))
        own = t.own_depth[player]
        for d in sorted(set(own[mine].tolist()), reverse=True):
            q = self._backup(contrib, keep)
            edges = my_edges[own[t.parent[my_edges]] == d]
            sets = t.node_infoset[t.parent[edges]]
            vals = np.full((num_sets, self.num_actions), -np.inf)
            flat = sets * self.num_actions + t.action[edges]
            sums = np.bincount(flat, weights=q[edges], minlength=num_sets * self.num_actions)
            legal = np.zeros(num_sets * self.num_actions, dtype=bool)
            legal[flat] = True
            vals.ravel()[legal] = sums[legal]
            decided = np.unique(sets)
            best = np.argmax(vals[decided], axis=1)
            table[decided] = 0.0
            table[decided, best] = 1.0
            keep[edges] = table[sets, t.action[edges]]
        value = float(self._backup(contrib, keep)[0])
        policy = {}
        for j, key in enumerate(t.infosets[player]):
            row = table[j]
            if row.sum() == 0:  # an infostate of the data never reached in this model: its first legal action
                n = int(np.flatnonzero((t.node_infoset == j) & (t.player == player) & (t.kind == _DECISION))[0])
                row = np.zeros(self.num_actions)
                row[t.legal[n][0]] = 1.0
            policy[key] = row
        return Deviation(player=player, value=value, policy=policy, bound=bound)

    def _backup(self, contrib: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """Bottom-up sums of leaf contributions, each edge weighted by ``keep``."""
        t = self._tree
        q = contrib.copy()
        for level in reversed(t.levels[1:]):
            np.add.at(q, t.parent[level], q[level] * keep[level])
        return q

    # ------------------------------------------------------------------ coverage
    def uncovered(self, profile, limit: int = 10) -> list[tuple[int, ...]]:
        """Histories ``profile`` reaches that the data cannot value (first ``limit``, shortest first).

        Those are unknown leaves (an unobserved action) with positive
        probability, and reached chance histories where some outcome of the
        chance row's ``legal_actions`` was never observed (the outcome is
        given as the history's continuation). Empty: the data covers the profile.
        ``profile`` may be a mixture ``[(weight, profile), ...]``.

        Examples
        --------
        >>> import pyspiel
        >>> from games.datasets import collect
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> model = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 20, seed=0))
        >>> len(model.uncovered(None)) > 0, fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 500,
        ...                                              seed=0)).uncovered(None)
        (True, [])
        """
        t = self._tree
        counts = self._counts
        reach = np.zeros(len(t.kind))
        for weight, p in _as_mixture(profile):
            reach += weight * self._reach(self._edge_probs(p, counts))
        out = []
        leaf = self._leaves(counts)
        for n in np.flatnonzero(leaf & (t.kind == _UNKNOWN) & (reach > 0)):
            out.append(t.history(int(n)))
        for n in np.flatnonzero((t.kind == _CHANCE) & (reach > 0)):
            for o in t.legal[n]:
                c = t.children.get((int(n), o))
                if c is None or counts.count[c] <= 0:
                    out.append(t.history(int(n)) + (o,))
        return sorted(out, key=lambda h: (len(h), h))[:limit]

    # ------------------------------------------------------------------ as a game
    def model_game(self, kind="mean", penalty=None, *, player: int | None = None, delta: float = 0.05,
                   uncertainty: float = 0.0) -> SequentialGame:
        """The model as a :class:`games.SequentialGame` for exact machinery.

        Parameters
        ----------
        kind : "mean", "pessimistic", int, "lower" or "upper"
            ``"mean"``: the count-based model, unknown leaves pay the observed
            mean at their decision. ``"pessimistic"``: the count-based model,
            unknown leaves pay the actor ``penalty`` (default ``min_utility``)
            and the others the rest of a constant sum (else their mean). An int:
            that bootstrap member (``"mean"`` leaves, or pessimistic ones when
            ``penalty`` is given). ``"lower"`` / ``"upper"``: ``player``'s payoffs
            are the count interval's ends (its widths folded into the leaves),
            the others' are the ``"mean"`` model's; a best response of
            ``player`` in the ``"upper"`` game is what :meth:`best_response`
            with ``bound="upper"`` computes.
        uncertainty : float
            MOPO-style: every player's leaf payoff minus ``uncertainty`` times the
            leaf's accumulated count width (at confidence ``delta``); 0 for none.

        Returns
        -------
        games.SequentialGame
            States are node ids; information-state strings are the dataset's
            (asked only of the acting player); chance outcomes are the observed
            ones with their frequencies; unknown leaves are terminal. Use it as
            ``PSRO(model.model_game(), oracle="exact")`` or through its
            ``to_pyspiel()`` game (it is not registered with OpenSpiel).

        Examples
        --------
        >>> import pyspiel
        >>> from games.datasets import collect
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> model = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 1000, seed=0), game=game)
        >>> g = model.model_game().to_pyspiel()
        >>> uniform = pyspiel.UniformRandomPolicy(g)
        >>> v = pyspiel.expected_returns(g.new_initial_state(), uniform, -1, True)
        >>> bool(np.allclose(v, model.expected_payoffs(None)))
        True
        """
        uncertainty = check_real(uncertainty, "uncertainty")
        delta = check_real(delta, "delta", minimum=0.0, maximum=1.0, strict=True)
        if kind in ("lower", "upper"):
            player = check_int(player, "player", minimum=0, maximum=self.num_players - 1)
            counts = self._counts
            values = self._leaf_values(counts, "mean")
            values[:, player] = self._leaf_values(counts, kind, player, delta=delta)[:, player]
        elif kind in ("mean", "pessimistic"):
            counts = self._counts
            values = self._leaf_values(counts, kind, penalty=penalty)
        else:
            counts = self._counts_of(kind)
            values = self._leaf_values(counts, "mean" if penalty is None else "pessimistic", penalty=penalty)
        leaf = ~np.isnan(values[:, 0])
        if uncertainty:
            values[leaf] -= uncertainty * self._widths(counts, delta)[leaf, None]
        return model_game_class(self, counts, values, kind)()


def _replace(profile, player: int, policy, num_players: int) -> list:
    """``profile`` (``None``: all uniform) with ``player``'s policy replaced."""
    out = [None] * num_players if profile is None else list(profile)
    out[player] = policy
    return out


def _as_mixture(opponents) -> list[tuple[float, object]]:
    """A profile or ``[(weight, profile), ...]`` as a normalised mixture."""
    if (isinstance(opponents, (list, tuple)) and opponents
            and all(isinstance(e, tuple) and len(e) == 2 and isinstance(e[0], (int, float, np.floating))
                    for e in opponents)):
        weights = np.array([float(w) for w, _ in opponents])
        if not np.isfinite(weights).all() or (weights < 0).any() or weights.sum() <= 0:
            raise ValueError(f"mixture weights must be finite, non-negative and not all zero; got {weights.tolist()}.")
        weights = weights / weights.sum()
        return [(float(w), p) for w, (_, p) in zip(weights, opponents) if w > 0]
    return [(1.0, opponents)]


def fit_model(dataset: pd.DataFrame, members: int = 5, seed: int = 0, game=None) -> GameModel:
    """Fit the tabular game model and its bootstrap ensemble to a trajectory table.

    Parameters
    ----------
    dataset : pandas.DataFrame, str or pathlib.Path
        A trajectory table (validated here; see :mod:`games.trajectories`), or
        the path of a ``.csv`` / ``.parquet`` file of one.
    members : int
        Bootstrap members (resamples of the episodes with replacement), >= 0.
    seed : int
        Seeds the resampling.
    game : str or pyspiel.Game, optional
        Only its declarations are read: ``num_distinct_actions``, the utility
        range and the utility type. Without it they come from the data (the
        largest action + 1, the range of the observed returns, whether every
        episode's returns have the same sum).

    Returns
    -------
    GameModel

    Examples
    --------
    >>> import pyspiel
    >>> from games.datasets import collect
    >>> game = pyspiel.load_game("kuhn_poker")
    >>> model = fit_model(collect(game, pyspiel.UniformRandomPolicy(game), 100, seed=0), members=3, game=game)
    >>> model.members, model.num_actions, (model.min_utility, model.max_utility), model.constant_sum
    (3, 2, (-2.0, 2.0), 0.0)
    """
    members = check_int(members, "members", minimum=0)
    seed = check_seed(seed, "seed")
    if isinstance(dataset, (str, Path)):
        dataset = load_trajectories(dataset)
    eps = parse_episodes(dataset)
    num_players = len(eps[0].returns)
    tree = EmpiricalTree(eps, num_players)
    returns = tree.returns
    if game is not None:
        from games.openspiel_games import load

        game = game.to_pyspiel() if isinstance(game, SequentialGame) else load(game)
        if game.num_players() != num_players:
            raise ValueError(
                f"game has {game.num_players()} players but the dataset's rewards have {num_players} entries."
            )
        num_actions = game.num_distinct_actions()
        lo, hi = game.min_utility(), game.max_utility()
        utility = game.get_type().utility.name
        constant = {"ZERO_SUM": 0.0}.get(utility)
        if utility == "CONSTANT_SUM":
            constant = float(game.utility_sum())
    else:
        acts = [a for n in np.flatnonzero(tree.kind == _DECISION) for a in tree.legal[n]]
        num_actions = max(acts) + 1 if acts else 1
        lo, hi = float(returns.min()), float(returns.max())
        sums = returns.sum(axis=1)
        constant = float(sums[0]) if np.allclose(sums, sums[0], atol=1e-9) else None
    if lo > returns.min() + 1e-9 or hi < returns.max() - 1e-9:
        raise ValueError(
            f"the dataset's returns span [{returns.min()}, {returns.max()}], outside the game's utility range "
            f"[{lo}, {hi}]; is the dataset from this game?"
        )
    # each member keeps per node a count, a mean return per player and a flag, and draws one weight per episode
    check_memory(members * (len(tree.kind) * (9 + 8 * num_players) + 16 * len(eps)),
                 f"members={members} bootstrap members of a model of {len(tree.kind)} nodes",
                 "Use fewer members (5 to 20 is the usual range).")
    counts = node_counts(tree, np.ones(len(eps)))
    rng = np.random.default_rng(seed)
    member_counts = [node_counts(tree, rng.multinomial(len(eps), np.full(len(eps), 1.0 / len(eps))).astype(np.float64))
                     for _ in range(members)]
    return GameModel(tree, counts, member_counts, num_actions=num_actions, min_utility=lo, max_utility=hi,
                     constant_sum=constant)
