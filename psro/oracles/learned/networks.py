"""Neural policies over OpenSpiel information-state tensors, with the interface of tabular ones.

A :class:`NeuralPolicy` is a small torch network that maps
``state.information_state_tensor(player)`` to one score per action. Illegal
actions are masked out. The scores are read either as logits (``mode="softmax"``,
what PPO learns) or as action values (``mode="greedy"``, what DQN learns: the
policy plays the best legal action, the lowest index on ties).

For a game small enough for :mod:`psro.game_tree`, :meth:`NeuralPolicy.to_tabular`
evaluates the network on every infostate at once and returns the usual
``(num_infostates, num_actions)`` array, so populations, aggregation, exact
evaluation and NashConv work unchanged. Weights are saved as a torch
``state_dict`` next to plain-typed metadata and read back with
``torch.load(..., weights_only=True)``; nothing is pickled.
"""

from __future__ import annotations

import itertools
import math
import weakref
from dataclasses import asdict, dataclass

import numpy as np
import torch
from torch import nn

from games.validation import is_integer
from psro.game_tree import GameTree
from psro.population import Provenance

__all__ = ["MODES", "LearnedProvenance", "NeuralPolicy", "PolicyNetwork", "infostate_tensors"]

MODES = ("softmax", "greedy")
_MASKED = -1e9  # score given to illegal actions: finite, so softmax never sees -inf - -inf


@dataclass(frozen=True)
class LearnedProvenance(Provenance):
    """Where a learned policy came from: :class:`psro.population.Provenance` plus training facts.

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


class NeuralPolicy:
    """A policy network with legal-action masking and the tabular policy's interface.

    Parameters
    ----------
    obs_dim : int
        Length of the game's information-state tensor.
    num_actions : int
        ``game.num_distinct_actions()``.
    hidden : tuple of int
        Hidden layer widths.
    mode : {"softmax", "greedy"}
        Read the scores as logits, or play the best-scoring legal action.
    provenance : LearnedProvenance, optional

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> _ = torch.manual_seed(0)
    >>> policy = NeuralPolicy.for_game(tree.game, hidden=(16,))
    >>> table = policy.to_tabular(tree, player=0)
    >>> table.shape, bool(np.allclose(table.sum(axis=1), 1.0))
    ((6, 2), True)
    """

    def __init__(self, obs_dim: int, num_actions: int, hidden: tuple = (64,), mode: str = "softmax",
                 provenance: LearnedProvenance | None = None):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {mode!r}.")
        for name, value in (("obs_dim", obs_dim), ("num_actions", num_actions)):
            if not is_integer(value) or value < 1:
                raise ValueError(f"{name} must be a positive int; got {value!r}.")
        self.obs_dim, self.num_actions = int(obs_dim), int(num_actions)
        self.hidden = tuple(int(h) for h in hidden)
        self.mode = mode
        self.provenance = provenance
        self.network = PolicyNetwork(self.obs_dim, self.num_actions, self.hidden)

    @classmethod
    def for_game(cls, game, hidden: tuple = (64,), mode: str = "softmax", **kwargs) -> NeuralPolicy:
        """A fresh policy sized for ``game`` (a ``pyspiel.Game`` with information-state tensors).

        Examples
        --------
        >>> import pyspiel
        >>> p = NeuralPolicy.for_game(pyspiel.load_game("kuhn_poker"))
        >>> p.obs_dim, p.num_actions
        (11, 2)
        """
        if not game.get_type().provides_information_state_tensor:
            raise ValueError(f"game {game} does not provide information-state tensors, which neural policies need.")
        (obs_dim,) = game.information_state_tensor_shape()
        return cls(obs_dim, game.num_distinct_actions(), hidden=hidden, mode=mode, **kwargs)

    def __repr__(self) -> str:
        return (f"NeuralPolicy(obs_dim={self.obs_dim}, actions={self.num_actions}, hidden={self.hidden}, "
                f"mode={self.mode!r})")

    # ------------------------------------------------------------ acting
    def probabilities(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Action probabilities ``(batch, num_actions)``, zero on illegal actions.

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

    def action_probabilities(self, state, player: int) -> np.ndarray:
        """Probabilities ``(num_actions,)`` at ``state`` for ``player`` (one network call; for opponents).

        Examples
        --------
        >>> import pyspiel
        >>> game = pyspiel.load_game("kuhn_poker")
        >>> state = game.new_initial_state(); state.apply_action(0); state.apply_action(1)
        >>> float(NeuralPolicy.for_game(game, mode="greedy").action_probabilities(state, 0).sum())
        1.0
        """
        obs = torch.as_tensor(state.information_state_tensor(player), dtype=torch.float32)[None]
        mask = torch.zeros(1, self.num_actions, dtype=torch.bool)
        mask[0, state.legal_actions(player)] = True
        return self.probabilities(obs, mask)[0].double().numpy()

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
        obs = torch.as_tensor(infostate_tensors(tree, player), dtype=torch.float32)
        mask = torch.as_tensor(info.legal_mask)
        if greedy or (greedy is None and self.mode == "greedy"):
            with torch.no_grad():
                best = masked_scores(self.network(obs), mask).argmax(dim=-1).numpy()
            out = np.zeros((info.num_infostates, info.num_actions))
            out[np.arange(info.num_infostates), best] = 1.0
            return out
        probs = self.probabilities(obs, mask).double().numpy()
        return probs / probs.sum(axis=1, keepdims=True)

    # ------------------------------------------------------------ saving
    def state_dict(self) -> dict:
        """Weights and plain-typed metadata, loadable with ``torch.load(..., weights_only=True)``."""
        meta = {"obs_dim": self.obs_dim, "num_actions": self.num_actions, "hidden": list(self.hidden),
                "mode": self.mode}
        prov = None
        if self.provenance is not None:
            prov = {k: (None if isinstance(v, float) and math.isnan(v) else v)
                    for k, v in asdict(self.provenance).items()}
        return {"format": "psro.NeuralPolicy/1", "config": meta, "provenance": prov,
                "state_dict": self.network.state_dict()}

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
    def from_state_dict(cls, data: dict) -> NeuralPolicy:
        """Rebuild a policy from :meth:`state_dict` output.

        Examples
        --------
        >>> p = NeuralPolicy(4, 3, hidden=(5,))
        >>> NeuralPolicy.from_state_dict(p.state_dict()).hidden
        (5,)
        """
        if not isinstance(data, dict) or data.get("format") != "psro.NeuralPolicy/1":
            raise ValueError("data is not a NeuralPolicy state dict (missing format 'psro.NeuralPolicy/1').")
        cfg = data["config"]
        prov = data.get("provenance")
        if prov is not None:
            prov = LearnedProvenance(**{k: (math.nan if k == "value" and v is None else v) for k, v in prov.items()})
        policy = cls(cfg["obs_dim"], cfg["num_actions"], tuple(cfg["hidden"]), cfg["mode"], provenance=prov)
        policy.network.load_state_dict(data["state_dict"])
        return policy

    @classmethod
    def load(cls, path) -> NeuralPolicy:
        """Read a policy written by :meth:`save` (``weights_only=True``: no pickle is executed).

        Examples
        --------
        See :meth:`save`.
        """
        return cls.from_state_dict(torch.load(path, weights_only=True))


_TENSOR_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def infostate_tensors(tree: GameTree, player: int) -> np.ndarray:
    """Information-state tensors ``(num_infostates, obs_dim)`` of ``player``, in ``tree``'s infostate order.

    One walk of the game tree, cached per tree.

    Examples
    --------
    >>> import pyspiel
    >>> from psro.game_tree import build_game_tree
    >>> tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    >>> infostate_tensors(tree, 0).shape
    (6, 11)
    """
    cached = _TENSOR_CACHE.get(tree)
    if cached is None:
        cached = _TENSOR_CACHE[tree] = _walk_tensors(tree)
    return cached[player]


def _walk_tensors(tree: GameTree) -> list:
    game = tree.game
    if not game.get_type().provides_information_state_tensor:
        raise ValueError(f"game {game} does not provide information-state tensors, which neural policies need.")
    (obs_dim,) = game.information_state_tensor_shape()
    out = [np.full((info.num_infostates, obs_dim), np.nan, dtype=np.float32) for info in tree.infostates]
    missing = [info.num_infostates for info in tree.infostates]
    stack = [game.new_initial_state()]
    while stack and any(missing):
        state = stack.pop()
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            p = state.current_player()
            row = tree.infostates[p].index(state.information_state_string(p))
            if np.isnan(out[p][row, 0]):
                out[p][row] = state.information_state_tensor(p)
                missing[p] -= 1
        actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        stack.extend(state.child(a) for a in actions)
    return out
