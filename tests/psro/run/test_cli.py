"""psro.run.cli: the help is generated from the config (issue 16, item 5); bad input is one clear line (issue 15,
items 9 and 11)."""

import dataclasses
import re

import numpy as np
import pytest

from psro.config.model import PSROConfig, field_help
from psro.config.sections import FLAT_PATHS, SECTION_HELP
from psro.run.cli import _resolve_config, main, parse_arguments
from psro.run.cli_fields import NESTED, nested_fields


def option(field: str) -> str:
    """A field's option as the help lists it: in its section (``--oracle.dispatch``)."""
    section, key = FLAT_PATHS[field]
    return f"--{section}.{key}".replace("_", "-")


@pytest.fixture
def run_help(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")   # one column of option boxes
    with pytest.raises(SystemExit) as info:
        main(["run", "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def option_lines(text: str) -> dict:
    """``{option: its entry}``, an entry's continuation lines joined: argparse's options (the command's) and tyro's
    (the config fields', inside a frame of box characters)."""
    lines, current = {}, None
    for line in text.splitlines():
        line = line[1:-1] if line[:1] in "│|" and line else line   # (tyro's frame)
        match = re.match(r"^ {1,2}(--[a-z][a-z.-]*)", line)
        if match:
            current = match.group(1)
            assert current not in lines, f"{current} is listed twice"
            lines[current] = line.strip()
        elif current is not None and re.match(r"^ {6,}\S", line):
            lines[current] += " " + line.strip()
        else:
            current = None
    return lines


def test_one_option_per_config_field_in_its_section_naming_its_flat_spelling(run_help):
    lines = option_lines(run_help)
    fields = [f.name for f in dataclasses.fields(PSROConfig)]
    for name in fields:
        line = lines[option(name)]
        assert line.count(f"(flat: --{name.replace('_', '-')})") == 1, line
        assert f"--{name} " not in run_help or "_" not in name
    nested = {f"{option(group)}.{key}".replace("_", "-") for group in NESTED for key in nested_fields(group)}
    assert set(lines) == {"--out", "--overwrite", "--resume", "--previous", "--set", "--import",
                          *(option(n) for n in fields), *nested}
    assert "--oracle.options.total-steps" in nested and "--algorithm.options.eta" in nested
    assert all(text in run_help for text in SECTION_HELP.values())


def test_a_nested_option_shows_its_docstring_and_each_default(run_help):
    lines = option_lines(run_help)
    assert "learner decisions to train for, summed over the parallel games [int; default: 20000 (dqn, minimax_dqn), " \
           "20000 (ppo), 300000 (model_br), 300000 (neural_br)]" in lines["--oracle.options.total-steps"]
    assert "[float; default: 0.3 (fxp)]" in lines["--algorithm.options.eta"]


def test_each_option_shows_its_choices_default_and_docstring(run_help):
    lines = option_lines(run_help)
    for h in field_help():
        line = lines[option(h.name)]
        if h.default is None or isinstance(h.default, bool):
            default = {None: "null", True: "true", False: "false"}[h.default]
        else:
            default = '""' if h.default == "" else str(h.default)
        assert f"default: {default}]" in line, line
        assert h.description in line, line
        for choice in h.choices or ():
            assert choice in line, (choice, line)
    assert "Seed of the run's random generator. [int >= 0; default: 0]" in lines["--run.seed"]
    for name in ("sequence_form", "monte_carlo", "openspiel"):
        assert name in lines["--evaluator.name"]
    for name in ("mgcce", "nash", "alpharank", "rvce"):
        assert name in lines["--meta-solver.name"]
    assert "serial, process, ray or a number of worker processes" in lines["--executor.engine"]
    assert "Choices: exact, openspiel, dqn, ppo, minimax_dqn, model_br, neural_br, team_pg." in lines["--oracle.name"]
    assert "{true,false}" in lines["--run.checkpoint"]


def test_resume_has_the_same_field_options(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "120")
    with pytest.raises(SystemExit):
        main(["resume", "--help"])
    lines = option_lines(capsys.readouterr().out)
    assert {option(f.name) for f in dataclasses.fields(PSROConfig)} <= set(lines)
    assert "--previous" in lines


def test_the_underscore_and_the_flat_spellings_still_parse():
    args = parse_arguments(["run", "c.yaml", "--meta_solver", "mgcce", "--target-gap", "1e-3"])
    assert (args.config, args.fields) == ("c.yaml", ["meta_solver=mgcce", "target_gap=1e-3"])
    for argv in (["--oracle.dispatch", "executor", "--run.seed=2", "--oracle.options.hidden", "[8]"],
                 ["--oracle-dispatch", "executor", "--seed=2", "--oracle-options.hidden", "[8]"],
                 ["--oracle_dispatch=executor", "--run.seed", "2", "--oracle_options.hidden=[8]"]):
        assert parse_arguments(["run", "c.yaml", *argv]).fields == ["oracle_dispatch=executor", "seed=2",
                                                                    "oracle_options.hidden=[8]"], argv


def test_nested_options_and_set_paths_reach_the_mapping_and_keep_its_other_keys(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("game: kuhn_poker\noracle: ppo\noracle_options: {total_steps: 64, hidden: [8]}\n")
    args = parse_arguments(["run", str(config), "--oracle-options.total-steps", "128", "--set",
                            "algorithm_options.eta=0.5", "--algorithm", "fxp"])
    resolved = _resolve_config(args)
    assert resolved.oracle_options == {"total_steps": 128, "hidden": [8]}
    assert resolved.algorithm_options == {"eta": 0.5}
    args = parse_arguments(["run", str(config), "--set", "oracle.options.total_steps=128", "--set",
                            "algorithm.options.eta=0.5", "--algorithm.name", "fxp"])
    assert _resolve_config(args) == resolved   # the same paths in the sections' form


@pytest.mark.parametrize("argv, words", [
    (["--oracle-options.total-stepz", "5"], ["--oracle-options.total-stepz"]),
    (["--iterations"], ["--iterations"]),
    (["--iteratons", "3"], ["--iteratons", "did you mean --iterations?"]),
    (["--set", "oracle_option.total_steps=3"], ["oracle_option.total_steps", "Did you mean 'oracle_options'?"]),
    (["--set", "seed.x=1"], ["seed", "not a mapping"]),
    (["--set", "oracle_options.total_steps=0", "--oracle", "ppo"], ["total_steps", "positive"]),
])
def test_a_bad_field_option_is_one_line_naming_it(tmp_path, capsys, monkeypatch, argv, words):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "tiny.yaml"
    config.write_text("game: kuhn_poker\n")
    try:
        status = main(["run", str(config), *argv])
    except SystemExit as exc:   # (argparse's and tyro's parse errors exit, as argparse does)
        status = exc.code
    assert status == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("psro run: error: ") and all(w in err for w in words), err
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("yaml_text, option, field", [
    ("name: ../../escape\n", [], "name"),
    ("", ["--name", "../../escape"], "name"),
    ("iterations: -5\n", [], "iterations"),
    ("time_limit: -3\n", [], "time_limit"),
    ("", ["--seed", "-1"], "seed"),
    ("seed: 1\nseed: 2\n", [], "seed"),
])
def test_bad_config_values_are_one_line_naming_the_field(tmp_path, capsys, monkeypatch, yaml_text, option, field):
    monkeypatch.chdir(tmp_path)   # the default run directory would be runs/... here
    config = tmp_path / "tiny.yaml"
    config.write_text("game: kuhn_poker\n" + yaml_text)
    assert main(["run", str(config), *option]) == 2
    err = capsys.readouterr().err
    assert err.startswith("psro run: error: ") and err.count("\n") == 1 and field in err, err
    assert not (tmp_path / "runs").exists() and not (tmp_path.parent / "escape").exists()


def test_a_directory_as_the_config_is_named_as_such(tmp_path, capsys):
    assert main(["run", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_an_engine_failure_ends_the_run_with_a_message_and_how_to_resume(tmp_path, capsys, monkeypatch):
    from games.executors import EngineError
    from psro.loop.psro_loop import PSRO

    config = tmp_path / "tiny.yaml"
    config.write_text("game: kuhn_poker\niterations: 3\nrank_population: false\n")

    def dies(self, *args, **kwargs):
        raise EngineError("the Ray engine failed (LocalRayletDiedError).")

    monkeypatch.setattr(PSRO, "run", dies)
    assert main(["run", str(config), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("psro run: error: the Ray engine failed") and "nothing to resume" in err

    def dies_later(self, *args, **kwargs):
        self.save_checkpoint()   # an iteration finished (and was checkpointed) before the engine failed
        raise EngineError("the Ray engine failed (LocalRayletDiedError).")

    monkeypatch.setattr(PSRO, "run", dies_later)
    assert main(["run", str(config), "--out", str(tmp_path / "again")]) == 1
    assert f"continue with `psro resume {tmp_path / 'again'}`" in capsys.readouterr().err


def test_previous_without_a_run_to_resume_is_an_error(tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    config.write_text("game: kuhn_poker\n")
    assert main(["run", str(config), "--previous"]) == 2
    assert "--previous picks the checkpoint" in capsys.readouterr().err


def test_evaluate_a_deep_tic_tac_toe_run_against_uniform_and_mcts(tmp_path, capsys):
    # a tiny PPO run on a game without information-state tensors, played through its observation tensor
    config = tmp_path / "ttt.yaml"
    config.write_text("game: observation:tic_tac_toe\noracle: ppo\nevaluator: monte_carlo\nepisodes_per_profile: 8\n"
                      "oracle_options: {total_steps: 256, num_envs: 8, num_steps: 16, eval_episodes: 8, hidden: [8],"
                      " on_bad_response: warn}\niterations: 1\ntarget_gap: null\napprox_gap_every: null\n"
                      "rank_population: false\n")
    assert main(["run", str(config), "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "run"), "--against", "uniform,mcts", "--episodes", "6",
                 "--simulations", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["player", "agent", "reference", "episodes", "win", "draw", "loss", "mean_return"]
    assert len(out) == 1 + 2 * 3 * 2   # players x (2 members + meta) x references
    assert re.search(r"meta +mcts +6 +\d\.\d\d \[\d\.\d\d, \d\.\d\d\]", "\n".join(out))
    assert main(["evaluate", str(tmp_path / "run"), "--against", "ismcts,nonesuch"]) == 2
    assert "psro evaluate: error: against: 'nonesuch' is not a reference" in capsys.readouterr().err
    assert main(["evaluate", str(tmp_path)]) == 2
    assert "is not a run directory" in capsys.readouterr().err


# -- issue 57 item 2: `psro evaluate` never ends in a traceback, and never loses the rows it has finished -------------
def test_evaluate_a_phantom_tic_tac_toe_run_against_ismcts_is_one_line_before_anything_is_played(tmp_path, capfd):
    config = tmp_path / "phantom.yaml"
    config.write_text("game: phantom_ttt\noracle: ppo\nevaluator: monte_carlo\nepisodes_per_profile: 4\n"
                      "oracle_options: {total_steps: 64, num_envs: 4, num_steps: 16, eval_episodes: 4, hidden: [8], "
                      "on_bad_response: warn}\niterations: 0\ntarget_gap: null\napprox_gap_every: null\n"
                      "rank_population: false\nexact_gap: false\n")
    assert main(["run", str(config), "--out", str(tmp_path / "run")]) == 0
    capfd.readouterr()
    assert main(["evaluate", str(tmp_path / "run"), "--against", "uniform,ismcts", "--episodes", "2"]) == 2
    out, err = capfd.readouterr()   # (file descriptors: OpenSpiel's own C++ message would show here)
    assert out == "" and err.splitlines() == [
        "psro evaluate: error: against: 'ismcts' is OpenSpiel's IS-MCTS, which resamples histories through the "
        "game's ResampleFromInfostate, and phantom_ttt() does not implement it; references that work for "
        "phantom_ttt(): 'uniform', a bot of your own ('module:name') or another run's directory."]


def test_evaluate_prints_each_references_rows_as_it_finishes(tmp_path, monkeypatch, capsys):
    (tmp_path / "issue57_cli_bots.py").write_text("def broken(game, player, seed):\n"
                                                  "    def act(state):\n"
                                                  "        raise ValueError('the bot broke')\n"
                                                  "    return act\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = tmp_path / "kuhn.yaml"
    config.write_text("game: kuhn_poker\niterations: 1\ntarget_gap: null\nrank_population: false\n")
    assert main(["run", str(config), "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "run"), "--against", "uniform,issue57_cli_bots:broken",
                 "--episodes", "4"]) == 2
    out, err = capsys.readouterr()
    lines = out.splitlines()   # the header and the uniform rows, printed before the broken bot played
    assert lines[0].split() == ["player", "agent", "reference", "episodes", "win", "draw", "loss", "mean_return"]
    assert len(lines) == 1 + 2 * 3
    assert all(re.match(r" *[01] +(member \d|meta) +uniform +4 ", line) for line in lines[1:])
    assert err.splitlines() == ["psro evaluate: error: the bot broke"]


def test_an_unreachable_ray_cluster_fails_within_seconds_naming_the_address(tmp_path, capsys):
    import time

    config = tmp_path / "tiny.yaml"
    config.write_text("game: kuhn_poker\niterations: 1\n")
    start = time.perf_counter()
    code = main(["run", str(config), "--executor", "ray", "--ray-address", "127.0.0.1:1", "--out",
                 str(tmp_path / "run")])
    assert time.perf_counter() - start < 10
    assert code == 1
    err = capsys.readouterr().err
    assert "cannot reach the Ray cluster at '127.0.0.1:1'" in err and "ray start --head" in err
    assert not (tmp_path / "run").exists()   # refused before anything was written


def test_a_resumed_run_never_joins_the_cluster_its_files_name(tmp_path, capsys):
    config = tmp_path / "tiny.yaml"
    # NFSP resumes from its run directory's config.yaml (PSRO from its sealed checkpoint's copy)
    config.write_text("game: kuhn_poker\nalgorithm: nfsp\nalgorithm_options: {steps_per_iteration: 64, num_envs: 4}\n"
                      "iterations: 1\ntarget_gap: null\nrank_population: false\n")
    out = tmp_path / "run"
    assert main(["run", str(config), "--out", str(out)]) == 0
    saved = (out / "config.yaml").read_text()
    (out / "config.yaml").write_text(saved.replace("executor: serial", "executor: ray")
                                     .replace("ray_address: null", "ray_address: 127.0.0.1:1"))
    assert main(["resume", str(out), "--set", "iterations=2", "--executor", "serial"]) == 0
    assert "done: 2 iterations" in capsys.readouterr().out


# -- issue 26, item 5: your own games from the command line, without a config file ------------------------------------
USER_GAMES = __import__("pathlib").Path(__file__).parents[2] / "games" / "data" / "user_games"


@pytest.mark.slow
def test_psro_run_trains_a_users_sequential_game_and_batched_env_with_ppo(tmp_path, monkeypatch, capsys):
    import pandas as pd

    monkeypatch.syspath_prepend(str(USER_GAMES))
    common = ["--oracle", "ppo", "--oracle-options.total-steps", "512", "--iterations", "1", "--target-gap", "null",
              "--rank-population", "false", "--set", "approx_gap_options={episodes: 100, total_steps: 512}"]
    assert main(["run", "--game", "usergames26.bluff:BluffDice", *common, "--out", str(tmp_path / "bluff")]) == 0
    history = pd.read_csv(tmp_path / "bluff" / "history.csv")
    assert history["population_0"].tolist() == [1, 2] and history["gap"].notna().all()   # exact gap: tree fits
    assert main(["run", "--game", "usergames26.envs:HighCard", *common, "--evaluator", "monte_carlo",
                 "--episodes-per-profile", "100", "--out", str(tmp_path / "env")]) == 0
    history = pd.read_csv(tmp_path / "env" / "history.csv")
    assert history["population_1"].tolist() == [1, 2] and history["approx_gap"].notna().iloc[-1]
    capsys.readouterr()
    # resuming imports the module only when the user names the game again
    assert main(["resume", str(tmp_path / "bluff"), "--set", "iterations=2"]) == 2
    assert "imports Python code and was read from a file" in capsys.readouterr().err
    assert main(["resume", str(tmp_path / "bluff"), "--set", "iterations=2", "--game",
                 "usergames26.bluff:BluffDice"]) == 0
    assert pd.read_csv(tmp_path / "bluff" / "history.csv")["iteration"].tolist() == [0, 1, 2]


def test_psro_run_with_a_game_and_no_config(tmp_path, capsys):
    assert main(["run", "--game", "kuhn_poker", "--iterations", "2", "--rank-population", "false", "--out",
                 str(tmp_path / "kuhn")]) == 0
    assert "done: 2 iterations" in capsys.readouterr().out
    assert main(["run", "--game", "nosuch.module:Game", "--out", str(tmp_path / "x")]) == 2
    assert "the module 'nosuch.module' does not import" in capsys.readouterr().err


def test_rock_paper_scissors_from_the_catalog_with_a_starting_point(tmp_path, capsys):
    import pandas as pd

    out = tmp_path / "rps"
    assert main(["run", "--game", "catalog:rock_paper_scissors", "--set", "initial_policies=[[0], [0]]",
                 "--rank-population", "false", "--out", str(out)]) == 0
    history = pd.read_csv(out / "history.csv")
    assert history["population_0"].tolist() == [1, 2, 3] and history["gap"].iloc[-1] < 1e-9


def test_names_report_and_compare_defaults_of_issue_36(tmp_path, capsys, monkeypatch):
    # issue 36 item 12: `psro run --game mygame:X` from mygame.py's folder failed until PYTHONPATH was set, and
    # `psro compare DIRS` without --out was refused; item 14: `psro report R/history.csv` said "no history.csv"
    import sys

    (tmp_path / "issue36_mygame.py").write_text(
        "from games import NormalFormGame\n\n\ndef X():\n"
        "    return NormalFormGame.from_bimatrix([[0.0, 1.0], [1.0, 0.0]], [[0.0, -1.0], [-1.0, 0.0]])\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    run = tmp_path / "runs" / "r"
    assert main(["run", "--game", "issue36_mygame:X", "--iterations", "1", "--rank-population", "false",
                 "--out", str(run)]) == 0, capsys.readouterr().err
    assert main(["report", str(run / "history.csv")]) == 0
    assert f"reporting its run directory {run}" in capsys.readouterr().out
    assert main(["compare", str(run), "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    written = sorted((tmp_path / "runs").glob("comparison-*"))
    assert len(written) == 1 and f"no --out given: writing the comparison into {written[0]}" in out
    assert (written[0] / "final.md").is_file()


# -- issue 36 item 4: `psro evaluate` on games without a tree (a user's numpy environment, PettingZoo) ----------------
def test_evaluate_a_users_environment_game_against_uniform_and_another_run(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(USER_GAMES))
    run = tmp_path / "env"
    assert main(["run", "--game", "usergames26.envs:HighCard", "--oracle", "ppo", "--oracle-options.total-steps", "512",
                 "--iterations", "1", "--target-gap", "null", "--rank-population", "false", "--episodes-per-profile",
                 "20", "--set", "approx_gap_every=null", "--out", str(run)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(run), "--import", "usergames26", "--against", f"uniform,{run}",
                 "--episodes", "8"]) == 0
    out = capsys.readouterr().out
    lines = [line.split() for line in out.splitlines()[1:]]
    assert len(lines) == 2 * 3 * 2   # seats x (2 members + meta) x references
    assert sum(str(run) in line for line in lines) == sum("uniform" in line for line in lines) == 6
    assert main(["evaluate", str(run), "--import", "usergames26", "--against", "ismcts"]) == 2
    assert "is an environment game, without pyspiel states" in capsys.readouterr().err


def test_evaluate_a_pettingzoo_run_against_uniform(tmp_path, capsys):
    pytest.importorskip("pettingzoo")
    run = tmp_path / "ttt"
    config = __import__("pathlib").Path(__file__).parents[3] / "experiments" / "configs" / "tictactoe_pettingzoo.yaml"
    assert main(["run", str(config), "--set", "iterations=1", "--set",
                 "oracle_options={total_steps: 64, num_envs: 4, num_steps: 16, eval_episodes: 4, hidden: [8], "
                 "on_bad_response: warn}",
                 "--set", "episodes_per_profile=8", "--set", "approx_gap_every=null", "--rank-population", "false",
                 "--out", str(run)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(run), "--episodes", "6"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert len(rows) == 2 * 3 and all(" uniform " in row and " 6 " in row for row in rows)


def test_evaluate_exact_prints_the_nash_conv_of_a_dark_hex_run(tmp_path, capsys):
    pytest.importorskip("numba")
    from psro.measures.exact import exact_nash_conv
    from psro.measures.reference_opponents import _load_run

    config = tmp_path / "dark_hex.yaml"
    config.write_text("game: dark_hex(num_rows=2,num_cols=2,gameversion=adh)\noracle: ppo\nevaluator: monte_carlo\n"
                      "episodes_per_profile: 4\noracle_options: {total_steps: 64, num_envs: 4, num_steps: 16, "
                      "eval_episodes: 4, hidden: [8], on_bad_response: warn}\niterations: 1\ntarget_gap: null\n"
                      "approx_gap_every: null\nrank_population: false\nexact_gap: false\n")
    assert main(["run", str(config), "--out", str(tmp_path / "run")]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "run"), "--exact"]) == 0
    lines = capsys.readouterr().out.splitlines()
    solver = _load_run(tmp_path / "run")
    profile = [(pop.policies, np.asarray(w) / np.sum(w))
               for pop, w in zip(solver.seat_populations(), solver.state.eval_meta_strategy.marginals)]
    expected = exact_nash_conv(solver.game, profile)
    assert lines[0].startswith(f"exact NashConv {expected.nash_conv:.9f} (")
    assert lines[2] == (f"player 1: value {expected.values[1]:+.9f}, best-response value "
                        f"{expected.best_response_values[1]:+.9f}, gain {expected.gains[1]:.9f}")
    assert len(lines) == 3   # no reference played without --against
