"""Benchmarks: speed and quality against the reference implementations (see ``experiments/INDEX.md``)."""
