"""The run directory's files: written atomically, never through a link, and read back by ``psro report`` with a
clear error for anything damaged or hostile; its plot draws approx_gap as what it is (a lower bound with error bars,
at its value)."""

import shutil

import numpy as np
import pandas as pd
import pytest
import yaml

from psro import PSRO, PSROConfig
from psro.run.cli import main
from psro.run.run_dir import history_figure, write_report, write_run
from psro.run.run_files import UnsafePath

OUTPUTS = ("config.yaml", "history.csv", "meta_strategy.json", "meta_game.npz", "population.npz", "nash_conv.png",
           "report.md")


@pytest.fixture(scope="module")
def solver():
    solver = PSRO("kuhn_poker", progress=False)
    solver.run(iterations=1)
    return solver


@pytest.fixture(scope="module")
def written(tmp_path_factory, solver):
    run = tmp_path_factory.mktemp("written") / "run"
    write_run(run, PSROConfig(game="kuhn_poker", iterations=1, name="kuhn"), solver)
    return run


@pytest.fixture
def run(tmp_path, written):
    copy = tmp_path / "run"
    shutil.copytree(written, copy)
    return copy


def one_error_line(capsys, command="report"):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"psro {command}: error: "), err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize("name", OUTPUTS)
def test_a_link_at_any_output_is_refused_and_nothing_written_through_it(tmp_path, solver, name):
    victim = tmp_path / "victim"
    victim.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    (run / name).symlink_to(victim)
    with pytest.raises(UnsafePath, match="symbolic link"):
        write_run(run, PSROConfig(game="kuhn_poker", iterations=1), solver)
    assert victim.read_text() == "precious"
    assert (run / name).is_symlink()


def test_the_planted_command_case_writes_nothing_through_the_link(run, tmp_path, capsys):
    startup = tmp_path / "bashrc"
    startup.write_text("# a shell start-up file\n")
    (run / "report.md").unlink()
    (run / "report.md").symlink_to(startup)
    config = yaml.safe_load((run / "config.yaml").read_text())
    (run / "config.yaml").write_text(yaml.safe_dump({**config, "name": "x\ntouch PWNED #"}))
    assert main(["report", str(run)]) == 2
    assert "name" in one_error_line(capsys)
    assert startup.read_text() == "# a shell start-up file\n"
    (run / "config.yaml").write_text(yaml.safe_dump(config))   # a valid name: the link itself is refused
    assert main(["report", str(run)]) == 2
    assert "symbolic link" in one_error_line(capsys)
    assert startup.read_text() == "# a shell start-up file\n"


@pytest.mark.parametrize("field, value", [("name", "../../x"), ("name", "a/b"), ("game", "kuhn_poker\n# injected"),
                                          ("meta_solver", "nash\x1b[2J")])
def test_strings_copied_into_the_report_are_plain(run, capsys, field, value):
    config = yaml.safe_load((run / "config.yaml").read_text())
    (run / "config.yaml").write_text(yaml.safe_dump({**config, field: value}))
    assert main(["report", str(run)]) == 2
    assert field in one_error_line(capsys)


@pytest.mark.parametrize("text", ['name: !!python/object/apply:os.system ["touch PWNED"]\n',
                                  "game: !custom kuhn_poker\n", "iterations: !!binary aGVsbG8=\n"])
def test_report_on_a_config_with_a_yaml_tag_is_a_clear_error(run, capsys, text):
    (run / "config.yaml").write_text(text)
    assert main(["report", str(run)]) == 2
    one_error_line(capsys)
    assert not (run / "PWNED").exists()


def test_report_on_a_truncated_or_wrongly_columned_history_is_a_clear_error(run, capsys):
    text = (run / "history.csv").read_text()
    cases = {"truncated": text[: len(text) // 2 + 7], "wrong columns": "a,b,c\n1,2,3\n", "empty": "",
             "no rows": text.splitlines()[0] + "\n", "binary": "\x00\xff\x00 garbage\n"}
    for case, content in cases.items():
        (run / "history.csv").write_text(content)
        assert main(["report", str(run)]) == 2, case
        assert "history.csv" in one_error_line(capsys), case


def test_report_rewrites_an_intact_run(run):
    before = (run / "report.md").read_text()
    assert write_report(run).read_text() == before
    assert before.startswith("# PSRO run: kuhn")


NO_TREE = pd.DataFrame({"iteration": [0, 1, 2, 3], "gap": [np.nan] * 4, "wall_time": [1.0, 2.0, 3.0, 4.0],
                        "approx_gap": [1.5, np.nan, -0.2, 0.0], "approx_gap_stderr": [0.1, np.nan, 0.15, 0.05]})


def test_approx_gap_is_drawn_at_its_value_with_two_se_error_bars():
    fig = history_figure(NO_TREE)
    for ax in fig.axes:
        (container,) = ax.containers   # one errorbar per panel
        x, y = container.lines[0].get_data()
        assert list(y) == [1.5, -0.2, 0.0]                  # negative and zero values where they are, no floor
        segments = container.lines[2][0].get_segments()
        assert [round(s[1][1] - s[0][1], 12) for s in segments] == [0.4, 0.6, 0.2]   # +- 2 se
        assert ax.get_legend().get_texts()[0].get_text() == "approx_gap (lower bound, +- 2 se)"
    assert [list(c.lines[0].get_data()[0]) for c in (ax.containers[0] for ax in fig.axes)] == [[0, 2, 3],
                                                                                              [1.0, 3.0, 4.0]]
    assert fig.axes[0].get_yscale() == "symlog" and fig.axes[0].get_ylim()[0] < -0.2


def test_exact_gap_alone_keeps_the_log_axis():
    fig = history_figure(pd.DataFrame({"iteration": [0, 1], "gap": [1.0, 0.0], "wall_time": [0.1, 0.2]}))
    assert fig.axes[0].get_yscale() == "log"
    assert list(fig.axes[0].lines[0].get_ydata()) == [1.0, 1e-16]   # an exact 0 at the floor of the log axis
    assert not fig.axes[0].containers


def test_a_huge_sparse_history_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from psro.run.run_dir import write_report

    monkeypatch.setenv("PSRO_MAX_MEMORY", "1M")
    with open(tmp_path / "history.csv", "wb") as fh:
        fh.truncate(64 * 2**20)
    with pytest.raises(ValueError, match="history.csv.*memory limit of 1 MiB"):
        write_report(tmp_path)
