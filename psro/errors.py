"""The exceptions the toolkit raises on purpose, beyond Python's own: one module, so that a caller catches a kind
of failure by its type rather than by its message.

Examples
--------
>>> try:
...     raise LearnerDiverged("learning_rate: ppo training diverged (its loss became nan after 512 learner steps)")
... except ValueError as exc:   # (a LearnerDiverged is a ValueError: code that caught those still does)
...     type(exc).__name__, exc.learner_curve
('LearnerDiverged', ())
"""

from __future__ import annotations

__all__ = ["LearnerDiverged"]


class LearnerDiverged(ValueError):
    """A learned response whose training diverged (a non-finite loss, weights or scores) or that learned nothing.

    Its message starts with the option to change (``"learning_rate: ..."``) and names the fix;
    ``learner_curve`` holds the learning-curve rows trained before it stopped (``learners.csv`` keeps them).
    """

    learner_curve: tuple = ()
