"""psro.run.checkpoint: a damaged, tampered or hostile checkpoint is refused with a ValueError naming the file
(issue 15, items 7 and 8); the previous checkpoint is kept and resumes the same run."""

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psro import PSRO
from psro.run.checkpoint import CHECKPOINT_FILE, PREVIOUS_FILE, SCHEMA_VERSION, load_checkpoint
from psro.run.cli import main

GAME, META = "kuhn_poker(players=3)", "mgcce"


def seal(document: dict) -> bytes:
    """A checkpoint document as the format defines it: JSON with sorted keys and no spaces, closed by a last entry
    "sha256" holding the SHA-256 of the bytes before it (with the closing brace)."""
    body = json.dumps({k: v for k, v in document.items() if k != "sha256"}, sort_keys=True,
                      separators=(",", ":")).encode()
    return body[:-1] + b',"sha256":"' + hashlib.sha256(body).hexdigest().encode() + b'"}'


def edit(path: Path, change, resign: bool = True) -> None:
    """Hand-edit a checkpoint document; ``resign`` recomputes its digest (as a deliberate forger would)."""
    document = json.loads(path.read_text())
    change(document)
    path.write_bytes(seal(document) if resign else json.dumps(document).encode())


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A run directory's checkpoint after 3 iterations (with the one after 2 kept as previous)."""
    out = tmp_path_factory.mktemp("pristine")
    PSRO(GAME, meta_solver=META, progress=False, seed=1, checkpoint_dir=out).run(iterations=3)
    return out


@pytest.fixture
def ckpt(pristine, tmp_path):
    target = tmp_path / "ckpt"
    shutil.copytree(pristine, target)
    return target


def npz_files(directory: Path, which: str = CHECKPOINT_FILE) -> dict:
    document = json.loads((directory / which).read_text())
    return {"arrays": directory / document["arrays"], "meta_game": directory / document["meta_game"],
            "first_policies": directory / document["policy_files"][0]["file"],
            "last_policies": directory / document["policy_files"][-1]["file"]}


def refused(directory: Path, file_name: str, *, previous_intact: bool = True):
    """load_checkpoint and PSRO.resume both raise a ValueError naming the file (and the way out)."""
    for attempt in (lambda: load_checkpoint(directory), lambda: PSRO.resume(directory, progress=False)):
        with pytest.raises(ValueError) as info:
            attempt()
        message = str(info.value)
        assert file_name in message, message
        assert ("previous=True" in message) == previous_intact, message
    return message


# ------------------------------------------------------------------- item 7: the executor of a checkpoint
HOSTILE = {"engine": "ray", "init_options": {"runtime_env": {"working_dir": ".",
                                                             "worker_process_setup_hook": "pwn.run"}}}


@pytest.mark.parametrize("executor, key", [
    (HOSTILE, "init_options"),
    ({"engine": "ray", "address": "ray://evil.example:10001"}, "address"),
    ({"engine": "ray", "runtime_env": {"pip": ["evil"]}}, "runtime_env"),
    ({"engine": "process", "workers": 2, "start_method": "fork"}, "start_method"),
    ({"engine": "thread"}, "engine"),
    ("ray://evil.example:10001", "engine name"),
    (True, "engine name"),
])
def test_a_checkpoint_never_chooses_where_code_runs(ckpt, executor, key):
    marker = ckpt / "pwned"
    (ckpt / "pwn.py").write_text(f"def run():\n    open({str(marker)!r}, 'w').write('ran')\n")
    edit(ckpt / CHECKPOINT_FILE, lambda d: d["options"].__setitem__("executor", executor))
    with pytest.raises(ValueError, match=key) as info:
        PSRO.resume(ckpt, progress=False)
    assert f"{CHECKPOINT_FILE}' is refused" in str(info.value)
    assert "engine" in str(info.value) and "worker count" in str(info.value)
    with pytest.raises(ValueError, match=key):   # also when the caller chooses the executor itself
        PSRO.resume(ckpt, progress=False, executor="serial")
    assert not marker.exists()


def test_an_executor_smuggled_into_the_evaluator_options_is_refused(ckpt):
    edit(ckpt / CHECKPOINT_FILE, lambda d: d["options"]["evaluator_options"].__setitem__("executor", HOSTILE))
    with pytest.raises(ValueError, match="evaluator_options"):
        PSRO.resume(ckpt, progress=False)


@pytest.fixture(scope="module")
def cli_pristine(tmp_path_factory):
    """A run directory written by ``psro run`` (2 iterations)."""
    root = tmp_path_factory.mktemp("cli")
    config = root / "tiny.yaml"
    config.write_text(f"game: {GAME}\nmeta_solver: {META}\niterations: 2\ntarget_gap: null\n"
                      "rank_population: false\n")
    assert main(["run", str(config), "--out", str(root / "run")]) == 0
    return root / "run"


@pytest.fixture
def cli_run(cli_pristine, tmp_path):
    return Path(shutil.copytree(cli_pristine, tmp_path / "run"))


def test_the_cli_refuses_the_hostile_payload_too(cli_run, capsys):
    out = cli_run
    marker = out / "pwned"
    (out / "checkpoint" / "pwn.py").write_text(f"def run():\n    open({str(marker)!r}, 'w').write('ran')\n")
    edit(out / "checkpoint" / CHECKPOINT_FILE, lambda d: d["options"].__setitem__("executor", HOSTILE))
    capsys.readouterr()
    assert main(["resume", str(out), "--set", "iterations=3"]) == 2
    err = capsys.readouterr().err
    assert "init_options" in err and CHECKPOINT_FILE in err and "Traceback" not in err
    assert not marker.exists()


def test_only_the_engine_and_worker_count_are_stored(tmp_path):
    solver = PSRO(GAME, meta_solver=META, progress=False, checkpoint_dir=tmp_path,
                  executor={"engine": "process", "workers": 2, "chunksize": 3})
    solver.run(iterations=1)
    solver.close()
    assert json.loads((tmp_path / CHECKPOINT_FILE).read_text())["options"]["executor"] == \
        {"engine": "process", "workers": 2}
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.executor.workers == 2
    resumed.close()


# ------------------------------------------------------------------- item 8: integrity
def test_the_checkpoint_carries_a_manifest(ckpt):
    text = (ckpt / CHECKPOINT_FILE).read_bytes()
    document = json.loads(text)
    assert document["version"] == SCHEMA_VERSION and text == seal(document)
    for name, sha in document["manifest"].items():
        assert hashlib.sha256((ckpt / name).read_bytes()).hexdigest() == sha


def flip(path: Path, position: int, bit: int = 0) -> None:
    data = bytearray(path.read_bytes())
    data[position % len(data)] ^= 1 << bit
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("which", ["checkpoint", "arrays", "meta_game", "first_policies", "last_policies"])
@pytest.mark.parametrize("damage", ["flip_start", "flip_middle", "flip_end", "truncate", "empty", "delete"])
def test_any_damage_to_any_file_is_a_value_error_naming_it(ckpt, which, damage):
    path = ckpt / CHECKPOINT_FILE if which == "checkpoint" else npz_files(ckpt)[which]
    size = path.stat().st_size
    if damage.startswith("flip"):
        flip(path, {"flip_start": 0, "flip_middle": size // 2, "flip_end": size - 2}[damage], bit=3)
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[: size // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.unlink()
    # the previous checkpoint shares the policy files of the iterations before the latest, so damage to those
    # leaves nothing intact (and the message says so)
    message = refused(ckpt, path.name, previous_intact=which != "first_policies")
    assert "damaged" in message or "missing" in message


def test_a_change_that_leaves_the_json_meaning_alone_is_refused_too(ckpt):
    """Every byte counts: with a space or a newline added the JSON parses to the same document, and is refused."""
    path = ckpt / CHECKPOINT_FILE
    original = path.read_bytes()
    path.write_bytes(original.replace(b",", b", ", 1))
    refused(ckpt, CHECKPOINT_FILE)
    path.write_bytes(original + b"\n")   # (json.loads reads it as the same document)
    refused(ckpt, CHECKPOINT_FILE)


@given(which=st.sampled_from(["checkpoint", "arrays", "meta_game", "first_policies", "last_policies"]),
       position=st.integers(0, 10**7), bit=st.integers(0, 7))
@settings(max_examples=25)
def test_a_random_bit_flip_anywhere_is_refused(pristine, which, position, bit):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(shutil.copytree(pristine, Path(tmp) / "c"))
        path = directory / CHECKPOINT_FILE if which == "checkpoint" else npz_files(directory)[which]
        flip(path, position, bit)
        with pytest.raises(ValueError, match=path.name):
            load_checkpoint(directory)


HAND_EDITS = {   # (edit, words the message must contain once the digest is recomputed)
    "rows dropped": (lambda d: d.__setitem__("history", d["history"][:2]), "history rows"),
    "iteration set to 30": (lambda d: (d.__setitem__("iteration", 30), d["state"].__setitem__("iteration", 30)),
                            "history rows"),
    "gap set to 0": (lambda d: d["state"].__setitem__("gap", 0.0), "state.gap"),
    "train_gap renamed": (lambda d: d["state"].__setitem__("train_gapX", d["state"].pop("train_gap")), "state"),
    "population count changed": (lambda d: d["history"][-1].__setitem__("population_1", 9), "populations"),
    "a player removed": (lambda d: d["state"].__setitem__("sizes_before", d["state"]["sizes_before"][:2]),
                         "players"),
    "arrays renamed to a path": (lambda d: d.__setitem__("arrays", "../../etc/passwd"), "arrays"),
    "manifest entry for a path": (lambda d: d["manifest"].__setitem__("../x.npz", "0" * 64), "manifest"),
    "version changed": (lambda d: d.__setitem__("version", 1), "schema version"),
    "rng replaced": (lambda d: d.__setitem__("rng", {"bit_generator": "MT19937"}), "the field 'rng.state' is missing"),
    # decoded against the typed schema (psro.run.checkpoint_schema): types and bounds, the field named
    "gap as a string": (lambda d: d["state"].__setitem__("gap", "0.5"), "the field 'state.gap' is wrong"),
    "in_iteration as 1": (lambda d: d["state"].__setitem__("in_iteration", 1), "the field 'state.in_iteration'"),
    "evaluations negative": (lambda d: d["state"].__setitem__("evaluations", -3),
                             "the field 'state.evaluations' is wrong: Input should be greater than or equal to 0"),
    "policy file rows as floats": (lambda d: d["policy_files"][0].__setitem__("end", [1.0, 1.0]),
                                   "the field 'policy_files.0.end.0' is wrong"),
}


@pytest.mark.parametrize("name", sorted(HAND_EDITS))
@pytest.mark.parametrize("resign", [False, True])
def test_hand_edits_are_refused_with_or_without_a_recomputed_digest(ckpt, name, resign):
    change, words = HAND_EDITS[name]
    edit(ckpt / CHECKPOINT_FILE, change, resign=resign)
    message = refused(ckpt, CHECKPOINT_FILE)
    # the schema version is read first; otherwise an unsigned edit fails the digest, a signed one the consistency
    assert (words if resign or name == "version changed" else "SHA-256") in message, message


def test_a_resigned_array_file_that_disagrees_with_the_document_is_refused(ckpt):
    """Even a forger who rewrites an array file and its digest cannot make the document lie about sizes."""
    arrays = npz_files(ckpt)["arrays"]
    with np.load(arrays, allow_pickle=False) as data:
        content = {k: data[k] for k in data.files}
    content["iteration_0"] = content["iteration_0"][:-1]
    np.savez(arrays, **content)
    sha = hashlib.sha256(arrays.read_bytes()).hexdigest()
    edit(ckpt / CHECKPOINT_FILE, lambda d: d["manifest"].__setitem__(arrays.name, sha))
    message = refused(ckpt, arrays.name)
    assert "policies and provenance" in message


def test_the_previous_checkpoint_resumes_the_same_run(ckpt):
    reference = PSRO(GAME, meta_solver=META, progress=False, seed=1)
    reference.run(iterations=5)
    flip(ckpt / CHECKPOINT_FILE, 100)
    message = refused(ckpt, CHECKPOINT_FILE)
    assert PREVIOUS_FILE in message and "iteration 2" in message
    resumed = PSRO.resume(ckpt, progress=False, previous=True)
    assert resumed.iteration == 2
    resumed.run(iterations=3)
    assert resumed.history["gap"].tolist() == reference.history["gap"].tolist()
    for a, b in zip(resumed.populations, reference.populations):
        assert np.array_equal(a.policies, b.policies)
    assert np.array_equal(resumed.meta_game.total, reference.meta_game.total)
    # the damaged checkpoint never became the previous one: the run wrote two intact ones over it
    assert load_checkpoint(ckpt)["iteration"] == 5 and load_checkpoint(ckpt, previous=True)["iteration"] == 4


def test_a_missing_latest_checkpoint_points_to_the_previous_one(ckpt):
    (ckpt / CHECKPOINT_FILE).unlink()
    message = refused(ckpt, CHECKPOINT_FILE)
    assert "missing" in message


def test_when_both_are_damaged_the_message_says_start_again(ckpt):
    flip(ckpt / CHECKPOINT_FILE, 50)
    npz_files(ckpt, PREVIOUS_FILE)["arrays"].unlink()
    message = refused(ckpt, CHECKPOINT_FILE, previous_intact=False)
    assert "start the run again" in message
    with pytest.raises(ValueError, match="arrays-000002"):
        load_checkpoint(ckpt, previous=True)


def test_damage_on_the_command_line_is_one_line_not_a_traceback(cli_run, capsys):
    out = cli_run
    meta = npz_files(out / "checkpoint")["meta_game"]
    meta.write_bytes(meta.read_bytes()[:100])
    capsys.readouterr()
    assert main(["resume", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and meta.name in err and "--previous" in err
    assert main(["resume", str(out), "--previous", "--set", "iterations=3"]) == 0
    printed = capsys.readouterr().out
    assert "resuming" in printed and "at iteration 1" in printed and "done: 3 iterations" in printed


def test_a_checkpoint_written_before_the_first_iteration_resumes(tmp_path):
    solver = PSRO("kuhn_poker", progress=False, checkpoint_dir=tmp_path)
    solver.save_checkpoint()
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.iteration == -1 and len(resumed.history) == 0
    assert resumed.run(iterations=2)["gap"].tolist() == PSRO("kuhn_poker", progress=False).run(iterations=2)[
        "gap"].tolist()


def test_policy_files_are_merged_once_there_are_many(tmp_path, monkeypatch):
    import psro.run.checkpoint as checkpoint

    monkeypatch.setattr(checkpoint, "MAX_POLICY_FILES", 3)
    reference = PSRO(GAME, meta_solver=META, progress=False, seed=1)
    reference.run(iterations=8)
    solver = PSRO(GAME, meta_solver=META, progress=False, seed=1, checkpoint_dir=tmp_path)
    solver.run(iterations=6)
    files = json.loads((tmp_path / CHECKPOINT_FILE).read_text())["policy_files"]
    assert 1 <= len(files) <= 3 and files[-1]["end"] == [len(pop) for pop in solver.populations]
    assert len(list(tmp_path.glob("policies-*.npz"))) <= 6   # the latest's and the previous checkpoint's
    resumed = PSRO.resume(tmp_path, progress=False)
    resumed.run(iterations=2)
    assert resumed.history["gap"].tolist() == reference.history["gap"].tolist()
    for a, b in zip(resumed.populations, reference.populations):
        assert np.array_equal(a.policies, b.policies)


def test_a_field_a_later_release_adds_is_read_past(ckpt):
    # the typed schema requires the fields this release needs and allows others, so a newer document still loads
    edit(ckpt / CHECKPOINT_FILE, lambda d: (d.__setitem__("later_field", {"x": 1}),
                                            d["state"].__setitem__("later_counter", 3)))
    assert load_checkpoint(ckpt)["state"]["later_counter"] == 3
