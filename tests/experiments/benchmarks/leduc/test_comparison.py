"""The Leduc comparisons: configs checked field by field, the command line and the committed files describing the
same comparisons, the budget clock ending a run quietly, rows read back from a log, and a side's first row equal to
OpenSpiel's NashConv of the uniform profile."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from experiments.benchmarks import deep_psro_leduc as bench
from experiments.benchmarks.leduc import comparison as comparisons
from experiments.benchmarks.leduc import measure, openspiel_nfsp_adapter, toolkit_adapter
from experiments.clock import BudgetSpent, Clock, from_budget

ROOT = Path(__file__).resolve().parents[4]
FILES = sorted((ROOT / "experiments" / "benchmarks" / "leduc").glob("*.yaml"))


def test_every_committed_comparison_loads_and_names_configs_that_exist():
    assert len(FILES) >= 4
    for path in FILES:
        comparison = comparisons.load_comparison(path)
        for side in comparison.sides:
            options = comparisons.side_options(side)
            if side.adapter == "toolkit" and options.config:
                assert toolkit_adapter.config_path(options.config).is_file(), (path.name, options.config)


@pytest.mark.parametrize("text, message", [
    ("sides: []", "the field 'sides' is wrong"),
    ("sides: [{name: a, adapter: psro_v3}]", "the field 'sides.0.adapter' is wrong"),
    ("sides: [{name: a b}]", "the field 'sides.0.name' is wrong"),
    ("sides: [{name: a}]\nbudget: -1", "the field 'budget' is wrong"),
    ("sides: [{name: a}]\nbudget: '60'", "the field 'budget' is wrong"),
    ("sides: [{name: a}]\nclock: gpu", "the field 'clock' is wrong"),
    ("sides: [{name: a}]\nseed: 3", "the field 'seed' is not one of its schema's"),
    ("sides: [{name: a}, {name: a}]", "each name once; ['a'] given twice"),
    ("sides: [{name: a}]\nreference: b", "reference: 'b' is not a side"),
    ("sides: [{name: a}]\nsides: [{name: b}]", "config field 'sides' is given twice"),
    ("sides: [{name: v2, adapter: psro_v2, options: {episode: 5}}]",
     "sides.0 (v2): unknown option 'episode' of the psro_v2 adapter; did you mean 'episodes'?"),
    ("sides: [{name: v2, adapter: psro_v2, options: {episodes: many}}]", "sides.0 (v2): option episodes:"),
])
def test_a_bad_comparison_is_one_error_naming_the_file_and_the_field(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text + "\n")
    with pytest.raises(ValueError) as info:
        comparisons.load_comparison(path)
    assert str(info.value).startswith(f"comparison {str(path)!r}: ") and message in str(info.value)


def test_seeds_are_read_as_sweeps_read_them(tmp_path):
    path = tmp_path / "seeds.yaml"
    for text, seeds in (("0-2", [0, 1, 2]), ("[5, 1]", [1, 5]), ("3", [3]), ("0-1,7", [0, 1, 7])):
        path.write_text(f"seeds: {text}\nsides: [{{name: a}}]\n")
        assert comparisons.load_comparison(path).seeds == seeds


def _by_name(comparison) -> dict:
    """Each side's options, a toolkit config as its resolved path."""
    def resolved(options):
        if getattr(options, "config", None):
            return dataclasses.replace(options, config=toolkit_adapter.config_path(options.config).resolve())
        return options

    return {side.name: resolved(comparisons.side_options(side)) for side in comparison.sides}


@pytest.mark.parametrize("name, argv", [
    ("side_by_side.yaml", "--sides ours psro_v2 openspiel_nfsp --seeds 3 --processes 2 --clock wall --budget 900 "
                          "--config experiments/configs/leduc_deep_tuned.yaml --executor serial"),
    ("tuned_final.yaml", "--sides ours --seeds 3 --processes 2 --clock wall --budget 900 "
                         "--config experiments/configs/leduc_deep_tuned.yaml --executor serial"),
    ("variants_tuned.yaml", "--sides nxdo p2sro --seeds 3 --processes 2 --clock cpu --budget 900 "
                            "--variant-config nxdo=experiments/configs/leduc_nxdo_tuned.yaml "
                            "--variant-config p2sro=experiments/configs/leduc_pipeline_psro_tuned.yaml"),
    ("variants.yaml", "--sides all --seeds 3 --clock cpu --budget 150 "
                      "--config experiments/configs/leduc_deep_tuned.yaml"),
])
def test_each_committed_file_is_the_comparison_of_its_result_files_command(name, argv, monkeypatch):
    # the committed results quote these command lines; the files run the same comparisons
    monkeypatch.chdir(ROOT)
    from_file = comparisons.load_comparison(ROOT / "experiments" / "benchmarks" / "leduc" / name)
    from_flags = bench.comparison_from_options(bench.parser().parse_args(argv.split()))
    for field in ("budget", "clock", "seeds", "processes", "concurrent_seeds"):
        assert getattr(from_file, field) == getattr(from_flags, field), field
    assert sorted(s.name for s in from_file.sides) == sorted(s.name for s in from_flags.sides)
    assert _by_name(from_file) == _by_name(from_flags)


def test_bad_options_end_in_one_usage_line(capsys):
    tuned = ROOT / "experiments" / "configs" / "leduc_nxdo_tuned.yaml"
    for argv, message in ((["--variant-config", f"ours={tuned}"], "SIDE one of ['nfsp', 'nxdo', 'p2sro']"),
                          (["--variant-config", "nxdo"], "SIDE=PATH"),
                          (["--variant-config", "p2sro=no/such.yaml"], "--variant-config p2sro: no file at"),
                          (["--oracle-option", "learning_rate"], "--oracle-option: expected KEY=VALUE"),
                          (["--comparison", str(tuned)], "the field 'sides' is missing")):
        with pytest.raises(SystemExit):
            bench.main(argv)
        assert message in capsys.readouterr().err


def test_the_tuned_configs_build_their_loops_without_a_game_tree():
    for name in ("leduc_nxdo_tuned.yaml", "leduc_pipeline_psro_tuned.yaml"):
        solver = toolkit_adapter.configured_solver(0, ROOT / "experiments" / "configs" / name, executor="serial")
        try:
            assert getattr(solver, "tree", None) is None and solver.config.oracle == "model_br"
        finally:
            solver.close()
    # a side's fields go over the defaults: NXDO's side of nxdo_leduc
    from experiments.benchmarks import nxdo_leduc

    nxdo = nxdo_leduc.comparison(30.0, "cpu", 64, 5).sides[1]
    solver = toolkit_adapter.toolkit_solver(0, comparisons.side_options(nxdo))
    try:
        assert type(solver).__name__ == "NXDO" and solver.tree is None
        assert solver.config.episodes_per_profile == 5 and solver.config.oracle == "ppo"
    finally:
        solver.close()


def test_the_budget_ends_a_run_quietly_also_when_a_library_wrapped_it_and_rows_come_back_from_the_log(
        caplog, monkeypatch):
    # OpenSpiel's replay buffer (dm-tree) turned the budget's signal into a TypeError raised from it, which ended a
    # 75-minute side-by-side run without its summary; its rows were read back from the log
    try:
        try:
            raise BudgetSpent
        except BudgetSpent as spent:
            raise TypeError("Couldn't traverse Transition(...)") from spent
    except TypeError as wrapped:
        assert from_budget(wrapped)
    assert not from_budget(TypeError("Couldn't traverse Transition(...)"))

    def wrapped_budget(env, agents):   # the budget ends inside the replay buffer's dm-tree call
        try:
            raise BudgetSpent
        except BudgetSpent as spent:
            raise TypeError("Couldn't traverse Transition(...)") from spent

    monkeypatch.setattr(openspiel_nfsp_adapter, "play_episode", wrapped_budget)
    kept = openspiel_nfsp_adapter.run(0, 600.0, openspiel_nfsp_adapter.Options(measure_every=1))
    assert [r["iteration"] for r in kept] == [0] and kept[0]["nash_conv"] > 0   # the rows so far, not a crash

    clock = Clock()
    clock.wall, clock.cpu = 53.3, 52.7
    with caplog.at_level("INFO", logger="deep_psro_leduc"):
        rows = [measure.row("openspiel_nfsp", 2, clock, 18000, 1.4173, env_steps=90_000),
                measure.row("ours", 0, clock, 7, 0.3086)]
    back = measure.rows_from_log(caplog.text)
    assert [{**r, "env_steps": 0} for r in back] == [{**r, "env_steps": 0} for r in rows]
    assert all(np.isnan(r["env_steps"]) for r in back)   # (not logged)


@pytest.mark.slow
def test_a_toolkit_sides_first_row_is_the_uniform_profiles_nash_conv():
    import pyspiel
    from open_spiel.python import policy
    from open_spiel.python.algorithms import exploitability

    game = pyspiel.load_game("leduc_poker")
    uniform = exploitability.nash_conv(game, policy.UniformRandomPolicy(game))
    options = toolkit_adapter.Options(total_steps=512, episodes_per_profile=4, oracle_options={"eval_episodes": 4})
    # the imports and first builds off the budget (in a cold pytest worker they once took the whole 2 wall-seconds
    # it had), and a CPU budget that the machine's load does not eat
    toolkit_adapter.toolkit_solver(0, options).close()
    rows = toolkit_adapter.run(0, 3.0, options, clock="cpu", side="tiny")
    assert rows[0]["side"] == "tiny" and rows[0]["iteration"] == 0
    assert abs(rows[0]["nash_conv"] - uniform) < 1e-9   # the initial population: the uniform policies


def test_the_summary_names_the_reference_and_each_sides_unit():
    rows = []
    for seed in (0, 1):
        for side, curve in (("mine", [(1, 3.0), (40, 0.9), (100, 0.4)]), ("theirs", [(1, 3.0), (80, 0.9)]),
                            ("openspiel_nfsp", [(1, 4.0), (50, 2.0)])):
            rows += [{"side": side, "seed": seed, "wall_s": t, "cpu_s": t, "iteration": i, "nash_conv": v,
                      "env_steps": np.nan} for i, (t, v) in enumerate(curve)]
    spec = comparisons.Comparison(title="Test", budget=120, seeds=[0, 1], sides=[
        comparisons.Side(name="mine"), comparisons.Side(name="theirs", adapter="psro_v2"),
        comparisons.Side(name="openspiel_nfsp", adapter="openspiel_nfsp")])
    text = comparisons.summarise(rows, spec, "cmd")
    assert text.startswith("# Test\n\nCommand: `cmd`")
    assert "| 60 | 0.9 | 3 | 2 |" in text and "| 120 | 0.4 | 0.9 | 2 |" in text
    assert "| 1 | 1.00 | 2.00 | not reached |" in text   # time to NashConv <= 1 over mine's (40 s)
    assert "- openspiel_nfsp: episodes per seed [1, 1]" in text and "- theirs: iterations per seed [1, 1]" in text
    assert "- mine below theirs at every reported time: yes" in text


def test_a_run_config_in_sections_builds_the_same_loop_as_its_flat_twin(tmp_path):
    import yaml

    from psro import PSROConfig

    flat = ROOT / "experiments" / "configs" / "leduc_deep_tuned.yaml"
    nested = tmp_path / "nested.yaml"
    nested.write_text(yaml.safe_dump(PSROConfig.from_yaml(flat).replace(name="").to_nested(), sort_keys=False))
    configs = []
    for path in (flat, nested):
        solver = toolkit_adapter.configured_solver(3, path, executor="serial")
        configs.append(solver.config)
        solver.close()
    assert configs[0] == configs[1] and configs[0].seed == 3 and configs[0].exact_gap is False
    nested.write_text("game: {name: kuhn_poker}\n")
    with pytest.raises(ValueError, match="the benchmark plays leduc_poker; .* names game 'kuhn_poker'"):
        toolkit_adapter.configured_solver(0, nested)
