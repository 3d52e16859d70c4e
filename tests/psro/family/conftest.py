"""Checks the simultaneous loops' tests share (NFSP, PPO and MMD self-play): one resumed run is the uninterrupted
one, history and learners, also after a SIGKILL."""

import numpy as np
import pandas as pd
import pytest

from psro.loop.state import untimed


def same_history(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(untimed(a).reset_index(drop=True),
                                  untimed(b).reset_index(drop=True), check_exact=True)


def same_learners(a, b) -> None:
    """Every learner's networks bit for bit, its counters and (NFSP's) reservoir, and the run's generator."""
    for la, lb in zip(a.learners, b.learners):
        for name, net in la.networks().items():
            for (k, va), vb in zip(net.state_dict().items(), lb.networks()[name].state_dict().values()):
                assert np.array_equal(va.numpy(), vb.numpy()), (name, k)
        assert la.counters == lb.counters
        for key in getattr(la, "sl", {}):
            assert np.array_equal(la.sl[key], lb.sl[key])
    assert a.state.rng.bit_generator.state == b.state.rng.bit_generator.state


def resumes_after_sigkill(loop, options: dict, checkpoint_dir, kill_after) -> None:
    """``loop`` (a class of a module of psro.family) on Kuhn, SIGKILLed after iteration 3 and resumed for two more
    iterations, equals the uninterrupted run of as many."""
    script = (f"from {loop.__module__} import {loop.__name__}\n"
              f"{loop.__name__}('kuhn_poker', progress=False, seed=5, algorithm_options={options!r}, "
              f"checkpoint_dir={str(checkpoint_dir)!r}).run(iterations=1000)\n")
    kill_after(script, checkpoint_dir, 3)
    resumed = loop.resume(checkpoint_dir, progress=False)
    done = resumed.iteration
    assert done >= 3
    resumed.run(iterations=2)
    straight = loop("kuhn_poker", progress=False, seed=5, algorithm_options=options)
    straight.run(iterations=done + 2)
    same_history(straight.history, resumed.history)
    same_learners(straight, resumed)


@pytest.fixture
def loop_checks():
    """``same_history``, ``same_learners`` and ``resumes_after_sigkill`` of this module, as attributes."""
    import types

    return types.SimpleNamespace(same_history=same_history, same_learners=same_learners,
                                 resumes_after_sigkill=resumes_after_sigkill)
