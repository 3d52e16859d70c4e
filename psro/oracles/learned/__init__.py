"""Learned best-response oracles: DQN and PPO networks trained against the target (torch).

This package registers the ``"dqn"`` and ``"ppo"`` oracles without importing
torch: their factories import :mod:`psro.oracles.learned.oracle` (and torch)
when a learned oracle is first built. The modules: :mod:`~psro.oracles.learned.env`
(the vectorised game environment and opponent mixtures),
:mod:`~psro.oracles.learned.networks` (policy and Q networks; a
:class:`~psro.oracles.learned.networks.NeuralPolicy` is a population member),
:mod:`~psro.oracles.learned.training` (what DQN and PPO share),
:mod:`~psro.oracles.learned.dqn`, :mod:`~psro.oracles.learned.ppo` and
:mod:`~psro.oracles.learned.oracle` (the oracle around them).
"""

from psro.oracles.base import register_oracle

__all__ = ["dqn_oracle", "ppo_oracle"]


@register_oracle("dqn", learned=True)
def dqn_oracle(tree, seed: int = 0, *, game=None, **options):
    """Oracle ``"dqn"``: :func:`psro.oracles.learned.oracle.make_learned_oracle` with DQN on ``tree`` (or None)
    and ``game``; ``options`` are :class:`psro.oracles.learned.dqn.DQNConfig` fields and ``target_mode``,
    ``response_mode``, ``warm_start``, ``device``."""
    from psro.oracles.learned.oracle import make_learned_oracle  # torch loads with the first learned oracle

    return make_learned_oracle("dqn", tree, seed=seed, game=game, **options)


@register_oracle("ppo", learned=True)
def ppo_oracle(tree, seed: int = 0, *, game=None, **options):
    """Oracle ``"ppo"``: as :func:`dqn_oracle`, with :class:`psro.oracles.learned.ppo.PPOConfig` fields."""
    from psro.oracles.learned.oracle import make_learned_oracle  # torch loads with the first learned oracle

    return make_learned_oracle("ppo", tree, seed=seed, game=game, **options)
