"""Tests of psro/loop/training.py: one TrainingLoop base for every training loop, PSRO's phases public and
overridden only as public methods, no attribute forwarding."""

import inspect
import math
from pathlib import Path

import pytest

from games import catalog
from psro import PSRO
from psro.loop.algorithms import ALGORITHMS, algorithm_class
from psro.loop.state import STATE_FIELDS, LoopState
from psro.loop.training import PHASES, TrainingLoop

ROOT = Path(__file__).resolve().parents[3]
LOOPS = {name: algorithm_class(name) for name in ALGORITHMS}


def _subclasses(cls) -> set:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_training_loop_is_a_training_loop_whose_run_is_the_base_s(name):
    loop = LOOPS[name]
    assert issubclass(loop, TrainingLoop)
    assert loop.run is TrainingLoop.run and loop.resume.__func__ is TrainingLoop.resume.__func__
    assert loop.history is TrainingLoop.history or loop.history_columns is not TrainingLoop.history_columns


def test_no_loop_forwards_attributes_and_the_state_fields_are_properties():
    for cls in {TrainingLoop, *LOOPS.values()}:
        for klass in cls.__mro__[:-1]:   # (all but object)
            assert "__getattr__" not in vars(klass) and "__setattr__" not in vars(klass), klass
    for name in STATE_FIELDS:
        assert isinstance(inspect.getattr_static(PSRO, name), property), name


def test_no_private_method_of_psro_is_overridden():
    own = {name for name, value in vars(PSRO).items() if name.startswith("_") and not name.startswith("__")
           and callable(value)}
    inherited = {name for klass in PSRO.__mro__[1:] for name in vars(klass)
                 if name.startswith("_") and not name.startswith("__")}
    for sub in _subclasses(PSRO):
        overridden = {name for name in vars(sub) if name in own | inherited and callable(vars(sub)[name])}
        assert not overridden, f"{sub.__name__} overrides {sorted(overridden)}"


def test_the_phases_are_public_documented_methods():
    for phase in ("step", "add", "evaluate", "meta_solve", "targets", "respond", "select", "measure", "row"):
        method = getattr(PSRO, phase)
        assert callable(method) and method.__doc__, phase


def test_loop_module_stays_within_400_lines():
    assert len((ROOT / "psro" / "loop" / "psro_loop.py").read_text().splitlines()) <= 400


def test_the_state_fields_read_and_write_the_state():
    solver = PSRO(catalog.matching_pennies(), progress=False)
    solver.run(iterations=1)
    assert solver.gap == solver.state.gap and solver.populations is solver.state.populations
    solver.gap = 0.25
    assert solver.state.gap == 0.25
    assert "gap" not in vars(solver)   # (the value lives only in the state)


def test_a_new_loop_overrides_one_phase():
    """A loop that trains every player against the uniform mixture of the others (fictitious play's targets) is
    one override of ``targets``: on matching pennies its populations hold both pure strategies after one step."""
    from psro.meta.targets import meta_targets
    from solvers import make_equilibrium

    class UniformTargets(PSRO):
        algorithm = "psro"

        def targets(self, meta_game):
            uniform = make_equilibrium(meta_game, concept="nash", method="uniform",
                                       marginals=[[1.0 / k] * k for k in meta_game.payoffs.shape[1:]])
            return [meta_targets(uniform, self.kind, self.state.populations, meta_game.payoffs, p)
                    for p in range(self.num_players)]

    history = UniformTargets(catalog.rock_paper_scissors(), progress=False).run(iterations=2)
    assert history["iteration"].tolist() == [0, 1, 2]
    assert set(PHASES) == {c[len("time_"):] for c in history.columns if c.startswith("time_")}


def test_the_base_checks_the_stopping_rules_for_every_loop():
    solver = PSRO(catalog.matching_pennies(), progress=False)
    with pytest.raises(ValueError, match="give at least one stopping rule"):
        solver.run()
    with pytest.raises(ValueError, match="iterations"):
        solver.run(iterations=-1)
    with pytest.raises(ValueError, match="time_limit"):
        solver.run(time_limit=-1.0)


def test_save_checkpoint_without_a_directory_names_the_argument():
    with pytest.raises(ValueError, match="directory: give a directory"):
        PSRO(catalog.matching_pennies(), progress=False).save_checkpoint()


def test_offline_psro_keeps_a_loop_state_and_psro_s_columns():
    import pyspiel

    from games.datasets import collect
    from psro.offline.coffee_psro import OfflinePSRO

    game = pyspiel.load_game("kuhn_poker")
    data = collect(game, pyspiel.UniformRandomPolicy(game), episodes=100, seed=0)
    solver = OfflinePSRO(data, game=game, members=2)
    history = solver.run(iterations=1)
    assert isinstance(solver.state, LoopState) and solver.iteration == 1
    assert list(history.columns) == list(PSRO("kuhn_poker", progress=False).history.columns)
    assert solver.meta_game.shape == (2, 2) and not math.isnan(solver.gap)


def test_a_loop_with_its_own_targets_or_respond_measures_the_gap_with_fresh_best_responses():
    """The step's responses stand in for the exact gap's best responses only in a loop that declares so: PSRO, and
    a subclass that defines neither ``targets`` nor ``respond`` (or that declares it)."""
    class OwnTargets(PSRO):
        def targets(self, meta_game):
            return super().targets(meta_game)

    class Declared(OwnTargets):
        step_responses_answer_the_gap = True

        def respond(self, t, targets):
            return super().respond(t, targets)

    class Plain(OwnTargets):
        pass

    assert PSRO.step_responses_answer_the_gap and Declared.step_responses_answer_the_gap
    assert not OwnTargets.step_responses_answer_the_gap and not Plain.step_responses_answer_the_gap
    for loop in _subclasses(PSRO) - {OwnTargets, Declared, Plain}:   # (the toolkit's loops: none declares it)
        own = next(k for k in loop.__mro__ if "targets" in vars(k) or "respond" in vars(k))
        assert loop.step_responses_answer_the_gap == (own is PSRO), loop
    # (the same gap either way: fresh exact best responses against the meta-strategy)
    gaps = [cls(catalog.rock_paper_scissors(), progress=False).run(iterations=2)["gap"].tolist()
            for cls in (PSRO, OwnTargets)]
    assert gaps[0] == gaps[1]
