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

How it is computed. State is kept as counts, sums and sums of squares in an
:class:`~games.EmpiricalGame`. None of the schemes looks at the outcomes
between two resolution events, so the schedule of the next ``B`` samples is
drawn at once, their outcomes are drawn in one vectorised call, running
statistics and confidence bounds along the batch come from grouped cumulative
sums, and the edges incident to each sampled profile are checked for all ``B``
steps together. The batch is committed up to the first step at which an edge
resolves -- exactly what the one-sample-at-a-time algorithm would have done.
Outcomes drawn beyond that step are kept in a per-profile queue and used, in
order, the next times those profiles are sampled, so no sample is wasted and
the run equals the sequential algorithm fed with per-profile outcome streams.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from games.empirical import EmpiricalGame
from games.normal_form import NormalFormGame
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
class _Run:
    """Mutable state of one run (kept private; the public entry is :func:`response_graph_ucb`)."""

    def __init__(self, sampler, eg, bound, delta, eps, td_delta, scheme, rng, max_samples):
        self.sampler = sampler
        self.eg = eg
        self.bound = bound
        self.delta = delta
        self.eps = eps
        self.td_delta = td_delta
        self.scheme = scheme
        self.rng = rng
        self.max_samples = max_samples
        self.range = tuple(float(x) for x in sampler.payoff_range)
        self.base, self.relaxed = parse_bound(bound)
        shape = sampler.shape
        self.n = len(shape)
        self.S = int(np.prod(shape))
        self.edges = profile_edges(shape)
        E = len(self.edges.u)
        # Views on the empirical game's arrays, shape (num_players, num_profiles).
        self.cnt = eg.count.reshape(self.n, self.S)
        self.tot = eg.total.reshape(self.n, self.S)
        self.sq = eg.total_sq.reshape(self.n, self.S)
        self.samples = np.zeros(self.S, dtype=np.int64)
        self.unresolved = np.ones(E, dtype=bool)
        self.better_is_v = np.zeros(E, dtype=bool)
        self.valence = np.full(self.S, self.edges.incidence.shape[1], dtype=np.int64)
        self.total = 0
        self.batches = 0
        self.buf_prof = np.zeros(0, dtype=np.int64)
        self.buf_out = np.zeros((0, self.n))
        if scheme == "uniform-exhaustive":
            self.order = rng.permutation(E)
            self.pointer = 0
        cb = self._bounds(self.cnt, self.tot, self.sq)
        self.lo, self.up, self.mu = cb.lower, cb.upper, cb.mean

    # ---- bounds
    def _bounds(self, cnt, tot, sq):
        delta = time_dependent_delta(self.delta, cnt) if self.td_delta else self.delta
        return bounds_kernel(cnt, tot, sq, delta, self.base, self.relaxed, self.range[0], self.range[1], self.eps)

    # ---- schedules
    def _schedule(self, size: int) -> np.ndarray:
        rng, e = self.rng, self.edges
        if self.scheme == "uniform-exhaustive":
            while not self.unresolved[self.order[self.pointer]]:
                self.pointer += 1
            k = self.order[self.pointer]
            return np.where(rng.integers(0, 2, size=size) == 1, e.v[k], e.u[k])
        if self.scheme == "uniform":
            open_edges = np.flatnonzero(self.unresolved)
            k = open_edges[rng.integers(0, len(open_edges), size=size)]
            return np.where(rng.integers(0, 2, size=size) == 1, e.v[k], e.u[k])
        if self.scheme == "valence-weighted":
            w = np.cumsum(self.valence.astype(float) ** 2)
            return np.minimum(np.searchsorted(w, rng.random(size) * w[-1], side="right"), self.S - 1)
        return self._count_weighted(size)

    def _count_weighted(self, size: int) -> np.ndarray:
        """The next ``size`` picks of 'least-sampled eligible profile, lowest index first'.

        Profile ``s`` with count ``c_s`` is picked at levels ``c_s, c_s + 1, ...``;
        picks come in (level, index) order. The last level needed is the least
        ``L`` with ``sum_s max(L - c_s + 1, 0) >= size``: with the counts sorted,
        the sum is ``max_j j (L + 1) - (c_(1) + ... + c_(j))``, so
        ``L = min_j ceil((size + c_(1) + ... + c_(j)) / j) - 1``.
        """
        elig = np.flatnonzero(self.valence > 0)
        c = self.cnt[0, elig].astype(np.int64)
        prefix = np.cumsum(np.sort(c))
        j = np.arange(1, len(c) + 1)
        level = int((-((-(size + prefix)) // j)).min()) - 1
        reps = np.maximum(level - c + 1, 0)
        who = np.repeat(elig, reps)
        starts = np.cumsum(reps) - reps
        lvl = np.repeat(c - starts, reps) + np.arange(len(who))
        return who[np.lexsort((who, lvl))[:size]]

    # ---- outcomes, reusing queued ones first
    def _outcomes(self, sched: np.ndarray) -> np.ndarray:
        out = np.empty((len(sched), self.n))
        fresh = np.ones(len(sched), dtype=bool)
        if len(self.buf_prof):
            order = np.argsort(sched, kind="stable")
            sp = sched[order]
            first = np.searchsorted(sp, sp, side="left")
            rank = np.arange(len(sp)) - first  # occurrence number of each scheduled profile
            bstart = np.searchsorted(self.buf_prof, sp, side="left")
            bend = np.searchsorted(self.buf_prof, sp, side="right")
            use = rank < bend - bstart
            out[order[use]] = self.buf_out[bstart[use] + rank[use]]
            fresh[order[use]] = False
            keep = np.ones(len(self.buf_prof), dtype=bool)
            keep[bstart[use] + rank[use]] = False
            self.buf_prof, self.buf_out = self.buf_prof[keep], self.buf_out[keep]
        if fresh.any():
            out[fresh] = self.sampler.draw(sched[fresh], self.rng)
        return out

    def _queue(self, prof: np.ndarray, out: np.ndarray) -> None:
        if len(prof):
            # Leftovers come first: for each profile they are older than what is still queued
            # (queued outcomes are consumed first; fresh ones are drawn only once its queue is empty).
            allp = np.concatenate([prof, self.buf_prof])
            allo = np.concatenate([out, self.buf_out])
            order = np.argsort(allp, kind="stable")
            self.buf_prof, self.buf_out = allp[order], allo[order]

    # ---- commit
    def _commit(self, prof: np.ndarray, out: np.ndarray, cb=None, rows=None) -> None:
        """Add samples; refresh the cached bounds of the touched profiles.

        ``cb`` and ``rows`` optionally give bounds already computed along the batch
        (``rows[i]`` is the row of ``cb`` holding the state after sample ``i``).
        """
        S = self.S
        added = np.bincount(prof, minlength=S)
        self.cnt += added
        for p in range(self.n):
            self.tot[p] += np.bincount(prof, weights=out[:, p], minlength=S)
            self.sq[p] += np.bincount(prof, weights=out[:, p] ** 2, minlength=S)
        self.samples += added
        self.total += len(prof)
        if cb is None:
            touched = np.unique(prof)
            fresh = self._bounds(self.cnt[:, touched], self.tot[:, touched], self.sq[:, touched])
            self.lo[:, touched], self.up[:, touched], self.mu[:, touched] = fresh.lower, fresh.upper, fresh.mean
        else:
            # The latest sample of each profile carries its current bounds.
            touched, back = np.unique(prof[::-1], return_index=True)
            r = rows[len(prof) - 1 - back]
            self.lo[:, touched] = cb.lower[r].T
            self.up[:, touched] = cb.upper[r].T
            self.mu[:, touched] = cb.mean[r].T

    def _resolve(self, edge_ids: np.ndarray, better_is_v: np.ndarray) -> None:
        self.unresolved[edge_ids] = False
        self.better_is_v[edge_ids] = better_is_v
        np.subtract.at(self.valence, self.edges.u[edge_ids], 1)
        np.subtract.at(self.valence, self.edges.v[edge_ids], 1)

    @staticmethod
    def _separated(mu_a, lo_a, up_a, mu_b, lo_b, up_b, b_is_v):
        """(resolved, b_is_better) comparing endpoint a with b; equal means favour the v endpoint."""
        b_better = (mu_b > mu_a) | ((mu_b == mu_a) & b_is_v)
        resolved = np.where(b_better, up_a < lo_b, up_b < lo_a)
        return resolved, b_better

    # ---- phases
    def explore(self) -> None:
        """Sample every profile without samples once, then check every edge."""
        missing = np.flatnonzero(self.cnt.min(axis=0) == 0)
        missing = missing[: max(0, self.max_samples - self.total)]
        if len(missing):
            self._commit(missing, self._outcomes(missing))
        e = self.edges
        ok = self.cnt[e.player, e.u] * self.cnt[e.player, e.v] > 0
        res, v_better = self._separated(
            self.mu[e.player, e.u], self.lo[e.player, e.u], self.up[e.player, e.u],
            self.mu[e.player, e.v], self.lo[e.player, e.v], self.up[e.player, e.v], True,
        )
        hit = np.flatnonzero(res & ok)
        if len(hit):
            self._resolve(hit, v_better[hit])

    def step(self, size: int) -> int:
        """Schedule, draw and check a batch; commit up to the first resolution. Returns samples used."""
        e = self.edges
        sched = self._schedule(size)
        out = self._outcomes(sched)
        B = len(sched)
        t = np.arange(B)
        # Running statistics of the sampled profile after each step.
        order = np.argsort(sched, kind="stable")
        sp = sched[order]
        group_start = np.searchsorted(sp, sp, side="left")
        n = self.n
        ordered = out[order]
        cs = np.zeros((B + 1, 2 * n))
        np.cumsum(np.concatenate([ordered, ordered * ordered], axis=1), axis=0, out=cs[1:])
        within = cs[1:] - cs[group_start]  # sums over this profile's samples so far in the batch
        run_n = (t - group_start + 1)[:, None] + self.cnt[:, sp].T
        run_tot = within[:, :n] + self.tot[:, sp].T
        run_sq = within[:, n:] + self.sq[:, sp].T
        cb = self._bounds(run_n, run_tot, run_sq)  # rows in sorted order, shape (B, n)
        pos_of_t = np.empty(B, dtype=np.int64)
        pos_of_t[order] = t
        # Edges touching each sampled profile, and the state of the other endpoint at that step.
        inc = e.incidence[sched]  # (B, degree)
        live = self.unresolved[inc]
        if not live.any():
            self._commit(sched, out, cb, pos_of_t)
            return B
        other = e.neighbour[sched]
        pl = e.player[inc]
        key_sorted = sp * B + order
        qpos = np.searchsorted(key_sorted, other * B + t[:, None], side="right") - 1
        seen = (qpos >= 0) & (sp[np.maximum(qpos, 0)] == other)
        qrow = np.maximum(qpos, 0)
        mu_q = np.where(seen, cb.mean[qrow, pl], self.mu[pl, other])
        lo_q = np.where(seen, cb.lower[qrow, pl], self.lo[pl, other])
        up_q = np.where(seen, cb.upper[qrow, pl], self.up[pl, other])
        srow = pos_of_t[:, None]
        s_is_v = e.v[inc] == sched[:, None]
        res, q_better = self._separated(
            cb.mean[srow, pl], cb.lower[srow, pl], cb.upper[srow, pl], mu_q, lo_q, up_q, ~s_is_v
        )
        res &= live
        tt, jj = np.nonzero(res)  # candidate resolutions, in time order
        if len(tt) == 0:
            self._commit(sched, out, cb, pos_of_t)
            return B
        ids = inc[tt, jj]
        # The better endpoint is v when the neighbour is better and is v, or the sampled profile is better and is v.
        sv = s_is_v[tt, jj]
        v_better = np.where(q_better[tt, jj], ~sv, sv)
        ids, first = np.unique(ids, return_index=True)  # each edge resolves at its first separation
        ev_t, v_better = tt[first], v_better[first]
        stop = self._breaking_time(ids, ev_t)
        if stop is None:
            self._commit(sched, out, cb, pos_of_t)
            self._resolve(ids, v_better)
            return B
        self._commit(sched[: stop + 1], out[: stop + 1], cb, pos_of_t)
        self._queue(sched[stop + 1 :], out[stop + 1 :])
        now = ev_t <= stop
        self._resolve(ids[now], v_better[now])
        return stop + 1

    def _breaking_time(self, ids: np.ndarray, ev_t: np.ndarray):
        """First batch step whose resolutions change the sampling schedule (None: the schedule holds).

        Resolutions that leave the schedule unchanged are applied without
        ending the batch: for ``count-weighted`` until a profile runs out of
        unresolved edges, for ``uniform-exhaustive`` until the edge in focus resolves.
        """
        if self.scheme == "uniform-exhaustive":
            hit = ev_t[ids == self.order[self.pointer]]
            return int(hit[0]) if len(hit) else None
        if self.scheme == "count-weighted":
            e = self.edges
            ends = np.concatenate([e.u[ids], e.v[ids]])
            times = np.concatenate([ev_t, ev_t])
            o = np.lexsort((times, ends))
            ends, times = ends[o], times[o]
            rank = np.arange(len(ends)) - np.searchsorted(ends, ends, side="left")
            empty = rank + 1 == self.valence[ends]
            return int(times[empty].min()) if empty.any() else None
        return int(ev_t.min())


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
        while no resolution changes the schedule). ``batch_size`` defaults to 256,
        or 64 with ``"clopper-pearson"`` bounds, whose per-sample cost makes
        overshooting a resolution expensive. They change speed, not the
        algorithm: the run equals the one-at-a-time algorithm fed with per-profile
        outcome streams. (With the deterministic ``"count-weighted"`` scheme and a
        sampler that reads fixed per-profile streams, the samples are identical for
        every batch size; otherwise random numbers are drawn in batch-sized blocks,
        so which run a seed gives depends on the batch sizes.)

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
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1); got {delta!r}.")
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}; got {scheme!r}.")
    base, _ = parse_bound(bound)
    if not eps >= 0:
        raise ValueError(f"eps must be >= 0; got {eps!r}.")
    if isinstance(max_samples, bool) or not isinstance(max_samples, (int, np.integer)) or max_samples < 1:
        raise ValueError(f"max_samples must be a positive int; got {max_samples!r}.")
    if batch_size is None:
        batch_size = min(64 if base == "clopper-pearson" else 256, max_batch_size)
    if batch_size < 1 or max_batch_size < batch_size:
        raise ValueError(f"need 1 <= batch_size <= max_batch_size; got {batch_size}, {max_batch_size}.")
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
    eff_delta = delta if per_payoff_confidence else delta / (n * int(np.prod(smp.shape)))
    start = time.perf_counter()
    run = _Run(smp, empirical_game, bound, eff_delta, eps, time_dependent, scheme, generator, int(max_samples))
    run.explore()
    size = batch_size
    while run.unresolved.any() and run.total < run.max_samples:
        room = run.max_samples - run.total
        used = run.step(min(size, room))
        run.batches += 1
        size = min(max_batch_size, 2 * size) if used >= size else max(batch_size, used)
    seconds = time.perf_counter() - start
    e = run.edges
    better = run.better_is_v.copy()
    open_ = run.unresolved
    better[open_] = run.mu[e.player[open_], e.u[open_]] <= run.mu[e.player[open_], e.v[open_]]
    num_open = int(open_.sum())
    if num_open:
        logger.info("budget of %d samples spent with %d of %d edges unresolved", max_samples, num_open, len(e.u))
    shape = smp.shape
    return ResponseGraphUCBResult(
        graph=_digraph(shape, e, better),
        samples=run.samples.reshape(shape),
        total_samples=int(run.total),
        resolved=num_open == 0,
        num_edges=len(e.u),
        num_unresolved=num_open,
        empirical_game=empirical_game,
        lower=run.lo.reshape((n, *shape)).copy(),
        upper=run.up.reshape((n, *shape)).copy(),
        info={
            "delta": delta, "bound": bound, "scheme": scheme, "eps": eps, "time_dependent": time_dependent,
            "per_payoff_confidence": per_payoff_confidence, "max_samples": int(max_samples),
            "seconds": seconds, "batches": run.batches,
        },
    )
