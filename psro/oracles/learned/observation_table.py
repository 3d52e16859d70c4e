"""A policy tabulated by observation: one row of action probabilities per distinct observation it has seen.

:class:`ObservationTablePolicy` is what a model-based response (:mod:`psro.oracles.learned.model_based`) returns:
it needs no game tree, only the observations the sampled episodes visited. An observation that is an
information-state tensor (the default of :func:`games.environment.make_env`) identifies the information state,
so the table is a tabular policy over the information states play reached; observations it never saw get the
uniform policy over their legal actions. It acts on batches of observations like a network (``probabilities_np``),
and saves without pickle (the codec protocol: ``architecture``, ``to_arrays``, ``from_arrays``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict

import numpy as np

from games.validation import is_integer
from psro.oracles.learned.networks import LearnedProvenance

__all__ = ["ObservationTablePolicy", "observation_keys"]

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


class ObservationTablePolicy:
    """Action probabilities looked up by observation; the uniform legal policy where the table has no row.

    Parameters
    ----------
    observations : ndarray, shape (k, obs_dim)
        The distinct observations the table covers.
    probabilities : ndarray, shape (k, num_actions)
        Their action probabilities (rows are renormalised over the legal actions when acting).
    provenance : optional
        Where the policy came from (a :class:`psro.oracles.learned.networks.LearnedProvenance`); saved with it.

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
    """

    mode = "greedy"
    device = "cpu"

    def __init__(self, observations: np.ndarray, probabilities: np.ndarray, provenance=None):
        obs = np.asarray(observations, dtype=np.float32)
        probs = np.asarray(probabilities, dtype=np.float64)
        if obs.ndim != 2 or probs.ndim != 2 or obs.shape[0] != probs.shape[0] or probs.shape[1] < 1:
            raise ValueError("observations (k, obs_dim) and probabilities (k, num_actions) need one row each per "
                             f"observation; got shapes {obs.shape} and {probs.shape}.")
        if not np.all(np.isfinite(probs)) or np.any(probs < 0):
            raise ValueError("probabilities must be finite and non-negative.")
        self.observations, self.table = obs, probs
        self.obs_dim, self.num_actions = int(obs.shape[1]), int(probs.shape[1])
        self.provenance = provenance
        self._rows = {key: i for i, key in enumerate(observation_keys(obs))}

    def __repr__(self) -> str:
        return f"ObservationTablePolicy({len(self._rows)} observations, actions={self.num_actions})"

    def __len__(self) -> int:
        return len(self._rows)

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
        index = np.array([self._rows.get(key, -1) for key in observation_keys(obs)], dtype=np.int64)
        probs = np.ones(mask.shape)
        seen = index >= 0
        probs[seen] = self.table[index[seen]]
        probs *= mask
        total = probs.sum(axis=1, keepdims=True)
        probs = np.where(total > 0, probs, mask.astype(np.float64))   # no mass on a legal action: uniform
        return probs / probs.sum(axis=1, keepdims=True)

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
        >>> from psro.game_tree import build_game_tree
        >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
        >>> ObservationTablePolicy(np.zeros((0, 11)), np.zeros((0, 2))).to_tabular(tree, 0)[0].tolist()
        [0.5, 0.5]
        """
        from psro.game_tree import infostate_tensors

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
        return {"format": FORMAT, "obs_dim": self.obs_dim, "num_actions": self.num_actions, "provenance": prov}

    def to_arrays(self) -> dict:
        """``{"observations": (k, obs_dim) float32, "probabilities": (k, num_actions) float64}``."""
        return {"observations": self.observations.copy(), "probabilities": self.table.copy()}

    @classmethod
    def from_arrays(cls, architecture: Mapping, arrays: Mapping) -> ObservationTablePolicy:
        """Rebuild a policy from :meth:`architecture` and :meth:`to_arrays`."""
        if not isinstance(architecture, Mapping) or architecture.get("format") != FORMAT:
            raise ValueError(f"architecture is not an ObservationTablePolicy architecture (format {FORMAT!r}).")
        obs, probs = np.asarray(arrays["observations"]), np.asarray(arrays["probabilities"])
        for name, arr, width in (("observations", obs, architecture["obs_dim"]),
                                 ("probabilities", probs, architecture["num_actions"])):
            if arr.ndim != 2 or not is_integer(width) or arr.shape[1] != width:
                raise ValueError(f"arrays[{name!r}] has shape {arr.shape}; the architecture says {width} columns.")
        prov = architecture.get("provenance")
        if prov is not None:
            prov = LearnedProvenance(**{k: (math.nan if k == "value" and v is None else v) for k, v in prov.items()})
        return cls(obs, probs, provenance=prov)
