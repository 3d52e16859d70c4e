"""Risk-averse and robust solvers: risk-averse equilibria (RAE) and the robust replicator for interval games.

``equilibria`` (rae_gaps, the ``"rae"`` methods) on ``best_response`` (the risk models and risk-adjusted best
responses), and ``robust_replicator`` (robust_replicator, pessimistic_regret: games whose payoffs are intervals).
"""
