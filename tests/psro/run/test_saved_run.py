"""psro/run/saved_run.py: on resume the checkpoint is the one source of truth for every training loop (issue 23
items 6 and 11): a hand-edited config.yaml is reported and rewritten, not obeyed; a run without config.yaml
resumes; documents that name the wrong loop, lack a field or no longer fit their game are refused in words."""

from __future__ import annotations

import json
import logging
import shutil

import pandas as pd
import pyspiel
import pytest
import yaml

from games.datasets import collect
from games.trajectories import save_trajectories
from psro.loop.state import untimed
from psro.run.cli import main
from psro.run.document_seal import seal_document
from psro.run.saved_run import config_disagreement, read_saved_run

NFSP_OPTIONS = {"steps_per_iteration": 64, "hidden": [8], "learning_starts": 16, "rl_buffer_size": 64,
                "sl_buffer_size": 32, "batch_size": 8, "num_envs": 2}


def _config(tmp_path, algorithm: str) -> str:
    text = {"game": "kuhn_poker", "seed": 0, "iterations": 2, "rank_population": False, "algorithm": algorithm}
    if algorithm == "nfsp":
        text["algorithm_options"] = NFSP_OPTIONS
    elif algorithm == "coffee_psro":
        game = pyspiel.load_game("kuhn_poker")
        save_trajectories(collect(game, pyspiel.UniformRandomPolicy(game), episodes=200, seed=0),
                          tmp_path / "data.csv")
        text["algorithm_options"] = {"dataset": str(tmp_path / "data.csv"), "members": 2}
    path = tmp_path / f"{algorithm}.yaml"
    path.write_text(yaml.safe_dump(text))
    return str(path)


@pytest.fixture(scope="module")
def one_iteration(tmp_path_factory):
    """``one_iteration(algorithm, tmp_path)``: ``psro run`` of one iteration of ``_config(algorithm)``, copied to
    ``tmp_path / "r"`` (each algorithm's run is made once per module; every test edits and resumes its own copy)."""
    made = {}

    def copy(algorithm: str, tmp_path):
        if algorithm not in made:
            folder = tmp_path_factory.mktemp(algorithm)
            assert main(["run", _config(folder, algorithm), "--iterations", "1", "--out", str(folder / "r")]) == 0
            made[algorithm] = folder / "r"
        return shutil.copytree(made[algorithm], tmp_path / "r")

    return copy


def _reseal(path, change) -> None:
    """Edit a sealed document and seal it again (what a forger, or a careless hand, could do)."""
    document = json.loads(path.read_bytes())
    document.pop("sha256")
    change(document)
    path.write_bytes(seal_document(document))


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["psro", "nfsp", "coffee_psro"])
def test_an_edited_config_yaml_is_reported_and_rewritten_not_obeyed(tmp_path, caplog, algorithm, one_iteration):
    one_iteration(algorithm, tmp_path)
    assert main(["run", _config(tmp_path, algorithm), "--out", str(tmp_path / "whole")]) == 0
    path = tmp_path / "r" / "config.yaml"
    path.write_text(path.read_text().replace("seed: 0", "seed: 7"))
    with caplog.at_level(logging.WARNING, logger="psro.run.saved_run"):
        assert main(["resume", str(tmp_path / "r"), "--iterations", "2"]) == 0
    assert "disagrees with the checkpoint on seed (seed: config.yaml 7, checkpoint 0)" in caplog.text
    assert yaml.safe_load(path.read_text())["seed"] == 0   # rewritten from the checkpoint
    report = (tmp_path / "r" / "report.md").read_text()
    assert "seed: 0" in report and "seed: 7" not in report
    resumed = untimed(pd.read_csv(tmp_path / "r" / "history.csv"))
    whole = untimed(pd.read_csv(tmp_path / "whole" / "history.csv"))
    pd.testing.assert_frame_equal(resumed, whole)   # the run went on with seed 0


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["psro", "nfsp", "coffee_psro"])
def test_a_run_without_config_yaml_resumes_from_its_checkpoint(tmp_path, capsys, algorithm, one_iteration):
    # issue 23 item 6: NFSP was reported "damaged: schema version 1", offline "holds no checkpoint"
    one_iteration(algorithm, tmp_path)
    (tmp_path / "r" / "config.yaml").unlink()
    saved = read_saved_run(tmp_path / "r")
    assert saved.config.algorithm == algorithm and saved.config.seed == 0
    assert main(["resume", str(tmp_path / "r"), "--iterations", "2"]) == 0
    assert f"resuming {tmp_path / 'r'} at iteration 1" in capsys.readouterr().out
    assert yaml.safe_load((tmp_path / "r" / "config.yaml").read_text())["algorithm"] == algorithm


def test_config_disagreement_is_silent_when_they_agree_and_reports_an_unreadable_file(tmp_path, caplog):
    from psro.config.model import PSROConfig

    config = PSROConfig(game="kuhn_poker", name="run")
    assert config_disagreement(tmp_path, config) == []   # (no config.yaml)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config.to_dict()))
    assert config_disagreement(tmp_path, config) == []
    (tmp_path / "config.yaml").write_text("game: [unclosed\n")
    with caplog.at_level(logging.WARNING, logger="psro.run.saved_run"):
        assert config_disagreement(tmp_path, config) == ["config.yaml"]
    assert "cannot be read" in caplog.text


def test_a_psro_checkpoint_naming_another_loop_is_refused_naming_the_file(tmp_path, capsys, one_iteration):
    # issue 23 item 11: options.algorithm='coffee_psro' in a PSRO checkpoint ended in AttributeError 'restore'
    from psro import PSRO

    one_iteration("psro", tmp_path)
    document = tmp_path / "r" / "checkpoint" / "checkpoint.json"
    _reseal(document, lambda d: d["options"].__setitem__("algorithm", "coffee_psro"))
    with pytest.raises(ValueError, match=r"checkpoint\.json'?: options\.algorithm is 'coffee_psro', a loop that keeps "
                                         r"its own kind of checkpoint \(COffeEPSRO\)"):
        PSRO.resume(tmp_path / "r" / "checkpoint")
    _reseal(document, lambda d: d["options"].__setitem__("algorithm", "alphazero"))
    with pytest.raises(ValueError, match=r"checkpoint\.json'?: options\.algorithm: unknown algorithm 'alphazero'"):
        PSRO.resume(tmp_path / "r" / "checkpoint")
    _reseal(document, lambda d: (d["options"].__setitem__("algorithm", "psro"),
                                 d["config"].__setitem__("algorithm", "nfsp")))
    assert main(["resume", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "checkpoint.json: its config says algorithm 'nfsp'" in err and "Traceback" not in err


def test_an_nfsp_checkpoint_without_learners_or_for_another_game_is_refused_in_words(tmp_path, capsys, one_iteration):
    from psro.family.nfsp import NFSP

    one_iteration("nfsp", tmp_path)
    document = tmp_path / "r" / "checkpoint" / "checkpoint.json"
    pristine = document.read_bytes()
    _reseal(document, lambda d: d.pop("learners"))
    with pytest.raises(ValueError, match=r"checkpoint\.json is not a readable NFSP checkpoint: the field 'learners' is "
                                         "missing"):
        NFSP.resume(tmp_path / "r" / "checkpoint")
    assert main(["resume", str(tmp_path / "r")]) == 2
    assert "the field 'learners' is missing" in capsys.readouterr().err
    document.write_bytes(pristine)

    def other_game(d):   # leduc poker's observations are longer than kuhn's: the saved weights no longer fit
        d["options"]["config"]["game"] = "leduc_poker"
        d["config"]["game"] = "leduc_poker"

    _reseal(document, other_game)
    with pytest.raises(ValueError, match=r"checkpoint\.json' cannot be restored: .*'learner_0_q__layers\.0\.weight' "
                                         r"has shape \(8, 11\) but the network of this game and options needs "
                                         r"\(8, 30\): the checkpoint's game or hidden layers were changed"):
        NFSP.resume(tmp_path / "r" / "checkpoint")
    assert main(["resume", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "has shape (8, 11)" in err and "Traceback" not in err


def test_an_offline_checkpoint_without_its_algorithm_is_refused_naming_the_field(tmp_path, capsys, one_iteration):
    from psro.offline.coffee_psro import COffeEPSRO

    one_iteration("coffee_psro", tmp_path)
    document = tmp_path / "r" / "checkpoint" / "offline_checkpoint.json"
    _reseal(document, lambda d: d["options"].pop("algorithm"))
    with pytest.raises(ValueError, match=r"offline_checkpoint\.json is not a readable offline PSRO checkpoint: the "
                                         r"field 'options\.algorithm' is missing"):
        COffeEPSRO.resume(tmp_path / "r" / "checkpoint")
    assert main(["resume", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "options.algorithm" in err and "Traceback" not in err
    _reseal(document, lambda d: (d["options"].__setitem__("algorithm", "coffee_psro"),
                                 d["options"].__setitem__("members", "many")))
    with pytest.raises(ValueError, match=r"offline_checkpoint\.json is not a readable offline PSRO checkpoint: the "
                                         r"field 'options\.members' is wrong: Input should be a valid integer \(got "
                                         r"'many'\)"):
        COffeEPSRO.resume(tmp_path / "r" / "checkpoint")


@pytest.mark.slow
def test_a_damaged_offline_checkpoint_points_to_the_previous_one(tmp_path, capsys):
    config = _config(tmp_path, "coffee_psro")
    assert main(["run", config, "--iterations", "2", "--out", str(tmp_path / "r")]) == 0
    document = tmp_path / "r" / "checkpoint" / "offline_checkpoint.json"
    document.write_bytes(document.read_bytes()[:-5])
    assert main(["resume", str(tmp_path / "r"), "--iterations", "3"]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and "previous checkpoint (iteration 1) is intact" in err and "--previous" in err
    assert main(["resume", str(tmp_path / "r"), "--iterations", "3", "--previous"]) == 0
    assert pd.read_csv(tmp_path / "r" / "history.csv")["iteration"].tolist() == [0, 1, 2, 3]


def test_a_damaged_nfsp_checkpoint_is_read_as_nfsp_and_points_to_the_previous_one(tmp_path, capsys):
    config = _config(tmp_path, "nfsp")
    assert main(["run", config, "--iterations", "2", "--out", str(tmp_path / "r")]) == 0
    document = tmp_path / "r" / "checkpoint" / "checkpoint.json"
    document.write_bytes(document.read_bytes()[:-5])
    assert main(["resume", str(tmp_path / "r"), "--iterations", "3"]) == 2
    err = capsys.readouterr().err
    assert "damaged" in err and "previous checkpoint (iteration 1) is intact" in err and "schema" not in err


@pytest.mark.parametrize("algorithm", ["psro", "nfsp", "coffee_psro"])
def test_a_resume_override_is_applied_or_refused_naming_the_field(tmp_path, capsys, algorithm, one_iteration):
    # issue 36 item 1: `psro resume RUN --set approx_gap_every=null` was written to config.yaml and ignored (the
    # checkpoint's value ran); now the resumed solver runs with it, or the resume is refused naming the field
    from psro import NFSP, PSRO

    out = one_iteration(algorithm, tmp_path)
    code = main(["resume", str(out), "--iterations", "2", "--set", "approx_gap_every=3",
                 "--set", "approx_gap_options={episodes: 50}"])
    if algorithm == "coffee_psro":
        assert code == 2
        err = capsys.readouterr().err
        assert "approx_gap_every: COffeEPSRO measures no approx_gap" in err and "Traceback" not in err
        assert yaml.safe_load((out / "config.yaml").read_text())["approx_gap_every"] == "auto"   # (not rewritten)
        return
    assert code == 0
    assert yaml.safe_load((out / "config.yaml").read_text())["approx_gap_every"] == 3
    resumed = (PSRO if algorithm == "psro" else NFSP).resume(out / "checkpoint", progress=False)
    assert resumed.config.approx_gap_every == 3 and resumed.config.approx_gap_options == {"episodes": 50}
