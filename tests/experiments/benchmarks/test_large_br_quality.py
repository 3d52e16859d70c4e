"""The large-game response-quality benchmark: its run's measured rows and its candidates' exact errors."""

import math

import pytest

from experiments.benchmarks import large_br_quality as bench


@pytest.mark.slow
def test_a_small_run_and_its_candidates_are_measured_exactly(tmp_path):
    pytest.importorskip("numba")
    from psro.measures.exact import exact_nash_conv, mixture_profile
    from psro.measures.reference_opponents import final_run

    run_dir = bench.make_run(bench.CONFIG, tmp_path / "run", seed=3, iterations=4, every=2,
                             game="dark_hex(num_rows=2,num_cols=2)")
    curve = bench.along_the_run(run_dir)
    assert curve["iteration"].tolist() == [2, 4] and (curve[["response_error_0", "response_error_1"]] >= 0).all().all()
    rows, result = bench.candidate_errors(run_dir, bench.QUICK_CANDIDATES, train_seed=1)
    assert [r["setting"] for r in rows] == list(bench.QUICK_CANDIDATES)
    solver, game, _, strategy = final_run(run_dir)
    assert result.nash_conv == pytest.approx(exact_nash_conv(
        game, mixture_profile(solver.seat_populations(), strategy.marginals)).nash_conv, rel=1e-12)
    for row in rows:   # each error: at least 0, at most what a best response could gain over the worst play
        for p in (0, 1):
            assert 0.0 <= row[f"error_{p}"] <= 2.0 and row[f"cpu_s_{p}"] > 0 and not math.isnan(row[f"error_{p}"])
