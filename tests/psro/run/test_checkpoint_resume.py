"""Checkpoints: atomic files, no pickle, and a run killed with SIGKILL resumes to the same result bit for bit."""

import json
import signal
import time

import numpy as np
import pytest

from games import EmpiricalGame
from psro import PSRO
from psro.run.checkpoint import CHECKPOINT_FILE, PREVIOUS_FILE, atomic_write, load_checkpoint
from psro.run.cli import main


def assert_same_run(a: PSRO, b: PSRO):
    assert a.iteration == b.iteration and a.evaluations == b.evaluations
    for pa, pb in zip(a.populations, b.populations):
        assert np.array_equal(pa.policies, pb.policies)
        assert pa.provenance_table().equals(pb.provenance_table())
    for name in ("count", "total", "total_sq", "exact"):
        assert np.array_equal(getattr(a.meta_game, name), getattr(b.meta_game, name))
    assert np.array_equal(a.meta_strategy.joint, b.meta_strategy.joint)


@pytest.mark.parametrize("meta_solver, game, options", [
    ("nash", "kuhn_poker", {}),                                     # the warm-started LP is replayed
    ("mgcce", "kuhn_poker(players=3)", {"update_players": "random"}),  # the generator's state is restored
    ("mwce", "kuhn_poker(players=3)", {"br_selection": "largest_gap"}),
])
def test_resume_in_process_gives_the_uninterrupted_run(tmp_path, meta_solver, game, options):
    reference = PSRO(game, meta_solver=meta_solver, progress=False, seed=5, **options)
    reference.run(iterations=7)
    first = PSRO(game, meta_solver=meta_solver, progress=False, seed=5, checkpoint_dir=tmp_path, **options)
    first.run(iterations=3)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.history.drop(columns=["wall_time", "cpu_time"]).equals(
        first.history.drop(columns=["wall_time", "cpu_time"]))
    resumed.run(iterations=4)
    assert_same_run(reference, resumed)
    assert resumed.history["gap"].tolist() == reference.history["gap"].tolist()


class Killed(Exception):
    pass


def test_checkpoint_from_an_evaluation_batch_hook_loses_no_finished_evaluation(tmp_path):
    reference = PSRO("kuhn_poker(players=3)", meta_solver="mgcce", progress=False)
    reference.run(iterations=5)
    solver = PSRO("kuhn_poker(players=3)", meta_solver="mgcce", progress=False)

    def save_then_die(s, index):
        if s.iteration == 4:
            s.save_checkpoint(tmp_path)
            raise Killed   # the process dies right after the first block of iteration 4 is stored

    solver.on_evaluation_batch.append(save_then_die)
    with pytest.raises(Killed):
        solver.run(iterations=5)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.in_iteration and resumed.iteration == 4 and len(resumed.history) == 4
    evaluated = []
    evaluate = resumed.evaluator.evaluate
    resumed.evaluator.evaluate = lambda pops, index, **where: evaluated.append(index) or evaluate(pops, index, **where)
    resumed.run(iterations=0)   # finishes the interrupted iteration
    assert len(evaluated) == 2   # of the three new blocks of a three-player step, one was saved
    assert resumed.iteration == 4 and not resumed.in_iteration
    resumed.run(iterations=1)
    assert_same_run(reference, resumed)
    assert resumed.history["gap"].tolist() == reference.history["gap"].tolist()


def test_checkpoint_files_hold_no_pickle_and_old_arrays_are_removed(tmp_path):
    solver = PSRO("kuhn_poker", progress=False, checkpoint_dir=tmp_path)
    solver.run(iterations=3)
    files = sorted(p.name for p in tmp_path.iterdir())
    document = json.loads((tmp_path / CHECKPOINT_FILE).read_text())
    previous = json.loads((tmp_path / PREVIOUS_FILE).read_text())
    # the latest checkpoint and the one before (kept until the next is verified); nothing older
    assert files == sorted({CHECKPOINT_FILE, PREVIOUS_FILE, *document["manifest"], *previous["manifest"]})
    assert [f.split("-")[1] for f in files if f.startswith(("arrays", "meta_game"))] == ["000002", "000003"] * 2
    # each save writes only the policies added since the last: initial ones, then one file per iteration
    assert [f.split("-")[1] for f in files if f.startswith("policies")] == ["000000", "000001", "000002", "000003"]
    assert document["state"]["iteration"] == 3 and len(document["history"]) == 4
    assert previous["state"]["iteration"] == 2
    assert document["rng"]["bit_generator"] == "PCG64"
    for name in (f for f in files if f.endswith(".npz")):
        with np.load(tmp_path / name, allow_pickle=False) as data:   # raises if anything needed pickle
            assert all(data[k].dtype != object for k in data.files)


def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path):
    path = tmp_path / "state.json"
    atomic_write(path, lambda fh: fh.write(b"old"))

    def broken(fh):
        fh.write(b"half")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        atomic_write(path, broken)
    assert path.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_load_checkpoint_errors_name_the_directory(tmp_path):
    with pytest.raises(ValueError, match="checkpoint_dir"):
        load_checkpoint(tmp_path)
    (tmp_path / CHECKPOINT_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="damaged"):
        load_checkpoint(tmp_path)


# ------------------------------------------------------------ SIGKILL at random moments
CONFIG = """game: kuhn_poker(players=3)
meta_solver: mgcce
iterations: 12
target_gap: null
seed: 3
"""


def run_until_killed(proc, iteration: int, delay: float) -> int:
    """Read the printed table until ``iteration`` has been printed, wait ``delay`` seconds, SIGKILL; the exit code."""
    for line in proc.stdout:
        cells = line.split()
        if cells and cells[0].isdigit() and int(cells[0]) >= iteration:
            break
    time.sleep(delay)
    return proc.kill()


def test_sigkill_at_random_points_then_resume_gives_the_same_run(tmp_path, capsys, forked):
    # ``psro run`` and ``psro resume`` run in forked children of this process (processes of their own, killed as
    # the commands would be, without an interpreter start of their own)
    config = tmp_path / "jpsro.yaml"
    config.write_text(CONFIG)
    rng = np.random.default_rng(2024)
    killed = tmp_path / "killed"
    proc = forked(main, ["run", str(config), "--out", str(killed)], stdout=True)
    kills = sorted(rng.integers(0, 11, size=2))
    for n, k in enumerate(kills):
        assert run_until_killed(proc, int(k), float(rng.uniform(0.0, 0.02))) == -signal.SIGKILL
        if n < len(kills) - 1:
            proc = forked(main, ["resume", str(killed)], stdout=True)
    assert main(["resume", str(killed)]) == 0   # the last resume in process: it is not killed
    assert "resuming" in capsys.readouterr().out

    # the uninterrupted run (in this process: the same code, one BLAS thread, the same seed)
    reference = PSRO("kuhn_poker(players=3)", meta_solver="mgcce", seed=3, progress=False)
    reference.run(iterations=12)
    b = EmpiricalGame.load(killed / "meta_game.npz")
    for name in ("count", "total", "total_sq", "exact"):
        assert np.array_equal(getattr(reference.meta_game, name), getattr(b, name)), name
    with np.load(killed / "population.npz", allow_pickle=False) as pb:
        for p, pop in enumerate(reference.populations):
            assert np.array_equal(pop.policies, pb[f"policies_{p}"])
            assert pop.provenance_table()["iteration"].tolist() == pb[f"iteration_{p}"].tolist()
    history = load_checkpoint(killed / "checkpoint", arrays=False)["history"]
    assert [row["iteration"] for row in history] == list(range(13))
    assert [row["gap"] for row in history] == reference.history["gap"].tolist()
