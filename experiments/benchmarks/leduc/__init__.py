"""The Leduc learned-path comparisons: sides given by adapters (the toolkit's loops from their run configs, OpenSpiel's
psro_v2, OpenSpiel's NFSP), one budget clock, one exact measurement, comparison configs in YAML (this folder's
``*.yaml``), run by ``python -m experiments.benchmarks.deep_psro_leduc --comparison FILE``."""
