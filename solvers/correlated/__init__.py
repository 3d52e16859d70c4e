"""Correlated and coarse correlated equilibria (CE, CCE): the JPSRO meta-solvers and their LP and dual machinery.

``equilibria`` (max_gini, max_entropy, max_welfare, random_vertex, mgce, ...), ``correlated_constraints`` (the
deviation-gain matrices), ``correlated_lp`` (the HiGHS linear programs) and ``correlated_dual`` (the regularised
dual solved by projected Newton).
"""
