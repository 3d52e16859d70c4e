"""The experiments: benchmarks against the reference implementations and paper reproductions.

Each is a module run from the repository root as ``python -m experiments.<folder>.<name>``;
``experiments/INDEX.md`` lists them by the question each answers, with the command and the
results file. :mod:`experiments.harness` is what they share.
"""
