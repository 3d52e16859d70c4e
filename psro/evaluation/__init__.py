"""Meta-game evaluators behind one protocol and one registry (:mod:`psro.evaluation.base`).

Importing this package registers the built-in evaluators: ``"sequence_form"``
and ``"openspiel"`` (exact, :mod:`psro.evaluation.exact`) and ``"monte_carlo"``
(sampled episodes, :mod:`psro.evaluation.monte_carlo`, whose top-up
bookkeeping is :mod:`psro.evaluation.top_up` and whose lockstep play is
:mod:`psro.evaluation.sampled_play`).

Examples
--------
>>> from psro.evaluation import evaluator_names
>>> evaluator_names()[:3]
['sequence_form', 'openspiel', 'monte_carlo']
"""

# each registers its evaluators, in this order (what evaluator_names() and the CLI help list)
from psro.evaluation.exact import OpenSpielEvaluator, SequenceFormEvaluator  # noqa: I001
from psro.evaluation.monte_carlo import MonteCarloEvaluator  # noqa: I001
from psro.evaluation.base import (
    EvaluationBatch,
    Evaluator,
    EvaluatorCapabilities,
    evaluator_capabilities,
    evaluator_names,
    make_evaluator,
    register_evaluator,
    unregister_evaluator,
)
from psro.evaluation.top_up import TOP_UP_METHODS, TopUpProgress, support_weights

__all__ = ["EvaluationBatch", "Evaluator", "EvaluatorCapabilities", "MonteCarloEvaluator", "OpenSpielEvaluator",
           "SequenceFormEvaluator", "TOP_UP_METHODS", "TopUpProgress", "evaluator_capabilities", "evaluator_names",
           "make_evaluator", "register_evaluator", "support_weights", "unregister_evaluator"]
