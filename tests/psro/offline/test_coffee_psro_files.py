"""An offline checkpoint reads no file outside its directory, whatever its document names: a dataset path or an
arrays file elsewhere, a device, a FIFO or a link is refused at once (no hang, nothing read)."""

import json
import os
import time

import pyspiel
import pytest

from games.datasets import collect
from psro.offline.coffee_psro import OfflinePSRO, resume_offline
from psro.run.document_seal import seal_document

DOCUMENT = "offline_checkpoint.json"


@pytest.fixture(scope="module")
def kuhn_data():
    game = pyspiel.load_game("kuhn_poker")
    return collect(game, pyspiel.UniformRandomPolicy(game), episodes=300, seed=3)


def reseal(path, change) -> None:
    document = json.loads(path.read_bytes())
    document.pop("sha256")
    change(document)
    path.write_bytes(seal_document(document))


def test_a_dataset_file_is_copied_into_the_checkpoint(kuhn_data, tmp_path):
    source = tmp_path / "data.csv"
    kuhn_data.to_csv(source, index=False)
    folder = tmp_path / "ckpt"
    OfflinePSRO(source, game="kuhn_poker", members=2, checkpoint_dir=folder).run(iterations=1)
    name = json.loads((folder / DOCUMENT).read_text())["dataset"]["path"]
    assert "/" not in name and (folder / name).read_bytes() == source.read_bytes()
    source.unlink()   # the run no longer needs the file it was started from
    assert resume_offline(folder).iteration == 1


@pytest.mark.parametrize("field", ["dataset", "arrays"])
def test_paths_outside_the_checkpoint_are_refused_without_reading_them(kuhn_data, tmp_path, field):
    folder = tmp_path / "ckpt"
    OfflinePSRO(kuhn_data, game="kuhn_poker", members=2, checkpoint_dir=folder).run(iterations=1)
    os.mkfifo(tmp_path / "fifo")
    key = "path" if field == "dataset" else "file"
    for target in ("/dev/zero", str(tmp_path / "fifo"), "/etc/passwd", "../../../../etc/hostname"):
        reseal(folder / DOCUMENT, lambda doc: doc[field].__setitem__(key, target))
        start = time.monotonic()
        with pytest.raises(ValueError, match=f"{field}.{key}: .* is not a file name inside"):
            OfflinePSRO.resume(folder)
        assert time.monotonic() - start < 10
    for name in ("fifo-in-here", "link-in-here"):   # inside the folder, but not a regular file
        if name.startswith("fifo"):
            os.mkfifo(folder / name)
        else:
            (folder / name).symlink_to("/etc/passwd")
        reseal(folder / DOCUMENT, lambda doc: doc[field].__setitem__(key, name))
        with pytest.raises(ValueError, match="not a regular file|symbolic link"):
            OfflinePSRO.resume(folder)


def test_a_linked_document_is_refused(kuhn_data, tmp_path):
    folder = tmp_path / "ckpt"
    OfflinePSRO(kuhn_data, game="kuhn_poker", members=2, checkpoint_dir=folder).run(iterations=1)
    (folder / DOCUMENT).unlink()
    os.mkfifo(folder / DOCUMENT)
    with pytest.raises(ValueError, match="not a regular file"):
        resume_offline(folder)


def test_a_huge_sparse_dataset_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from psro.offline.coffee_psro import _sha256

    monkeypatch.setenv("PSRO_MAX_MEMORY", "1M")
    path = tmp_path / "dataset-0123456789ab.csv"
    with open(path, "wb") as fh:
        fh.truncate(64 * 2**20)   # (sparse: nothing on disk)
    with pytest.raises(ValueError, match="dataset-0123456789ab.csv.*memory limit of 1 MiB"):
        _sha256(path)


def test_a_config_naming_a_20_gb_sparse_dataset_is_refused_in_seconds(tmp_path, monkeypatch, capsys):
    # issue 57 item 3: the same file named by a config was read whole (27 s, then a MemoryError traceback)
    from games.memory_limit import check_file
    from games.trajectories import COLUMNS
    from psro.run.cli import main

    monkeypatch.setenv("PSRO_MAX_MEMORY", "4G")
    big = tmp_path / "big.csv"
    with open(big, "wb") as fh:
        fh.write(",".join(COLUMNS).encode() + b"\n")   # a valid header, then a sparse 20 GB hole
        fh.truncate(20 * 10**9)
    config = tmp_path / "offline.yaml"
    config.write_text(f"game: kuhn_poker\nalgorithm: offline_psro\nalgorithm_options: {{dataset: {big}}}\n"
                      "iterations: 1\n")
    start = time.perf_counter()
    assert main(["run", str(config), "--out", str(tmp_path / "run")]) == 2
    assert time.perf_counter() - start < 10
    err = capsys.readouterr().err
    with pytest.raises(ValueError) as checkpoint_message:
        check_file(big)
    assert err.splitlines() == [f"psro run: error: {checkpoint_message.value}"]
    assert "(2e+10 bytes) needs about 18.6 GiB, above the memory limit of 4 GiB (PSRO_MAX_MEMORY)" in err
