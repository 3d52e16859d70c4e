"""alpha-Rank: the ranking (alpharank, sweep, suggest_alpha), its Markov chain and stationary solvers, plots, and
its uncertainty under noisy payoffs (mass bounds, bootstrap).

``alpharank_ranking`` (the entry points and the result), ``alpharank_chain`` (fixation probabilities and moves),
``alpharank_stationary`` (the stationary distribution: dense, sparse, block solvers), ``alpharank_plots``
(response graph, mass against alpha) and ``uncertainty`` (alpharank_mass_bounds, bootstrap_alpharank). The public
names are also on :mod:`ranking` itself (``from ranking import alpharank``).
"""
