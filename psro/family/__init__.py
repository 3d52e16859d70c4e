"""The self-play family: population-training loops beside PSRO, on the same seams (oracles, evaluator, executor,
checkpoint, history).

- :mod:`psro.family.self_play`: ``SelfPlay`` (every player trains against the others' latest policies) and
  ``FictitiousSelfPlay`` (against the uniform mixture of their past policies);
- :mod:`psro.family.fxp`: ``FXP``, Fictitious Cross-Play (Xu et al. 2023): a main policy trained by fictitious
  self-play and cross-play, and freshly initialised counter policies against the main's checkpoints;
- :mod:`psro.family.teams`: team games (players sharing a payoff): the team view, team exploitability and the
  decentralised team learner (oracle ``team_pg``);
- :mod:`psro.family.league`: ``League``, AlphaStar's league training;
- :mod:`psro.family.simultaneous`: ``SimultaneousLoop``, the loops where every seat learns at once on the batched
  environment and its output joins the population each iteration:

  - :mod:`psro.family.nfsp`: ``NFSP``, neural fictitious self-play (Heinrich & Silver 2016);
  - :mod:`psro.family.policy_gradient`: ``PPOSelfPlay`` (``algorithm: ppo_self_play``) and ``MMDSelfPlay``
    (``algorithm: mmd``, magnetic mirror descent with neural policies, Sokota et al. 2023);

- :mod:`psro.family.mmd`: ``magnetic_mirror_descent``, tabular magnetic mirror descent in the sequence form with
  the dilated entropy (OpenSpiel's ``MMDDilatedEnt``, vectorised): a function on the game tree.

Each loop is named in :data:`psro.loop.algorithms.ALGORITHMS`, runs from a config (``algorithm: fxp``) and resumes
from its
checkpoint.
"""
