"""psro.config.sections: a config's fields written in their sections or flat give the same config, with one clear
error for a section's unknown key, a field given twice and a section that is not a mapping."""

from __future__ import annotations

import copy
import dataclasses
import functools
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from psro.config.model import PSROConfig
from psro.config.sections import FLAT_PATHS, SECTIONS, flatten, nest
from psro.run.cli import main
from psro.run.sweep import parse_grid

ROOT = Path(__file__).resolve().parents[3]
CONFIGS = sorted((ROOT / "experiments" / "configs").glob("*.yaml"))
FIELDS = [f.name for f in dataclasses.fields(PSROConfig)]


def test_every_field_is_in_exactly_one_section():
    placed = [field for keys in SECTIONS.values() for field in keys.values()]
    assert sorted(placed) == sorted(FIELDS) and len(placed) == len(set(placed))
    assert set(FLAT_PATHS) == set(FIELDS)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_shipped_config_reads_the_same_nested(path, tmp_path):
    flat = PSROConfig.from_yaml(path)
    nested = tmp_path / path.name
    nested.write_text(yaml.safe_dump(flat.to_nested(), sort_keys=False))
    assert PSROConfig.from_yaml(nested) == flat
    assert set(yaml.safe_load(nested.read_text())) <= set(SECTIONS)   # (every field in a section)


@functools.cache
def _mixed_config() -> PSROConfig:
    """A config with many fields away from their defaults (read once: every example splits the same config)."""
    return PSROConfig.from_yaml(ROOT / "experiments" / "configs" / "leduc_deep_tuned.yaml").replace(
        name="mixed", teams=[[0], [1]], update_players="cycle", max_histories=50_000, prune_dominated="weak",
        meta_solver_options={"iterations": 10}, eval_meta_solver="nash", extensive_form_gaps=True, progress=False,
        loggers=["csv"], ranking_alpha=2.0, top_up_episodes=8, top_up_rounds=2)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=len(FIELDS), max_size=len(FIELDS)), st.permutations(FIELDS))
def test_any_mix_of_flat_and_nested_fields_in_any_order_gives_the_same_config(in_section, order):
    config = copy.deepcopy(_mixed_config())   # (a copy: nothing an example does reaches the next)
    nested = {FLAT_PATHS[f][0] for f in FIELDS if in_section[FIELDS.index(f)]}
    written = {}
    for field in order:
        section, key = FLAT_PATHS[field]
        # (a field named like its section goes into it when the section is written: one key cannot be both)
        if in_section[FIELDS.index(field)] or (field == section and section in nested):
            written.setdefault(section, {})[key] = getattr(config, field)
        else:
            written[field] = getattr(config, field)
    assert PSROConfig.from_dict(written) == config


def test_a_field_named_like_its_section_is_the_field_when_not_a_mapping():
    assert flatten({"oracle": "ppo", "executor": 2, "game": "kuhn_poker"}) == \
        {"oracle": "ppo", "executor": 2, "game": "kuhn_poker"}
    assert flatten({"oracle": {"name": "ppo", "options": {"hidden": [8]}}}) == \
        {"oracle": "ppo", "oracle_options": {"hidden": [8]}}
    assert nest({"oracle": "ppo", "unknown_field": 1}) == {"oracle": {"name": "ppo"}, "unknown_field": 1}


@pytest.mark.parametrize("data, message", [
    ({"oracle": {"option": 5}}, "oracle.option is no key of the oracle section; did you mean 'options'? Its keys:"),
    ({"run": {"sed": 1}}, "run.sed is no key of the run section; did you mean 'seed'?"),
    ({"gaps": {"zzz": 1}}, "gaps.zzz is no key of the gaps section. Its keys: exact, exact_every, approx_every,"),
    ({"run": 5}, "run is a section, a mapping of its keys (name, seed, iterations"),
    ({"oracle_dispatch": "auto", "oracle": {"dispatch": "executor"}},
     "oracle_dispatch is given twice, as oracle_dispatch and as oracle.dispatch"),
    ({"run": {"seed": 1}, "seed": 1}, "seed is given twice, as run.seed and as seed"),
    ({"oracle": {"warm_start": "many"}}, "config field 'warm_start' must be"),
    ({"iteration": 5}, "unknown config field 'iteration'. Did you mean 'iterations'?"),
])
def test_a_bad_section_is_one_error_naming_it(data, message):
    with pytest.raises(ValueError) as info:
        PSROConfig.from_dict(data, source="c.yaml")
    assert message in str(info.value), str(info.value)


def test_section_paths_work_in_overrides_and_sweep_grids():
    config = PSROConfig(oracle="ppo", oracle_options={"total_steps": 64})
    changed = config.replace_from_strings(["oracle.options.hidden=[8]", "run.seed=3", "gaps.exact=false"])
    assert (changed.oracle_options, changed.seed, changed.exact_gap) == ({"total_steps": 64, "hidden": [8]}, 3, False)
    assert parse_grid(["meta_solver.name=nash,prd", "oracle.options.total_steps=64,128"]) == \
        {"meta_solver": ["nash", "prd"], "oracle_options.total_steps": [64, 128]}
    with pytest.raises(ValueError, match="'oracle.stepz' is not a config field"):
        parse_grid(["oracle.stepz=1"])
    with pytest.raises(ValueError, match="'seed.x' is not a config field"):   # (only a mapping field has keys)
        parse_grid(["seed.x=1"])


def test_a_nested_config_file_runs_like_its_flat_twin(tmp_path):
    nested = tmp_path / "nested.yaml"
    nested.write_text("run: {iterations: 2, seed: 4, progress: false}\ngame: {name: kuhn_poker}\n"
                      "meta_solver: {name: nash}\nranking: {population: false}\n")
    flat = tmp_path / "flat.yaml"
    flat.write_text("iterations: 2\nseed: 4\nprogress: false\ngame: kuhn_poker\nmeta_solver: nash\n"
                    "rank_population: false\n")
    histories = []
    for path in (nested, flat):
        assert main(["run", str(path), "--out", str(tmp_path / path.stem)]) == 0
        saved = yaml.safe_load((tmp_path / path.stem / "config.yaml").read_text())
        assert saved["iterations"] == 2 and "run" not in saved   # (the run directory keeps the flat form)
        histories.append((tmp_path / path.stem / "history.csv").read_text().splitlines())
    strip = [[",".join(c for i, c in enumerate(line.split(",")) if i not in _time_columns(h)) for line in h]
             for h in histories]
    assert strip[0] == strip[1]


def _time_columns(lines: list) -> set:
    return {i for i, name in enumerate(lines[0].split(",")) if "time" in name}


def test_a_game_given_as_a_mapping_stays_the_game():
    # a normal-form game's JSON spec (what a checkpoint stores) is the game field, not its section
    spec = {"normal_form": {"payoffs": [[[1, 0], [0, 1]], [[0, 1], [1, 0]]]}}
    assert flatten({"game": spec}) == {"game": spec}
    assert flatten({"game": {"name": "kuhn_poker", "max_histories": 10}}) == {"game": "kuhn_poker",
                                                                             "max_histories": 10}
