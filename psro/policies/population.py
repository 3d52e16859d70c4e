"""A player's population with its provenance: tabular policies as arrays (:class:`Population`), or policy
objects such as neural networks (:class:`PolicyPopulation`)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

from psro.errors import ConfigError
from psro.policies import Policy, aggregate, as_tabular, check_policy, realization_plans
from psro.sequence_form.game_tree import PlayerInfostates

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Provenance", "Population", "PolicyPopulation", "tabular_policy", "save_populations", "load_populations"]


@dataclass(frozen=True)
class Provenance:
    """Where a policy came from.

    Attributes
    ----------
    iteration : int
        PSRO iteration that added it (0 for the initial policy).
    oracle : str
        ``"initial"`` or the oracle's name.
    meta_solver : str
        The meta-solver whose mixture it responds to (empty for the initial policy).
    value : float
        Its expected payoff against that mixture (NaN when not computed).
    """

    iteration: int
    oracle: str
    meta_solver: str = ""
    value: float = math.nan


class Population:
    """Policies of one player stored as arrays that grow in place.

    ``policies`` is ``(n, num_infostates, num_actions)`` and ``plans`` the
    matching realization plans ``(n, num_sequences)``, computed once when a
    policy is added.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> info = build_game_tree(pyspiel.load_game("kuhn_poker")).infostates[0]
    >>> pop = Population(info)
    >>> pop.add(uniform_policy(info), Provenance(iteration=0, oracle="initial"))
    [0]
    >>> len(pop), pop.plans.shape
    (1, (1, 13))
    """

    def __init__(self, infostates: PlayerInfostates, capacity: int = 16):
        self.infostates = infostates
        self._policies = np.zeros((capacity, infostates.num_infostates, infostates.num_actions))
        self._plans = np.zeros((capacity, infostates.num_sequences))
        self._size = 0
        self.provenance: list = []

    def __len__(self) -> int:
        return self._size

    def __repr__(self) -> str:
        return f"Population(player={self.infostates.player}, size={self._size})"

    @property
    def policies(self) -> np.ndarray:
        """Read-only view ``(n, num_infostates, num_actions)``."""
        view = self._policies[: self._size]
        view.flags.writeable = False
        return view

    @property
    def plans(self) -> np.ndarray:
        """Read-only view of the realization plans ``(n, num_sequences)``."""
        view = self._plans[: self._size]
        view.flags.writeable = False
        return view

    def add(self, policies, provenance) -> list:
        """Append one policy ``(I, A)`` or several ``(k, I, A)``; return their indices.

        ``provenance`` is one :class:`Provenance` or a list with one per policy.
        """
        new = check_policy(policies, self.infostates)
        provenance = [provenance] if isinstance(provenance, Provenance) else list(provenance)
        if len(provenance) != new.shape[0]:
            raise ValueError(f"provenance needs one entry per policy ({new.shape[0]}); got {len(provenance)}.")
        k = new.shape[0]
        if self._size + k > self._policies.shape[0]:
            capacity = max(2 * self._policies.shape[0], self._size + k)
            self._policies = _resize(self._policies, capacity)
            self._plans = _resize(self._plans, capacity)
        idx = list(range(self._size, self._size + k))
        self._policies[idx] = new
        self._plans[idx] = realization_plans(new, self.infostates)
        self._size += k
        self.provenance.extend(provenance)
        return idx

    def aggregate(self, weights) -> np.ndarray:
        """The behaviour policy equivalent to the mixture ``weights`` over this population."""
        return aggregate(self.plans, weights, self.infostates, policies=self.policies)

    def provenance_table(self) -> pd.DataFrame:
        """One row per policy: iteration, oracle, meta_solver, value."""
        import pandas as pd

        return pd.DataFrame([asdict(p) for p in self.provenance],
                            columns=["iteration", "oracle", "meta_solver", "value"])


class PolicyPopulation:
    """Policies of one player kept as objects (neural networks, the uniform policy, tabular arrays), with their
    provenance: what a run with a learned oracle grows, on games of any size.

    ``policies`` is the list of members, each acting on batches of observations
    (``probabilities(obs, mask)``, spec of :mod:`psro.evaluation.env_play`). When
    the game's tree is built, :meth:`tabular` gives the same population as a
    tabular :class:`Population` (each member tabularised once, cached), which the
    exact gap and the exact evaluators read.

    Parameters
    ----------
    player : int
    num_actions : int

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pop = PolicyPopulation(player=0, num_actions=2)
    >>> pop.add(uniform_policy(tree.infostates[0]), Provenance(0, "initial"))
    [0]
    >>> len(pop), pop.tabular(tree).policies.shape
    (1, (1, 6, 2))
    """

    def __init__(self, player: int, num_actions: int):
        self.player, self.num_actions = int(player), int(num_actions)
        self._members: list = []
        self.provenance: list = []
        self._tabular = None   # (tree, Population) once tabularised

    def __len__(self) -> int:
        return len(self._members)

    def __repr__(self) -> str:
        return f"PolicyPopulation(player={self.player}, size={len(self)})"

    @property
    def policies(self) -> list:
        """The members, in the order they joined (a copy of the list; the members themselves are shared)."""
        return list(self._members)

    def add(self, policies, provenance) -> list:
        """Append one policy object (or a list of them); return their indices. ``provenance`` is one
        :class:`Provenance` or a list with one per policy."""
        new = list(policies) if isinstance(policies, (list, tuple)) else [policies]
        provenance = [provenance] if isinstance(provenance, Provenance) else list(provenance)
        if len(provenance) != len(new):
            raise ValueError(f"provenance needs one entry per policy ({len(new)}); got {len(provenance)}.")
        start = len(self._members)
        self._members.extend(new)
        self.provenance.extend(provenance)
        return list(range(start, len(self._members)))

    def tabular(self, tree) -> Population:
        """The members tabularised over ``tree``'s infostates (:func:`tabular_policy`), as a :class:`Population`;
        members already tabularised for this tree are not computed again."""
        if self._tabular is None or self._tabular[0] is not tree:
            self._tabular = (tree, Population(tree.infostates[self.player]))
        table = self._tabular[1]
        for k in range(len(table), len(self._members)):
            table.add(tabular_policy(self._members[k], tree, self.player), self.provenance[k])
        return table

    def provenance_table(self) -> pd.DataFrame:
        """One row per policy: iteration, oracle, meta_solver, value."""
        import pandas as pd

        return pd.DataFrame([{k: getattr(p, k) for k in ("iteration", "oracle", "meta_solver", "value")}
                             for p in self.provenance], columns=["iteration", "oracle", "meta_solver", "value"])


def tabular_policy(policy, tree, player: int) -> np.ndarray:
    """``policy`` as an array ``(num_infostates, num_actions)`` over ``tree``'s infostates of ``player``: an array
    as it is, an object with ``to_tabular(tree, player)`` through it, else its action probabilities on the
    infostates' observation tensors (:func:`psro.sequence_form.game_tree.infostate_tensors`,
    :func:`psro.policies.acting.batch_probabilities`).

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import UniformPolicy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> tabular_policy(UniformPolicy(2), tree, 1)[0].tolist()
    [0.5, 0.5]
    """
    if isinstance(policy, np.ndarray) or isinstance(policy, Policy):
        return as_tabular(policy, tree, player)
    from psro.policies import batch_probabilities
    from psro.sequence_form.game_tree import infostate_tensors

    info = tree.infostates[player]
    obs = infostate_tensors(tree, player)
    probs = np.asarray(batch_probabilities(policy, obs, info.legal_mask.copy()), dtype=np.float64)
    return check_policy(probs / probs.sum(axis=1, keepdims=True), info, argname="policy")[0]




def _resize(arr: np.ndarray, capacity: int) -> np.ndarray:
    out = np.zeros((capacity, *arr.shape[1:]), dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


def save_populations(path, populations, encode=None) -> None:
    """Write populations to one ``.npz`` (no pickle): per player its policies, infostate keys and provenance.

    A :class:`PolicyPopulation`'s members are written through ``encode(policy) -> (architecture, arrays)``
    (:func:`psro.run.checkpoint.member_arrays`): ``architecture_<p>`` holds each member's architecture as JSON,
    ``member_<p>_<k>__<name>`` its arrays.

    Examples
    --------
    >>> import os, tempfile, pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> from psro.policies import uniform_policy
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> pops = [Population(i) for i in tree.infostates]
    >>> _ = [p.add(uniform_policy(p.infostates), Provenance(0, "initial")) for p in pops]
    >>> path = os.path.join(tempfile.mkdtemp(), "population.npz")
    >>> save_populations(path, pops)
    >>> load_populations(path)["policies_0"].shape
    (1, 6, 2)
    """
    arrays = {}
    for p, pop in enumerate(populations):
        table = pop.provenance_table()
        if isinstance(pop, PolicyPopulation):
            if encode is None:
                raise ConfigError("encode", "give how to write policy objects as arrays (for example "
                                  "psro.run.checkpoint.member_arrays).")
            records = [encode(policy) for policy in pop.policies]
            arrays[f"architecture_{p}"] = np.array([json.dumps(arch, sort_keys=True) for arch, _ in records])
            arrays.update({f"member_{p}_{k}__{name}": value for k, (_, named) in enumerate(records)
                           for name, value in named.items()})
        else:
            arrays[f"policies_{p}"] = np.asarray(pop.policies)
            arrays[f"infostates_{p}"] = np.array(pop.infostates.keys, dtype=str)
        arrays[f"iteration_{p}"] = table["iteration"].to_numpy(dtype=np.int64)
        arrays[f"oracle_{p}"] = table["oracle"].to_numpy(dtype=str)
        arrays[f"meta_solver_{p}"] = table["meta_solver"].to_numpy(dtype=str)
        arrays[f"value_{p}"] = table["value"].to_numpy(dtype=np.float64)
    np.savez_compressed(path, num_players=np.int64(len(populations)), **arrays)


def load_populations(path) -> dict:
    """Read the arrays written by :func:`save_populations` (``allow_pickle=False``).

    Examples
    --------
    See :func:`save_populations`.
    """
    from games.memory_limit import check_npz

    check_npz(path, str(getattr(path, "name", None) or "the population .npz"))   # (header shapes, before any array)
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}
