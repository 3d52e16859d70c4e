"""The ``psro`` command and its run directory: ``--out`` never replaces a run silently, one writer at a time, a
checkpoint from another run is not adopted, and faults (a full disk, a bad path, a bad ``--set``) end in one line."""

import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from psro.run.checkpoint import CHECKPOINT_FILE, PREVIOUS_FILE, load_checkpoint
from psro.run.cli import main
from psro.run.run_files import LOCK_FILE

ROOT = Path(__file__).resolve().parents[3]
KUHN = ROOT / "experiments" / "configs" / "kuhn_poker.yaml"


def one_error_line(capsys, command="run"):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"psro {command}: error: "), err
    assert "Traceback" not in err
    return err


@pytest.fixture(scope="module")
def kuhn(tmp_path_factory):
    out = tmp_path_factory.mktemp("kuhn") / "run"
    assert main(["run", str(KUHN), "--set", "iterations=1", "--set", "rank_population=false", "--out", str(out)]) == 0
    return out


@pytest.fixture
def run(kuhn, tmp_path):
    return shutil.copytree(kuhn, tmp_path / "run")


def documents(run_dir):
    return [json.loads((run_dir / "checkpoint" / name).read_text())
            for name in (CHECKPOINT_FILE, PREVIOUS_FILE) if (run_dir / "checkpoint" / name).is_file()]


def test_out_an_existing_run_is_refused_without_overwrite(run, capsys):
    before = {p: p.read_bytes() for p in (run / "checkpoint").iterdir() if p.is_file()}
    assert main(["run", str(KUHN), "--set", "seed=3", "--set", "iterations=1", "--out", str(run)]) == 2
    err = one_error_line(capsys)
    assert "already holds a run" in err and "psro resume" in err and "--overwrite" in err
    assert {p: p.read_bytes() for p in (run / "checkpoint").iterdir() if p.is_file()} == before


def test_overwrite_replaces_the_run_and_keeps_nothing_of_the_old_checkpoint(run, capsys):
    (run / "checkpoint" / "arrays-of-my-experiment.npz").write_bytes(b"mine")
    assert main(["run", str(KUHN), "--set", "seed=3", "--set", "iterations=1", "--set", "rank_population=false",
                 "--out", str(run), "--overwrite"]) == 0
    seeds = [doc["config"]["seed"] for doc in documents(run)]
    assert seeds == [3, 3]
    listed = set().union(*(doc["manifest"] for doc in documents(run)))
    npz = {p.name for p in (run / "checkpoint").glob("*.npz")}
    assert npz == listed | {"arrays-of-my-experiment.npz"}


@pytest.mark.parametrize("kind", ["proc", "file", "under a file"])
def test_out_a_path_that_cannot_be_a_run_directory_is_one_line(tmp_path, capsys, kind):
    (tmp_path / "file").write_text("x")
    out = {"proc": "/proc/x", "file": str(tmp_path / "file"), "under a file": str(tmp_path / "file" / "run")}[kind]
    assert main(["run", str(KUHN), "--set", "iterations=1", "--out", out]) == 2
    assert "--out" in one_error_line(capsys)
    assert (tmp_path / "file").read_text() == "x"


def test_a_set_value_that_is_not_yaml_is_one_line(tmp_path, capsys):
    assert main(["run", str(KUHN), "--set", "iterations=[1", "--out", str(tmp_path / "r")]) == 2
    assert "iterations" in one_error_line(capsys)


HOLDER = """
import sys, time
from psro.run.run_files import run_lock
with run_lock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(60)
"""


def test_a_second_writer_of_a_run_directory_is_refused_naming_the_lock(run, capsys):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = (run / "checkpoint" / CHECKPOINT_FILE).read_bytes()
        assert main(["resume", str(run), "--set", "iterations=2"]) == 2
        err = one_error_line(capsys, "resume")
        assert LOCK_FILE in err and f"process {holder.pid}" in err
        assert (run / "checkpoint" / CHECKPOINT_FILE).read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    assert main(["resume", str(run), "--set", "iterations=2", "--set", "rank_population=false"]) == 0


def test_another_runs_checkpoint_copied_in_is_reported_not_adopted_silently(run, tmp_path, capsys, caplog):
    other = tmp_path / "other"
    assert main(["run", str(KUHN), "--set", "iterations=1", "--set", "seed=5", "--set", "rank_population=false",
                 "--out", str(other)]) == 0
    capsys.readouterr()
    shutil.rmtree(run / "checkpoint")
    shutil.copytree(other / "checkpoint", run / "checkpoint")
    assert "seed: 0" in (run / "config.yaml").read_text()
    with caplog.at_level("WARNING"):
        assert main(["resume", str(run), "--set", "iterations=2", "--set", "rank_population=false"]) == 0
    warned = [r.getMessage() for r in caplog.records if "disagrees with the checkpoint" in r.getMessage()]
    assert len(warned) == 1 and "seed: config.yaml 0, checkpoint 5" in warned[0]
    assert "seed: 5" in (run / "config.yaml").read_text()   # (rewritten from the checkpoint it follows)


def test_a_full_disk_ends_in_one_line_and_keeps_the_checkpoint(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    real_fsync, calls = os.fsync, []

    def fsync(fd):
        calls.append(fd)
        if len(calls) > 12:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert main(["run", str(KUHN), "--set", "iterations=4", "--set", "rank_population=false",
                 "--out", str(out)]) == 1
    err = one_error_line(capsys)
    assert "disk is full" in err and "psro resume" in err
    monkeypatch.setattr(os, "fsync", real_fsync)
    saved = load_checkpoint(out / "checkpoint")["state"]["iteration"]
    assert 0 <= saved < 4
    assert main(["resume", str(out), "--set", "rank_population=false"]) == 0
    assert load_checkpoint(out / "checkpoint")["state"]["iteration"] == 4


@pytest.mark.parametrize("name", ["config.yaml", "history.csv", "report.md", "meta_strategy.json", "nash_conv.png",
                                  "population.npz", "meta_game.npz"])
def test_resume_writes_nothing_through_a_link_in_the_run_directory(run, tmp_path, capsys, name):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (run / name).unlink()
    (run / name).symlink_to(victim)
    assert main(["resume", str(run), "--set", "iterations=2", "--set", "rank_population=false"]) == 2
    assert "symbolic link" in one_error_line(capsys, "resume")
    assert victim.read_text() == "precious"


def test_resume_refuses_a_linked_checkpoint_folder(run, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(run / "checkpoint", elsewhere)
    (elsewhere / "policies-final.npz").write_bytes(b"unrelated")
    (run / "checkpoint").symlink_to(elsewhere)
    before = sorted(p.name for p in elsewhere.iterdir())
    assert main(["resume", str(run), "--set", "iterations=3"]) == 2
    assert "symbolic link" in one_error_line(capsys, "resume")
    assert sorted(p.name for p in elsewhere.iterdir()) == before


# -- issue 36: links, hard links, the lock, --overwrite, quoting ------------------------------------------------------


def test_resume_refuses_a_linked_log_csv_before_it_trains(run, tmp_path, capsys):
    victim = tmp_path / "bashrc"
    victim.write_text("precious\n")
    (run / "log.csv").symlink_to(victim)
    before = (run / "checkpoint" / CHECKPOINT_FILE).read_bytes()
    assert main(["resume", str(run), "--set", "iterations=2", "--set", "loggers=[csv]"]) == 2
    assert "symbolic link" in one_error_line(capsys, "resume")
    assert victim.read_text() == "precious\n"
    assert (run / "checkpoint" / CHECKPOINT_FILE).read_bytes() == before   # (refused before training)


def test_resume_refuses_a_hard_linked_log_csv(run, tmp_path, capsys):
    victim = tmp_path / "bashrc"
    victim.write_text("precious\n")
    os.link(victim, run / "log.csv")
    assert main(["resume", str(run), "--set", "iterations=2", "--set", "loggers=[csv]"]) == 2
    assert "hard link" in one_error_line(capsys, "resume")
    assert victim.read_text() == "precious\n"


def test_a_hard_link_at_the_lock_is_refused_and_its_target_kept(run, tmp_path, capsys):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (run / LOCK_FILE).unlink(missing_ok=True)
    os.link(victim, run / LOCK_FILE)
    assert main(["resume", str(run), "--set", "iterations=2"]) == 2
    assert "hard link" in one_error_line(capsys, "resume")
    assert victim.read_text() == "precious"


def test_overwrite_clears_what_the_old_run_left_and_follows_no_link(run, tmp_path, capsys):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious")
    (run / "ranking.csv").write_text("player,agent\n0,4\n")
    (run / "log.csv").write_text("iteration,gap\n0,1\n1,1\n2,1\n")
    (run / "tensorboard").symlink_to(victim, target_is_directory=True)
    (run / "notes.txt").write_text("mine")
    assert main(["run", str(KUHN), "--set", "iterations=1", "--set", "rank_population=false", "--out", str(run),
                 "--overwrite"]) == 0
    assert not (run / "ranking.csv").exists() and not os.path.lexists(run / "tensorboard")
    assert not (run / "log.csv").exists()   # (the new run has no csv logger)
    assert (victim / "keep.txt").read_text() == "precious" and (run / "notes.txt").read_text() == "mine"


def test_report_takes_the_lock(run, capsys):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = (run / "report.md").read_bytes()
        assert main(["report", str(run)]) == 2
        err = one_error_line(capsys, "report")
        assert LOCK_FILE in err and f"process {holder.pid}" in err
        assert (run / "report.md").read_bytes() == before
    finally:
        holder.kill()
        holder.wait()


def test_printed_paths_are_quoted_for_the_shell(tmp_path, capsys):
    out = tmp_path / "r$(touch pwned)`id`"
    assert main(["run", str(KUHN), "--set", "iterations=1", "--set", "rank_population=false", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {shlex.quote(str(out))}" in printed
    assert main(["run", str(KUHN), "--set", "iterations=1", "--out", str(out)]) == 2
    assert f"`psro resume {shlex.quote(str(out))}`" in one_error_line(capsys)


def test_a_job_refusing_its_input_in_a_worker_is_one_line(tmp_path, capsys, monkeypatch):
    from games.executor_tasks import TaskError
    from games.memory_limit import MemoryLimitExceeded
    from psro.run import cli

    def refuse(*args, **kwargs):
        error = MemoryLimitExceeded("a network with hidden=[1000000] needs about 3 GiB, above the memory limit")
        raise TaskError(0, "job", error) from error

    monkeypatch.setattr(cli, "_train", refuse)
    assert main(["run", str(KUHN), "--set", "iterations=1", "--out", str(tmp_path / "r")]) == 2
    assert "needs about 3 GiB" in one_error_line(capsys)


def test_an_empty_checkpoint_key_is_refused_before_the_run_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PSRO_CHECKPOINT_KEY", "")
    out = tmp_path / "r"
    assert main(["run", str(KUHN), "--set", "iterations=1", "--out", str(out)]) == 2
    assert "PSRO_CHECKPOINT_KEY is set but empty" in one_error_line(capsys)
    assert not out.exists()
