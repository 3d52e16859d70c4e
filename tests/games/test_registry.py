"""games.registry: one registry helper (the same verbs and second-registration rule everywhere) and the import rule
for ``module:name`` (a name from a checkpoint or run directory imports only allowed modules)."""

import sys

import pytest

from games.registry import (
    IMPORT_VARIABLE,
    Registry,
    allow_imports,
    allowed_modules,
    from_untrusted_file,
    import_named,
    split_name,
)


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A package ``reg_user`` outside the library whose module registers ``"double"`` in ``TABLE`` on import."""
    (tmp_path / "reg_user").mkdir()
    (tmp_path / "reg_user" / "__init__.py").write_text("")
    (tmp_path / "reg_user" / "things.py").write_text(
        "from tests_registry_table import TABLE\nTABLE.register('double', lambda x: 2 * x)\nTRIPLE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(IMPORT_VARIABLE, "")   # (restored after the test: allow_imports writes it)
    table = Registry("thing", hint="Register one with TABLE.register(name, f).",
                     adopt=lambda name, obj: ("adopted", obj))
    module = type(sys)("tests_registry_table")
    module.TABLE = table
    monkeypatch.setitem(sys.modules, "tests_registry_table", module)
    yield table
    for name in ("reg_user.things", "reg_user"):
        sys.modules.pop(name, None)


def test_the_same_verbs_and_rule_for_a_second_registration():
    table = Registry("thing", hint="Register one.")
    f, g = (lambda: 1), (lambda: 2)
    assert table.register("a", f) is f and table.register("a", f) is f   # the same entry again: no change
    with pytest.raises(ValueError, match="thing 'a' is already registered; pass replace=True"):
        table.register("a", g)
    assert table.register("a", g, replace=True) is g and table.get("a") is g
    assert table.names() == ["a"] == list(table) and "a" in table and "b" not in table
    table.unregister("a")
    table.unregister("a")   # (nothing to remove: no error)
    with pytest.raises(ValueError, match=r"thing must be one of \[\] or 'module:name'; got 'a'"):
        table.get("a")
    with pytest.raises(TypeError, match="non-empty string"):
        table.register(" ", f)


def test_module_name_imports_the_module_which_registers_the_name(user_module):
    assert "reg_user.things" not in sys.modules
    assert user_module.get("reg_user.things:double")(4) == 8   # imported on demand, found by its short name
    assert "reg_user.things" in sys.modules
    assert user_module.get("reg_user.things:TRIPLE") == ("adopted", 3)   # an attribute it did not register: adopted
    with pytest.raises(ValueError, match="importing reg_user.things registered no thing named .*'nothing'"):
        Registry("thing", hint="Register one.").get("reg_user.things:nothing")


def test_a_name_from_a_file_imports_only_allowed_modules(user_module):
    with from_untrusted_file():
        with pytest.raises(ValueError, match=r"thing: 'reg_user.things' was named by a checkpoint .*--import reg_user"):
            user_module.get("reg_user.things:double")
        assert "reg_user.things" not in sys.modules   # nothing ran
        assert import_named("psro.loop.algorithms").__name__ == "psro.loop.algorithms"   # the library's own modules
        allow_imports("reg_user")
        assert allowed_modules() == ["reg_user"]
        assert user_module.get("reg_user.things:double")(1) == 2
    with pytest.raises(ValueError, match="not a module name"):
        allow_imports("reg_user; rm")


def test_a_missing_module_and_a_broken_one_are_told_apart(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="thing: cannot import 'no_such_module_xyz'.*PYTHONPATH"):
        import_named("no_such_module_xyz", field="thing")
    (tmp_path / "reg_broken.py").write_text("import no_such_dependency_xyz\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError, match="no_such_dependency_xyz"):   # its own error, not "cannot import"
        import_named("reg_broken")


def test_split_name():
    assert split_name("a.b:c") == ("a.b", "c")
    assert split_name("catalog") == (None, "catalog") and split_name("x:") == (None, "x:")
    assert split_name("kuhn_poker(players=3)") == (None, "kuhn_poker(players=3)")


def test_a_definition_run_again_replaces_itself():
    table = Registry("thing", hint="Register one.")
    namespace: dict = {}
    for value in (1, 2):   # the same cell run twice: a new function of the same module and name
        exec(f"def f():\n    return {value}\n", namespace)
        table.register("f", namespace["f"])
    assert table.get("f")() == 2
    with pytest.raises(ValueError, match="already registered"):
        table.register("f", lambda: 3)   # another definition
