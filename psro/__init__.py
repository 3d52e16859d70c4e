"""The outer loop: policies, populations, oracles, evaluation, meta-solvers, checkpoints, CLI."""
