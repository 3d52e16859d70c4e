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
