"""alpha-Rank: ranking strategies by the stationary distribution of an evolutionary chain.

Omidshafiei et al. (2019), "alpha-Rank: Multi-Agent Evaluation by Evolution",
Scientific Reports 9, 9937. Every player is a population of ``m`` agents that
all play one pure strategy; rarely, a mutant strategy appears in one population
and takes it over with a fixation probability that grows with its fitness
advantage and the selection intensity ``alpha``. The stationary distribution
``pi`` of this Markov chain over pure profiles is the ranking.

Which chain is used (``single_population=None``)
------------------------------------------------
- one square payoff table (a 2-D array, or a list holding one) -> one population
  playing a symmetric game against itself, states = strategies;
- a two-player :class:`games.NormalFormGame` (or ``EmpiricalGame``) with square,
  symmetric payoffs (``payoffs[1] == payoffs[0].T``) -> one population;
- anything else (a list of ``n`` tables of shape ``(k_1, ..., k_n)`` as OpenSpiel
  takes them, a payoff array ``(n, k_1, ..., k_n)``, a non-symmetric game) ->
  ``n`` populations, states = pure profiles in C order.
Pass ``single_population=False`` to rank a symmetric game with one population
per player, or ``True`` to force one population (the game must be symmetric).

Selection models (``selection``)
--------------------------------
- ``"local"`` (OpenSpiel's default ``use_local_selection_model=True``): a
  mutant's fitness is its payoff against the resident strategy and the
  resident's its payoff against the mutant, so
  ``rho = (1 - e^-u) / (1 - e^-(m u))`` with ``u = alpha (A[r, s] - A[s, r])``.
- ``"population"`` (alias ``"fermi"``; OpenSpiel's
  ``use_local_selection_model=False``): the finite-population Fermi process of
  the paper. With ``l`` mutants among ``m``, each agent's fitness is its mean
  payoff against the other ``m - 1`` agents, so the fitness gap depends on
  ``l`` and ``rho = 1 / sum_{l=0}^{m-1} prod_{p=1}^{l} exp(-alpha (f_r(p) - f_s(m-p)))``.
  For constant-sum games it reduces to the closed form with
  ``u = alpha m / (m - 1) (A[r, s] - c / 2)``.
The two differ only for a single population; in a multi-population chain the
mutant's fitness is its population's payoff at the profile in both models.

Infinite alpha (``alpha=np.inf`` or ``use_inf_alpha=True``)
----------------------------------------------------------
A move to a strictly better strategy fixates with ``1 - eps``, a worse one with
``eps`` and a tie with ``1/2`` (``eps = inf_alpha_eps``), as in the paper's
perturbed infinite-alpha chain and OpenSpiel's ``use_inf_alpha``. "Better" is
the local comparison ``A[r, s] > A[s, r]`` for a single population (in both
selection models, as in OpenSpiel) and the moving population's payoff for
several. Payoff differences within ``1e-12`` times the largest payoff count as
ties (OpenSpiel uses ``np.isclose``, i.e. a relative tolerance of 1e-5).

Several recurrent classes
-------------------------
At large ``alpha`` some fixation probabilities underflow to exactly zero (and
with ``inf_alpha_eps=0`` some are zero by definition), so the floating-point
chain can split into several closed classes; OpenSpiel then raises
``ValueError`` (its eigen-solver also does so for chains that are merely
stiff). Here the classes are found (strongly connected components of the
positive-transition graph that no positive transition leaves) and reported in
``result.recurrent_classes``, and ``result.info["stationary"]`` says what
``pi`` is:

- ``"unique"``: one recurrent class; ``pi`` is the chain's stationary
  distribution (zero on transient profiles).
- ``"aggregated"`` (finite alpha): the underflowed rates are still known
  exactly as logarithms. Each class gets its own stationary distribution, and
  the classes are weighted by the stationary distribution of the chain between
  classes, whose rates (exit flux times absorption probability) are computed
  and solved in the log domain. This is the true stationary distribution up to
  terms of the relative size of the underflowed rates.
- ``"perturbed"`` (infinite alpha with ``inf_alpha_eps=0``, or where the
  aggregation does not apply: a class or the transient set above 3000
  profiles, or a chain held by blocks): ``pi`` is the stationary distribution
  of the chain whose fixation probabilities are ``(1 - perturbation) rho +
  perturbation / m``, a small uniform mutation that makes the chain
  irreducible, as the paper does for infinite alpha;
  ``result.transition_matrix`` is that perturbed chain.
- ``"unconverged"``: no solver brought the residual below 1e-9 (a warning is
  logged); ``pi`` is the best answer found.

Every answer is checked: ``info["residual"]`` is ``||pi Q||_1 / max(out)``
for the chain's generator ``Q`` and exit rates ``out`` (an upper bound of
``||pi C - pi||_1`` for ``result.transition_matrix`` ``C``), recomputed from
the rates, and ``info["converged"]`` says whether it is at most 1e-9. Where the
dense LU solve does not reach that, the Grassmann-Taksar-Heyman elimination
(accurate entry by entry) answers instead; see :mod:`ranking.alpha_rank.alpharank_stationary`.

Large chains
------------
A multi-population chain of more than ``BLOCK_LIMIT`` (5000) profiles is
never listed move by move (a 500 x 500 game has 250,000 profiles and 2.5e8
moves). Each population's payoff differences along a line (the others' profile
fixed) form a ``k_p x k_p`` block of rates
(:func:`ranking.alpha_rank.alpharank_chain.line_rates`); matrix-free GMRES on these
blocks finds ``pi`` to the residual tolerance, with a ``tqdm.auto`` progress
bar (``progress=``). The recurrent classes come from a skeleton of the moves
between payoff-neighbours on each line, which reaches the same profiles.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import scipy.sparse as sp

from games.normal_form import NormalFormGame
from games.validation import check_real
from ranking.alpha_rank.alpharank_chain import (
    UNDERFLOW,
    ChainMoves,
    PayoffTables,
    line_rates,
    lines,
    log_fixation,
    multi_population_moves,
    single_population_fixation,
)
from ranking.alpha_rank.alpharank_chain import chain_moves as _chain
from ranking.alpha_rank.alpharank_stationary import (
    RESIDUAL_TOL,
    aggregate_classes,
    recurrent_classes,
    solve_blocks,
    solve_dense,
    solve_sparse,
)

__all__ = ["AlphaRankResult", "ChainMoves", "alpharank", "payoff_tables", "suggest_alpha", "sweep"]

logger = logging.getLogger(__name__)

_SELECTIONS = {"local": "local", "population": "population", "fermi": "population"}


# --------------------------------------------------------------------------- input
def _check_finite(arr: np.ndarray, argname: str) -> None:
    if not np.all(np.isfinite(arr)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(
            f"{argname} must be finite; found {arr[bad]} at index {bad}. Replace NaN/inf payoffs "
            "(e.g. estimate the missing profiles, or use np.nan_to_num) before ranking."
        )


def _is_symmetric_pair(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.ndim != 2 or a.shape[0] != a.shape[1]:
        return False
    scale = max(1.0, float(np.abs(a).max(initial=0.0)))
    return bool(np.allclose(b, a.T, rtol=0.0, atol=1e-12 * scale))


def payoff_tables(game_or_payoff_tables, single_population: bool | None = None) -> PayoffTables:
    """Normalise the input of :func:`alpharank` (see the module docstring for the rule).

    Parameters
    ----------
    game_or_payoff_tables : NormalFormGame, EmpiricalGame, ndarray or list of ndarray
        A game; one square table (single population); or one table per
        population, each of shape ``(k_1, ..., k_n)`` (OpenSpiel's format).
    single_population : bool, optional
        ``None`` infers it; ``True`` needs a symmetric two-player game or one
        square table; ``False`` makes one population per player.

    Examples
    --------
    >>> from games import catalog
    >>> payoff_tables(catalog.rock_paper_scissors()).single_population
    True
    >>> payoff_tables(catalog.rock_paper_scissors(), single_population=False).shape
    (3, 3)
    """
    x = game_or_payoff_tables
    if single_population not in (None, True, False):
        raise TypeError(f"single_population must be None, True or False; got {single_population!r}.")
    if not isinstance(x, NormalFormGame) and callable(getattr(x, "mean_game", None)):
        x = x.mean_game()
    if isinstance(x, NormalFormGame):
        tables = np.asarray(x.payoffs, dtype=np.float64)
        pop_names, strat_names = tuple(x.player_names), tuple(tuple(s) for s in x.strategy_names)
        symmetric = x.num_players == 2 and _is_symmetric_pair(tables[0], tables[1])
        if single_population is None:
            single_population = symmetric
        if single_population:
            if not symmetric:
                raise ValueError(
                    "single_population=True needs a symmetric two-player game (payoffs[1] == "
                    f"payoffs[0].T); this game has {x.num_players} players and shape {x.shape}"
                    f"{'' if x.num_players != 2 else ' and is not symmetric'}. "
                    "Pass single_population=False to use one population per player."
                )
            return PayoffTables(tables[:1].copy(), True, ("population",), strat_names[:1])
        return PayoffTables(tables, False, pop_names, strat_names)

    if isinstance(x, np.ndarray) and x.ndim == 2:
        x = [x]
    if not isinstance(x, (list, tuple, np.ndarray)):
        raise TypeError(
            "game_or_payoff_tables must be a games.NormalFormGame, an EmpiricalGame, one square "
            f"payoff matrix, or a list of per-population payoff tables; got {type(x).__name__}."
        )
    try:
        arrs = [np.asarray(t, dtype=np.float64) for t in x]
    except (TypeError, ValueError):
        raise ValueError(
            "game_or_payoff_tables must hold numeric payoff tables; a table is ragged or non-numeric."
        ) from None
    if len(arrs) == 0:
        raise ValueError("game_or_payoff_tables is empty; give one payoff table per population.")
    shapes = {a.shape for a in arrs}
    if len(shapes) != 1:
        raise ValueError(
            f"the payoff tables have different shapes {sorted(shapes)}; every population's table "
            "must have shape (k_1, ..., k_n)."
        )
    for i, a in enumerate(arrs):
        _check_finite(a, f"payoff table {i}")
    shape = arrs[0].shape
    if len(arrs) == 1 and single_population is not False:
        a = arrs[0]
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise ValueError(
                f"a single-population payoff table must be square (k x k), table[r, s] = payoff "
                f"of r against s; got shape {a.shape}. For several populations pass one table "
                "per population."
            )
        names = tuple(f"s{i}" for i in range(a.shape[0]))
        return PayoffTables(a[None].copy(), True, ("population",), (names,))
    if single_population:
        raise ValueError(
            f"single_population=True needs one square payoff table; got {len(arrs)} tables. "
            "Pass only the first population's table, or single_population=False."
        )
    n = len(arrs)
    if len(shape) != n:
        raise ValueError(
            f"got {n} payoff tables of shape {shape}: with {n} populations each table needs {n} "
            "axes, one per population (OpenSpiel's format). For one population pass one square table."
        )
    strat_names = tuple(tuple(f"s{i}" for i in range(k)) for k in shape)
    return PayoffTables(np.stack(arrs), False, tuple(f"p{i}" for i in range(n)), strat_names)


# -------------------------------------------------------------------------- result
@dataclass(frozen=True, eq=False)
class AlphaRankResult:
    """The outcome of :func:`alpharank`.

    Attributes
    ----------
    pi : ndarray, shape (num_profiles,)
        Stationary distribution over pure profiles in C order (the last
        population's strategy varies fastest), comparable entry by entry with
        OpenSpiel's ``alpharank.compute(...)[2]``. Single population: over strategies.
    shape : tuple of int
        Strategies per population (``(k,)`` for a single population).
    single_population : bool
    alpha : float
        Selection intensity (``inf`` in the infinite-alpha mode).
    population_size : int
    selection : str
        ``"local"`` or ``"population"``.
    population_names, strategy_names : tuple
    moves : ChainMoves
        Every move of the chain with its fixation probability and rate; see
        also :attr:`fixation_probabilities` and :attr:`transition_matrix`.
        Built on first use for chains solved by blocks (``prod(k) *
        sum(k_p - 1)`` moves: large).
    neutral_fixation : float
        ``1 / population_size``, the fixation probability of a neutral mutant.
    recurrent_classes : tuple of ndarray
        Profile indices of each closed class of the unperturbed chain (one class
        when the stationary distribution is unique).
    info : dict
        ``stationary`` ("unique", "aggregated" or "perturbed"; see the module
        docstring; "unconverged" where no solver reached the residual
        tolerance), ``num_recurrent_classes``, ``perturbation`` (if used),
        ``solver``, ``residual`` (``||pi Q||_1 / max(out)``, an upper bound of
        ``||pi C - pi||_1`` for :attr:`transition_matrix` ``C``, recomputed from
        the chain's rates), ``converged`` (``residual <= 1e-9``), ``balance``
        (the largest relative imbalance of a profile's inflow and outflow,
        over profiles with mass above ``1e-12 max(pi)``) and ``time``.

    Examples
    --------
    >>> from games import catalog
    >>> r = alpharank(catalog.rock_paper_scissors(), alpha=10.0)
    >>> r.pi.round(4).tolist()
    [0.3333, 0.3333, 0.3333]
    >>> r.ranking.columns.tolist()
    ['population', 'strategy', 'mass', 'rank']
    """

    pi: np.ndarray
    shape: tuple
    single_population: bool
    alpha: float
    population_size: int
    selection: str
    population_names: tuple
    strategy_names: tuple
    _moves: ChainMoves | None = field(repr=False)
    neutral_fixation: float
    recurrent_classes: tuple
    info: dict = field(default_factory=dict)
    _build_moves: object = field(default=None, repr=False)

    @cached_property
    def moves(self) -> ChainMoves:
        """Every move of the chain with its fixation probability and rate (see the class docstring)."""
        return self._moves if self._moves is not None else self._build_moves()

    @cached_property
    def fixation_probabilities(self) -> sp.csr_array:
        """``rho[s, t]`` for each move ``s -> t``, sparse (num_profiles x num_profiles).

        In the infinite-alpha mode: the limits 1 (better), 0 (worse) and, for
        ties, ``neutral_fixation``.
        """
        return self.moves.sparse(self.moves.fixation)

    @cached_property
    def transition_matrix(self) -> sp.csr_array:
        """The row-stochastic chain ``C`` whose stationary distribution is ``pi``, sparse.

        ``C[s, t] = eta * rate[s -> t]`` with ``eta = 1 / sum_p (k_p - 1)`` and the
        self-loop on the diagonal (the perturbed chain where ``info["stationary"]
        == "perturbed"``).
        """
        mv = self.moves
        c = mv.sparse(mv.eta * mv.rate)
        stay = 1.0 - np.asarray(c.sum(axis=1)).ravel()
        return (c + sp.diags_array(stay)).tocsr()

    @property
    def num_populations(self) -> int:
        return len(self.shape)

    @property
    def profiles(self) -> list:
        """Label of each profile in ``pi``'s order: a strategy name, or a tuple of names."""
        if self.single_population:
            return list(self.strategy_names[0])
        idx = np.array(np.unravel_index(np.arange(len(self.pi)), self.shape)).T
        return [tuple(self.strategy_names[p][i] for p, i in enumerate(row)) for row in idx]

    def marginals(self) -> list:
        """Mass of each strategy, marginalised per population (a list of vectors)."""
        joint = self.pi.reshape(self.shape)
        axes = range(joint.ndim)
        return [joint.sum(axis=tuple(a for a in axes if a != p)) for p in axes]

    @cached_property
    def ranking(self) -> pd.DataFrame:
        """Per-population strategy masses: columns population, strategy, mass, rank (1 = best).

        Sorted by mass within each population; masses equal to 12 decimals share a rank.
        """
        frames = []
        for p, mass in enumerate(self.marginals()):
            df = pd.DataFrame({
                "population": self.population_names[p],
                "strategy": list(self.strategy_names[p]),
                "mass": mass,
            })
            df["rank"] = df["mass"].round(12).rank(ascending=False, method="min").astype(int)
            frames.append(df.sort_values("mass", ascending=False, kind="stable"))
        return pd.concat(frames, ignore_index=True)

    @cached_property
    def profile_ranking(self) -> pd.DataFrame:
        """Profiles sorted by mass: one column per population, then ``pi`` and ``rank``.

        Masses equal to 12 decimals share a rank.
        """
        idx = np.array(np.unravel_index(np.arange(len(self.pi)), self.shape)).T
        df = pd.DataFrame({
            name: np.asarray(self.strategy_names[p], dtype=object)[idx[:, p]]
            for p, name in enumerate(self.population_names)
        })
        df["pi"] = self.pi
        df["rank"] = df["pi"].round(12).rank(ascending=False, method="min").astype(int)
        return df.sort_values("pi", ascending=False, kind="stable").reset_index(drop=True)

    @cached_property
    def response_graph(self):
        """The response graph as a ``networkx.DiGraph``.

        Nodes are profile labels (see :attr:`profiles`) with attributes ``index``
        and ``pi``; an edge ``s -> t`` is a move whose fixation probability
        exceeds the neutral one, with attribute ``weight = rho[s, t]``.
        """
        import networkx as nx

        labels = self.profiles
        g = nx.DiGraph()
        g.add_nodes_from((lab, {"index": i, "pi": float(p)}) for i, (lab, p) in enumerate(zip(labels, self.pi)))
        rho = self.fixation_probabilities.tocoo()
        keep = rho.data > self.neutral_fixation
        g.add_weighted_edges_from(
            (labels[s], labels[t], float(w)) for s, t, w in zip(rho.row[keep], rho.col[keep], rho.data[keep])
        )
        return g

    def __repr__(self) -> str:
        top = self.profile_ranking.head(3)
        best = ", ".join(f"{tuple(row[:-2]) if len(row) > 3 else row.iloc[0]}: {row['pi']:.3g}"
                         for _, row in top.iterrows())
        return (f"AlphaRankResult(shape={self.shape}, alpha={self.alpha:g}, m={self.population_size}, "
                f"selection={self.selection!r}, top=[{best}])")


# ------------------------------------------------------------------ validation
def _check_params(alpha, population_size, selection, inf_alpha_eps, perturbation, solver):
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise TypeError(f"alpha must be a number (the selection intensity); got {alpha!r}.") from None
    if math.isnan(alpha) or alpha < 0:
        raise ValueError(f"alpha must be >= 0 (np.inf for the infinite-alpha limit); got {alpha}.")
    if not float(check_real(population_size, "population_size")).is_integer() or population_size < 2:
        raise ValueError(
            f"population_size must be an integer >= 2 (e.g. 50; OpenSpiel's default); got {population_size}. "
            "With one agent per population a mutant fixes at once whatever the payoffs, so the ranking "
            "says nothing."
        )
    if selection not in _SELECTIONS:
        raise ValueError(f"selection must be 'local' or 'population' (alias 'fermi'); got {selection!r}.")
    if solver not in ("auto", "dense", "iterative", "direct"):
        raise ValueError(f"solver must be 'auto', 'dense', 'iterative' or 'direct'; got {solver!r}.")
    for name, value in (("inf_alpha_eps", inf_alpha_eps), ("perturbation", perturbation)):
        if not 0.0 <= float(value) <= 0.5:
            raise ValueError(f"{name} must be in [0, 0.5] (a small mutation probability); got {value}.")
    return alpha, int(population_size), _SELECTIONS[selection]


def _classes(moves: ChainMoves) -> tuple:
    """Recurrent classes of the chain with the moves' rates."""
    n = moves.num_profiles
    if n == 1:
        return (np.zeros(1, dtype=np.int64),)
    positive = np.count_nonzero(moves.rate > 0)
    if positive == (n * (n - 1) if moves.dense else moves.rate.size):
        return (np.arange(n),)  # every move possible and the profile graph is connected
    return tuple(recurrent_classes(moves.sparse(moves.rate)))


def _aggregated(tables: PayoffTables, moves: ChainMoves, alpha: float, m: int, selection: str,
                classes) -> np.ndarray | None:
    """pi from the exact log rates when underflow split the chain (see ``aggregate_classes``)."""
    n = tables.num_profiles
    if moves.dense:
        log_rate = single_population_fixation(tables.tables[0], alpha, m, selection, log=True)
        src, dst = np.nonzero(~np.eye(n, dtype=bool))
        return aggregate_classes(n, src, dst, moves.rate[src, dst], log_rate[src, dst], list(classes))
    _, _, gain, _ = multi_population_moves(tables.tables)
    return aggregate_classes(n, moves.source, moves.target, moves.rate, log_fixation(alpha * gain, m),
                             list(classes))


def _residual(moves: ChainMoves, pi: np.ndarray) -> float:
    """``||pi Q||_1 / max(out)`` for the chain with the moves' rates."""
    r = moves.sparse(moves.rate)
    out = np.asarray(r.sum(axis=1)).ravel()
    return float(np.abs(r.T @ pi - pi * out).sum() / max(out.max(initial=0.0), np.finfo(float).tiny))


def _stationary(tables: PayoffTables, moves: ChainMoves, pin, solver: str):
    if moves.dense:
        return solve_dense(moves.rate, pin)
    return solve_sparse(moves.source, moves.target, moves.rate, moves.population, tables.shape, pin,
                        method=solver)


#: Multi-population chains with more profiles than this are held and solved by blocks.
BLOCK_LIMIT = 5000


def _block_classes(tables: PayoffTables, alpha: float, m: int) -> list:
    """The closed classes of the floating-point chain held by blocks, from a sparse skeleton of its moves.

    Within a line, sorted by the moving population's payoff, every climb has a
    positive rate and a descent has one unless it underflows (the rule of
    :func:`ranking.alpha_rank.alpharank_chain.line_rates`), which happens to the longest
    descents first. So the moves between neighbours in that order (each climb,
    and each descent that keeps its rate) reach exactly the profiles that all
    the line's moves reach. These ``<= 2 (k_p - 1)`` moves per line give the
    recurrent classes of the whole chain from a graph of a few edges per profile.
    """
    n, shape = tables.num_profiles, tables.shape
    src, dst = [], []
    for p, k in enumerate(shape):
        if k < 2:
            continue
        u = lines(tables.tables[p], shape, p)
        order = np.argsort(u, axis=-1, kind="stable")
        ids = np.take_along_axis(lines(np.arange(n), shape, p), order, axis=-1)
        drop = np.diff(np.take_along_axis(u, order, axis=-1), axis=-1)  # >= 0
        descends = np.minimum(-alpha * drop, 0.0) * (m - 1) >= -UNDERFLOW
        src += [ids[:, :-1].ravel(), ids[:, 1:][descends]]
        dst += [ids[:, 1:].ravel(), ids[:, :-1][descends]]
    src, dst = np.concatenate(src), np.concatenate(dst)
    return recurrent_classes(sp.csr_array((np.ones(len(src)), (src, dst)), shape=(n, n)))


def _alpharank_blocks(tables: PayoffTables, alpha: float, m: int, selection: str, inf_alpha: bool,
                      eps: float, perturbation: float, progress, start: float) -> AlphaRankResult:
    """alpha-Rank of a large multi-population chain, held by blocks and solved by GMRES."""
    n, shape = tables.num_profiles, tables.shape
    scale = float(np.abs(tables.tables).max(initial=0.0))
    if inf_alpha:  # every move keeps a positive rate unless eps = 0
        classes = [np.arange(n)] if eps > 0.0 else [np.arange(n), np.arange(n)]
    else:
        classes = _block_classes(tables, alpha, m)
    unique = len(classes) == 1
    mix = 0.0 if unique else perturbation
    if not unique and mix == 0.0:
        raise ValueError("the chain has several recurrent classes and perturbation=0, so its stationary "
                         "distribution is not unique; pass perturbation > 0 (e.g. 1e-6).")
    logger.info("alpha-Rank: building the %s chain of %d profiles by blocks (alpha=%g, m=%d)",
                "x".join(map(str, shape)), n, alpha, m)
    from tqdm.auto import tqdm

    with tqdm(total=sum(n for k in shape if k > 1), desc=f"alpha-Rank chain ({n} profiles)", unit="profile",
              unit_scale=True, leave=False, disable=None if progress is None else not progress) as bar:
        blocks = [line_rates(tables.tables, p, alpha, m, inf_alpha=inf_alpha, eps=eps, scale=scale,
                             perturbation=mix, callback=lambda lines_done, k=k: bar.update(lines_done * k))
                  if k > 1 else None for p, k in enumerate(shape)]
    built = time.perf_counter()
    result = solve_blocks(blocks, shape, progress=progress, pin_candidates=classes[0] if unique else None)
    info = {"num_recurrent_classes": len(classes) if not inf_alpha else 1, "solver": result.method,
            "residual": result.residual, "balance": result.balance, "build_time": built - start}
    if unique:
        info["stationary"] = "unique"
    else:
        # The exact aggregation of the closed classes needs every move; the chain held by blocks
        # is perturbed instead (a uniform mutation makes it irreducible), as in the paper.
        info.update(stationary="perturbed", perturbation=mix)
        logger.info("alpha-Rank: the %d-profile chain has %s recurrent classes in floating point "
                    "(alpha=%g); solved it perturbed by %g", n, len(classes) if not inf_alpha else "several",
                    alpha, mix)

    def build_moves():
        moves = _chain(tables, alpha, m, selection, inf_alpha, eps)
        return moves if not mix else moves.with_rate((1.0 - mix) * moves.rate + mix / m)

    return _result(tables, result.pi, alpha, m, selection, None, tuple(classes) if not inf_alpha else
                   (np.arange(n),), info, start, build_moves)


def _result(tables, pi, alpha, m, selection, moves, classes, info, start, build_moves=None) -> AlphaRankResult:
    """Check the residual, log the outcome and assemble the result."""
    info["converged"] = bool(info.get("residual", 0.0) <= RESIDUAL_TOL)
    if not info["converged"]:
        logger.warning("alpha-Rank: the stationary distribution of the %d-profile chain has residual %.1e "
                       "(above %.0e); info['stationary'] = 'unconverged'", tables.num_profiles,
                       info["residual"], RESIDUAL_TOL)
        info["stationary"] = "unconverged"
    info["time"] = time.perf_counter() - start
    return AlphaRankResult(
        pi=pi,
        shape=tables.shape,
        single_population=tables.single_population,
        alpha=alpha,
        population_size=m,
        selection=selection,
        population_names=tables.population_names,
        strategy_names=tables.strategy_names,
        _moves=moves,
        neutral_fixation=1.0 / m,
        recurrent_classes=classes,
        info=info,
        _build_moves=build_moves,
    )


# --------------------------------------------------------------------- public
def alpharank(game_or_payoff_tables, alpha: float = 100.0, population_size: int = 50,
              single_population: bool | None = None, selection: str = "local",
              use_inf_alpha: bool = False, inf_alpha_eps: float = 0.01,
              perturbation: float = 1e-6, solver: str = "auto", progress: bool | None = None) -> AlphaRankResult:
    """Rank the strategies (profiles) of a game with alpha-Rank.

    Parameters
    ----------
    game_or_payoff_tables : NormalFormGame, EmpiricalGame, ndarray or list of ndarray
        The game; see the module docstring for how the chain is inferred.
    alpha : float
        Selection intensity (``>= 0``; ``np.inf`` = ``use_inf_alpha=True``).
        OpenSpiel's default is 100.
    population_size : int
        ``m``, the number of agents per population (OpenSpiel's default 50).
    single_population : bool, optional
        ``None`` infers it from the input.
    selection : {"local", "population", "fermi"}
        Selection model (single population only); see the module docstring.
    use_inf_alpha : bool
        Use the infinite-alpha chain perturbed by ``inf_alpha_eps``.
    inf_alpha_eps : float
        Mass a worse move keeps in the infinite-alpha chain (OpenSpiel's default 0.01).
    perturbation : float
        Uniform mutation mixed into the fixation probabilities when the chain
        has several recurrent classes that the exact aggregation cannot weigh.
    solver : {"auto", "dense", "iterative", "direct"}
        Linear solver for multi-population chains of up to ``BLOCK_LIMIT``
        profiles (single population: dense LU, with GTH elimination where
        LU's residual is above 1e-9). Larger multi-population chains are held
        by blocks and solved by matrix-free GMRES (``"auto"``) whatever this says.
    progress : bool, optional
        A ``tqdm.auto`` progress bar on the solves of large chains; ``None``
        shows it on a terminal only, ``False`` never.

    Returns
    -------
    AlphaRankResult

    Raises
    ------
    ValueError
        For NaN/inf payoffs, a non-square single-population table, ``alpha < 0``,
        ``population_size < 2`` or an unknown ``selection``.

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> r = alpharank(catalog.prisoners_dilemma(), alpha=1.0, population_size=10)
    >>> r.ranking[["strategy", "rank"]].values.tolist()
    [['defect', 1], ['cooperate', 2]]
    >>> r2 = alpharank([np.array([[3.0, 0], [5, 1]]), np.array([[3.0, 5], [0, 1]])], alpha=10.0)
    >>> r2.shape, int(np.argmax(r2.pi))  # two populations; (defect, defect) is profile 3
    ((2, 2), 3)
    """
    start = time.perf_counter()
    alpha, m, selection = _check_params(alpha, population_size, selection, inf_alpha_eps, perturbation,
                                        solver)
    tables = payoff_tables(game_or_payoff_tables, single_population)
    inf_alpha = bool(use_inf_alpha) or math.isinf(alpha)
    n = tables.num_profiles
    if inf_alpha:
        alpha = math.inf
    if not tables.single_population and n > BLOCK_LIMIT:
        return _alpharank_blocks(tables, alpha, m, selection, inf_alpha, float(inf_alpha_eps),
                                 float(perturbation), progress, start)
    moves = _chain(tables, alpha, m, selection, inf_alpha, float(inf_alpha_eps))
    neutral = 1.0 / m
    classes = _classes(moves)
    info = {"num_recurrent_classes": len(classes)}
    if n == 1:
        pi = np.ones(1)
        info.update(stationary="unique", solver="trivial", residual=0.0)
    else:
        pin = classes[0]
        info["stationary"] = "unique"
        if len(classes) > 1:
            if perturbation == 0.0:
                raise ValueError(
                    f"the chain has {len(classes)} recurrent classes and perturbation=0, so its "
                    "stationary distribution is not unique; pass perturbation > 0 (e.g. 1e-6)."
                )
            pi = None if inf_alpha else _aggregated(tables, moves, alpha, m, selection, classes)
            if pi is not None:
                info.update(stationary="aggregated", solver="class-aggregation",
                            residual=_residual(moves, pi))
            else:
                rate = (1.0 - perturbation) * moves.rate + perturbation * neutral
                if moves.dense:
                    np.fill_diagonal(rate, 0.0)
                moves, pin = moves.with_rate(rate), None
                info.update(stationary="perturbed", perturbation=perturbation)
            logger.info("alpha-Rank chain (alpha=%g, m=%d) has %d recurrent classes in floating point; "
                        "stationary distribution: %s", alpha, m, len(classes), info["stationary"])
        if info["stationary"] != "aggregated":
            result = _stationary(tables, moves, pin, solver)
            pi = result.pi
            info.update(solver=result.method, residual=result.residual, balance=result.balance)
    return _result(tables, pi, alpha, m, selection, moves, classes, info, start)


def sweep(game_or_payoff_tables, alphas: Sequence[float] | None = None, **kwargs) -> pd.DataFrame:
    """alpha-Rank's ``pi`` for a range of selection intensities.

    Parameters
    ----------
    game_or_payoff_tables :
        As in :func:`alpharank`.
    alphas : sequence of float, optional
        Defaults to 25 values from 1e-3 to 1e2, log-spaced.
    **kwargs :
        Passed to :func:`alpharank` (``population_size``, ``selection``, ...).

    Returns
    -------
    pandas.DataFrame
        One row per alpha (the index, named ``alpha``), one column per profile
        label, entries ``pi``.

    Examples
    --------
    >>> from games import catalog
    >>> df = sweep(catalog.prisoners_dilemma(), alphas=[0.0, 1.0, 10.0], population_size=10)
    >>> df.columns.tolist(), bool(df.loc[0.0, "cooperate"] == 0.5)
    (['cooperate', 'defect'], True)
    """
    alphas = np.logspace(-3, 2, 25) if alphas is None else np.asarray(alphas, dtype=np.float64).ravel()
    if alphas.size == 0:
        raise ValueError("alphas must hold at least one selection intensity.")
    if "alpha" in kwargs:
        raise TypeError("sweep takes alphas=[...], not alpha=.")
    rows, labels = [], None
    for a in alphas:
        res = alpharank(game_or_payoff_tables, alpha=float(a), **kwargs)
        labels = res.profiles if labels is None else labels
        rows.append(res.pi)
    cols = [lab if isinstance(lab, str) else " / ".join(lab) for lab in labels]
    return pd.DataFrame(np.array(rows), index=pd.Index(alphas, name="alpha"), columns=cols)


def suggest_alpha(game_or_payoff_tables, tol: float = 0.1, single_population: bool | None = None) -> float:
    """A selection intensity at which the ranking has settled: ``-ln(tol) / gap``.

    ``gap`` is the smallest positive fitness gain of any move of the chain
    (single population: ``A[r, s] - A[s, r]``; several: the moving population's
    payoff change). The fixation probability of a move with gain ``g`` expands
    in powers of ``exp(-alpha g)``; at ``alpha = -ln(tol) / gap`` every
    next-order term is below ``tol`` times the leading one, so larger alphas
    barely change the ranking (OpenSpiel's ``suggest_alpha`` follows the same idea).

    Parameters
    ----------
    tol : float
        In (0, 1); smaller gives a larger, "more settled" alpha.

    Returns
    -------
    float
        The suggested alpha; 0.0 when no move changes any payoff (then every
        alpha gives the same ranking).

    Examples
    --------
    >>> import numpy as np
    >>> from games import catalog
    >>> round(suggest_alpha(catalog.rock_paper_scissors(), tol=np.exp(-1)), 6)
    0.5
    """
    if not 0.0 < tol < 1.0:
        raise ValueError(f"tol must be in (0, 1); got {tol}.")
    tables = payoff_tables(game_or_payoff_tables, single_population)
    if tables.single_population:
        a = tables.tables[0]
        gains = (a - a.T).ravel()
    else:
        _, _, gains, _ = multi_population_moves(tables.tables)
    positive = gains[gains > 0]
    if positive.size == 0:
        return 0.0
    return float(-np.log(tol) / positive.min())
