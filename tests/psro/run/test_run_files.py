"""The files of a run directory: atomic writes that never follow a link, reads that never leave the directory or
block, and the writer's lock."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from psro.run.run_files import (
    LOCK_FILE,
    RunDirLocked,
    UnsafePath,
    atomic_write,
    check_directory,
    file_in,
    read_regular,
    run_lock,
    write_text,
)

ROOT = Path(__file__).resolve().parents[3]


def test_atomic_write_replaces_a_regular_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "history.csv"
    path.write_text("old")
    write_text(path, "new")
    assert path.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.csv"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "report.md"
    path.write_text("old")

    def fail(fh):
        fh.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        atomic_write(path, fail)
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_a_link_at_the_target_is_refused_and_its_target_untouched(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / "report.md").symlink_to(victim)
    with pytest.raises(UnsafePath, match="symbolic link"):
        write_text(run / "report.md", "x\ntouch PWNED #")
    assert victim.read_text() == "precious"
    (run / "dangling").symlink_to(tmp_path / "nowhere")   # a link to a file that does not exist yet
    with pytest.raises(UnsafePath, match="symbolic link"):
        write_text(run / "dangling", "x")
    assert not (tmp_path / "nowhere").exists()


def test_a_fifo_or_a_folder_at_the_target_is_refused(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    for name in ("fifo", "folder"):
        with pytest.raises(UnsafePath, match="not a regular file"):
            write_text(tmp_path / name, "x")


def test_a_linked_folder_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "checkpoint").symlink_to(elsewhere)
    with pytest.raises(UnsafePath, match="symbolic link"):
        write_text(tmp_path / "checkpoint" / "checkpoint.json", "{}")
    with pytest.raises(UnsafePath, match="symbolic link"):
        check_directory(tmp_path / "checkpoint")
    assert list(elsewhere.iterdir()) == []


def test_read_regular_refuses_devices_fifos_and_links_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo")   # (opening a FIFO for reading would block without O_NONBLOCK)
    (tmp_path / "link").symlink_to("/etc/hostname")
    start = time.monotonic()
    for path in ("/dev/zero", tmp_path / "fifo", tmp_path):
        with pytest.raises(UnsafePath, match="not a regular file"):
            read_regular(path)
    with pytest.raises(UnsafePath, match="symbolic link"):
        read_regular(tmp_path / "link")
    assert time.monotonic() - start < 5
    (tmp_path / "data").write_bytes(b"abc")
    assert read_regular(tmp_path / "data") == b"abc"


@pytest.mark.parametrize("name", ["../../etc/hostname", "/etc/passwd", "..", ".", "", "a/b", "a\\b", "x\ny", 5, None])
def test_file_in_refuses_names_that_leave_the_directory(tmp_path, name):
    with pytest.raises(UnsafePath, match="arrays.file"):
        file_in(tmp_path, name, "arrays.file")


HOLDER = """
import sys, time
from psro.run.run_files import run_lock
with run_lock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(60)
"""


def test_a_second_writer_is_refused_with_the_holders_pid(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                              env=env)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunDirLocked) as caught:
            with run_lock(tmp_path):
                pass
        message = str(caught.value)
        assert f"process {holder.pid}" in message and LOCK_FILE in message
    finally:
        holder.kill()
        holder.wait()
    with run_lock(tmp_path) as lock:   # the lock ends with its process, however it ends
        assert lock.read_text().strip() == str(os.getpid())


def test_a_linked_lock_file_is_refused(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / LOCK_FILE).symlink_to(victim)
    with pytest.raises(UnsafePath, match="symbolic link"):
        with run_lock(run):
            pass
    assert victim.read_text() == "precious"


# -- issue 36: hard links, appends, the lock's own name, sizes --------------------------------------------------------


def test_a_hard_link_at_the_name_is_refused_and_its_target_kept(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    folder = tmp_path / "run"
    folder.mkdir()
    os.link(victim, folder / "report.md")
    with pytest.raises(UnsafePath, match="hard link"):
        atomic_write(folder / "report.md", lambda fh: fh.write(b"x"))
    assert victim.read_text() == "precious"


def test_open_append_refuses_links_and_appends_to_a_plain_file(tmp_path):
    from psro.run.run_files import open_append

    victim = tmp_path / "bashrc"
    victim.write_text("precious\n")
    (tmp_path / "linked.csv").symlink_to(victim)
    os.link(victim, tmp_path / "hard.csv")
    with pytest.raises(UnsafePath, match="symbolic link"):
        open_append(tmp_path / "linked.csv")
    with pytest.raises(UnsafePath, match="hard link"):
        open_append(tmp_path / "hard.csv")
    assert victim.read_text() == "precious\n"
    for line in ("a\n", "b\n"):
        with open_append(tmp_path / "log.csv") as fh:
            fh.write(line)
    assert (tmp_path / "log.csv").read_text() == "a\nb\n"


def test_the_lock_refuses_a_hard_link_at_its_name_without_truncating_the_target(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    folder = tmp_path / "run"
    folder.mkdir()
    os.link(victim, folder / LOCK_FILE)
    with pytest.raises(UnsafePath, match="hard link"):
        with run_lock(folder):
            pass
    assert victim.read_text() == "precious"


def test_the_lock_names_a_sweep_directory_as_such(tmp_path):
    with run_lock(tmp_path, what="sweep directory"):
        with pytest.raises(RunDirLocked, match="^sweep directory"):
            with run_lock(tmp_path, what="sweep directory"):
                pass


def test_read_regular_refuses_a_file_above_the_limit_before_reading(tmp_path, monkeypatch):
    monkeypatch.setenv("PSRO_MAX_MEMORY", "1M")
    path = tmp_path / "history.csv"
    with open(path, "wb") as fh:
        fh.truncate(64 * 2**20)
    with pytest.raises(ValueError, match="history.csv.*memory limit of 1 MiB"):
        read_regular(path)
