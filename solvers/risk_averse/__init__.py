"""Risk-averse and robust solvers: risk-averse equilibria (RAE) and the robust replicator for interval games.

``equilibria`` (risk-adjusted best responses, rae_gaps, the ``"rae"`` methods) and ``robust_replicator``
(robust_replicator, pessimistic_regret: games whose payoffs are intervals).
"""
