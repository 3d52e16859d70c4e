"""ResponseGraphUCB: adaptive sampling that finds a game's response graph with confidence.

Rowland et al. (2019), "Multiagent Evaluation under Incomplete Information"
(NeurIPS). The response graph has one node per pure profile and one edge per
pair of profiles that differ in a single player's strategy; the edge points
towards the profile where that (deviating) player's expected payoff is larger.
Payoffs are only observed through noisy samples. The algorithm samples profiles
adaptively and declares an edge *resolved* once the confidence intervals of the
two payoffs it compares are disjoint, until every edge is resolved or the
sample budget is spent. With per-payoff level ``delta`` (and a union bound over
sample counts when ``time_dependent_delta=True``) every resolved edge is correct
with probability at least ``1 - delta`` per payoff involved.

Sampling schemes (which profile to sample next):

``"uniform-exhaustive"``
    Edges in a random order; sample a random endpoint of the first unresolved one.
``"uniform"``
    A random endpoint of a random unresolved edge.
``"valence-weighted"``
    A profile with probability proportional to the squared number of its
    unresolved edges.
``"count-weighted"``
    Among profiles with unresolved edges, the least-sampled one (lowest C-order
    index on ties).

How it is computed. The schemes' random choices are drawn in batches (none of
them looks at the outcomes between two resolution events), and each batch is
taken one sample at a time in a plain Python loop: the sampled profile moves to
its next state and is compared with the other end of each of its open edges.
The states come precomputed: outcomes are drawn per profile in blocks that
double, and the mean and bounds after each outcome are computed for the whole
block with cumulative sums and one vectorised bound evaluation; the bounds are
kept as Python lists, which the loop reads a number at a time (the means are
looked up only when two intervals separate). A batch ends at the
first resolution that changes the schedule. Outcomes not used yet wait for the
next time their profile is sampled, so the run equals the one-sample-at-a-time
algorithm fed with per-profile outcome streams; those left when the run ends
are not recorded.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from games.empirical import EmpiricalGame
from games.normal_form import NormalFormGame
from games.validation import check_int
from ranking.confidence_bounds import bounds_kernel, parse_bound, time_dependent_delta
from ranking.samplers import as_sampler

__all__ = [
    "SCHEMES",
    "ProfileEdges",
    "ResponseGraphUCBResult",
    "count_wrong_edges",
    "profile_edges",
    "response_graph",
    "response_graph_ucb",
]

logger = logging.getLogger(__name__)

SCHEMES = ("uniform-exhaustive", "uniform", "valence-weighted", "count-weighted")


# --------------------------------------------------------------------------- edges
@dataclass(frozen=True)
class ProfileEdges:
    """The undirected edges of a response graph, as flat (C-order) profile indices.

    Attributes
    ----------
    u, v : ndarray of int, shape (num_edges,)
        Endpoints, ``u < v``; they differ only in ``player``'s strategy.
    player : ndarray of int, shape (num_edges,)
        The deviating player.
    incidence : ndarray of int, shape (num_profiles, degree)
        ``incidence[s]`` lists the edges touching profile ``s`` (every profile has
        ``degree = sum(k_p - 1)`` of them).
    neighbour : ndarray of int, shape (num_profiles, degree)
        The other endpoint of each incident edge.
    """

    shape: tuple
    u: np.ndarray
    v: np.ndarray
    player: np.ndarray
    incidence: np.ndarray
    neighbour: np.ndarray


def profile_edges(shape) -> ProfileEdges:
    """All single-deviation edges of a game with ``shape`` strategies per player.

    Examples
    --------
    >>> e = profile_edges((2, 3))
    >>> len(e.u), e.incidence.shape    # 3 * 1 + 2 * 3 edges; degree 1 + 2
    (9, (6, 3))
    """
    return _profile_edges(tuple(int(k) for k in shape))


@functools.lru_cache(maxsize=64)
def _profile_edges(shape: tuple) -> ProfileEdges:
    """:func:`profile_edges`, cached per shape (the arrays are read-only)."""
    num = int(np.prod(shape))
    strides = np.array([int(np.prod(shape[p + 1 :])) for p in range(len(shape))], dtype=np.int64)
    index = np.arange(num, dtype=np.int64)
    coords = np.unravel_index(index, shape)
    us, vs, ps = [], [], []
    for p, k in enumerate(shape):
        for d in range(1, k):
            u = index[coords[p] + d < k]
            us.append(u)
            vs.append(u + d * strides[p])
            ps.append(np.full(len(u), p, dtype=np.int64))
    u = np.concatenate(us) if us else np.zeros(0, np.int64)
    v = np.concatenate(vs) if vs else np.zeros(0, np.int64)
    player = np.concatenate(ps) if ps else np.zeros(0, np.int64)
    degree = sum(k - 1 for k in shape)
    ends = np.concatenate([u, v])
    edge_ids = np.concatenate([np.arange(len(u)), np.arange(len(u))])
    order = np.argsort(ends, kind="stable")
    incidence = edge_ids[order].reshape(num, degree)
    other = np.where(u[incidence] == index[:, None], v[incidence], u[incidence])
    for arr in (u, v, player, incidence, other):
        arr.setflags(write=False)
    return ProfileEdges(shape, u, v, player, incidence, other)


@functools.lru_cache(maxsize=64)
def _profile_tuples(shape: tuple) -> tuple:
    return tuple(tuple(int(c) for c in x) for x in np.ndindex(*shape))


def _orient(u, v, better_is_v) -> list:
    return [(a, b) if bv else (b, a) for a, b, bv in zip(u.tolist(), v.tolist(), better_is_v.tolist())]


def _digraph(shape, edges: ProfileEdges, better_is_v: np.ndarray) -> nx.DiGraph:
    nodes = _profile_tuples(tuple(shape))
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from((nodes[a], nodes[b]) for a, b in _orient(edges.u, edges.v, better_is_v))
    return g


def response_graph(game) -> nx.DiGraph:
    """The response graph of a game: edges from each profile to better unilateral deviations.

    Nodes are profile tuples; the edge between two profiles that differ in player
    ``p``'s strategy points to the one where ``p``'s payoff is larger (to the
    later profile in C order on ties, as in OpenSpiel).

    Parameters
    ----------
    game : NormalFormGame or array_like, shape (num_players, k_1, ..., k_n)

    Examples
    --------
    >>> from games import catalog
    >>> g = response_graph(catalog.rock_paper_scissors())
    >>> ((0, 0), (1, 0)) in g.edges   # paper beats rock for the row player
    True
    """
    payoffs = np.asarray(game.payoffs if isinstance(game, NormalFormGame) else game, dtype=float)
    if payoffs.ndim < 2 or payoffs.ndim != payoffs.shape[0] + 1:
        raise ValueError(f"game must have payoffs of shape (num_players, k_1, ..., k_n); got {payoffs.shape}.")
    shape = payoffs.shape[1:]
    e = profile_edges(shape)
    flat = payoffs.reshape(payoffs.shape[0], -1)
    return _digraph(shape, e, flat[e.player, e.u] <= flat[e.player, e.v])


def count_wrong_edges(graph: nx.DiGraph, reference: nx.DiGraph) -> int:
    """Number of edges of ``graph`` that point the other way in (or are absent from) ``reference``.

    Examples
    --------
    >>> a = nx.DiGraph([(0, 1), (1, 2)]); b = nx.DiGraph([(1, 0), (1, 2)])
    >>> count_wrong_edges(a, b)
    1
    """
    ref = reference.edges
    return int(sum(1 for e in graph.edges if e not in ref))


# -------------------------------------------------------------------------- result
@dataclass(frozen=True)
class ResponseGraphUCBResult:
    """What :func:`response_graph_ucb` found.

    Attributes
    ----------
    graph : networkx.DiGraph
        The estimated response graph (nodes are profile tuples). Unresolved edges
        follow the sample means.
    samples : ndarray of int, shape (k_1, ..., k_n)
        Samples drawn at each profile in this run.
    total_samples : int
        Their sum.
    resolved : bool
        Whether every edge was resolved before the budget ran out.
    num_edges, num_unresolved : int
    empirical_game : EmpiricalGame
        Counts, sums and sums of squares of every sample (including any it started with).
    lower, upper : ndarray, shape (num_players, k_1, ..., k_n)
        Final confidence bounds on the payoffs.
    info : dict
        Settings and timing (``seconds``, ``batches``).
    """

    graph: nx.DiGraph
    samples: np.ndarray
    total_samples: int
    resolved: bool
    num_edges: int
    num_unresolved: int
    empirical_game: EmpiricalGame
    lower: np.ndarray
    upper: np.ndarray
    info: dict = field(default_factory=dict)


# -------------------------------------------------------------------------- engine
class _Outcomes:
    """Each profile's outcomes drawn ahead of the run, with the state after each one.

    Profile ``s`` has a *window* of rows ``0 .. size[s] - 1``: row ``i`` is its
    state after ``base[s] + i`` samples of this run, and row ``pos[s]`` is the
    current one. Player ``p``'s lower and upper bounds at those rows sit in the
    Python lists ``lower[s * n + p]`` and ``upper[...]``, which the scan reads
    one number at a time (lists do that fastest). When windows run out,
    :meth:`grow` draws a block of the same number of outcomes for each profile
    it is given (as many as the most-drawn of them has had, so blocks double,
    within ``[first_block, max_block]`` and the samples left), computes the
    state after each one from cumulative sums with one vectorised bound
    evaluation, and drops the rows already passed from the lists. The lists
    change in place, so references to them stay valid. The means and sums stay
    in the blocks' arrays, where :meth:`state` finds them.
    """

    def __init__(self, sampler, rng, cnt, tot, sq, bounds, first_block: int, max_block: int = 8192):
        self.sampler, self.rng, self.bounds = sampler, rng, bounds
        self.first_block, self.max_block = first_block, max(first_block, max_block)
        self.n, num_profiles = cnt.shape
        self.prior = cnt.astype(float) if cnt.any() else None          # (n, S) samples before the run
        self.last = [tot.copy(), sq.copy()]                            # (n, S) sums after the last drawn row
        cb = bounds(cnt.astype(float), tot, sq)
        self.before = (cb.mean, tot, sq)
        self.lower, self.upper = ([[x] for x in a.T.ravel().tolist()] for a in (cb.lower, cb.upper))
        self.base = [0] * num_profiles
        self.pos = [0] * num_profiles
        self.size = [1] * num_profiles
        self.blocks = []                                     # (mean, total, total_sq), each (n, profiles, rows)
        self.where = [[] for _ in range(num_profiles)]       # per profile: (block, its index there, drawn before)

    def used(self) -> np.ndarray:
        """Samples of each profile in this run so far."""
        return np.array(self.base) + self.pos

    def grow(self, grow: list, room: int) -> None:
        """Append a block of new rows to the window of every profile in ``grow``."""
        n, pos, size, base = self.n, self.pos, self.size, self.base
        drawn = [base[s] + size[s] - 1 for s in grow]      # outcomes drawn so far
        m = max(min(max(max(drawn), self.first_block), self.max_block, room), 1)
        out = np.asarray(self.sampler.draw(np.repeat(grow, m), self.rng), dtype=float).T.reshape(n, len(grow), m)
        sums = []
        for last, x in zip(self.last, (out, out * out)):
            c = x.cumsum(2)
            c += last[:, grow, None]
            last[:, grow] = c[:, :, -1]
            sums.append(c)
        count = np.add.outer(drawn, np.arange(1.0, m + 1))             # run samples after each outcome
        cb = self.bounds(count if self.prior is None else count + self.prior[:, grow, None], *sums)
        block = len(self.blocks)
        self.blocks.append((cb.mean, *sums))
        new = (cb.lower.tolist(), cb.upper.tolist())
        for g, s in enumerate(grow):
            p0 = pos[s]
            for lists, values in zip((self.lower, self.upper), new):
                for p in range(n):
                    row = lists[s * n + p]
                    del row[:p0]
                    row.extend(values[p][g])
            self.where[s].append((block, g, drawn[g]))
            base[s] += p0
            size[s] += m - p0
            pos[s] = 0

    def _locate(self, s: int, row: int) -> tuple:
        """``(block, index in it, outcome index)`` of profile ``s``'s window row ``row``; block -1: before the run."""
        j = self.base[s] + row                               # samples of this run
        for block, g, drawn in reversed(self.where[s]):
            if j > drawn:
                return block, g, j - drawn - 1
        return -1, s, 0

    def state(self, s: int, row: int) -> tuple:
        """``(mean, total, total_sq)`` of profile ``s`` at window row ``row``, each shape (n,)."""
        block, g, j = self._locate(s, row)
        if block < 0:
            return tuple(a[:, s] for a in self.before)
        return tuple(a[:, g, j] for a in self.blocks[block])

    def final(self) -> tuple:
        """``mean, lower, upper, total, total_sq`` at the current rows, each shape (n, S)."""
        n, pos = self.n, self.pos
        at = [pos[i // n] for i in range(len(self.lower))]
        low, up = (np.array([row[c] for row, c in zip(lists, at)]).reshape(-1, n).T
                   for lists in (self.lower, self.upper))
        found: dict = {}
        for s, c in enumerate(pos):
            block, g, j = self._locate(s, c)
            found.setdefault(block, []).append((s, g, j))
        mean, tot, sq = (np.empty((n, len(pos))) for _ in range(3))
        for block, rows in found.items():
            s, g, j = (list(x) for x in zip(*rows))
            for out, a in zip((mean, tot, sq), self.before if block < 0 else self.blocks[block]):
                out[:, s] = a[:, g] if block < 0 else a[:, g, j]
        return mean, low, up, tot, sq


class _Run:
    """Mutable state of one run (kept private; the public entry is :func:`response_graph_ucb`)."""

    def __init__(self, sampler, eg, bound, delta, eps, td_delta, scheme, rng, max_samples, first_block=256):
        self.eg, self.scheme, self.rng, self.max_samples = eg, scheme, rng, max_samples
        base, relaxed = parse_bound(bound)
        lo, hi = (float(x) for x in sampler.payoff_range)

        def bounds(cnt, tot, sq):
            level = time_dependent_delta(delta, cnt) if td_delta else delta
            return bounds_kernel(cnt, tot, sq, level, base, relaxed, lo, hi, eps)

        shape = sampler.shape
        self.n, self.S = len(shape), math.prod(shape)
        self.edges = e = profile_edges(shape)
        E = len(e.u)
        self.cnt = eg.count.reshape(self.n, self.S)
        # first blocks: fewer rows for many profiles, and for bounds that are costly per row
        first_block = max(8, min(first_block, 16384 // self.S) // (8 if base == "clopper-pearson" else 1))
        self.outcomes = o = _Outcomes(sampler, rng, self.cnt, eg.total.reshape(self.n, self.S),
                                      eg.total_sq.reshape(self.n, self.S), bounds, first_block)
        self.unresolved = np.ones(E, dtype=bool)
        self.num_open = E
        self.better_is_v = np.zeros(E, dtype=bool)
        self.valence = np.full(self.S, e.incidence.shape[1], dtype=np.int64)
        # open_at[s]: the open edges at s, as (other end, the deviating player's lower and upper lists at s,
        # those at the other end, (edge, s, the deviating player, whether s is the v end))
        self.open_at = [[] for _ in range(self.S)]
        n, low, upp = self.n, o.lower, o.upper
        for k, (u, v, p) in enumerate(zip(e.u.tolist(), e.v.tolist(), e.player.tolist())):
            a, b = u * n + p, v * n + p
            self.open_at[u].append((v, low[a], upp[a], low[b], upp[b], (k, u, p, False)))
            self.open_at[v].append((u, low[b], upp[b], low[a], upp[a], (k, v, p, True)))
        self.total = 0
        self.batches = 0
        if scheme == "uniform-exhaustive":
            self.order = rng.permutation(E)
            self.pointer = 0

    @property
    def used(self) -> np.ndarray:
        """Samples of each profile in this run."""
        return self.outcomes.used()

    # ---- schedules
    def _schedule(self, size: int) -> np.ndarray:
        rng, e = self.rng, self.edges
        if self.scheme == "uniform-exhaustive":
            while not self.unresolved[self.order[self.pointer]]:
                self.pointer += 1
            k = self.order[self.pointer]
            return np.where(rng.random(size) < 0.5, e.v[k], e.u[k])
        if self.scheme == "uniform":
            open_edges = self.unresolved.nonzero()[0]
            k = open_edges[rng.integers(0, len(open_edges), size=size)]
            return np.where(rng.random(size) < 0.5, e.v[k], e.u[k])
        if self.scheme == "valence-weighted":
            w = (self.valence * self.valence).cumsum()
            return np.minimum(w.searchsorted(rng.random(size) * w[-1], side="right"), self.S - 1)
        return self._count_weighted(size)

    def _count_weighted(self, size: int) -> np.ndarray:
        """The next ``size`` picks of 'least-sampled eligible profile, lowest index first'.

        Profile ``s`` with count ``c_s`` is picked at levels ``c_s, c_s + 1, ...``;
        picks come in (level, index) order. The last level needed is the least
        ``L`` with ``sum_s max(L - c_s + 1, 0) >= size``: with the counts sorted,
        the sum is ``max_j j (L + 1) - (c_(1) + ... + c_(j))``, so
        ``L = min_j ceil((size + c_(1) + ... + c_(j)) / j) - 1``.
        """
        elig = (self.valence > 0).nonzero()[0]
        c = self.cnt[0, elig].astype(np.int64) + self.used[elig]
        if c.min() == c.max():   # the usual case: whole rounds in index order
            return elig[np.arange(size) % len(elig)]
        prefix = np.sort(c).cumsum()
        j = np.arange(1, len(c) + 1)
        level = int((-((-(size + prefix)) // j)).min()) - 1
        reps = np.maximum(level - c + 1, 0)
        who = elig.repeat(reps)
        starts = reps.cumsum() - reps
        lvl = (c - starts).repeat(reps) + np.arange(len(who))
        return who[np.lexsort((who, lvl))[:size]]

    def _resolve(self, k: int, v_better: bool) -> None:
        self.unresolved[k] = False
        self.better_is_v[k] = v_better
        self.num_open -= 1
        for s in (int(self.edges.u[k]), int(self.edges.v[k])):
            recs = self.open_at[s]
            recs[:] = [r for r in recs if r[5][0] != k]
            self.valence[s] -= 1

    def _separation(self, rec, c: int, cq: int):
        """Whether edge ``rec`` (seen from its end at row ``c``, the other end at row ``cq``) is resolved.

        None while the two intervals overlap, else whether the edge's v end is the better one.
        """
        q, la, ua, lb, ub, (_, s, p, s_is_v) = rec
        if not (ua[c] < lb[cq] or ub[cq] < la[c]):   # the intervals overlap
            return None
        ma, mb = self.outcomes.state(s, c)[0][p], self.outcomes.state(q, cq)[0][p]
        if mb > ma or (mb == ma and not s_is_v):   # the other end looks better (ties: the v end)
            return (not s_is_v) if ua[c] < lb[cq] else None
        return s_is_v if ub[cq] < la[c] else None

    # ---- phases
    def explore(self) -> None:
        """Sample every profile without samples once, then check every edge."""
        o = self.outcomes
        before = self.cnt.min(axis=0).tolist()
        missing = [s for s in range(self.S) if before[s] == 0][: self.max_samples]
        if missing:
            o.grow(missing, self.max_samples)
            for s in missing:
                o.pos[s] = 1
        self.total = len(missing)
        pos, found = o.pos, []
        for s in range(self.S):
            for rec in self.open_at[s]:
                q, k, s_is_v = rec[0], rec[5][0], rec[5][3]
                if not s_is_v and (before[s] or pos[s]) and (before[q] or pos[q]):   # both ends sampled
                    v_better = self._separation(rec, pos[s], pos[q])
                    if v_better is not None:
                        found.append((k, v_better))
        for k, v_better in found:
            self._resolve(k, v_better)

    def step(self, size: int) -> int:
        """Schedule up to ``size`` picks and take them one by one; return how many were looked at.

        Each sampled profile's new state is compared, at each of its open edges,
        with the current state of the other end; an edge resolves once the two
        intervals are disjoint. The batch ends early when a resolution changes
        the schedule: for ``uniform-exhaustive`` the edge in focus resolving, for
        ``valence-weighted`` and ``uniform`` any resolution. ``count-weighted``
        keeps the whole batch: a profile that runs out of open edges just skips
        its remaining picks, which leaves the order of the others as it was.
        """
        o = self.outcomes
        pos, size_of, open_at = o.pos, o.size, self.open_at
        stop_any = self.scheme in ("valence-weighted", "uniform")
        focus = self.order[self.pointer] if self.scheme == "uniform-exhaustive" else -1
        kept = 0
        sched = self._schedule(size).tolist()
        for s in sched:
            recs = open_at[s]
            if not recs:   # (count-weighted only: the others sample profiles with open edges)
                continue
            c = pos[s] + 1
            if c == size_of[s]:
                self._grow_for(self.max_samples - self.total - kept)
                c = pos[s] + 1
            pos[s] = c
            kept += 1
            for q, la, ua, lb, ub, _ in recs:   # the hot loop: are the intervals of an edge disjoint?
                cq = pos[q]
                if ua[c] < lb[cq] or ub[cq] < la[c]:
                    break
            else:
                continue
            found = [(rec[5][0], v) for rec in recs if (v := self._separation(rec, c, pos[rec[0]])) is not None]
            for k, v_better in found:
                self._resolve(k, v_better)
            if found and (stop_any or not self.num_open or (focus >= 0 and not self.unresolved[focus])):
                break
        self.total += kept
        return kept if stop_any or focus >= 0 else len(sched)

    def _grow_for(self, room: int) -> None:
        """Grow, in one draw, the windows of the open profiles with fewer than ``first_block`` rows left."""
        o = self.outcomes
        size = np.array(o.size)
        ahead = size - 1 - np.array(o.pos)
        o.grow(((2 * ahead < size) & (self.valence > 0)).nonzero()[0].tolist(), room)

    def finish(self) -> tuple:
        """Add the samples used to the empirical game; return the final ``(mean, lower, upper)``, each (n, S)."""
        mean, lower, upper, total, total_sq = self.outcomes.final()
        self.cnt += self.used
        self.eg.total.reshape(self.n, self.S)[...] = total
        self.eg.total_sq.reshape(self.n, self.S)[...] = total_sq
        return mean, lower, upper


def _checked_settings(delta, scheme, bound, eps, max_samples, batch_size, max_batch_size) -> tuple:
    """``(base bound, batch size)`` of :func:`response_graph_ucb`'s settings, each checked (the default batch: 64
    samples for Clopper-Pearson, 1024 for the count-weighted scheme, else 256, at most ``max_batch_size``)."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1); got {delta!r}.")
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}; got {scheme!r}.")
    base, _ = parse_bound(bound)
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0; got {eps!r}.")
    check_int(max_samples, "max_samples", minimum=1)
    if batch_size is None:
        batch_size = min(64 if base == "clopper-pearson" else 1024 if scheme == "count-weighted" else 256,
                         max_batch_size)
    if batch_size < 1 or max_batch_size < batch_size:
        raise ValueError(f"need 1 <= batch_size <= max_batch_size; got {batch_size}, {max_batch_size}.")
    return base, batch_size


def response_graph_ucb(
    sampler,
    *,
    delta: float = 0.1,
    bound: str = "hoeffding",
    scheme: str = "uniform-exhaustive",
    eps: float = 0.0,
    time_dependent: bool = False,
    per_payoff_confidence: bool = True,
    max_samples: int = 1_000_000,
    rng=None,
    empirical_game: EmpiricalGame | None = None,
    shape=None,
    payoff_range=None,
    batch_size: int | None = None,
    max_batch_size: int = 4096,
) -> ResponseGraphUCBResult:
    """Sample a noisy game adaptively until its response graph is known with confidence.

    Parameters
    ----------
    sampler : NormalFormGame, array_like, callable or sampler
        A game (or array) of mean payoffs in ``payoff_range`` sampled as Bernoulli
        outcomes (:class:`~ranking.samplers.BernoulliSampler`); a function
        ``f(profile, rng) -> payoffs`` (give ``shape`` and ``payoff_range``); or a
        sampler object such as :class:`~ranking.samplers.OpenSpielSampler`.
    delta : float
        Error probability per payoff, in (0, 1).
    bound : str
        ``"hoeffding"``, ``"clopper-pearson"`` (Bernoulli outcomes only) or
        ``"bernstein"``, optionally with ``"-relaxed"``
        (see :mod:`ranking.confidence_bounds`).
    scheme : str
        One of :data:`SCHEMES`.
    eps : float
        Relaxation of the ``-relaxed`` bounds (payoff units).
    time_dependent : bool
        Use ``delta * 6 / (pi^2 n^2)`` at ``n`` samples so the guarantee holds
        uniformly over time.
    per_payoff_confidence : bool
        If False, ``delta`` is shared by all payoffs (divided by
        ``num_players * num_profiles``).
    max_samples : int
        Budget, including the initial sample of every profile.
    rng : int or numpy.random.Generator, optional
        Seed or generator; the same seed gives the same run.
    empirical_game : EmpiricalGame, optional
        Earlier samples to start from; updated in place. Profiles that already
        have samples are not re-explored.
    shape, payoff_range : optional
        For function samplers.
    batch_size, max_batch_size : int
        Initial and largest number of samples scheduled at once (the size doubles
        while no resolution changes the schedule). ``batch_size`` defaults to 64
        with ``"clopper-pearson"`` bounds, else 1024 for ``"count-weighted"``
        (whose batches never stop early) and 256 for the others. They change
        speed, not the algorithm: the run equals the one-at-a-time algorithm fed
        with per-profile outcome streams. (With the deterministic
        ``"count-weighted"`` scheme and a sampler that reads fixed per-profile
        streams, the samples are identical for every batch size; otherwise random
        numbers are drawn in batch-sized blocks, so which run a seed gives depends
        on the batch sizes.)

    Returns
    -------
    ResponseGraphUCBResult

    Examples
    --------
    >>> from games import NormalFormGame
    >>> p = np.array([[0.5, 0.9], [0.1, 0.5]])          # P(row beats column)
    >>> game = NormalFormGame.from_bimatrix(p, p.T)
    >>> res = response_graph_ucb(game, delta=0.05, rng=0)
    >>> res.resolved, count_wrong_edges(res.graph, response_graph(game))
    (True, 0)
    """
    base, batch_size = _checked_settings(delta, scheme, bound, eps, max_samples, batch_size, max_batch_size)
    smp = as_sampler(sampler, shape=shape, payoff_range=payoff_range)
    if base == "clopper-pearson" and not getattr(smp, "binary", False):
        raise ValueError(
            "bound='clopper-pearson' needs Bernoulli outcomes (each sample lo or hi); this sampler is not "
            "binary. Use 'hoeffding' or 'bernstein', or a binary sampler."
        )
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    if empirical_game is None:
        empirical_game = EmpiricalGame(smp.shape)
    elif tuple(empirical_game.shape) != tuple(smp.shape):
        raise ValueError(f"empirical_game has shape {empirical_game.shape} but the sampler has {smp.shape}.")
    elif empirical_game.exact.any():
        raise ValueError(
            "empirical_game has exactly known profiles (set_exact); ResponseGraphUCB needs sampled ones. "
            "Start from a fresh EmpiricalGame, or compare exact payoffs directly with response_graph()."
        )
    n = len(smp.shape)
    eff_delta = delta if per_payoff_confidence else delta / (n * math.prod(smp.shape))
    start = time.perf_counter()
    run = _Run(smp, empirical_game, bound, eff_delta, eps, time_dependent, scheme, generator, int(max_samples))
    run.explore()
    size = batch_size
    while run.num_open and run.total < run.max_samples:
        asked = min(size, run.max_samples - run.total)
        looked = run.step(asked)
        run.batches += 1
        size = min(max_batch_size, 2 * size) if looked >= asked else max(batch_size, looked)
    mean, lower, upper = run.finish()
    seconds = time.perf_counter() - start
    e = run.edges
    better = run.better_is_v.copy()
    open_ = run.unresolved
    num_open = run.num_open
    if num_open:   # unresolved edges follow the sample means
        better[open_] = mean[e.player[open_], e.u[open_]] <= mean[e.player[open_], e.v[open_]]
        logger.info("budget of %d samples spent with %d of %d edges unresolved", max_samples, num_open, len(e.u))
    shape = smp.shape
    return ResponseGraphUCBResult(
        graph=_digraph(shape, e, better),
        samples=run.used.reshape(shape),
        total_samples=int(run.total),
        resolved=num_open == 0,
        num_edges=len(e.u),
        num_unresolved=num_open,
        empirical_game=empirical_game,
        lower=lower.reshape((n, *shape)),
        upper=upper.reshape((n, *shape)),
        info={
            "delta": delta, "bound": bound, "scheme": scheme, "eps": eps, "time_dependent": time_dependent,
            "per_payoff_confidence": per_payoff_confidence, "max_samples": int(max_samples),
            "seconds": seconds, "batches": run.batches,
        },
    )
