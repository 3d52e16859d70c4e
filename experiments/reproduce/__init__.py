"""Paper reproductions: each writes CSV, PNG and a ``summary.md`` beside the paper's numbers.

See ``experiments/INDEX.md``.
"""
