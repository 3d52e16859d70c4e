"""A policy tabulated by observation: one row of action probabilities per distinct observation it has seen.

:class:`ObservationTablePolicy` is what a model-based response (:mod:`psro.oracles.learned.model_based`) returns:
it needs no game tree, only the observations the sampled episodes visited. An observation that is an
information-state tensor (the default of :func:`games.environment.make_env`) identifies the information state,
so the table is a tabular policy over the information states play reached; observations it never saw get the
uniform policy over their legal actions. It acts on batches of observations like a network (``probabilities_np``),
and saves without pickle (the codec protocol: ``architecture``, ``to_arrays``, ``from_arrays``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import asdict

import numpy as np

from games.validation import is_integer
from psro.oracles.learned.networks import LearnedProvenance

__all__ = ["ObservationTablePolicy", "TableStack", "observation_keys", "observation_rows"]

FORMAT = "observation-table-v1"


def observation_keys(obs: np.ndarray) -> list:
    """One hashable key per row of ``obs`` (its float32 bytes): rows equal as float32 share a key.

    Examples
    --------
    >>> keys = observation_keys(np.array([[0, 1], [0, 1], [1, 0]]))
    >>> keys[0] == keys[1], keys[0] == keys[2]
    (True, False)
    """
    rows = np.ascontiguousarray(np.asarray(obs, dtype=np.float32))
    if rows.ndim != 2:
        raise ValueError(f"obs must have shape (batch, obs_dim); got {rows.shape}.")
    return [row.tobytes() for row in rows]


def observation_rows(obs: np.ndarray) -> np.ndarray:
    """The rows of ``obs`` as one array of raw float32 bytes (a numpy void scalar per row): the keys of
    :func:`observation_keys`, in a form numpy sorts, compares and searches without a Python loop.

    Examples
    --------
    >>> keys = observation_rows(np.array([[0, 1], [0, 1], [1, 0]]))
    >>> keys.shape, bool(keys[0] == keys[1]), bool(keys[0] == keys[2])
    ((3,), True, False)
    """
    rows = np.ascontiguousarray(np.asarray(obs, dtype=np.float32))
    if rows.ndim != 2:
        raise ValueError(f"obs must have shape (batch, obs_dim); got {rows.shape}.")
    if rows.shape[1] == 0:
        return np.zeros(rows.shape[0], dtype="V1")
    return rows.view(np.dtype((np.void, 4 * rows.shape[1]))).reshape(-1)


class _RowIndex:
    """Where each key of a query lies in a fixed array of keys (the last of equal keys; -1 where absent).

    The keys are raw float32 rows (:func:`observation_rows`). They are sorted and searched by a hash of their bytes
    (one uint64 per row, where comparing raw bytes is slow), and every hit is checked byte for byte, so the answer
    is exact. Where two different keys share a hash, the keys are sorted and searched as raw bytes instead.

    Examples
    --------
    >>> keys = observation_rows(np.array([[0, 1], [1, 0], [0, 1]]))
    >>> index = _RowIndex(keys)
    >>> index.find(observation_rows(np.array([[0, 1], [1, 1], [1, 0]]))).tolist(), index.distinct
    ([2, -1, 1], 2)
    """

    def __init__(self, keys: np.ndarray):
        self.keys, self.words = keys, _words(keys)
        hashes = None if self.words is None else _hashes(self.words)
        order = np.argsort(keys if hashes is None else hashes, kind="stable")
        ranked = keys[order] if hashes is None else hashes[order]
        same = ranked[1:] == ranked[:-1]
        if hashes is not None and not np.all(self.words[order[1:][same]] == self.words[order[:-1][same]]):
            hashes, order = None, np.argsort(keys, kind="stable")   # (two keys share a hash)
            ranked = keys[order]
            same = ranked[1:] == ranked[:-1]
        self.order, self.sorted, self.by_hash = order, ranked, hashes is not None
        self.distinct = int(keys.size - np.count_nonzero(same))

    def find(self, keys: np.ndarray) -> np.ndarray:
        if self.sorted.size == 0:
            return np.full(keys.shape[0], -1, dtype=np.int64)
        words = _words(keys) if self.by_hash else None
        pos = np.searchsorted(self.sorted, keys if words is None else _hashes(words), side="right") - 1
        row = np.where(pos >= 0, self.order[np.maximum(pos, 0)], -1)
        hit = row >= 0   # (checked byte for byte: 32-bit words where the keys have them)
        if words is None:
            hit[hit] = self.keys[row[hit]] == keys[hit]
        else:
            hit[hit] = np.all(self.words[row[hit]] == words[hit], axis=1)
        return np.where(hit, row, -1).astype(np.int64)


@functools.cache
def _weights(width: int) -> np.ndarray:
    """Fixed random odd multipliers of the hash of rows of ``width`` 32-bit words."""
    return np.random.default_rng(width).integers(0, 2 ** 63, size=width, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def _words(keys: np.ndarray) -> np.ndarray | None:
    """The raw rows of ``keys`` as ``(n, width)`` 32-bit words (a view where it can be); None where the rows are
    not whole words."""
    width = keys.dtype.itemsize // 4
    if keys.dtype.itemsize != 4 * width or width == 0:
        return None
    return np.ascontiguousarray(keys).view(np.uint32).reshape(-1, width)


def _hashes(words: np.ndarray) -> np.ndarray:
    """One uint64 per row of ``words``: its words times fixed random multipliers, summed modulo 2**64 (integer
    arithmetic, so the same row gives the same hash in any batch)."""
    return words.astype(np.uint64) @ _weights(words.shape[1])


def _normalised(probs: np.ndarray, seen: np.ndarray, rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``rows`` where ``seen`` (ones elsewhere), restricted to ``mask`` and renormalised; uniform over the legal
    actions where a row has no legal mass."""
    probs[seen] = rows
    probs *= mask
    total = probs.sum(axis=1, keepdims=True)
    probs = np.where(total > 0, probs, mask.astype(np.float64))
    return probs / probs.sum(axis=1, keepdims=True)


class ObservationTablePolicy:
    """Action probabilities looked up by observation; the uniform legal policy where the table has no row.

    Parameters
    ----------
    observations : ndarray, shape (k, key_size)
        The distinct observations the table covers (their first ``key_size`` entries, the table's keys).
    probabilities : ndarray, shape (k, num_actions)
        Their action probabilities (rows are renormalised over the legal actions when acting).
    provenance : optional
        Where the policy came from (a :class:`psro.oracles.learned.networks.LearnedProvenance`); saved with it.
    obs_dim : int, optional
        The size of the observations it acts on (default ``key_size``): each is looked up by its first
        ``key_size`` entries.

    Examples
    --------
    >>> table = ObservationTablePolicy(np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]]))
    >>> obs = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32)
    >>> table.probabilities_np(obs, np.ones((3, 2), bool)).tolist()   # the last row is unseen: uniform
    [[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]
    >>> same = ObservationTablePolicy.from_arrays(table.architecture(), table.to_arrays())
    >>> mask = np.ones((3, 2), bool)
    >>> np.array_equal(same.probabilities_np(obs, mask), table.probabilities_np(obs, mask))
    True
    >>> by_first = ObservationTablePolicy(np.array([[1.0]]), np.array([[0.0, 1.0]]), obs_dim=2)
    >>> by_first.probabilities_np(obs, mask).tolist()   # keyed by the first entry alone
    [[0.0, 1.0], [0.5, 0.5], [0.0, 1.0]]
    """

    mode = "greedy"
    device = "cpu"

    def __init__(self, observations: np.ndarray, probabilities: np.ndarray, provenance=None, obs_dim=None):
        obs = np.asarray(observations, dtype=np.float32)
        probs = np.asarray(probabilities, dtype=np.float64)
        if obs.ndim != 2 or probs.ndim != 2 or obs.shape[0] != probs.shape[0] or probs.shape[1] < 1:
            raise ValueError("observations (k, obs_dim) and probabilities (k, num_actions) need one row each per "
                             f"observation; got shapes {obs.shape} and {probs.shape}.")
        if not np.all(np.isfinite(probs)) or np.any(probs < 0):
            raise ValueError("probabilities must be finite and non-negative.")
        self.observations, self.table = obs, probs
        self.key_size, self.num_actions = int(obs.shape[1]), int(probs.shape[1])
        if obs_dim is not None and (not is_integer(obs_dim) or obs_dim < self.key_size):
            raise ValueError(f"obs_dim ({obs_dim!r}) must be an int of at least the observations' size "
                             f"({self.key_size}).")
        self.obs_dim = self.key_size if obs_dim is None else int(obs_dim)
        self.provenance = provenance
        self.keys = observation_rows(obs)
        self._index = _RowIndex(self.keys)
        self._distinct = self._index.distinct

    def __repr__(self) -> str:
        return f"ObservationTablePolicy({self._distinct} observations, actions={self.num_actions})"

    def __len__(self) -> int:
        return self._distinct

    @property
    def layout(self) -> tuple:
        """``(obs_dim, key_size, num_actions)``: tables with the same layout act as one :class:`TableStack`."""
        return self.obs_dim, self.key_size, self.num_actions

    def rows_of(self, obs: np.ndarray) -> np.ndarray:
        """The table row of each row of ``obs`` (the last of equal observations), -1 where the table has none.

        Examples
        --------
        >>> ObservationTablePolicy(np.eye(2), np.ones((2, 2))).rows_of(np.array([[0, 1], [1, 1]])).tolist()
        [1, -1]
        """
        return self._index.find(observation_rows(np.asarray(obs)[:, :self.key_size]))

    # ------------------------------------------------------------ acting
    def probabilities_np(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``(batch, num_actions)`` probabilities, zero on illegal actions; unseen observations play uniformly.

        Examples
        --------
        See :class:`ObservationTablePolicy`.
        """
        mask = np.asarray(mask, dtype=bool)
        obs = np.asarray(obs, dtype=np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.obs_dim or mask.shape != (obs.shape[0], self.num_actions):
            raise ValueError(f"obs must have shape (batch, {self.obs_dim}) and mask (batch, {self.num_actions}); "
                             f"got {obs.shape} and {mask.shape}.")
        index = self.rows_of(obs)
        seen = index >= 0
        return _normalised(np.ones(mask.shape), seen, self.table[index[seen]], mask)

    def action_probabilities(self, state, player: int) -> np.ndarray:
        """Probabilities ``(num_actions,)`` at a pyspiel ``state`` for ``player`` (its information-state tensor).

        Examples
        --------
        >>> import pyspiel
        >>> state = pyspiel.load_game("kuhn_poker").new_initial_state(); state.apply_action(0); state.apply_action(1)
        >>> ObservationTablePolicy(np.zeros((0, 11)), np.zeros((0, 2))).action_probabilities(state, 0).tolist()
        [0.5, 0.5]
        """
        obs = np.asarray(state.information_state_tensor(player), dtype=np.float32).reshape(1, -1)
        mask = np.zeros((1, self.num_actions), dtype=bool)
        mask[0, state.legal_actions(player)] = True
        return self.probabilities_np(obs, mask)[0]

    def to_tabular(self, tree, player: int, greedy: bool | None = None) -> np.ndarray:
        """The policy over ``tree``'s information states of ``player`` (``greedy``: one-hot on the most likely
        legal action).

        Examples
        --------
        >>> import pyspiel
        >>> from psro.sequence_form.game_tree import build_game_tree
        >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
        >>> ObservationTablePolicy(np.zeros((0, 11)), np.zeros((0, 2))).to_tabular(tree, 0)[0].tolist()
        [0.5, 0.5]
        """
        from psro.sequence_form.game_tree import infostate_tensors

        info = tree.infostates[player]
        probs = self.probabilities_np(infostate_tensors(tree, player), info.legal_mask.astype(bool))
        if greedy:
            best = np.where(info.legal_mask.astype(bool), probs, -1.0).argmax(axis=1)
            probs = np.zeros_like(probs)
            probs[np.arange(len(best)), best] = 1.0
        return probs

    def to_device(self, device) -> ObservationTablePolicy:
        """A table lives on the CPU: returns itself (the interface of a network's ``to_device``)."""
        return self

    # ------------------------------------------------------------ saving without pickle
    def architecture(self) -> dict:
        """Sizes and provenance as plain JSON types (the codec protocol)."""
        prov = None
        if self.provenance is not None:
            prov = {k: (None if isinstance(v, float) and math.isnan(v) else v)
                    for k, v in asdict(self.provenance).items()}
        return {"format": FORMAT, "obs_dim": self.obs_dim, "key_size": self.key_size, "num_actions": self.num_actions,
                "provenance": prov}

    def to_arrays(self) -> dict:
        """``{"observations": (k, obs_dim) float32, "probabilities": (k, num_actions) float64}``."""
        return {"observations": self.observations.copy(), "probabilities": self.table.copy()}

    @classmethod
    def from_arrays(cls, architecture: Mapping, arrays: Mapping) -> ObservationTablePolicy:
        """Rebuild a policy from :meth:`architecture` and :meth:`to_arrays`."""
        if not isinstance(architecture, Mapping) or architecture.get("format") != FORMAT:
            raise ValueError(f"architecture is not an ObservationTablePolicy architecture (format {FORMAT!r}).")
        obs, probs = np.asarray(arrays["observations"]), np.asarray(arrays["probabilities"])
        key_size = architecture.get("key_size", architecture["obs_dim"])   # (saved before keys: the whole of it)
        for name, arr, width in (("observations", obs, key_size),
                                 ("probabilities", probs, architecture["num_actions"])):
            if arr.ndim != 2 or not is_integer(width) or arr.shape[1] != width:
                raise ValueError(f"arrays[{name!r}] has shape {arr.shape}; the architecture says {width} columns.")
        prov = architecture.get("provenance")
        if prov is not None:
            prov = LearnedProvenance(**{k: (math.nan if k == "value" and v is None else v) for k, v in prov.items()})
        return cls(obs, probs, provenance=prov, obs_dim=architecture["obs_dim"])


class TableStack:
    """Several :class:`ObservationTablePolicy` acting as one: row ``j`` of a batch played by member
    ``members[j]``, every row looked up in one search (a population of tables opposing a learner asks once per
    step, not once per member).

    The members' rows are concatenated and searched by ``(member, observation)`` keys (:class:`_RowIndex` over
    the member's number followed by the observation's bytes), so the cost of a step does not grow with the number
    of members. Each row's probabilities are exactly its member's ``probabilities_np``.

    Examples
    --------
    >>> a = ObservationTablePolicy(np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]]))
    >>> b = ObservationTablePolicy(np.eye(2)[:1], np.array([[1.0, 0.0]]))
    >>> stack = TableStack([a, b])
    >>> obs, mask = np.eye(2, dtype=np.float32)[[0, 1, 0, 1]], np.ones((4, 2), bool)
    >>> stack.probabilities_np(np.array([0, 0, 1, 1]), obs, mask).tolist()   # b has no row for [0, 1]
    [[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.5, 0.5]]
    """

    def __init__(self, members):
        members = list(members)
        if not members or not all(isinstance(m, ObservationTablePolicy) for m in members):
            raise TypeError("members must be a non-empty sequence of ObservationTablePolicy.")
        layouts = {m.layout for m in members}
        if len(layouts) != 1:
            raise ValueError(f"members must share obs_dim, key_size and num_actions; got {sorted(layouts)}.")
        (self.obs_dim, self.key_size, self.num_actions), = layouts
        self.members = members
        owner = np.repeat(np.arange(len(members)), [m.keys.size for m in members])
        self._table = np.concatenate([m.table for m in members])
        self._index = _RowIndex(_tagged(owner, np.concatenate([m.keys for m in members]), self.key_size))

    def probabilities_np(self, members: np.ndarray, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """``(batch, num_actions)`` probabilities of row ``j`` under ``self.members[members[j]]``."""
        members = np.asarray(members, dtype=np.int64)
        keys = observation_rows(np.asarray(obs)[:, :self.key_size])
        row = self._index.find(_tagged(members, keys, self.key_size))
        seen = row >= 0
        return _normalised(np.ones(np.shape(mask)), seen, self._table[row[seen]], np.asarray(mask, dtype=bool))


def _tagged(members: np.ndarray, keys: np.ndarray, key_size: int) -> np.ndarray:
    """Keys of :func:`observation_rows` (``key_size`` float32 entries each) prefixed with their member's number (a
    uint32 word): one raw row per ``(member, observation)``."""
    rows = np.empty((keys.size, key_size + 1), dtype=np.uint32)
    rows[:, 0] = members
    if key_size:
        rows[:, 1:] = np.ascontiguousarray(keys).view(np.uint32).reshape(-1, key_size)
    return rows.view(np.dtype((np.void, 4 * (key_size + 1)))).reshape(-1)
