"""Old import paths and names, kept for one release: each resolves, with a DeprecationWarning naming its new home
(CHANGELOG.md lists them).

- :data:`MOVED`: the modules that sat at the root of ``psro/`` before it was laid out by concept; importing an old
  path gives the new module itself (one object under both names), through a finder :func:`install` puts at the end
  of ``sys.meta_path`` (it answers only names nothing else finds);
- :func:`moved_names`: the ``__getattr__`` of a module for the names it re-exported before;
- :func:`renamed_names`: the ``__getattr__`` of a module for the old names of its renamed objects;
- :func:`package_names`: the ``__getattr__`` of a package that was a module before (``psro.config``,
  ``psro.loop``).
"""

import sys

MOVED = {
    "psro.config_checks": "psro.config.checks", "psro.config_fields": "psro.config.fields",
    "psro.config_game": "psro.config.game", "psro.config_sections": "psro.config.sections",
    "psro.training_loop": "psro.loop.training", "psro.loop_measures": "psro.loop.measures",
    "psro.loop_requirements": "psro.loop.requirements", "psro.state": "psro.loop.state",
    "psro.seating": "psro.loop.seating", "psro.selection": "psro.loop.selection",
    "psro.algorithms": "psro.loop.algorithms", "psro.symmetric_games": "psro.loop.symmetric_games",
    "psro.metrics": "psro.measures.metrics", "psro.efce_gaps": "psro.measures.efce_gaps",
    "psro.approximate_gap": "psro.measures.approximate_gap",
    "psro.approx_gap_settings": "psro.measures.approx_gap_settings",
    "psro.approx_gap_schedule": "psro.measures.approx_gap_schedule",
    "psro.local_best_response": "psro.measures.local_best_response",
    "psro.reference_opponents": "psro.measures.reference_opponents",
    "psro.game_tree": "psro.sequence_form.game_tree", "psro.matrix_game": "psro.sequence_form.matrix_game",
    "psro.team_view": "psro.sequence_form.team_view", "psro.population": "psro.policies.population",
    "psro.analysis": "psro.run.analysis", "psro.learning_curves": "psro.run.learning_curves",
    "psro.loggers": "psro.run.loggers", "psro.double_oracle_search": "psro.variants.double_oracle_search",
    "psro.openspiel_policy": "psro.policies.openspiel",
}
"""Old module path -> where the module lives now."""


def moved_names(module: str, names: dict):
    """The ``__getattr__`` of a module for the names it re-exported before (``{name: the module defining it}``):
    each still resolves, with a DeprecationWarning naming where to import it from (CHANGELOG.md).

    Examples
    --------
    >>> import warnings
    >>> getattr_ = moved_names("psro.example", {"PSROConfig": "psro.config.model"})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     getattr_("PSROConfig").__name__, str(caught[0].message).split(": ")[1]
    ('PSROConfig', 'import it from psro.config.model.')
    """
    import importlib

    return _warning_getattr(module, names, lambda name: f"import it from {names[name]}",
                            lambda name: getattr(importlib.import_module(names[name]), name))


def renamed_names(module: str, names: dict):
    """The ``__getattr__`` of a module for the names its objects had before a rename (``{old name: new name}``):
    each old name still resolves to the same object, with a DeprecationWarning naming the new one (CHANGELOG.md).

    Examples
    --------
    >>> import warnings
    >>> getattr_ = renamed_names("psro.deprecation", {"moved": "moved_names"})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     getattr_("moved").__name__, str(caught[0].message).split(": ")[1]
    ('moved_names', 'it is psro.deprecation.moved_names.')
    """
    return _warning_getattr(module, names, lambda name: f"it is {module}.{names[name]}",
                            lambda name: getattr(sys.modules[module], names[name]))


def _warning_getattr(module: str, names, instead, resolve):
    """A module's ``__getattr__`` answering ``names`` with ``resolve(name)`` and a DeprecationWarning that says
    ``instead(name)``; any other name is an AttributeError."""
    def __getattr__(name: str):
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        import warnings

        warnings.warn(f"{module}.{name} is deprecated and goes in the next release: {instead(name)}.",
                      DeprecationWarning, stacklevel=2)
        return resolve(name)

    return __getattr__


def package_names(package: str, module: str, exported):
    """The ``__getattr__`` of a package that was the module ``module`` before: its public names first
    (``exported``, lazy_loader's ``__getattr__``), then any other name ``module`` has, with a DeprecationWarning
    naming it (CHANGELOG.md). Dunders and the package's submodules are left to the import system.
    """
    import os

    folder = os.path.join(os.path.dirname(__file__), *package.split(".")[1:])

    def __getattr__(name: str):
        try:
            return exported(name)
        except AttributeError:
            if name.startswith("__") or os.path.exists(os.path.join(folder, f"{name}.py")):
                raise
            import importlib
            import warnings

            home = importlib.import_module(module)
            if not hasattr(home, name):
                raise
            warnings.warn(f"{package}.{name} is deprecated and goes in the next release: import it from {module}.",
                          DeprecationWarning, stacklevel=2)
            return getattr(home, name)

    return __getattr__


class _MovedModules:
    """The import system's last resort for :data:`MOVED`: the old name is bound to the new module, with a warning."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in MOVED:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(name, _MovedModules)

    @staticmethod
    def create_module(spec):
        import importlib
        import warnings

        warnings.warn(f"{spec.name} is deprecated and goes in the next release: import from {MOVED[spec.name]}.",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(MOVED[spec.name])

    @staticmethod
    def exec_module(module):
        pass


def install() -> None:
    """Put the finder of :data:`MOVED` at the end of ``sys.meta_path`` (once)."""
    if not any(getattr(finder, "__name__", None) == "_MovedModules" for finder in sys.meta_path):
        sys.meta_path.append(_MovedModules)
