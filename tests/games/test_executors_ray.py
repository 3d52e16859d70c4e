"""The Ray engine: same ordered, seeded results as the other engines; a dying worker costs a retry.

Ray takes seconds to start, so one local instance (2 CPUs) serves the whole module.
If Ray cannot start here, the fixture fails loudly (no skip).
"""

import os
import sys

import numpy as np
import pyspiel
import pytest
import ray
from ray import cloudpickle

import games.executors as executors
from games import EmpiricalGame
from games.executors import RayExecutor, SerialExecutor, TaskError, make_executor
from psro.evaluation import MonteCarloEvaluator
from psro.policies import uniform_policy
from psro.policies.population import Population, Provenance
from psro.sequence_form.game_tree import build_game_tree

#: the suite's second tier (make test-slow): starting Ray costs seconds; the first tier runs the same executor
#: contract on the serial and process-pool engines (tests/games/test_executors.py)
pytestmark = pytest.mark.slow

# Ray workers cannot import this test module by name: ship its functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _noisy_sum(task, rng):
    return float(rng.normal(size=task).sum())


def _square(x):
    return x * x


def _fail_on_three(x):
    if x == 3:
        raise ValueError("three is not allowed")
    return x


def _die_once(task):
    """Kill this worker process the first time task 2 runs (a marker file remembers it)."""
    value, marker = task
    if value == 2 and not os.path.exists(marker):
        with open(marker, "w") as fh:
            fh.write("died")
        os._exit(1)
    return value * 10


def _flaky_connection(task):
    value, marker = task
    if not os.path.exists(marker):
        with open(marker, "w") as fh:
            fh.write("failed")
        raise ConnectionError("lost the database")
    return value


@pytest.fixture(scope="module")
def ray_ex():
    assert not ray.is_initialized()
    ex = RayExecutor(num_cpus=2, max_retries=2, worker_niceness=0,
                     init_options={"log_to_driver": False, "include_dashboard": False})
    ex.map(_square, [1])            # starts Ray; any start-up failure errors the tests using it
    yield ex
    ex.close()
    assert not ray.is_initialized()  # it started Ray, so it shut it down


def _niceness(_):
    return os.nice(0)


def test_workers_run_at_the_requested_niceness(ray_ex):
    # worker_niceness=0: the workers run at the niceness of the process that started Ray (Ray's default: 15 more)
    assert set(ray_ex.map(_niceness, [0, 1, 2], chunksize=1)) == {os.nice(0)}


def test_order_and_chunks(ray_ex):
    assert ray_ex.workers == 2
    assert ray_ex.map(_square, list(range(23)), chunksize=2) == [x * x for x in range(23)]
    assert ray_ex.map(_square, []) == []


def test_seeded_results_identical_across_engines(ray_ex):
    tasks = [5, 1, 7, 3, 2, 9, 4]
    serial = SerialExecutor().map(_noisy_sum, tasks, seed=11)
    assert ray_ex.map(_noisy_sum, tasks, seed=11) == serial
    assert ray_ex.map(_noisy_sum, tasks, seed=11, chunksize=1) == serial
    # (serial == process pool on the same tasks and seed is checked in tests/games/test_executors.py)
    bounded = RayExecutor(max_in_flight=1)          # joins the running instance, one chunk in flight
    assert bounded.map(_noisy_sum, tasks, seed=11, chunksize=2) == serial


def test_task_exception_names_the_task_and_is_not_retried(ray_ex, tmp_path):
    with pytest.raises(TaskError, match=r"task 3 \(3\) failed with ValueError: three is not allowed") as info:
        ray_ex.map(_fail_on_three, [0, 1, 2, 3, 4], chunksize=2)
    assert info.value.index == 3 and isinstance(info.value.__cause__, ValueError)
    assert ray_ex.map(_square, [4]) == [16]          # still usable


def test_dead_worker_costs_a_retry_not_data(ray_ex, tmp_path):
    marker = str(tmp_path / "died")
    out = ray_ex.map(_die_once, [(i, marker) for i in range(6)], chunksize=1)
    assert os.path.exists(marker)                    # the worker did die once
    assert out == [0, 10, 20, 30, 40, 50]


def test_transient_exceptions_are_retried(ray_ex, tmp_path):
    marker = str(tmp_path / "flaky")
    assert ray_ex.map(_flaky_connection, [(7, marker)]) == [7]
    assert os.path.exists(marker)


def test_joined_instance_is_left_running(ray_ex):
    joined = make_executor({"engine": "ray", "num_cpus": None, "address": None})
    assert joined.map(_square, [3]) == [9]
    joined.close()
    assert ray.is_initialized()


def test_monte_carlo_evaluation_is_identical_on_ray(ray_ex):
    tree = build_game_tree(pyspiel.load_game("kuhn_poker"))
    pops = []
    for info in tree.infostates:
        pop = Population(info)
        bet = np.zeros((info.num_infostates, 2))
        bet[:, 1] = 1.0
        pop.add(np.stack([uniform_policy(info), bet]), [Provenance(0, "initial")] * 2)
        pops.append(pop)
    stats = []
    for executor in (SerialExecutor(), ray_ex):
        meta = EmpiricalGame((2, 2))
        MonteCarloEvaluator(tree, episodes_per_profile=3000, executor=executor, seed=4,
                            episodes_per_task=2000).evaluate(pops, [range(2), range(2)], meta_game=meta)
        stats.append((meta.count, meta.total, meta.total_sq))
    for a, b in zip(*stats):
        assert np.array_equal(a, b)


def test_a_dead_ray_system_process_is_an_engine_error_that_says_so():
    """What a killed raylet gives the driver (LocalRayletDiedError, seen when killing it by hand: after ~15 s)
    becomes an EngineError saying what happened and what to do; no Ray instance is needed to check the wrapping."""
    from games.executors import EngineError

    class FakeRay:
        exceptions = ray.exceptions
        cancelled = []

        def put(self, value):
            return value

        def wait(self, refs, num_returns, timeout=None):
            raise ray.exceptions.LocalRayletDiedError()

        def cancel(self, ref, force):
            self.cancelled.append(ref)

    class FakeRemote:
        def remote(self, fn_ref, start, tasks, seeds, transient):
            return ("ref", start)

    fake = FakeRay()
    ex = RayExecutor(num_cpus=2)
    ex._ensure_ray = lambda: fake
    ex._remote = FakeRemote()
    with pytest.raises(EngineError, match=r"Ray engine failed \(LocalRayletDiedError\) with 3 chunks in flight: "
                                          r"a Ray worker or system process \(raylet, GCS, object store\) died") as info:
        ex.map(_square, [1, 2, 3], chunksize=1)
    assert "resume" in str(info.value) and isinstance(info.value.__cause__, ray.exceptions.LocalRayletDiedError)
    assert len(fake.cancelled) == 3


class _ChunkRay:
    """A stand-in for Ray whose chunk ``("ref", 0)`` has finished and fails with ``error``; the others run on."""
    exceptions = ray.exceptions

    def __init__(self, error):
        self.error, self.cancelled = error, []

    def put(self, value):
        return value

    def wait(self, refs, num_returns, timeout=None):
        done = [r for r in refs if r == ("ref", 0)]
        return done, [r for r in refs if r not in done]

    def get(self, ref):
        raise self.error

    def cancel(self, ref, force):
        self.cancelled.append(ref)


class _ChunkRemote:
    def remote(self, fn_ref, start, tasks, seeds, transient):
        return ("ref", start)


@pytest.mark.parametrize("error, cancelled", [
    (TaskError(0, 1, ValueError("bad")), []),                          # no cancelling at all (the Ray race)
    (ray.exceptions.RaySystemError("lost"), [("ref", 1), ("ref", 2)]),   # the unfinished ones only
    (KeyboardInterrupt(), [("ref", 1), ("ref", 2)]),
])
def test_what_is_cancelled_when_a_chunk_fails(error, cancelled):
    """Cancelling a Ray task as it completes can abort the driver (ray-project/ray#54846, seen in this module):
    after a task's exception the chunks in flight run to the end, and otherwise only unfinished ones are
    cancelled."""
    fake = _ChunkRay(error)
    ex = RayExecutor(num_cpus=2)
    ex._ensure_ray = lambda: fake
    ex._remote = _ChunkRemote()
    with pytest.raises(type(error) if isinstance(error, (TaskError, KeyboardInterrupt)) else executors.EngineError):
        ex.map(_square, [1, 2, 3], chunksize=1)
    assert fake.cancelled == cancelled


def test_an_unreachable_ray_cluster_is_an_engine_error_in_one_line(monkeypatch):
    """ray.init failing (no cluster at the address, a dead GCS) becomes an EngineError naming the address and the
    engines to use instead; the ``psro`` command prints it as one line."""
    from games.executors import EngineError

    def unreachable(*args, **kwargs):
        raise ConnectionError("Could not find any running Ray instance.\nPlease specify the one to connect to.")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", unreachable)
    monkeypatch.setattr(executors, "check_reachable", lambda address: None)   # (no connection attempt at all)
    ex = RayExecutor(address="127.0.0.1:6379")
    with pytest.raises(EngineError, match=r"could not join the Ray cluster at '127\.0\.0\.1:6379': Could not find "
                                          r"any running Ray instance\. Please") as info:
        ex.map(_square, [1, 2])
    assert "\n" not in str(info.value) and "executor='process'" in str(info.value)
