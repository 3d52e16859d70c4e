"""psro.config.model: every bad value gets an error naming its field (issue 15, items 9 and 11); field_help reads the
fields' types, defaults, docstrings and registries (issue 16, item 5)."""

import dataclasses
import math
import warnings

import pytest

from psro.config.model import CHOICES, PSROConfig, field_help


def write(tmp_path, text: str, name: str = "run.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["../../escape", "a/b", "/abs/path", "..", ".", ".hidden", "a\\b", "x\ny"])
def test_a_run_name_is_a_file_name_not_a_path(tmp_path, name):
    with pytest.raises(ValueError, match=r"^name: .* is not a run name: a run name is a file name, not a path"):
        PSROConfig.from_dict({"name": name})
    with pytest.raises(ValueError, match="^name: "):
        PSROConfig(name=name)
    if "\n" not in name:   # the command line's --set name=... and --name go through the same check
        with pytest.raises(ValueError, match="^name: "):
            PSROConfig().replace_from_strings([f"name={name}"])


def test_the_issue_example_escape_from_yaml(tmp_path):
    with pytest.raises(ValueError, match=r"^name: '\.\./\.\./escape' is not a run name"):
        PSROConfig.from_yaml(write(tmp_path, "name: ../../escape\ngame: kuhn_poker\n"))


@pytest.mark.parametrize("name", ["kuhn", "kuhn_poker-3p", "run 7", "x.y", "ü"])
def test_ordinary_names_are_kept(name):
    assert PSROConfig(name=name).name == name


@pytest.mark.parametrize("text, message", [
    ("iterations: -5", r"^iterations: must be an int >= 0; got -5\."),
    ("time_limit: -3", r"^time_limit: must be a number >= 0; got -3\.0\."),
    ("target_gap: -1e-6", r"^target_gap: must be a number >= 0"),
    ("target_gap: .nan", r"^target_gap: must be a number, not NaN"),
    ("seed: -1", r"^seed: must be an int >= 0; got -1\."),
    ("episodes_per_profile: 0", r"^episodes_per_profile: must be an int >= 1"),
    ("top_up_episodes: -1", r"^top_up_episodes: must be an int >= 0"),
    ("top_up_rounds: 0", r"^top_up_rounds: must be an int >= 1"),
    ("ranking_alpha: 0", r"^ranking_alpha: must be a number > 0"),
    ("ranking_alpha: .inf", r"^ranking_alpha: must be finite"),
])
def test_out_of_range_values_name_their_field(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        PSROConfig.from_yaml(write(tmp_path, f"game: kuhn_poker\n{text}\n"))


def test_duplicate_keys_are_refused_with_both_lines(tmp_path):
    path = write(tmp_path, "game: kuhn_poker\niterations: 5\nseed: 1\niterations: 50\n")
    with pytest.raises(ValueError, match=r"config field 'iterations' is given twice \(lines 2 and 4\)"):
        PSROConfig.from_yaml(path)


def test_duplicates_in_nested_mappings_are_refused_too(tmp_path):
    with pytest.raises(ValueError, match="given twice"):
        PSROConfig.from_yaml(write(tmp_path, "game: kuhn_poker\nextra: {a: 1, a: 2}\n"))


def test_a_directory_is_not_a_config_file(tmp_path):
    with pytest.raises(ValueError, match=r"is a directory; give a YAML file"):
        PSROConfig.from_yaml(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        PSROConfig.from_yaml(tmp_path / "missing.yaml")


def test_defaults_pass_their_own_checks_and_stopping_rules_of_zero_are_allowed():
    cfg = PSROConfig(iterations=0, time_limit=0, target_gap=0.0)
    assert (cfg.iterations, cfg.time_limit, cfg.target_gap) == (0, 0, 0.0)
    assert PSROConfig().seed == 0


# ------------------------------------------------------------------- field_help
def test_field_help_describes_every_field_once_in_order():
    helps = field_help()
    assert [h.name for h in helps] == [f.name for f in dataclasses.fields(PSROConfig)]
    for h, f in zip(helps, dataclasses.fields(PSROConfig)):
        assert h.default == f.default or (isinstance(f.default, float) and math.isnan(f.default))
        assert h.description and h.description.endswith(".") and "``" not in h.description, h


def test_field_help_reads_the_docstrings_and_types():
    helps = {h.name: h for h in field_help()}
    assert helps["seed"].description == "Seed of the run's random generator."
    assert helps["seed"].type_text == "int >= 0"   # (the bounds annotated on the fields)
    assert helps["iterations"].type_text == "int >= 0 or null"
    assert helps["target_gap"].type_text == "float >= 0 or null"
    assert helps["ranking_alpha"].type_text == "float > 0" and helps["top_up_rounds"].type_text == "int >= 1"
    assert helps["game"].type_text == "str"
    assert helps["oracle"].description.startswith("Best-response oracle: exact (sequence form, numpy)")


def test_field_help_choices_come_from_the_registries():
    from games.executors import ENGINES
    from psro.evaluation import TOP_UP_METHODS, evaluator_names
    from psro.loop.selection import BR_SELECTIONS, UPDATE_PLAYERS
    from psro.meta.solvers import known_names
    from psro.oracles import oracle_names

    helps = {h.name: h for h in field_help()}
    assert set(helps["oracle"].choices) == set(oracle_names())
    assert set(helps["evaluator"].choices) == set(evaluator_names())
    assert set(helps["meta_solver"].choices) == set(known_names()) == set(helps["eval_meta_solver"].choices)
    assert set(helps["executor"].choices) == set(ENGINES)
    assert set(helps["update_players"].choices) == set(UPDATE_PLAYERS)
    assert set(helps["br_selection"].choices) == set(BR_SELECTIONS)
    assert set(helps["top_up_method"].choices) == set(TOP_UP_METHODS)
    assert {name for name, h in helps.items() if h.choices is not None} == set(CHOICES)


# -- issue 26, item 4: a Ray cluster from the config ---------------------------------------------------------------


def test_a_ray_cluster_from_the_yaml_mapping_or_the_field(tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text("game: kuhn_poker\nexecutor: {engine: ray, address: '127.0.0.1:6379'}\n")
    config = PSROConfig.from_yaml(path)
    assert (config.executor, config.ray_address) == ("ray", "127.0.0.1:6379")
    assert config.executor_spec() == {"engine": "ray", "address": "127.0.0.1:6379"}
    assert PSROConfig(executor="ray", ray_address="ray://h:10001").executor_spec() == \
        {"engine": "ray", "address": "ray://h:10001"}
    assert PSROConfig(executor="ray").executor_spec() == "ray"
    with pytest.raises(ValueError, match="ray_address: joins a Ray cluster, which needs executor: ray"):
        PSROConfig(executor="2", ray_address="h:1").validate()
    with pytest.raises(ValueError, match="executor.runtime_env is no key of the executor section. Its keys: engine, "
                                         "address"):
        PSROConfig.from_dict({"executor": {"engine": "ray", "runtime_env": {}}})
    with pytest.raises(ValueError, match="ray_address is given twice, as executor.address and as ray_address"):
        PSROConfig.from_dict({"executor": {"engine": "ray", "address": "h:1"}, "ray_address": "h:2"})


def test_a_wrong_length_tensor_is_reported_not_hidden():
    import numpy as np

    from games import TERMINAL, SequentialGame

    class SevenOfEight(SequentialGame):
        name = "seven_of_eight"
        num_distinct_actions = 2
        max_game_length = 1
        min_utility, max_utility = -1.0, 1.0
        information_state_tensor_shape = (8,)

        def initial_state(self):
            return ()

        def current_player(self, state):
            return TERMINAL if state else 0

        def legal_actions(self, state):
            return [0, 1]

        def apply_action(self, state, action):
            return state + (action,)

        def returns(self, state):
            return [1.0, -1.0] if state[0] else [-1.0, 1.0]

        def information_state(self, state, player):
            return f"{player}{state}"

        def information_state_tensor(self, state, player):
            return np.zeros(7)

    with pytest.raises(ValueError, match=r"game: the information-state tensor .* has 7 entries .* declares \(8,\)"):
        PSROConfig(game=SevenOfEight(), oracle="ppo").checked_game()


def test_a_binary_config_file_is_named_in_the_error(tmp_path):
    # issue 36 item 14: a binary config gave "'utf-8' codec can't decode byte ..." without naming the file
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x9d\xff")
    with pytest.raises(ValueError, match=r"config file '.*binary\.yaml' is not UTF-8 text"):
        PSROConfig.from_yaml(path)


# -- issue 36: sizes and step counts refused before the run allocates or trains ---------------------------------------


@pytest.mark.parametrize("field", ["episodes_per_profile", "top_up_episodes"])
def test_an_episode_count_past_the_memory_limit_is_refused_at_validation(field, monkeypatch):
    monkeypatch.setenv("PSRO_MAX_MEMORY", "1G")
    config = PSROConfig(game="kuhn_poker", evaluator="monte_carlo", iterations=1, **{field: 10**15})
    with pytest.raises(ValueError, match=f"{field}=1000000000000000 needs about .* memory limit of 1 GiB"):
        config.validate()
    PSROConfig(game="kuhn_poker", evaluator="monte_carlo", iterations=1, **{field: 10**4}).validate()


def test_oracle_steps_that_cannot_finish_within_the_time_limit_are_refused():
    config = PSROConfig(game="kuhn_poker", oracle="ppo", oracle_options={"total_steps": 10**15}, time_limit=60,
                        iterations=None)
    with pytest.raises(ValueError, match=r"^oracle_options: total_steps=1000000000000000 cannot finish within "
                                         r"time_limit=60"):
        config.validate()
    config.replace(oracle_options={"total_steps": 4096}).validate()
    config.replace(time_limit=None, iterations=1).validate()   # (no time limit: no bound on the steps)


def test_a_huge_sparse_config_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("PSRO_MAX_MEMORY", "1M")
    path = tmp_path / "config.yaml"
    with open(path, "wb") as fh:
        fh.truncate(64 * 2**20)
    with pytest.raises(ValueError, match="config.yaml.*memory limit of 1 MiB"):
        PSROConfig.from_yaml(path)


# -- issue 36 item 14: an environment game's evaluator default; how to give a game the tensor networks observe --------
def test_an_environment_game_left_at_the_default_evaluator_gets_monte_carlo(caplog):
    import logging

    config = PSROConfig(game="observation:tic_tac_toe", oracle="ppo")
    with caplog.at_level(logging.WARNING, logger="psro.config.model"):
        config.checked_game()
    assert config.evaluator == "monte_carlo"
    assert "environment game without a game tree, so the meta-game is evaluated by sampled play" in caplog.text
    with pytest.raises(ValueError, match="evaluator: 'openspiel' needs the game tree"):   # (an explicit choice stays)
        PSROConfig(game="observation:tic_tac_toe", oracle="ppo", evaluator="openspiel").checked_game()
    assert PSROConfig(game="kuhn_poker").evaluator == "sequence_form"


def test_a_learned_oracle_on_a_game_without_tensors_says_what_to_define():
    from games.examples.trust_dilemma import TrustDilemma

    with pytest.raises(ValueError, match=r"'observation:hex\(board_size=3\)' \(games.ObservationGame\)"):
        PSROConfig(game="hex(board_size=3)", oracle="ppo").checked_game()

    class NoTensor(TrustDilemma):
        name = "issue36_no_tensor"
        information_state_tensor_shape = None

    with pytest.raises(ValueError, match="define information_state_tensor.* or give an environment game"):
        PSROConfig(game=NoTensor(), oracle="dqn").checked_game()


def test_every_annotated_bound_holds_at_its_edge_and_fails_past_it():
    from psro.config.checks import _bounds

    bounds = _bounds(PSROConfig)
    assert {"iterations", "seed", "episodes_per_profile", "ranking_alpha", "target_gap", "top_up_rounds"} <= set(bounds)
    for field, (number, optional, bound) in bounds.items():
        edge = getattr(bound, "ge", getattr(bound, "gt", None))
        inside = edge if hasattr(bound, "ge") else edge + 0.5
        outside = edge - 1 if number is int else (edge if hasattr(bound, "gt") else edge - 1e-9)
        assert getattr(PSROConfig(**{field: number(inside)}), field) == inside
        sign = ">=" if hasattr(bound, "ge") else ">"
        with pytest.raises(ValueError, match=f"^{field}: must be an? (int|number) {sign} "):
            PSROConfig(**{field: number(outside)})
        if optional:
            assert getattr(PSROConfig(**{field: None}), field) is None
        else:
            with pytest.raises(ValueError, match=f"^{field}: "):
                PSROConfig(**{field: None})


def test_the_oracle_budget_has_one_spelling_and_the_old_one_reads_as_it_with_a_warning(tmp_path):
    # oracle_options.total_steps; the field oracle_steps (before 2026-12) reads as it, flat or in its section
    with pytest.raises(ValueError, match=r"^oracle_steps: the same setting is also given as "
                                         r"oracle_options.total_steps \(4096\); give it once"):
        PSROConfig.from_dict({"game": "kuhn_poker", "oracle": "ppo", "oracle_steps": 2048,
                              "oracle_options": {"total_steps": 4096, "num_envs": 8}})
    current = PSROConfig.from_dict({"game": "kuhn_poker", "oracle": "ppo",
                                    "oracle_options": {"num_envs": 8, "total_steps": 2048}})
    assert "oracle_steps" not in current.field_names()
    for old in ({"oracle_steps": 2048, "oracle_options": {"num_envs": 8}},
                {"oracle": {"name": "ppo", "steps": 2048, "options": {"num_envs": 8}}}):
        with pytest.warns(DeprecationWarning, match=r"oracle_steps is deprecated .* write oracle_options: "
                                                    r"\{total_steps: 2048\}"):
            assert PSROConfig.from_dict({"game": "kuhn_poker", "oracle": "ppo", **old}) == current
    # a run directory of an earlier release holds oracle_steps: null where it was not set: read as nothing, quietly
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert PSROConfig.from_dict({"oracle_steps": None}) == PSROConfig()
    with pytest.raises(ValueError, match="^oracle_options: only the learned oracles .* takes no total_steps"):
        PSROConfig(oracle="exact", oracle_options={"total_steps": 5}).validate()


def test_the_episodes_a_profile_given_twice_are_refused_and_a_checkpoints_options_still_build_the_solver():
    # episodes_per_profile is a field; a checkpoint stores it inside evaluator_options (FOLDED_FIELDS), where a
    # config that also gives the field would silently override it
    with pytest.raises(ValueError, match=r"^episodes_per_profile: the same setting is also given as "
                                         r"evaluator_options.episodes_per_profile \(70\); give it once"):
        PSROConfig.from_dict({"game": "leduc_poker", "evaluator": "monte_carlo", "episodes_per_profile": 50,
                              "evaluator_options": {"episodes_per_profile": 70, "num_envs": 8}})
    config = PSROConfig.from_dict({"game": "leduc_poker", "evaluator": "monte_carlo", "episodes_per_profile": 50,
                                   "evaluator_options": {"num_envs": 8}})
    options = config.solver_options("leduc_poker", "nash", "serial")
    assert "episodes_per_profile" not in options
    assert options["evaluator_options"] == {"episodes_per_profile": 50, "num_envs": 8}
    rebuilt = PSROConfig.from_dict({"game": "leduc_poker", **{key: value for key, value in options.items()
                                                               if key not in ("game", "eval_meta_solver")}})
    assert (rebuilt.episodes_per_profile, rebuilt.evaluator_options) == (50, {"num_envs": 8})   # (read as the field)
    assert rebuilt.evaluator_settings() == config.evaluator_settings()
    assert rebuilt.replace(seed=4).episodes_per_profile == 50   # (a resumed run's config is replaced, not refused)
