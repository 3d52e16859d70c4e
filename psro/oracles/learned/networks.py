"""Neural policies: population members that act on batches of observations, with the interface of tabular ones.

A :class:`NeuralPolicy` is a small torch network that maps a flat observation
(the game's information-state tensor, any shape flattened) to one score per
action. Illegal actions are masked out. The scores are read either as logits
(``mode="softmax"``, what PPO learns) or as action values (``mode="greedy"``,
what DQN learns: the policy plays the best legal action, the lowest index on
ties).

It is a first-class population member: :meth:`NeuralPolicy.probabilities_np`
answers a whole batch ``(obs, mask)`` of numpy arrays at once (what sampled
play calls), and for a game small enough for :mod:`psro.sequence_form.game_tree`,
:meth:`NeuralPolicy.to_tabular` evaluates the network on every infostate and
returns the usual ``(num_infostates, num_actions)`` array, so exact
evaluation and NashConv work unchanged (the rows' observations are
:func:`psro.sequence_form.game_tree.infostate_tensors`).

Saving never pickles: :meth:`NeuralPolicy.to_arrays` (the weights as plain
numpy arrays) and :meth:`NeuralPolicy.architecture` (a JSON-able dict) are
all that :meth:`NeuralPolicy.from_arrays` needs, and pickling a policy (as an
executor does with results) goes through the same two (and comes back on the CPU). A torch ``state_dict``
file read with ``torch.load(..., weights_only=True)`` is also supported
(:meth:`NeuralPolicy.save`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from games.validation import is_integer
from psro.errors import ConfigError
from psro.policies.population import Provenance
from psro.sequence_form.game_tree import GameTree, infostate_tensors

__all__ = ["FORMAT", "MODES", "LearnedProvenance", "NeuralPolicy", "PolicyNetwork", "game_sizes", "network_parameters",
           "torch_device"]

MODES = ("softmax", "greedy")
FORMAT = "psro.NeuralPolicy/1"   # the ``format`` entry of :meth:`NeuralPolicy.architecture` and of state dicts
_MASKED = -1e9  # score given to illegal actions: finite, so softmax never sees -inf - -inf


@dataclass(frozen=True)
class LearnedProvenance(Provenance):
    """Where a learned policy came from: :class:`psro.policies.population.Provenance` plus training facts.

    Attributes
    ----------
    training_steps : int
        Learner decisions (environment steps) used for training.
    seed : int or None
        The seed the training run used.

    Examples
    --------
    >>> LearnedProvenance(iteration=3, oracle="dqn", meta_solver="nash", training_steps=2000, seed=7).seed
    7
    """

    training_steps: int = 0
    seed: int | None = None


def network_parameters(obs_dim: int, num_actions: int, hidden) -> int:
    """The number of weights and biases of :class:`PolicyNetwork` ``(obs_dim, num_actions, hidden)``, counted in
    Python ints (so a hostile size never overflows).

    Examples
    --------
    >>> network_parameters(11, 2, (8,))   # (11 + 1) * 8 + (8 + 1) * 2
    114
    """
    sizes = (int(obs_dim), *(int(h) for h in hidden), int(num_actions))
    return sum((a + 1) * b for a, b in itertools.pairwise(sizes))


class PolicyNetwork(nn.Module):
    """A multilayer perceptron from an observation vector to one score per action.

    Parameters
    ----------
    obs_dim : int
    num_actions : int
    hidden : tuple of int
        Widths of the hidden layers (ReLU between them).

    Examples
    --------
    >>> net = PolicyNetwork(11, 2, hidden=(8,))
    >>> tuple(net(torch.zeros(5, 11)).shape)
    (5, 2)
    """

    def __init__(self, obs_dim: int, num_actions: int, hidden: tuple = (64,)):
        from games.memory_limit import check_memory

        check_memory(4 * network_parameters(obs_dim, num_actions, hidden),
                     f"a network with obs_dim={int(obs_dim)}, hidden={[int(h) for h in hidden]} and "
                     f"{int(num_actions)} actions (float32 weights)", "Use fewer or narrower hidden layers.")
        super().__init__()
        sizes = (int(obs_dim), *(int(h) for h in hidden))
        layers: list = []
        for a, b in itertools.pairwise(sizes):
            layers += [nn.Linear(a, b), nn.ReLU()]
        layers.append(nn.Linear(sizes[-1], int(num_actions)))
        self.layers = nn.Sequential(*layers)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Scores ``(batch, num_actions)`` of a batch of observations ``(batch, obs_dim)``."""
        return self.layers(obs)


def masked_scores(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Scores with illegal actions (``mask`` False) pushed to a large negative number."""
    return scores.masked_fill(~mask, _MASKED)


def torch_device(device) -> torch.device:
    """``device`` (a string such as ``"cpu"`` or ``"cuda:0"``, or a ``torch.device``) checked: ``ValueError``
    naming ``device`` when torch does not know it or it is a GPU this machine does not have.

    Examples
    --------
    >>> torch_device("cpu")
    device(type='cpu')
    >>> torch_device("tpu7")
    Traceback (most recent call last):
    ...
    ValueError: device must be a torch device such as 'cpu' or 'cuda'; got 'tpu7'.
    """
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"device must be a torch device such as 'cpu' or 'cuda'; got {device!r}.") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} needs a CUDA GPU, and torch sees none here; use device='cpu'.")
    return dev


def game_sizes(game) -> tuple:
    """``(obs_dim, num_actions)`` of ``game``: the flat observation length and the number of distinct actions.

    Those of :func:`games.environment.observation_size` and
    :func:`games.environment.num_actions` (any game the batched environment
    plays): an OpenSpiel game's information-state tensor, flattened
    (phantom_ttt's ``[1, 108]`` is 108), or an environment game's own sizes.

    Examples
    --------
    >>> import pyspiel
    >>> game_sizes(pyspiel.load_game("kuhn_poker"))
    (11, 2)
    >>> game_sizes(pyspiel.load_game("phantom_ttt"))
    (108, 9)
    """
    from games.environment import num_actions, observation_size

    return int(observation_size(game)), int(num_actions(game))


class NeuralPolicy:
    """A policy network with legal-action masking: acts on batches of observations, and has a tabular form.

    Parameters
    ----------
    obs_dim : int
        Length of the flat observation (:func:`game_sizes`).
    num_actions : int
        Number of distinct actions of the game.
    hidden : tuple of int
        Hidden layer widths.
    mode : {"softmax", "greedy"}
        Read the scores as logits, or play the best-scoring legal action.
    provenance : LearnedProvenance, optional
    device : str or torch.device
        Where the network lives (``"cpu"``, or a GPU for training); acting
        always returns CPU numpy arrays.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.sequence_form.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> _ = torch.manual_seed(0)
    >>> policy = NeuralPolicy.for_game(tree.game, hidden=(16,))
    >>> table = policy.to_tabular(tree, player=0)
    >>> table.shape, bool(np.allclose(table.sum(axis=1), 1.0))
    ((6, 2), True)
    >>> probs = policy.probabilities_np(np.zeros((3, 11), np.float32), np.array([[True, True]] * 2 + [[False, True]]))
    >>> probs.dtype, probs.sum(axis=1).tolist(), probs[2].tolist()
    (dtype('float64'), [1.0, 1.0, 1.0], [0.0, 1.0])
    """

    def __init__(self, obs_dim: int, num_actions: int, hidden: tuple = (64,), mode: str = "softmax",
                 provenance: LearnedProvenance | None = None, device="cpu"):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {mode!r}.")
        for name, value in (("obs_dim", obs_dim), ("num_actions", num_actions)):
            if not is_integer(value) or value < 1:
                raise ValueError(f"{name} must be a positive int; got {value!r}.")
        hidden = tuple(hidden)
        if not all(is_integer(h) and h > 0 for h in hidden):
            raise ValueError(f"hidden must be a tuple of positive ints (layer widths); got {hidden!r}.")
        self.obs_dim, self.num_actions = int(obs_dim), int(num_actions)
        self.hidden = tuple(int(h) for h in hidden)
        self.mode = mode
        self.provenance = provenance
        self.device = torch_device(device)
        self.network = PolicyNetwork(self.obs_dim, self.num_actions, self.hidden).to(self.device)

    @classmethod
    def for_game(cls, game, hidden: tuple = (64,), mode: str = "softmax", **kwargs) -> NeuralPolicy:
        """A fresh policy sized for ``game`` (:func:`game_sizes`: observation length and action count).

        Examples
        --------
        >>> import pyspiel
        >>> p = NeuralPolicy.for_game(pyspiel.load_game("kuhn_poker"))
        >>> p.obs_dim, p.num_actions
        (11, 2)
        """
        obs_dim, num_actions = game_sizes(game)
        return cls(obs_dim, num_actions, hidden=hidden, mode=mode, **kwargs)

    def __repr__(self) -> str:
        return (f"NeuralPolicy(obs_dim={self.obs_dim}, actions={self.num_actions}, hidden={self.hidden}, "
                f"mode={self.mode!r})")

    def check_fits(self, obs_dim: int, num_actions: int, argname: str = "policy") -> None:
        """``ValueError`` naming ``argname`` unless the network takes ``obs_dim`` inputs and ``num_actions`` outputs.

        Examples
        --------
        >>> try:
        ...     NeuralPolicy(11, 2).check_fits(108, 9, argname="warm_start")
        ... except ValueError as error:
        ...     print(str(error).split(",")[0])
        warm_start: the network takes observations of size 11 and scores 2 actions
        """
        if (int(obs_dim), int(num_actions)) != (self.obs_dim, self.num_actions):
            raise ConfigError(argname, f"the network takes observations of size {self.obs_dim} and scores "
                              f"{self.num_actions} actions, but the game's observations have size {int(obs_dim)} "
                              f"and it has {int(num_actions)} actions; build the policy with "
                              "NeuralPolicy.for_game(game).")

    # ------------------------------------------------------------ acting
    def probabilities(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Action probabilities ``(batch, num_actions)`` of torch tensors on the network's device, zero on
        illegal actions.

        Examples
        --------
        >>> p = NeuralPolicy(3, 2, hidden=(4,), mode="greedy")
        >>> probs = p.probabilities(torch.zeros(1, 3), torch.tensor([[False, True]]))
        >>> probs.tolist()
        [[0.0, 1.0]]
        """
        with torch.no_grad():
            scores = masked_scores(self.network(obs), mask)
            if self.mode == "softmax":
                return torch.softmax(scores, dim=-1) * mask
            return nn.functional.one_hot(scores.argmax(dim=-1), self.num_actions).to(scores.dtype)

    def probabilities_np(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Action probabilities of a batch, numpy in and out: ``(batch, num_actions)`` float64 on the CPU,
        rows summing to one over the legal actions (zero elsewhere).

        Parameters
        ----------
        obs : ndarray, shape (batch, obs_dim)
            Flat observations (cast to float32).
        mask : ndarray of bool, shape (batch, num_actions)
            Legal actions; every row needs one.

        Examples
        --------
        See :class:`NeuralPolicy`.
        """
        obs = np.asarray(obs, dtype=np.float32)
        mask = np.asarray(mask, dtype=bool)
        if obs.ndim != 2 or obs.shape[1] != self.obs_dim:
            raise ValueError(f"obs must have shape (batch, {self.obs_dim}) (the network's observation size); "
                             f"got {obs.shape}.")
        if mask.shape != (obs.shape[0], self.num_actions):
            raise ValueError(f"mask must have shape ({obs.shape[0]}, {self.num_actions}); got {mask.shape}.")
        if not mask.any(axis=1).all():
            raise ValueError("mask has a row without a legal action.")
        probs = self.probabilities(torch.from_numpy(obs).to(self.device),
                                   torch.from_numpy(mask).to(self.device)).cpu().double().numpy()
        probs = np.where(mask, probs, 0.0)
        return probs / probs.sum(axis=1, keepdims=True)

    def action_probabilities(self, state, player: int) -> np.ndarray:
        """Probabilities ``(num_actions,)`` at a pyspiel ``state`` for ``player`` (one network call).

        Examples
        --------
        >>> import pyspiel
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> state = game.new_initial_state(); state.apply_action(0); state.apply_action(1)
        >>> float(NeuralPolicy.for_game(game, mode="greedy").action_probabilities(state, 0).sum())
        1.0
        """
        obs = np.asarray(state.information_state_tensor(player), dtype=np.float32).reshape(1, -1)
        mask = np.zeros((1, self.num_actions), dtype=bool)
        mask[0, state.legal_actions(player)] = True
        return self.probabilities_np(obs, mask)[0]

    def to_tabular(self, tree: GameTree, player: int, greedy: bool | None = None) -> np.ndarray:
        """The policy as a ``(num_infostates, num_actions)`` array over ``tree``'s infostates of ``player``.

        Parameters
        ----------
        tree : GameTree
        player : int
        greedy : bool, optional
            Play the most likely legal action (one-hot rows); default: only in
            ``mode="greedy"``.

        Examples
        --------
        See :class:`NeuralPolicy`.
        """
        if not 0 <= player < tree.num_players:
            raise ValueError(f"player must be in [0, {tree.num_players}); got {player}.")
        info = tree.infostates[player]
        if info.num_actions != self.num_actions:
            raise ValueError(f"the tree has {info.num_actions} actions but the policy {self.num_actions}; "
                             "use a policy built for this game.")
        tensors = infostate_tensors(tree, player)
        self.check_fits(tensors.shape[1], info.num_actions)
        obs = torch.tensor(np.asarray(tensors, dtype=np.float32)).to(self.device)
        mask = torch.as_tensor(info.legal_mask).to(self.device)
        if greedy or (greedy is None and self.mode == "greedy"):
            with torch.no_grad():
                best = masked_scores(self.network(obs), mask).argmax(dim=-1).cpu().numpy()
            out = np.zeros((info.num_infostates, info.num_actions))
            out[np.arange(info.num_infostates), best] = 1.0
            return out
        probs = self.probabilities(obs, mask).cpu().double().numpy()
        return probs / probs.sum(axis=1, keepdims=True)

    # ------------------------------------------------------------ saving without pickle
    def architecture(self) -> dict:
        """What :meth:`from_arrays` needs besides the weights, as plain JSON types.

        Examples
        --------
        >>> import json
        >>> arch = NeuralPolicy(4, 3, hidden=(5,), provenance=LearnedProvenance(2, "ppo", "nash")).architecture()
        >>> arch["hidden"], arch["provenance"]["value"], json.loads(json.dumps(arch)) == arch
        ([5], None, True)
        """
        prov = None
        if self.provenance is not None:
            prov = {k: (None if isinstance(v, float) and math.isnan(v) else v)
                    for k, v in asdict(self.provenance).items()}
        return {"format": FORMAT, "obs_dim": self.obs_dim, "num_actions": self.num_actions,
                "hidden": list(self.hidden), "mode": self.mode, "provenance": prov}

    def to_arrays(self) -> dict:
        """The network's weights as ``{parameter name: float32 ndarray}`` (copies on the CPU).

        Examples
        --------
        >>> {k: v.shape for k, v in NeuralPolicy(4, 3, hidden=(5,)).to_arrays().items()}
        {'layers.0.weight': (5, 4), 'layers.0.bias': (5,), 'layers.2.weight': (3, 5), 'layers.2.bias': (3,)}
        """
        return {k: v.detach().cpu().numpy().copy() for k, v in self.network.state_dict().items()}

    @classmethod
    def from_arrays(cls, architecture: Mapping, arrays: Mapping, device="cpu") -> NeuralPolicy:
        """Rebuild a policy from :meth:`architecture` and :meth:`to_arrays` (bit-identical weights).

        Parameters
        ----------
        architecture : mapping
            :meth:`architecture`'s dict (for example read back from JSON).
        arrays : mapping of str to ndarray
            :meth:`to_arrays`'s weights (for example read back from an ``npz``).
        device : str or torch.device

        Examples
        --------
        >>> p = NeuralPolicy(4, 3, hidden=(5,), mode="greedy", provenance=LearnedProvenance(2, "dqn", "nash", seed=9))
        >>> q = NeuralPolicy.from_arrays(p.architecture(), p.to_arrays())
        >>> q.mode, q.provenance.seed, all(np.array_equal(a, b) for a, b in zip(p.to_arrays().values(),
        ...                                                                       q.to_arrays().values()))
        ('greedy', 9, True)
        """
        if not isinstance(architecture, Mapping) or architecture.get("format") != FORMAT:
            raise ValueError(f"architecture is not a NeuralPolicy architecture (missing format {FORMAT!r}).")
        prov = architecture.get("provenance")
        if prov is not None:
            prov = LearnedProvenance(**{k: (math.nan if k == "value" and v is None else v) for k, v in prov.items()})
        policy = cls(architecture["obs_dim"], architecture["num_actions"], tuple(architecture["hidden"]),
                     architecture["mode"], provenance=prov, device=device)
        expected = policy.network.state_dict()
        shapes = {k: tuple(np.shape(v)) for k, v in arrays.items()}
        wanted = {k: tuple(v.shape) for k, v in expected.items()}
        if shapes != wanted:
            raise ValueError(f"arrays do not fit the architecture: expected {wanted}, got {shapes}.")
        policy.network.load_state_dict({k: torch.from_numpy(np.array(arrays[k], dtype=np.float32))
                                        for k in expected})
        return policy

    def copy(self, mode: str | None = None) -> NeuralPolicy:
        """An independent copy (same weights, ``mode`` if given), on the same device.

        Examples
        --------
        >>> p = NeuralPolicy(4, 2, hidden=(3,))
        >>> q = p.copy(mode="greedy")
        >>> q.mode, q.network is p.network
        ('greedy', False)
        """
        arch = self.architecture()
        if mode is not None:
            arch["mode"] = mode
        return NeuralPolicy.from_arrays(arch, self.to_arrays(), device=self.device)

    def to_device(self, device) -> NeuralPolicy:
        """Move the network to ``device`` (in place); return the policy.

        Examples
        --------
        >>> NeuralPolicy(4, 2).to_device("cpu").device
        device(type='cpu')
        """
        self.device = torch_device(device)
        self.network.to(self.device)
        return self

    def __getstate__(self) -> dict:   # pickling (executors' results) goes through the plain arrays
        return {"architecture": self.architecture(), "arrays": self.to_arrays()}

    def __setstate__(self, state: dict) -> None:   # unpickled on the CPU (the machine may have no GPU)
        other = NeuralPolicy.from_arrays(state["architecture"], state["arrays"])
        self.__dict__.update(other.__dict__)

    # ------------------------------------------------------------ torch state-dict files
    def state_dict(self) -> dict:
        """Weights and plain-typed metadata, loadable with ``torch.load(..., weights_only=True)``."""
        arch = self.architecture()
        meta = {k: arch[k] for k in ("obs_dim", "num_actions", "hidden", "mode")}
        return {"format": FORMAT, "config": meta, "provenance": arch["provenance"],
                "state_dict": {k: v.detach().cpu() for k, v in self.network.state_dict().items()}}

    def save(self, path) -> None:
        """Write :meth:`state_dict` with ``torch.save``.

        Examples
        --------
        >>> import os, tempfile
        >>> p = NeuralPolicy(11, 2, hidden=(8,), provenance=LearnedProvenance(1, "ppo", "nash", seed=3))
        >>> path = os.path.join(tempfile.mkdtemp(), "policy.pt")
        >>> p.save(path)
        >>> q = NeuralPolicy.load(path)
        >>> q.provenance.seed, all(torch.equal(a, b) for a, b in zip(p.network.parameters(), q.network.parameters()))
        (3, True)
        """
        torch.save(self.state_dict(), path)

    @classmethod
    def from_state_dict(cls, data: dict, device="cpu") -> NeuralPolicy:
        """Rebuild a policy from :meth:`state_dict` output.

        Examples
        --------
        >>> p = NeuralPolicy(4, 3, hidden=(5,))
        >>> NeuralPolicy.from_state_dict(p.state_dict()).hidden
        (5,)
        """
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"data is not a NeuralPolicy state dict (missing format {FORMAT!r}).")
        arch = {"format": FORMAT, **data["config"], "provenance": data.get("provenance")}
        return cls.from_arrays(arch, {k: v.numpy() for k, v in data["state_dict"].items()}, device=device)

    @classmethod
    def load(cls, path, device="cpu") -> NeuralPolicy:
        """Read a policy written by :meth:`save` (``weights_only=True``: no pickle is executed).

        Examples
        --------
        See :meth:`save`.
        """
        return cls.from_state_dict(torch.load(path, weights_only=True), device=device)
