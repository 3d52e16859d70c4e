"""An NFSP checkpoint reads no file outside its directory, whatever its document names."""

import json
import os

import pytest

from psro.family.nfsp import NFSP
from psro.run.document_seal import seal_document
from psro.run.run_files import UnsafePath

TINY = {"steps_per_iteration": 64, "hidden": [8], "learning_starts": 16, "rl_buffer_size": 64,
        "sl_buffer_size": 32, "batch_size": 8}


def test_arrays_outside_the_checkpoint_are_refused(tmp_path):
    folder = tmp_path / "ckpt"
    NFSP("kuhn_poker", progress=False, algorithm_options=TINY, checkpoint_dir=folder).run(iterations=1)
    os.mkfifo(tmp_path / "fifo")
    path = folder / "checkpoint.json"
    for target in ("/dev/zero", str(tmp_path / "fifo"), "/etc/passwd", "../../../../etc/hostname"):
        document = json.loads(path.read_bytes())
        document.pop("sha256")
        document["arrays"]["file"] = target
        path.write_bytes(seal_document(document))
        with pytest.raises(ValueError, match="arrays.file: .* is not a file name inside"):
            NFSP.resume(folder)


def test_a_linked_checkpoint_folder_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "ckpt").symlink_to(elsewhere)
    with pytest.raises(UnsafePath, match="symbolic link"):
        NFSP("kuhn_poker", progress=False, algorithm_options=TINY, checkpoint_dir=tmp_path / "ckpt").run(iterations=1)
    assert list(elsewhere.iterdir()) == []


def test_the_keyed_seal_covers_nfsp_checkpoints(tmp_path, monkeypatch):
    from psro.run.document_seal import KEY_VARIABLE

    monkeypatch.setenv(KEY_VARIABLE, "secret")
    folder = tmp_path / "ckpt"
    NFSP("kuhn_poker", progress=False, algorithm_options=TINY, checkpoint_dir=folder).run(iterations=1)
    assert NFSP.resume(folder).iteration == 1
    monkeypatch.setenv(KEY_VARIABLE, "another")
    with pytest.raises(ValueError, match="another key"):
        NFSP.resume(folder)
    monkeypatch.delenv(KEY_VARIABLE)
    with pytest.raises(ValueError, match="set PSRO_CHECKPOINT_KEY"):
        NFSP.resume(folder)
