"""The files of a PSRO checkpoint: clean-up that removes only what a manifest listed, no link followed, and the
optional keyed seal (``PSRO_CHECKPOINT_KEY``)."""

import json
import shutil

import pytest

from psro import PSRO
from psro.run.checkpoint import CHECKPOINT_FILE, PREVIOUS_FILE, load_checkpoint
from psro.run.document_seal import KEY_VARIABLE, seal_document
from psro.run.run_files import UnsafePath


def manifest_files(directory, name=CHECKPOINT_FILE) -> set:
    return set(json.loads((directory / name).read_text())["manifest"])


def test_clean_up_removes_only_files_a_dropped_manifest_listed(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    mine = ["arrays-of-my-experiment.npz", "policies-final.npz", "meta_game-000001-0123456789ab.npz"]
    for name in mine:
        (folder / name).write_bytes(b"the user's")
    PSRO("kuhn_poker", checkpoint_dir=folder, progress=False).run(iterations=3)
    for name in mine:
        assert (folder / name).read_bytes() == b"the user's", name
    kept = manifest_files(folder) | manifest_files(folder, PREVIOUS_FILE)
    npz = {p.name for p in folder.glob("*.npz")}
    assert npz == kept | set(mine)   # the earlier checkpoints' files are gone, the user's are not
    assert load_checkpoint(folder)["state"]["iteration"] == 3


def test_a_linked_checkpoint_folder_is_refused_and_its_target_untouched(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("arrays-000001-aaaaaaaaaaaa.npz", "unrelated.txt"):
        (elsewhere / name).write_bytes(b"other")
    (tmp_path / "checkpoint").symlink_to(elsewhere)
    with pytest.raises(UnsafePath, match="symbolic link"):
        PSRO("kuhn_poker", checkpoint_dir=tmp_path / "checkpoint", progress=False).run(iterations=1)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["arrays-000001-aaaaaaaaaaaa.npz", "unrelated.txt"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ckpt") / "checkpoint"
    PSRO("kuhn_poker", checkpoint_dir=folder, progress=False).run(iterations=2)
    return folder


@pytest.fixture
def ckpt(pristine, tmp_path):
    return shutil.copytree(pristine, tmp_path / "checkpoint")


def test_a_linked_document_or_array_file_is_refused_not_read(ckpt, tmp_path):
    name = sorted(manifest_files(ckpt))[0]
    (ckpt / name).unlink()
    (ckpt / name).symlink_to("/etc/passwd")
    with pytest.raises(ValueError, match="symbolic link"):
        load_checkpoint(ckpt)
    victim = tmp_path / "victim.json"
    victim.write_text("{}")
    (ckpt / CHECKPOINT_FILE).unlink()
    (ckpt / CHECKPOINT_FILE).symlink_to(victim)
    with pytest.raises(ValueError, match="symbolic link"):
        load_checkpoint(ckpt)
    solver = PSRO.resume(ckpt, previous=True)
    with pytest.raises(UnsafePath, match="symbolic link"):   # and the next save does not write through it
        solver.run(iterations=1)
    assert victim.read_text() == "{}"


def forge(path, key=None) -> None:
    """Edit a history gap to -123 and reseal the document (with ``key``, or a plain SHA-256 when None)."""
    document = json.loads(path.read_bytes())
    document.pop("sha256", None)
    document.pop("hmac_sha256", None)
    document["history"][0]["gap"] = -123.0
    with pytest.MonkeyPatch.context() as patch:
        if key is None:
            patch.delenv(KEY_VARIABLE, raising=False)
        else:
            patch.setenv(KEY_VARIABLE, key)
        path.write_bytes(seal_document(document))


def test_without_a_key_the_seal_detects_damage_not_forgery(ckpt, monkeypatch):
    monkeypatch.delenv(KEY_VARIABLE, raising=False)
    forge(ckpt / CHECKPOINT_FILE)
    assert load_checkpoint(ckpt)["history"][0]["gap"] == -123.0   # (what docs/reference.md says plainly)


def test_with_a_key_a_resealed_forgery_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_VARIABLE, "the run's secret")
    folder = tmp_path / "keyed"
    PSRO("kuhn_poker", checkpoint_dir=folder, progress=False).run(iterations=2)
    text = (folder / CHECKPOINT_FILE).read_bytes()
    assert b'"hmac_sha256":"' in text and b'"sha256":"' not in text[-80:]
    assert load_checkpoint(folder)["state"]["iteration"] == 2
    pristine = folder.parent / "pristine"
    shutil.copytree(folder, pristine)

    forge(folder / CHECKPOINT_FILE)   # the SHA-256 recomputed, as the probe did
    with pytest.raises(ValueError, match="sealed without a key, but PSRO_CHECKPOINT_KEY is set"):
        load_checkpoint(folder)
    forge(folder / CHECKPOINT_FILE, key="a forger's key")
    with pytest.raises(ValueError, match="another key"):
        load_checkpoint(folder)
    monkeypatch.delenv(KEY_VARIABLE)
    with pytest.raises(ValueError, match="set PSRO_CHECKPOINT_KEY"):
        load_checkpoint(pristine)
    monkeypatch.setenv(KEY_VARIABLE, "the run's secret")
    assert PSRO.resume(pristine).iteration == 2


def test_with_a_key_an_unkeyed_checkpoint_is_refused(ckpt, monkeypatch):
    monkeypatch.setenv(KEY_VARIABLE, "k")
    with pytest.raises(ValueError, match="sealed without a key"):
        load_checkpoint(ckpt)


# -- issue 36: an empty key, a rollback, hostile sizes ----------------------------------------------------------------


@pytest.mark.parametrize("key", ["", "  "])
def test_an_empty_key_is_refused_not_read_as_no_key(tmp_path, monkeypatch, key):
    monkeypatch.setenv(KEY_VARIABLE, key)
    with pytest.raises(ValueError, match="PSRO_CHECKPOINT_KEY is set but empty"):
        PSRO("kuhn_poker", checkpoint_dir=tmp_path / "c", progress=False).run(iterations=1)
    with pytest.raises(ValueError, match="set but empty"):
        seal_document({"a": 1})


def test_a_rollback_of_a_keyed_checkpoint_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_VARIABLE, "the run's secret")
    folder = tmp_path / "c"
    PSRO("kuhn_poker", checkpoint_dir=folder, progress=False).run(iterations=3)
    assert load_checkpoint(folder)["state"]["iteration"] == 3
    shutil.copyfile(folder / PREVIOUS_FILE, folder / CHECKPOINT_FILE)   # (both sealed with the key)
    with pytest.raises(ValueError, match="rollback"):
        load_checkpoint(folder)
    assert load_checkpoint(folder, previous=True)["state"]["iteration"] == 2   # (the previous one, on purpose)


def test_a_save_stopped_between_keeping_the_previous_and_writing_the_latest_still_loads(tmp_path):
    folder = tmp_path / "c"
    PSRO("kuhn_poker", checkpoint_dir=folder, progress=False).run(iterations=2)
    (folder / PREVIOUS_FILE).unlink()
    (folder / PREVIOUS_FILE).hardlink_to(folder / CHECKPOINT_FILE)   # (the state replace_document passes through)
    assert load_checkpoint(folder)["state"]["iteration"] == 2
    solver = PSRO.resume(folder, progress=False)
    solver.run(iterations=1)   # (the next save writes over the shared name)
    assert load_checkpoint(folder)["state"]["iteration"] == 3


def test_a_save_stopped_after_linking_the_latest_to_its_temporary_name_still_resumes(tmp_path):
    # the earlier kill point: the latest document got its temporary second name, which was not yet renamed
    # (found by the SIGKILL test in a lone clone: every later save refused the latest as a hard link)
    folder = tmp_path / "c"
    PSRO("kuhn_poker", checkpoint_dir=folder, progress=False).run(iterations=2)
    stale = folder / f".{PREVIOUS_FILE}.999999.tmp"
    stale.hardlink_to(folder / CHECKPOINT_FILE)
    mine = folder / ".notes.999999.tmp"   # (a file of that shape but another name, and not the document: kept)
    mine.write_text("mine")
    solver = PSRO.resume(folder, progress=False)
    solver.run(iterations=1)
    assert load_checkpoint(folder)["state"]["iteration"] == 3
    assert load_checkpoint(folder, previous=True)["state"]["iteration"] == 2
    assert not stale.exists() and mine.read_text() == "mine"


def test_an_array_file_whose_header_declares_a_huge_shape_is_refused_before_loading(ckpt, monkeypatch):
    import io
    import zipfile

    from numpy.lib import format as npy

    from psro.run.document_seal import sha256

    monkeypatch.setenv("PSRO_MAX_MEMORY", "1G")
    document = json.loads((ckpt / CHECKPOINT_FILE).read_text())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        with archive.open("count.npy", "w") as member:
            npy.write_array_header_2_0(member, {"descr": "<f8", "fortran_order": False, "shape": (10**7, 10**7)})
    (ckpt / document["arrays"]).write_bytes(buffer.getvalue())
    document["manifest"][document["arrays"]] = sha256(buffer.getvalue())
    document.pop("sha256")
    (ckpt / CHECKPOINT_FILE).write_bytes(seal_document(document))
    with pytest.raises(ValueError, match="headers declare.*memory limit of 1 GiB"):
        load_checkpoint(ckpt)


def test_a_huge_sparse_checkpoint_document_is_refused_before_it_is_read(ckpt, monkeypatch):
    monkeypatch.setenv("PSRO_MAX_MEMORY", "1M")   # (as a 30 GiB sparse file passes half the memory)
    with open(ckpt / CHECKPOINT_FILE, "r+b") as fh:
        fh.truncate(64 * 2**20)   # (sparse: 64 MiB on paper, nothing on disk)
    with pytest.raises(ValueError, match="checkpoint.json.*memory limit of 1 MiB"):
        load_checkpoint(ckpt)
