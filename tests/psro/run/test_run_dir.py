"""The run directory's files: written atomically, never through a link, and read back by ``psro report`` with a
clear error for anything damaged or hostile."""

import shutil

import pytest
import yaml

from psro import PSRO, PSROConfig
from psro.run.cli import main
from psro.run.run_dir import write_report, write_run
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
