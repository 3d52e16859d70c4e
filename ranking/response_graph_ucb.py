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

How it is computed. None of the schemes looks at the outcomes between two
resolution events, so the schedule of the next ``B`` samples is drawn at once.
Outcomes are drawn per profile, in blocks that double, and the running
statistics and confidence bounds after each outcome are computed for the whole
block with cumulative sums (one vectorised bound evaluation per block). A
batch then only looks up, for every step, the state of the sampled profile and
of the other end of each of its open edges, finds each edge's first
separation, and keeps the batch up to the first resolution that changes the
schedule. Outcomes not used yet wait for the next time their profile is
sampled, so the run equals the one-sample-at-a-time algorithm fed with
per-profile outcome streams; those left when the run ends are not recorded.
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
    """Every profile's outcomes in the order drawn, with the statistics and bounds after each one.

    Row ``start[s] + j`` of ``data`` holds profile ``s`` after ``j`` samples of
    this run: ``data[row, 0:3]`` the mean, lower and upper bounds and
    ``data[row, 3:5]`` the sums and sums of squares of those ``j`` outcomes, each
    per player. Row ``start[s]`` is the state the run started from. A profile
    that needs more rows than it has draws a block of outcomes (at least as
    many as it has, so blocks double) and moves, with its old rows, to the end
    of ``data``.
    """

    def __init__(self, sampler, rng, cnt, tot, sq, bounds, first_block: int):
        self.sampler, self.rng, self.bounds, self.first_block = sampler, rng, bounds, first_block
        self.before = (cnt.T.astype(float), tot.T.copy(), sq.T.copy())   # (S, n) statistics before the run
        cb = bounds(*self.before)
        self.data = np.zeros((cnt.shape[1], 5, cnt.shape[0]))
        self.data[:, 0], self.data[:, 1], self.data[:, 2] = cb.mean, cb.lower, cb.upper
        self.start = np.arange(cnt.shape[1])
        self.length = np.ones(cnt.shape[1], dtype=np.int64)

    def ensure(self, need: np.ndarray, room: int, soon=None) -> None:
        """Make row ``need[s]`` exist for every profile, drawing blocks of at least ``first_block``.

        A block is as large as the rows a profile already has (so blocks double), but
        at most ``room`` (the samples left in the budget) beyond what is needed.
        Profiles flagged in ``soon`` that have fewer than ``first_block`` rows
        beyond ``need`` get their next block in the same draw.
        """
        short = need >= self.length
        if soon is not None and short.any():
            short |= soon & (self.length - need <= self.first_block)
        grow = short.nonzero()[0]
        if not grow.size:
            return
        old = self.length[grow]
        m = np.maximum(need[grow] + 1 - old, np.minimum(np.maximum(old, self.first_block), room))
        new_len = old + m
        begins = new_len.cumsum() - new_len
        j = np.arange(begins[-1] + new_len[-1]) - begins.repeat(new_len)   # sample index of each row
        last_old = (old - 1).repeat(new_len)
        # old rows are copied; new rows start as a copy of the profile's last row (its running sums)
        block = self.data[self.start[grow].repeat(new_len) + np.minimum(j, last_old)]
        fresh = j > last_old
        who = grow.repeat(new_len)[fresh]
        out = np.asarray(self.sampler.draw(who, self.rng), dtype=float)
        pair = np.concatenate([out, out * out], axis=1)
        csum = pair.cumsum(0)
        seg = m.cumsum() - m   # where each profile's new rows start among the fresh rows
        csum -= (csum[seg] - pair[seg]).repeat(m, axis=0)
        rows = block[fresh]
        rows[:, 3:5] += csum.reshape(len(out), 2, -1)
        cnt, tot, sq = self.before
        cb = self.bounds(cnt[who] + j[fresh, None], tot[who] + rows[:, 3], sq[who] + rows[:, 4])
        rows[:, 0], rows[:, 1], rows[:, 2] = cb.mean, cb.lower, cb.upper
        block[fresh] = rows
        self.start[grow] = len(self.data) + begins
        self.length[grow] = new_len
        self.data = np.concatenate([self.data, block])

    def state(self, used: np.ndarray) -> np.ndarray:
        """``(mean, lower, upper, sum, sum of squares)`` per profile after ``used`` samples, shape (S, 5, n)."""
        return self.data[self.start + used]


class _Run:
    """Mutable state of one run (kept private; the public entry is :func:`response_graph_ucb`)."""

    def __init__(self, sampler, eg, bound, delta, eps, td_delta, scheme, rng, max_samples, first_block=64):
        self.eg, self.scheme, self.rng, self.max_samples = eg, scheme, rng, max_samples
        base, relaxed = parse_bound(bound)
        lo, hi = (float(x) for x in sampler.payoff_range)

        def bounds(cnt, tot, sq):
            level = time_dependent_delta(delta, cnt) if td_delta else delta
            return bounds_kernel(cnt, tot, sq, level, base, relaxed, lo, hi, eps)

        shape = sampler.shape
        self.n, self.S = len(shape), int(np.prod(shape))
        self.edges = profile_edges(shape)
        E = len(self.edges.u)
        self.cnt = eg.count.reshape(self.n, self.S)
        self.outcomes = _Outcomes(sampler, rng, self.cnt, eg.total.reshape(self.n, self.S),
                                  eg.total_sq.reshape(self.n, self.S), bounds, first_block)
        self.used = np.zeros(self.S, dtype=np.int64)   # samples of each profile in this run
        self.unresolved = np.ones(E, dtype=bool)
        self.better_is_v = np.zeros(E, dtype=bool)
        self.valence = np.full(self.S, self.edges.incidence.shape[1], dtype=np.int64)
        self.total = 0
        self.batches = 0
        if scheme == "uniform-exhaustive":
            self.order = rng.permutation(E)
            self.pointer = 0

    # ---- schedules
    def _schedule(self, size: int) -> np.ndarray:
        rng, e = self.rng, self.edges
        if self.scheme == "uniform-exhaustive":
            while not self.unresolved[self.order[self.pointer]]:
                self.pointer += 1
            k = self.order[self.pointer]
            return np.where(rng.integers(0, 2, size=size) == 1, e.v[k], e.u[k])
        if self.scheme == "uniform":
            open_edges = self.unresolved.nonzero()[0]
            k = open_edges[rng.integers(0, len(open_edges), size=size)]
            return np.where(rng.integers(0, 2, size=size) == 1, e.v[k], e.u[k])
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

    def _resolve(self, edge_ids: np.ndarray, better_is_v: np.ndarray) -> None:
        e = self.edges
        self.unresolved[edge_ids] = False
        self.better_is_v[edge_ids] = better_is_v
        self.valence -= np.bincount(np.concatenate([e.u[edge_ids], e.v[edge_ids]]), minlength=self.S)

    # ---- phases
    def explore(self) -> None:
        """Sample every profile without samples once, then check every edge."""
        missing = (self.cnt.min(axis=0) == 0).nonzero()[0][: self.max_samples]
        self.used[missing] = 1
        self.total = len(missing)
        self.outcomes.ensure(self.used, self.max_samples)
        e = self.edges
        now = self.outcomes.state(self.used)
        a, b = now[e.u, :3, e.player], now[e.v, :3, e.player]
        counted = (self.cnt.min(axis=0) + self.used > 0)
        hit = ((b[:, 0] >= a[:, 0]) & (a[:, 2] < b[:, 1]) | (b[:, 0] < a[:, 0]) & (b[:, 2] < a[:, 1]))
        hit = (hit & counted[e.u] & counted[e.v]).nonzero()[0]
        if hit.size:
            self._resolve(hit, b[hit, 0] >= a[hit, 0])

    def step(self, size: int) -> int:
        """Schedule a batch, check it, and keep it up to the first resolution that changes the schedule.

        Returns the samples kept.

        Every sampled profile is compared, at each open incident edge, with the
        state of the other endpoint at that step. Each edge resolves at its first
        separation. ``uniform-exhaustive`` keeps the batch until the edge in focus
        resolves, ``valence-weighted`` and ``uniform`` until the first resolution
        (it changes their probabilities). ``count-weighted`` keeps the whole
        batch: a profile that runs out of open edges just drops out of the rest of
        it, which leaves the order of the others as it was.
        """
        e, S = self.edges, self.S
        sched = self._schedule(size)
        B = len(sched)
        counts = (sched[:, None] == np.arange(S)).cumsum(0)   # (B, S): samples in the batch after each step
        counts += self.used
        self.outcomes.ensure(counts[-1], self.max_samples - self.total, self.valence > 0)
        inc = e.incidence[sched]
        tt, jj = self.unresolved[inc].nonzero()   # open edges at each sampled profile, in time order
        if not tt.size:
            self.used = counts[-1]
            self.total += B
            return B
        k, s = inc[tt, jj], sched[tt]
        other = e.neighbour[s, jj]
        p = e.player[k]
        data, start = self.outcomes.data, self.outcomes.start
        a = data[start[s] + counts[tt, s], :3, p]
        b = data[start[other] + counts[tt, other], :3, p]
        s_is_v = e.v[k] == s
        b_better = (b[:, 0] > a[:, 0]) | ((b[:, 0] == a[:, 0]) & ~s_is_v)   # ties favour the v endpoint
        hit = np.where(b_better, a[:, 2] < b[:, 1], b[:, 2] < a[:, 1]).nonzero()[0]
        # first separation of each edge, and whether v is the better end there (time * 2 + bit)
        first = np.full(len(e.u), 2 * B)
        np.minimum.at(first, k[hit], tt[hit] * 2 + (b_better[hit] != s_is_v[hit]))
        ids = (first < 2 * B).nonzero()[0]
        ev_t, v_better = first[ids] >> 1, (first[ids] & 1).astype(bool)
        if self.scheme == "count-weighted":
            ends = np.concatenate([e.u[ids], e.v[ids]])
            last = np.full(S, -1)
            np.maximum.at(last, ends, np.concatenate([ev_t, ev_t]))
            dropout = np.where(np.bincount(ends, minlength=S) == self.valence, last, B)
            kept = sched[np.arange(B) <= dropout[sched]]
            self.used += np.bincount(kept, minlength=S)
            self.total += kept.size
            if ids.size:
                self._resolve(ids, v_better)
            return kept.size
        stop = B - 1
        if ids.size:
            if self.scheme == "uniform-exhaustive":
                focus = first[self.order[self.pointer]]
                stop = int(focus >> 1) if focus < 2 * B else B - 1
            else:
                stop = int(ev_t.min())
        self.used = counts[stop]
        self.total += stop + 1
        now = ev_t <= stop
        if now.any():
            self._resolve(ids[now], v_better[now])
        return stop + 1

    def finish(self) -> np.ndarray:
        """Add the samples used to the empirical game; return the final state, shape (S, 5, n)."""
        now = self.outcomes.state(self.used)
        self.cnt += self.used
        self.eg.total.reshape(self.n, self.S)[...] += now[:, 3].T
        self.eg.total_sq.reshape(self.n, self.S)[...] += now[:, 4].T
        return now


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
        with ``"clopper-pearson"`` bounds (each outcome drawn costs two beta
        quantiles), else 1024 for ``"count-weighted"`` (whose batches never stop
        early) and 256 for the others. The first draw gives every profile
        ``batch_size // num_profiles + 1`` outcomes. They change speed, not the
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
        batch_size = min(64 if base == "clopper-pearson" else 1024 if scheme == "count-weighted" else 256,
                         max_batch_size)
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
    first_block = max(1, batch_size // math.prod(smp.shape)) + 1   # the first draw covers the first batch
    run = _Run(smp, empirical_game, bound, eff_delta, eps, time_dependent, scheme, generator, int(max_samples),
               first_block)
    run.explore()
    size = batch_size
    while run.unresolved.any() and run.total < run.max_samples:
        room = run.max_samples - run.total
        asked = min(size, room, max(16, (1 << 22) // run.S))   # the batch holds a (size, S) array of counts
        used = run.step(asked)
        run.batches += 1
        size = min(max_batch_size, 2 * size) if used >= asked else max(batch_size, used)
    final = run.finish()
    seconds = time.perf_counter() - start
    e = run.edges
    better = run.better_is_v.copy()
    open_ = run.unresolved
    mean = final[:, 0].T
    better[open_] = mean[e.player[open_], e.u[open_]] <= mean[e.player[open_], e.v[open_]]
    num_open = int(open_.sum())
    if num_open:
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
        lower=final[:, 1].T.reshape((n, *shape)).copy(),
        upper=final[:, 2].T.reshape((n, *shape)).copy(),
        info={
            "delta": delta, "bound": bound, "scheme": scheme, "eps": eps, "time_dependent": time_dependent,
            "per_payoff_confidence": per_payoff_confidence, "max_samples": int(max_samples),
            "seconds": seconds, "batches": run.batches,
        },
    )
