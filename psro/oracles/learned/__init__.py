"""Learned best-response oracles: DQN and PPO networks trained against the target (torch).

This package registers the ``"dqn"`` and ``"ppo"`` oracles without importing
torch: their factories import :mod:`psro.oracles.learned.oracle` (and torch)
when a learned oracle is first built. The modules: :mod:`~psro.oracles.learned.env`
(the vectorised game environment and opponent mixtures),
:mod:`~psro.oracles.learned.networks` (policy and Q networks; a
:class:`~psro.oracles.learned.networks.NeuralPolicy` is a population member),
:mod:`~psro.oracles.learned.training` (what DQN and PPO share),
:mod:`~psro.oracles.learned.dqn`, :mod:`~psro.oracles.learned.ppo` and
:mod:`~psro.oracles.learned.oracle` (the oracle around them),
:mod:`~psro.oracles.learned.model_based` (the ``"model_br"`` oracle: the learner's decision problem estimated
from sampled play and solved exactly, an
:class:`~psro.oracles.learned.observation_table.ObservationTablePolicy`);
:mod:`~psro.oracles.learned.minimax_exploiter` (the ``"minimax_dqn"`` oracle: a DQN
exploiter whose reward is shaped by the main agent's Q-values).
"""

from psro.oracles.base import register_oracle

__all__ = ["dqn_oracle", "ppo_oracle", "minimax_dqn_oracle", "model_br_oracle", "neural_br_oracle"]


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


@register_oracle("minimax_dqn", learned=True)
def minimax_dqn_oracle(tree, seed: int = 0, *, game=None, **options):
    """Oracle ``"minimax_dqn"``: :func:`psro.oracles.learned.minimax_exploiter.make_minimax_oracle` (the Minimax
    Exploiter: double DQN, its reward shaped by the target's main agent); ``options`` as for ``"dqn"``, plus
    ``alpha``, ``value_range`` and ``shift``."""
    from psro.oracles.learned.minimax_exploiter import make_minimax_oracle  # torch loads with the first one

    return make_minimax_oracle(tree, seed=seed, game=game, **options)


@register_oracle("model_br", learned=True)
def model_br_oracle(tree, seed: int = 0, *, game=None, **options):
    """Oracle ``"model_br"``: a model-based best response from sampled play
    (:func:`psro.oracles.learned.model_based.train_model_br`: the learner's decision problem estimated by uniform
    exploration and solved by backward induction; no tree, no network); ``options`` are
    :class:`psro.oracles.learned.model_based.ModelBRConfig` fields and the options of ``"dqn"``."""
    from psro.oracles.learned.oracle import make_learned_oracle  # torch loads with the first learned oracle

    return make_learned_oracle("model", tree, seed=seed, game=game, **options)


@register_oracle("neural_br", learned=True)
def neural_br_oracle(tree, seed: int = 0, *, game=None, **options):
    """Oracle ``"neural_br"``: a neural best response from sampled play
    (:func:`psro.oracles.learned.neural_br.train_neural_br`: the decision problem ``model_br`` samples, solved by
    fitted Q iteration with a Q-network over the observation instead of a table); ``options`` are
    :class:`psro.oracles.learned.neural_br.NeuralBRConfig` fields and the options of ``"dqn"``."""
    from psro.oracles.learned.oracle import make_learned_oracle  # torch loads with the first learned oracle

    return make_learned_oracle("neural", tree, seed=seed, game=game, **options)
