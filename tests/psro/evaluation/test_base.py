"""psro.evaluation.base: the Evaluator protocol and register_evaluator; a registered evaluator drives PSRO by name
and writes through EmpiricalGame.set_exact_block like the built-in exact ones (issue 11)."""

import numpy as np
import pytest

from psro import PSRO
from psro.evaluation import (
    Evaluator,
    SequenceFormEvaluator,
    evaluator_names,
    make_evaluator,
    register_evaluator,
    unregister_evaluator,
)

BLOCKS: list = []


class CountingEvaluator(SequenceFormEvaluator):
    name = "toy_counting"

    def block_payoffs(self, populations, indices):
        BLOCKS.append([list(ix) for ix in indices])
        return super().block_payoffs(populations, indices)


@pytest.fixture
def toy_evaluator():
    BLOCKS.clear()
    register_evaluator("toy_counting")(CountingEvaluator)
    yield "toy_counting"
    unregister_evaluator("toy_counting")


def test_the_built_ins_are_registered():
    assert evaluator_names()[:3] == ["sequence_form", "openspiel", "monte_carlo"]


def test_a_registered_evaluator_drives_psro_by_name(toy_evaluator):
    ours = PSRO("kuhn_poker", evaluator=toy_evaluator, progress=False)
    assert isinstance(ours.evaluator, Evaluator)
    history = ours.run(iterations=3)
    reference = PSRO("kuhn_poker", progress=False).run(iterations=3)
    np.testing.assert_array_equal(history["gap"], reference["gap"])
    # step 0 evaluates the 1x1 game, then each step the two new blocks (new row x all columns, old rows x new col)
    assert BLOCKS == [[[0], [0]], [[1], [0, 1]], [[0], [1]], [[2], [0, 1, 2]], [[0, 1], [2]],
                      [[3], [0, 1, 2, 3]], [[0, 1, 2], [3]]]
    assert ours.meta_game.exact.all() and ours.meta_game.is_complete()


def test_unknown_and_malformed_evaluators_are_refused(toy_evaluator):
    with pytest.raises(ValueError, match="^evaluator: must be one of"):
        PSRO("kuhn_poker", evaluator="toy_countin", progress=False)
    register_evaluator("toy_broken")(lambda tree: object())
    try:
        with pytest.raises(TypeError, match="lacks"):
            make_evaluator("toy_broken", None)
    finally:
        unregister_evaluator("toy_broken")


def test_evaluators_declare_capabilities():
    from psro.evaluation import EvaluatorCapabilities, evaluator_capabilities
    from psro.oracles.jobs import tree_for

    assert evaluator_capabilities("sequence_form") == EvaluatorCapabilities(sampled=False, needs_tree=True,
                                                                            top_up=False)
    assert evaluator_capabilities("monte_carlo") == EvaluatorCapabilities(sampled=True, needs_tree=False,
                                                                          top_up=True)
    register_evaluator("toy_top_up", top_up=True)(CountingEvaluator)
    try:
        with pytest.raises(TypeError, match="declares top_up but its CountingEvaluator has no top_up_rounds"):
            make_evaluator("toy_top_up", tree_for("kuhn_poker()"))
        with pytest.raises(ValueError, match="evaluator 'toy_top_up' is already registered"):
            register_evaluator("toy_top_up")(CountingEvaluator)
    finally:
        unregister_evaluator("toy_top_up")
