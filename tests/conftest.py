"""Shared pytest configuration: one BLAS / OpenMP thread (torch's pinned again around every test), a hypothesis
profile sized for 2-core CI, and the poker game-tree fixtures."""

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

# one BLAS / OpenMP thread however the suite is started (`make test` pins them too): torch's OpenMP pool in a
# process that then forks a worker pool deadlocks the forked workers (tests/psro/variants/test_pipeline.py forks)
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Each test starts (and leaves) torch on one thread.

    numba's OpenMP threading layer (the compiled exact evaluator's parallel walk, ``psro.measures.kernels``) sets
    the OpenMP thread count of the whole process to numba's, and torch shares that OpenMP runtime: without this,
    every torch test after the first parallel walk in a process trained on two spinning threads, and with one
    pytest worker per core the two workers' spinning threads took several times the CPU (a doctest that trains
    for 2 s took 40 s). numba's walks keep their own thread count.
    """
    _pin_torch()
    yield
    _pin_torch()


def _pin_torch() -> None:
    torch = sys.modules.get("torch")   # (a test that never imported torch need not import it)
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


settings.register_profile(
    "ci",
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _poker_tree(name: str):
    # imported here so that sessions which never use these fixtures do not pay for importing psro
    import pyspiel

    from psro.sequence_form.game_tree import build_game_tree

    return build_game_tree(pyspiel.load_game(name))


@pytest.fixture(scope="module")
def kuhn():
    """The game tree of Kuhn poker (built once per test module)."""
    return _poker_tree("kuhn_poker")


@pytest.fixture(scope="module")
def leduc():
    """The game tree of Leduc poker (built once per test module)."""
    return _poker_tree("leduc_poker")
