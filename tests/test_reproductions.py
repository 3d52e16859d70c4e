"""End-to-end: each paper reproduction runs with ``--quick`` and its deterministic claims hold."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "experiments" / "reproduce"
#: the second tier of the suite (``make test-slow``, run by CI after ``make test``): whole reproductions
pytestmark = pytest.mark.slow


def run_module(name: str, *argv: str):
    """Run ``python -m experiments.reproduce.<name> *argv`` in this process; returns what its ``main`` returns."""
    module = importlib.import_module(f"experiments.reproduce.{name}")
    with mock.patch.object(sys, "argv", [module.__file__, *argv]):
        return module.main()


def run_quick(name: str, out: Path, **smaller) -> Path:
    """``--quick``, with the module's attributes in ``smaller`` (smaller budgets of the same run) patched in."""
    module = importlib.import_module(f"experiments.reproduce.{name}")
    with mock.patch.multiple(module, **smaller) if smaller else contextlib.nullcontext():
        run_module(name, "--quick", "--out", str(out))
    for pattern in ("*.csv", "*.png"):
        assert list(out.glob(pattern)), f"{name} wrote no {pattern}"
    summary = (out / "summary.md").read_text()
    assert "Paper" in summary and "Deviations" in summary
    return out


def _minimax_budget():
    # one tic-tac-toe setting as --quick, the main and the exploiters trained on fewer steps: the same stages,
    # files and tables (the tests check their form; the claim itself needs the full budget)
    from experiments.reproduce import minimax_exploiter as m

    return [dataclasses.replace(m.QUICK[0], main_steps=2_000, exploiter_steps=1_000, eval_every=500, eval_games=50)]


def _league_budget():
    # Leduc exactly as --quick (the checks are on Leduc); phantom tic-tac-toe, whose run only has to finish and be
    # cross-played, on one oracle call per player and fewer episodes
    from experiments.reproduce import league_vs_psro as m

    return {**m.QUICK, "large_steps": 512, "episodes_per_profile": 20, "approx_steps": 512, "approx_episodes": 40,
            "cross_episodes": 20}


#: module -> the attributes patched in for the tests (a callable: built when first used)
SMALLER = {"minimax_exploiter": {"QUICK": _minimax_budget}, "league_vs_psro": {"QUICK": _league_budget}}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    cache = {}

    def get(name):
        if name not in cache:
            smaller = {key: make() for key, make in SMALLER.get(name, {}).items()}
            cache[name] = run_quick(name, tmp_path_factory.mktemp(name), **smaller)
        return cache[name]

    return get


def test_rae_selects_hare_hare_and_lowers_variance(outputs):
    out = outputs("rae")
    # risk-averse PSRO on the sequential trust dilemma ends at (Hare, Hare)
    final = pd.read_csv(out / "psro_final_policy.csv")
    np.testing.assert_allclose(final["p_stag"], 0.0, atol=1e-6)
    history = pd.read_csv(out / "psro_trust_dilemma_history.csv")
    assert history["gap"].iloc[-1] <= 1e-9
    # stag hunt: from the uniform start every risk aversion picks hare; from 0.75 stag, which is in
    # Stag's basin for Nash dynamics (the mixed NE plays stag w.p. 2/3), gamma = 0 stays at stag and
    # any gamma >= 0.1 moves to hare
    sh = pd.read_csv(out / "stag_hunt_rae.csv")
    assert (sh[sh.start_p_stag == 0.5][["p_stag_0", "p_stag_1"]].to_numpy() < 1e-6).all()
    at75 = sh[sh.start_p_stag == 0.75].set_index("risk_aversion")
    assert at75.loc[0.0, "p_stag_0"] > 1 - 1e-6
    assert (at75.loc[at75.index >= 0.1, ["p_stag_0", "p_stag_1"]].to_numpy() < 1e-6).all()
    # chicken's symmetric mixed NE plays straight w.p. 1/C (hand-derived); RAE's variance is below it
    games = pd.read_csv(out / "matrix_games.csv")
    for name, grp in games.groupby("game"):
        mixed = grp[grp.solution.str.startswith("NE") & (grp.total_variance_0 > 0)]
        rae = grp[grp.solution.str.startswith("RAE")]
        assert len(mixed) == 1 and len(rae) == 1
        assert rae.total_variance_0.iloc[0] < mixed.total_variance_0.iloc[0]
        assert rae.p_worst_outcome.iloc[0] < mixed.p_worst_outcome.iloc[0]
        if name.startswith("chicken"):
            crash = float(name.split("C=")[1].rstrip(")"))
            assert mixed.p_worst_outcome.iloc[0] == pytest.approx(1 / crash ** 2)


def test_response_graph_ucb_and_mass_bounds(outputs):
    out = outputs("alpharank_incomplete_info")
    t = pd.read_csv(out / "response_graph_ucb.csv")
    assert t.resolved.all()
    bern = t[t.game.str.startswith("bernoulli")]
    assert (bern.wrong_edges == 0).all()   # gap 0.1, delta <= 0.1 per payoff, fixed seed
    med = bern.groupby(["bound", "delta"]).samples.median().unstack("delta")
    assert (med[0.01] >= med[0.1]).all()    # more confidence needs more samples
    assert med.loc["clopper-pearson"].sum() < med.loc["hoeffding"].sum()
    m = pd.read_csv(out / "alpharank_mass_intervals.csv")
    assert (m.outer_lower <= m.point + 1e-9).all() and (m.point <= m.outer_upper + 1e-9).all()
    width = (m.outer_upper - m.outer_lower).groupby(m.samples_per_profile).mean()
    assert width.iloc[-1] < width.iloc[0]   # intervals shrink as samples grow


def test_rrps_rankings_and_live_table(outputs):
    out = outputs("rrps_population_eval")
    ranks = pd.read_csv(out / "rankings.csv")
    # Lanctot et al. (2023): alpha-Rank (alpha = 10) of the published table puts these three first
    assert ranks.sort_values("alpharank_mass", ascending=False).bot.head(3).tolist() == [
        "iocainebot", "greenberg", "shofar"]
    assert ranks.alpharank_mass.sum() == pytest.approx(1.0)
    live = pd.read_csv(out / "live_vs_published.csv")
    assert np.corrcoef(live.published, live.live_mean)[0, 1] > 0.99
    assert live.within_3se.mean() >= 0.8
    measures = pd.read_csv(out / "population_measures.csv")
    assert (measures.within_population_exploitability == -measures.worst_case_return).all()
    rockbot = measures.set_index("bot").loc["rockbot"]
    assert rockbot.worst_case_return < -990   # paper's table: rockbot loses nearly every throw to some bot


def test_psro_vs_openspiel_curves(outputs):
    out = outputs("psro_vs_openspiel")
    curves = pd.read_csv(out / "nashconv_vs_time.csv")
    assert set(curves.game) == {"kuhn_poker", "leduc_poker"}
    assert curves.implementation.nunique() == 2
    ours = curves[(curves.implementation == "ours") & (curves.game == "kuhn_poker")]
    assert ours.nash_conv.iloc[-1] < 1e-6     # PSRO with exact best responses solves Kuhn poker
    assert ours.nash_conv.iloc[0] == pytest.approx(0.916667, abs=1e-6)  # the uniform policy's NashConv


def test_jpsro_quick(tmp_path):
    out = run_quick("jpsro", tmp_path / "jpsro")
    curves = pd.read_csv(out / "gap_curves.csv")
    assert {"kuhn_poker(players=3)", "sheriff"} <= set(curves.game)
    assert set(curves.meta_solver) == {"uniform", "alpharank", "MGCCE", "MWCCE", "MGCE", "MWCE"}
    # iteration 0 is the single all-uniform profile: every meta-solver's meta-distribution is the same point
    # mass, and for one profile the CCE gap, the CE gap and NashConv coincide
    first = curves[curves.iteration == 0]
    for _, grp in first.groupby("game"):
        np.testing.assert_allclose(grp.cce_gap, grp.cce_gap.iloc[0], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(grp.own_gap, grp.cce_gap, rtol=1e-9, atol=1e-12)
    assert (curves.cce_gap >= -1e-9).all()
    ce = curves[curves.own_gap_kind == "ce"]
    assert (ce.cce_gap <= ce.own_gap + 1e-9).all()   # every CE is a CCE: the CCE gap is the smaller
    kuhn = curves[curves.game == "kuhn_poker(players=3)"].set_index(["meta_solver", "iteration"]).cce_gap
    last = min(kuhn.loc["MGCCE"].index.max(), kuhn.loc["uniform"].index.max())
    assert last >= 2
    assert kuhn.loc[("MGCCE", last)] < kuhn.loc[("uniform", last)]
    assert kuhn.loc[("MGCCE", last)] < kuhn.loc[("MGCCE", 0)]


def test_readme_results_fills_the_page(tmp_path):
    # readme_results.py: fills the block between the markers of a page from a fake summary, idempotently
    results = tmp_path / "results"
    (results / "fake").mkdir(parents=True)
    (results / "fake" / "summary.md").write_text(
        "# Fake paper\n\nintro\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nrest\n")
    page = tmp_path / "results.md"
    page.write_text("# Project\n\nbefore\n\n<!-- reproductions:start -->\nstale\n<!-- reproductions:end -->\n"
                    "\nafter\n")
    cmd = ["--page", str(page), "--results", str(results)]
    check = cmd + ["--check"]
    assert run_module("readme_results", *check) == 1     # stale block: out of date
    assert run_module("readme_results", *cmd) == 0
    text = page.read_text()
    block = text.split("<!-- reproductions:start -->")[1].split("<!-- reproductions:end -->")[0]
    assert "### Fake paper" in block and "| 1 | 2 |" in block
    assert "Full summary: [results/fake/summary.md](results/fake/summary.md)." in block   # inside: a link
    assert "stale" not in block and "intro" not in block and "rest" not in block
    assert text.startswith("# Project\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert run_module("readme_results", *cmd) == 0
    assert page.read_text() == text                                        # idempotent
    assert run_module("readme_results", *check) == 0
    (results / "fake" / "summary.md").write_text("# Fake paper\n\n| a |\n|---|\n| 9 |\n")
    assert run_module("readme_results", *check) == 1
    assert page.read_text() == text                                        # --check writes nothing
    assert run_module("readme_results", "--readme", str(page), "--results", str(results), "--check") == 1  # old name

    # a page in a folder beside the results (docs/results.md and experiments/): the summary in a code span, since
    # MkDocs rejects links out of its docs folder
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "results.md").write_text("<!-- reproductions:start -->\n<!-- reproductions:end -->\n")
    assert run_module("readme_results", "--page", str(docs / "results.md"), "--results", str(results)) == 0
    text = (docs / "results.md").read_text()
    assert f"Full summary: `{(results / 'fake' / 'summary.md').resolve().as_posix()}`." in text and "](" not in text


def test_the_results_page_is_current():
    # the committed block of docs/results.md matches the committed summaries
    assert run_module("readme_results", "--check") == 0


def test_only_default_runs_write_committed_results(tmp_path, monkeypatch):
    from experiments import harness

    monkeypatch.setattr(harness, "SCRATCH", tmp_path / "runs")
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    committed = ROOT / "experiments" / "benchmarks" / "results" / "solvers.md"

    # every option at its default: the committed file
    assert harness.output_path(parser, parser.parse_args([]), committed) == committed
    # --quick, or any other option changed: the same name in a fresh folder under runs/, never the committed file
    for argv in (["--quick"], ["--repeats", "2"], ["--quick", "--repeats", "5"]):
        path = harness.output_path(parser, parser.parse_args(argv), committed)
        assert path != committed and path.name == "solvers.md"
        assert path.parent.parent == tmp_path / "runs" and path.parent.is_dir()
        assert path.parent.name.startswith("solvers-")
    # an explicit --out wins, also for a --quick run
    mine = tmp_path / "mine.md"
    assert harness.output_path(parser, parser.parse_args(["--quick", "--out", str(mine)]), committed) == mine
    assert harness.changed_options(parser, parser.parse_args(["--repeats", "2", "--out", "x"])) == ["repeats"]


def test_quick_scripts_default_to_a_scratch_folder():
    # every script that writes under results/ routes its default output through output_path (or the reproductions'
    # parse_args, which does): none keeps a committed path as an argparse default or writes it unconditionally
    scripts = sorted((ROOT / "experiments" / "benchmarks").glob("*.py")) + [SCRIPTS / "common.py",
                                                                             ROOT / "experiments" / "harness.py"]
    for script in scripts:
        text = script.read_text()
        if script.name == "mgce_jpsro_metagames.py" or "results" not in text or "write" not in text:
            continue
        assert "output_path(" in text or "def output_path" in text, f"{script.name} writes results directly"


def test_fxp_reaches_001_where_self_play_stays_at_c(outputs):
    out = outputs("fxp")
    finals = pd.read_csv(out / "final.csv")
    fxp, sp = finals[finals.algorithm == "FXP"], finals[finals.algorithm == "SP"]
    assert len(fxp) and len(sp)
    assert (fxp["final_team_exploitability"] <= 0.01).all() and (fxp["seconds_to_0.01"] <= 60).all()
    assert (sp["final_team_exploitability"] >= 0.05).all()
    assert set(pd.read_csv(out / "curves.csv")["algorithm"]) == {"SP", "FSP", "PSRO", "FXP"}


def test_minimax_exploiter_quick(outputs):
    out = outputs("minimax_exploiter")
    steps = pd.read_csv(out / "steps_to_80.csv")
    assert {"dqn", "minimax a=0.25"} <= set(steps["exploiter"])   # the library's default alpha is the bar's variant
    curve = pd.read_csv(out / "win_rate_vs_steps.csv")
    assert ((curve["win_rate"] + curve["loss_rate"]) <= 1 + 1e-12).all() and (curve["win_rate"] >= 0).all()
    assert (out / "tic_tac_toe_exploiter_first" / "main_agent.npz").is_file()


def test_minimax_exploiter_ceiling_against_a_perfect_player_is_zero():
    # tic-tac-toe is a draw under perfect play: no policy of either seat ever beats the perfect player, while
    # its epsilon = 1 version (uniform moves) loses to the first player's best response nearly always
    from experiments.reproduce import minimax_exploiter as m

    g = m.ObservationGame("tic_tac_toe")
    perfect_0, perfect_1, uniform_0, uniform_1 = [m.best_response_win_rate(g, m.PerfectPlayer(g, e), seat)
                                                  for e in (0.0, 1.0) for seat in (0, 1)]
    assert perfect_0 == 0.0 and perfect_1 == 0.0
    assert 0.9 < uniform_1 < uniform_0 < 1.0   # moving first is worth more against uniform play


def test_offline_psro_bar_cases(outputs):
    table = pd.read_csv(outputs("offline_psro") / "offline_psro.csv")
    bar = table[(table.game == "leduc") & (table.behaviour == "uniform") & (table.episodes == 1000)].pivot(
        index="seed", columns="method", values="true_nash_conv")
    assert len(bar) >= 2
    assert (bar.coffee_psro < bar.offline_psro).all() and (bar.coffee_psro < bar.behaviour_cloning).all()
    # the pessimistic gap is an upper bound of the true gap wherever it is reported
    assert (table["pessimistic_gap"] >= table["true_nash_conv"] - 1e-9).all()


def test_league_vs_psro_runs_every_algorithm_on_equal_steps(outputs):
    out = outputs("league_vs_psro")
    final = pd.read_csv(out / "final.csv")
    assert set(final.algorithm) == {"League", "NFSP", "FSP", "FXP", "PSRO"}
    leduc = final[final.game == "leduc_poker"]
    assert (leduc.learner_steps >= 7168).all()   # every algorithm spent at least the quick budget of learner steps
    assert (leduc.nash_conv < 4.7472).all()   # every output below the uniform policy's NashConv (4.7472)
    assert (out / "cross_play.csv").is_file()


def test_rectified_psro_gamescape_and_its_stall(outputs):
    out = outputs("rectified_psro")
    curves = pd.read_csv(out / "curves.csv")
    last = curves.sort_values("iteration").groupby(["game", "seed", "algorithm"]).tail(1).set_index(
        ["game", "seed", "algorithm"])
    # the counterexample (hand-derived): PSRO-rN stops at {R, P, S} with exploitability 2a = 0.5, PSRO-N reaches X
    cex = "rps_plus_x(a=0.25)"
    assert last.loc[(cex, 0, "PSRO-rN"), "exploitability"] == pytest.approx(0.5, abs=1e-12)
    assert last.loc[(cex, 0, "PSRO-rN"), "population"] == 3
    assert last.loc[(cex, 0, "PSRO-N"), "exploitability"] == pytest.approx(0.0, abs=1e-12)
    # Kuhn poker: PSRO-rN stalls above 0.14 where PSRO-N converges
    assert last.loc[("kuhn_poker", 0, "PSRO-rN"), "exploitability"] > 0.14
    assert last.loc[("kuhn_poker", 0, "PSRO-N"), "exploitability"] < 1e-9
    # the disc game: PSRO-rN's gamescape is at least PSRO-N's on every seed
    disc = last.loc["disc_game(30)"]
    for seed in disc.index.get_level_values(0).unique():
        assert disc.loc[(seed, "PSRO-rN"), "gamescape_area"] >= disc.loc[(seed, "PSRO-N"), "gamescape_area"]
    relative = pd.read_csv(out / "relative_performance.csv")
    assert set(relative["game"]) == {"disc_game(30)", "skill_game(30, noise=1)"}


def test_diverse_psro_runs_every_variant_at_equal_iterations(outputs):
    out = outputs("diverse_psro")
    curves = pd.read_csv(out / "curves.csv")
    assert set(curves["variant"]) == {"PSRO", "DPP w=0.5", "DPP w=2", "unified w=0.5", "DPP w=1", "unified w=1"}
    for _, frame in curves.groupby(["game", "seed"]):
        assert frame.groupby("variant")["iteration"].max().nunique() == 1   # equal iterations
        first = frame[frame.iteration == 0]
        assert np.allclose(first["exploitability"], first["exploitability"].iloc[0], rtol=0, atol=1e-12)
    assert np.isfinite(curves["exploitability"]).all() and (curves["expected_cardinality"] >= 0).all()
    final = pd.read_csv(out / "final.csv")
    assert {"exploitability", "expected_cardinality"} <= set(final.columns)


def test_anytime_psro_never_increases_where_psro_does(outputs):
    out = outputs("anytime_psro")
    table = pd.read_csv(out / "per_game.csv")
    anytime, psro = table[table.algorithm != "PSRO"], table[table.algorithm == "PSRO"]
    assert len(anytime) == 2 * len(psro) == 8 and (anytime["increases"] == 0).all()
    assert (psro[psro.game.str.startswith("random")]["increases"] > 0).sum() >= 2
    finals = table.pivot(index="game", columns="algorithm", values="final_gap")
    assert (finals["anytime PSRO"] < finals["PSRO"]).all()
    assert (finals["anytime PSRO"] <= finals["anytime PSRO (repeated: keep)"] + 1e-12).all()


def test_self_play_psro_quick(outputs):
    out = outputs("self_play_psro")
    curves = pd.read_csv(out / "curves.csv")
    exact = curves[curves["mode"] == "exact"]
    finals = exact.groupby("algorithm")["gap"].last()
    assert finals["self-play PSRO"] < finals["anytime PSRO"] < finals["PSRO"]
    for (_, name), curve in curves.groupby(["mode", "algorithm"]):
        if name != "PSRO":   # (the restricted distributions are exact over the tabularised members in both modes)
            assert (np.diff(curve["gap"].to_numpy()) <= 1e-9).all()
    assert set(curves["mode"]) == {"exact", "learned (ppo)"} and np.isfinite(curves["gap"]).all()


def test_symmetric_psro_reaches_the_gap_of_two_populations_at_half_the_oracle_calls(outputs):
    out = outputs("symmetric_psro")
    finals = pd.read_csv(out / "final.csv")
    sym, two = (finals[finals.loop == loop].set_index(["game", "seed"]) for loop in ("symmetric", "two populations"))
    assert len(sym) == len(two) >= 4 and (sym["populations"] == 1).all() and (two["populations"] == 2).all()
    assert (finals["final_exploitability"] <= 1e-6).all()   # both loops reach the gap on every game, blotto too
    assert (sym["oracle_calls"] <= 0.5 * two["oracle_calls"]).all()
    assert (sym["evaluations"] < two["evaluations"]).all()
    assert "## The bar" in (out / "summary.md").read_text()


def test_xdo_needs_five_times_fewer_iterations_than_psro_on_leduc(outputs):
    out = outputs("xdo_vs_psro")
    reach = pd.read_csv(out / "reach.csv")
    leduc = reach[(reach.game == "leduc_poker") & (reach.nash_conv == 0.01)].iloc[0]
    assert leduc.xdo_iterations * 5 <= leduc.psro_iterations
    curves = pd.read_csv(out / "curves.csv")
    assert set(curves.algorithm) == {"PSRO", "XDO"} and set(curves.game) == {"kuhn_poker", "leduc_poker"}
    assert (curves.groupby(["game", "algorithm"]).gap.min() <= 0.01).all()
    assert (out / "nash_conv.png").is_file() and "**yes**" in (out / "summary.md").read_text()
