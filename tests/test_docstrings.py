"""Every public function and class of the library has a docstring, and every docstring example runs."""

import doctest
import importlib
import inspect
import pkgutil

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

PACKAGES = ["games", "solvers", "ranking", "psro"]


def all_modules():
    names = []
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        names.append(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=pkg_name + "."):
            if info.name.endswith("__main__"):
                continue
            names.append(info.name)
    return names


@pytest.mark.parametrize("module_name", all_modules())
def test_doctests_run(module_name):
    module = importlib.import_module(module_name)
    saved = np.get_printoptions()
    np.set_printoptions(legacy="1.25")  # print numpy scalars as plain numbers, as the examples show
    try:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    finally:
        np.set_printoptions(**saved)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {module_name}"


@pytest.mark.parametrize("module_name", all_modules())
def test_public_api_is_documented(module_name):
    module = importlib.import_module(module_name)
    public = getattr(module, "__all__", None)
    if public is None:
        return
    missing = [
        name for name in public
        if (inspect.isfunction(getattr(module, name, None)) or inspect.isclass(getattr(module, name, None)))
        and not inspect.getdoc(getattr(module, name))
    ]
    assert not missing, f"{module_name}: public names without a docstring: {missing}"
