"""Learning and evolutionary dynamics, and the logit (QRE) family built on the same machinery.

``common`` (the shared payoff operator, argument checks and simplex projection), ``replicator`` (prd),
``regret_matching``, ``fictitious_play``, ``qre`` with ``qre_tracing`` (qre_branch), ``evolutionary_dynamics``
(vector fields, trajectories, rest points) and ``moran`` (the Moran process).
"""
