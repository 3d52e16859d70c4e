"""Executors: serial and process-pool engines give identical, ordered, seeded results."""

import os
import signal
import threading
import time

import numpy as np
import pytest

from games.executors import (
    EngineError,
    ProcessPoolExecutor,
    SerialExecutor,
    TaskError,
    make_executor,
    spawn_generators,
)


def _square(x):
    return x * x


def _noisy_sum(task, rng):
    """A seeded task: the mean of ``task`` normal draws."""
    return float(rng.normal(size=task).sum())


def _fail_on_three(x):
    if x == 3:
        raise ValueError("three is not allowed")
    return x


def _kill_self_once(task):
    """SIGKILL this worker the first time task 2 runs (a marker file remembers it)."""
    value, marker = task
    if value == 2 and not os.path.exists(marker):
        with open(marker, "w") as fh:
            fh.write("died")
        os.kill(os.getpid(), signal.SIGKILL)
    return value * 10


def _kill_self(task):
    os.kill(os.getpid(), signal.SIGKILL)


def _slow_noisy_sum(task, rng):
    time.sleep(0.05)
    return float(rng.normal(size=task).sum())


@pytest.fixture(scope="module")
def pool():
    with ProcessPoolExecutor(workers=2) as ex:
        yield ex


def test_serial_preserves_order():
    assert SerialExecutor().map(_square, range(7)) == [x * x for x in range(7)]


def test_pool_preserves_order_with_small_chunks(pool):
    assert pool.map(_square, list(range(23)), chunksize=2) == [x * x for x in range(23)]


def test_seeded_results_identical_across_engines_chunks_and_workers(pool):
    tasks = [5, 1, 7, 3, 2, 9, 4]
    serial = SerialExecutor().map(_noisy_sum, tasks, seed=11)
    assert pool.map(_noisy_sum, tasks, seed=11) == serial
    assert pool.map(_noisy_sum, tasks, seed=11, chunksize=3) == serial
    assert SerialExecutor(chunksize=1).map(_noisy_sum, tasks, seed=11) == serial
    # the streams are those of SeedSequence(seed).spawn(n)
    expected = [float(g.normal(size=t).sum()) for g, t in zip(spawn_generators(11, len(tasks)), tasks)]
    assert serial == expected
    assert SerialExecutor().map(_noisy_sum, tasks, seed=12) != serial


@pytest.mark.parametrize("engine", ["serial", "pool"])
def test_exceptions_propagate_with_task_index(engine, pool):
    ex = SerialExecutor() if engine == "serial" else pool
    with pytest.raises(TaskError, match=r"task 3 \(3\) failed with ValueError: three is not allowed") as info:
        ex.map(_fail_on_three, [0, 1, 2, 3, 4], chunksize=2)
    assert info.value.index == 3
    assert isinstance(info.value.__cause__, ValueError)


def test_pool_is_reusable_after_error(pool):
    with pytest.raises(TaskError):
        pool.map(_fail_on_three, [3])
    assert pool.map(_square, [4]) == [16]


def test_a_worker_sigkilled_mid_batch_costs_a_retry_not_the_run(tmp_path):
    marker = str(tmp_path / "died")
    with ProcessPoolExecutor(workers=2) as ex:
        out = ex.map(_kill_self_once, [(i, marker) for i in range(6)], chunksize=1)
        assert os.path.exists(marker)                    # the worker did die once
        assert out == [0, 10, 20, 30, 40, 50]
        assert ex.map(_square, [5]) == [25]              # and the executor is still usable


def test_a_worker_killed_from_outside_loses_no_seeded_result(caplog):
    tasks = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]
    serial = SerialExecutor().map(_noisy_sum, tasks, seed=7)
    with ProcessPoolExecutor(workers=2) as ex:
        ex.map(_square, [1])                             # the pool is up
        victim = next(iter(ex._pool._processes.values()))
        killer = threading.Timer(0.15, os.kill, (victim.pid, signal.SIGKILL))
        killer.start()
        out = ex.map(_slow_noisy_sum, tasks, seed=7, chunksize=1)
        killer.join()
        assert victim.exitcode == -signal.SIGKILL
    assert "retrying tasks" in caplog.text             # it died mid-batch, and the lost chunks ran again
    assert out == serial


def test_a_task_that_always_kills_its_worker_gives_a_clear_error():
    with ProcessPoolExecutor(workers=1, max_retries=1) as ex:
        with pytest.raises(EngineError, match=r"worker process of the pool died .* tasks 0\.\.0, on 2 pools"):
            ex.map(_kill_self, [0])
        assert ex.map(_square, [3]) == [9]


def test_empty_tasks():
    assert SerialExecutor().map(_square, []) == []


def test_make_executor_specs():
    assert isinstance(make_executor(None), SerialExecutor)
    assert isinstance(make_executor("serial"), SerialExecutor)
    assert isinstance(make_executor(1), SerialExecutor)
    ex = make_executor(3)
    assert isinstance(ex, ProcessPoolExecutor) and ex.workers == 3
    assert isinstance(make_executor("process"), ProcessPoolExecutor)
    same = SerialExecutor()
    assert make_executor(same) is same


@pytest.mark.parametrize("bad", ["threads", 0, -2, 2.5])
def test_make_executor_rejects_bad_specs(bad):
    with pytest.raises(ValueError, match="executor"):
        make_executor(bad)


def test_bad_arguments():
    with pytest.raises(ValueError, match="workers"):
        ProcessPoolExecutor(workers=0)
    with pytest.raises(ValueError, match="chunksize"):
        SerialExecutor(chunksize=0)
    with pytest.raises(TypeError, match="fn must be callable"):
        SerialExecutor().map(3, [1])


def test_progress_bar_does_not_change_results():
    assert SerialExecutor(progress=True).map(_square, [1, 2]) == [1, 4]


def test_spawn_generators_independent_streams():
    a, b = spawn_generators(0, 2)
    assert not np.array_equal(a.random(5), b.random(5))


def test_make_executor_dict_and_ray_specs():
    from games.executors import RayExecutor

    ex = make_executor({"engine": "process", "workers": 2})
    assert isinstance(ex, ProcessPoolExecutor) and ex.workers == 2
    assert isinstance(make_executor({"engine": "serial"}), SerialExecutor)
    ray_ex = make_executor({"engine": "ray", "num_cpus": 2, "address": None})
    assert isinstance(ray_ex, RayExecutor) and ray_ex.num_cpus == 2 and ray_ex.address is None
    assert make_executor("ray", address="auto").address == "auto"
    with pytest.raises(ValueError, match="'engine'"):
        make_executor({"workers": 2})
    with pytest.raises(ValueError, match="not both"):
        RayExecutor(num_cpus=2, address="auto")
    with pytest.raises(ValueError, match="num_cpus must be an int >= 1"):
        RayExecutor(num_cpus=0)
    with pytest.raises(TypeError, match="workers must be an int"):
        ProcessPoolExecutor(workers=True)
    with pytest.raises(ValueError, match="max_in_flight"):
        RayExecutor(max_in_flight=0)
    with pytest.raises(ValueError, match="worker_niceness"):
        RayExecutor(worker_niceness=-1)
    with pytest.raises(ValueError, match="worker_niceness applies to a local instance"):
        RayExecutor(address="auto", worker_niceness=0)
    with pytest.raises(TypeError, match="transient"):
        RayExecutor(transient=("ConnectionError",))


def test_importing_the_library_does_not_import_ray():
    import subprocess
    import sys

    code = ("import sys, games, psro.evaluation; from games.executors import make_executor; "
            "make_executor('ray'); print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_ray_names_the_extra(monkeypatch):
    import sys

    from games.executors import RayExecutor

    monkeypatch.setitem(sys.modules, "ray", None)    # makes `import ray` raise ImportError
    with pytest.raises(ImportError, match=r"pip install 'psro-toolkit\[ray\]'"):
        RayExecutor(num_cpus=1).map(abs, [-1])


KILLED_PARENT = """
import time
from games.executors import ProcessPoolExecutor
with ProcessPoolExecutor(workers=2, chunksize=1) as ex:
    print("started", flush=True)
    ex.map(time.sleep, [60, 60])
"""


@pytest.mark.slow
def test_no_pool_worker_outlives_a_sigkilled_parent():
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    import psutil

    root = Path(__file__).resolve().parents[2]
    main = subprocess.Popen([sys.executable, "-c", KILLED_PARENT], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(root)})
    try:
        assert main.stdout.readline().strip() == "started"
        parent = psutil.Process(main.pid)
        deadline = time.monotonic() + 60
        workers = []
        while len(workers) < 2 and time.monotonic() < deadline:   # the two workers, busy with their tasks
            workers = [c for c in parent.children() if "resource_tracker" not in " ".join(c.cmdline())]
            time.sleep(0.2)
        assert len(workers) == 2
        time.sleep(1.0)
        main.send_signal(signal.SIGKILL)
        main.wait()
        _, alive = psutil.wait_procs(workers, timeout=10)
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert alive == [], f"workers still alive 10 s after their parent was killed: {alive}"
    finally:
        main.kill()


def test_check_reachable_names_an_address_nothing_answers_on():
    import socket
    import time

    from games.executors import EngineError, check_reachable

    start = time.perf_counter()
    with pytest.raises(EngineError, match=r"cannot reach the Ray cluster at 'ray://127\.0\.0\.1:1'"):
        check_reachable("ray://127.0.0.1:1", timeout=2.0)
    assert time.perf_counter() - start < 3
    with socket.socket() as server:   # something listening that never answers: not Ray either (issue 36)
        server.bind(("127.0.0.1", 0))
        server.listen()
        with pytest.raises(EngineError, match="not a Ray cluster"):
            check_reachable(f"127.0.0.1:{server.getsockname()[1]}", timeout=1.0)
    check_reachable("auto")   # left to Ray


# -- issue 36: an address where another service listens fails fast ----------------------------------------------------


def test_check_reachable_refuses_a_service_that_is_not_ray_at_once():
    import socket

    from games.executors import EngineError, check_reachable

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]

    def answer_http():
        connection, _ = server.accept()
        connection.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        connection.close()

    threading.Thread(target=answer_http, daemon=True).start()
    start = time.monotonic()
    with pytest.raises(EngineError, match="accepts connections but is not a Ray cluster"):
        check_reachable(f"127.0.0.1:{port}", timeout=2.0)
    assert time.monotonic() - start < 3
    server.close()


def test_check_reachable_accepts_a_grpc_server():
    grpc = pytest.importorskip("grpc")
    from concurrent import futures

    from games.executors import check_reachable

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        check_reachable(f"127.0.0.1:{port}")
        check_reachable(f"ray://127.0.0.1:{port}")
    finally:
        server.stop(0)
