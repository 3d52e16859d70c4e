"""Extensive-form correlation gaps (EFCE, EFCCE) of a distribution over joint policies, in the sequence form.

A JPSRO meta-strategy is a distribution ``mu`` over joint profiles of the
populations' policies: a *correlation device*. A mediator draws a joint
profile ``k`` from ``mu`` and recommends to each player, at each of its
information states it reaches, the action its policy ``pi_p^k`` plays there
(drawn from ``pi_p^k`` when it is mixed). The gaps measure how much a player
gains by deviating under three deviation models (von Stengel & Forges 2008;
Farina, Bianchi & Sandholm 2020; OpenSpiel's ``corr_dist``):

* **EFCE**: at each information state the player sees the recommendation and
  then decides to follow it or not; once it deviates it gets no more
  recommendations (causal deviations).
* **EFCCE**: the same, but the player decides to follow *before* seeing the
  recommendation at that information state.
* **NFCCE** (normal-form coarse): the player decides at the root, seeing
  nothing; this is JPSRO's CCE gap in the full game (``pyspiel.cce_dist``).

Each gap is ``sum_p (V_p - v_p)``, where ``v_p`` is the player's value when all
follow and ``V_p`` its value under the best deviation plan. The sets of
deviations grow along NFCCE <= EFCCE <= EFCE <= NFCE (the normal-form CE gap,
``pyspiel.ce_dist``, where a player is told its whole policy up front), so the
gaps do too.

How ``V_p`` is computed (player ``p``, everything exact):

* ``R[k, z]`` is ``mu(k)`` times chance times the other players' reach of
  terminal ``z`` under profile ``k``, and ``X[k, s]`` is ``p``'s realization
  plan of sequence ``s`` under ``pi_p^k``. ``T[s, z] = sum_k X[k, s] R[k, z]``
  is the weight of terminal ``z`` below a trigger at sequence ``s``: what the
  player knows after following up to, and including, the recommendation ``s``.
* One backward induction per trigger row ``s`` (all rows at once) gives the
  value of the best *uninformed* continuation below each information state:
  ``D_efce(I, a) = max_b Q_(I,a)[(I, b)]`` and ``D_efcce(I) = max_b Q_parent(I)[(I, b)]``.
* A second pass up the player's sequence tree takes, at each trigger, the
  better of deviating (``D``) and following (the direct terminals of the
  sequence plus the values of the information states after it).

Cost: per player, a ``(num_sequences, num_terminals)`` product and a backward
induction over ``num_sequences`` columns, done in row chunks; fine for the
games JPSRO runs exactly (Kuhn, Leduc, Sheriff, trade_comm).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from psro.oracles.exact import opponents_reach
from psro.sequence_form.game_tree import GameTree

__all__ = ["ExtensiveFormGaps", "extensive_form_gaps", "meta_strategy_extensive_form_gaps", "history_gaps"]

#: Largest ``rows * columns`` block of trigger weights held at once.
_BLOCK = 4_000_000


@dataclass(frozen=True)
class ExtensiveFormGaps:
    """The deviation gaps of a correlation device under three deviation models.

    Attributes
    ----------
    efce, efcce, nfcce : float
        Sums over players of the per-player gains below.
    efce_per_player, efcce_per_player, nfcce_per_player : tuple of float
        Each player's best gain from deviating (>= 0).
    values : tuple of float
        Each player's expected payoff when everyone follows the device.
    """

    efce: float
    efcce: float
    nfcce: float
    efce_per_player: tuple
    efcce_per_player: tuple
    nfcce_per_player: tuple
    values: tuple


def _player_gaps(tree: GameTree, player: int, plans: Sequence, profiles: np.ndarray, weights: np.ndarray) -> tuple:
    info = tree.infostates[player]
    num_i, num_a, num_s = info.num_infostates, info.num_actions, info.num_sequences
    seq = tree.terminal_sequence[player]
    r = opponents_reach(tree, player, plans, profiles) * (weights[:, None] * tree.terminal_chance[None, :])
    r *= tree.terminal_returns[:, player][None, :]          # R[k, z] u(z)
    x = np.asarray(plans[player], dtype=np.float64)[profiles[:, player]]   # X[k, s]
    direct = np.bincount(seq, weights=(x[:, seq] * r).sum(axis=0), minlength=num_s)
    value = float(direct.sum())
    # Backward induction with one column per trigger row s (weights T[s, z] u(z)), in chunks of rows.
    import scipy.sparse as sp  # (here: importing the loop should not cost scipy.sparse)

    onehot = sp.csr_matrix((np.ones(seq.size), (seq, np.arange(seq.size))), shape=(num_s, seq.size))
    legal = info.legal_mask
    best_below = np.empty((num_i, num_s))   # best_below[I, s]: max_b of the uninformed value of (I, b) for trigger s
    nfcce_value = 0.0
    chunk = max(1, _BLOCK // max(tree.num_terminals, num_s))
    for start in range(0, num_s, chunk):
        rows = np.arange(start, min(num_s, start + chunk))
        cont = np.asarray(onehot @ (x[:, rows].T @ r).T)     # (num_s, C): direct terminals of every sequence
        for level in reversed(info.levels):
            q = cont[:-1].reshape(num_i, num_a, rows.size)[level]
            q = np.where(legal[level][:, :, None], q, -np.inf).max(axis=1)   # (L, C)
            best_below[level[:, None], rows[None, :]] = q
            np.add.at(cont, info.parent[level], q)
        if rows[-1] == info.empty_sequence:   # the empty sequence is the last row: a best response at the root
            nfcce_value = float(cont[-1, -1])
    flat_parent = info.parent
    # EFCE: at trigger (I, a) take the better of deviating and following.
    follow = direct.copy()
    for level in reversed(info.levels):
        seqs = (level[:, None] * num_a + np.arange(num_a)[None, :])   # (L, A)
        dev = best_below[level[:, None], seqs]
        v = np.where(legal[level], np.maximum(dev, follow[seqs]), 0.0)
        np.add.at(follow, flat_parent[level], v.sum(axis=1))
    efce_root = float(follow[-1])
    # EFCCE: at information state I decide before the recommendation (trigger at I's parent sequence).
    follow = direct.copy()
    for level in reversed(info.levels):
        seqs = (level[:, None] * num_a + np.arange(num_a)[None, :])
        fol = np.where(legal[level], follow[seqs], 0.0).sum(axis=1)
        dev = best_below[level, flat_parent[level]]
        np.add.at(follow, flat_parent[level], np.maximum(dev, fol))
    efcce_root = float(follow[-1])
    return (max(0.0, efce_root - value), max(0.0, efcce_root - value), max(0.0, nfcce_value - value), value)


def extensive_form_gaps(tree: GameTree, plans: Sequence, profiles, weights) -> ExtensiveFormGaps:
    """EFCE, EFCCE and NFCCE gaps of a distribution over joint profiles of tabular policies.

    Parameters
    ----------
    tree : GameTree
    plans : sequence of ndarray
        Player q's realization plans ``(k_q, num_sequences_q)`` (a population's ``plans``).
    profiles : array_like of int, shape (K, num_players)
        The joint profiles the device recommends.
    weights : array_like, shape (K,)
        Their probabilities (non-negative, summing to one).

    Returns
    -------
    ExtensiveFormGaps

    Examples
    --------
    Kuhn poker with every player's uniform policy: one joint profile, so every
    gap is its NashConv (0.5 - 0.125 + 0.416667 + 0.125).

    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import realization_plans, uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> plans = [realization_plans(uniform_policy(i)[None], i) for i in tree.infostates]
    >>> g = extensive_form_gaps(tree, plans, [[0, 0]], [1.0])
    >>> round(g.efce, 6), round(g.efcce, 6), round(g.nfcce, 6)
    (0.916667, 0.916667, 0.916667)
    """
    profiles = np.asarray(profiles, dtype=np.intp)
    weights = np.asarray(weights, dtype=np.float64)
    n = tree.num_players
    if len(plans) != n:
        raise ValueError(f"plans needs one (k_q, num_sequences_q) array per player ({n}); got {len(plans)}.")
    if profiles.ndim != 2 or profiles.shape[1] != n or weights.shape != (profiles.shape[0],):
        raise ValueError(f"profiles must have shape (K, {n}) and weights shape (K,); got {profiles.shape} and "
                         f"{weights.shape}.")
    if profiles.shape[0] == 0:
        raise ValueError("profiles is empty; the device needs at least one joint profile.")
    for q in range(n):
        k_q = np.asarray(plans[q]).shape[0]
        if profiles[:, q].min() < 0 or profiles[:, q].max() >= k_q:
            raise ValueError(f"profiles[:, {q}] must index player {q}'s {k_q} plans.")
    if not np.all(np.isfinite(weights)) or weights.min() < 0 or abs(weights.sum() - 1.0) > 1e-6:
        raise ValueError("weights must be a probability vector (finite, non-negative, summing to one).")
    per = [_player_gaps(tree, p, plans, profiles, weights / weights.sum()) for p in range(n)]
    efce, efcce, nfcce, values = (tuple(float(t[i]) for t in per) for i in range(4))
    return ExtensiveFormGaps(efce=float(sum(efce)), efcce=float(sum(efcce)), nfcce=float(sum(nfcce)),
                             efce_per_player=efce, efcce_per_player=efcce, nfcce_per_player=nfcce, values=values)


def meta_strategy_extensive_form_gaps(tree: GameTree, populations, joint, support_tol: float = 0.0
                                      ) -> ExtensiveFormGaps:
    """The EFCE / EFCCE / NFCCE gaps of a JPSRO joint meta-strategy over the populations.

    Parameters
    ----------
    tree : GameTree
    populations : sequence of Population
        One per player (their ``plans`` are used).
    joint : array_like, shape (k_1, ..., k_n) or solvers.Equilibrium
        The joint meta-strategy (``Equilibrium.joint``).
    support_tol : float
        Profiles with probability at most this are left out (the rest renormalised).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> from psro.policies.population import Population, Provenance
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> round(meta_strategy_extensive_form_gaps(tree, pops, [[1.0]]).efce, 6)
    0.916667
    """
    joint = np.asarray(getattr(joint, "joint", joint), dtype=np.float64)
    shape = tuple(len(pop) for pop in populations)
    if joint.shape != shape:
        raise ValueError(f"joint has shape {joint.shape}; the populations have sizes {shape}.")
    profiles = np.argwhere(joint > support_tol)
    if profiles.shape[0] == 0:
        raise ValueError(f"joint has no profile with probability above support_tol={support_tol}.")
    weights = joint[tuple(profiles.T)]
    return extensive_form_gaps(tree, [pop.plans for pop in populations], profiles, weights / weights.sum())


def history_gaps(tree: GameTree, populations, joint) -> dict:
    """The ``efce_gap`` and ``efcce_gap`` columns of a PSRO history row: the gaps of the JPSRO eval meta-strategy
    ``joint`` (:func:`meta_strategy_extensive_form_gaps`), NaN when ``joint`` is None (PSRO, or nothing solved).

    Examples
    --------
    >>> history_gaps(None, [], None)
    {'efce_gap': nan, 'efcce_gap': nan}
    """
    if joint is None:
        return {"efce_gap": float("nan"), "efcce_gap": float("nan")}
    gaps = meta_strategy_extensive_form_gaps(tree, populations, joint)
    return {"efce_gap": gaps.efce, "efcce_gap": gaps.efcce}
