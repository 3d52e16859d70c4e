"""The configuration of a run, by part: the typed config (:mod:`psro.config.model`, :class:`PSROConfig`), its checks
(:mod:`psro.config.checks`), its fields' help and the command line's view of them (:mod:`psro.config.fields`), the
game it names (:mod:`psro.config.game`) and the sections its help groups the fields in
(:mod:`psro.config.sections`).

The public names of :mod:`psro.config.model` load on first use (PEP 562, through ``lazy_loader``).

>>> from psro.config import PSROConfig
>>> PSROConfig(game="kuhn_poker").oracle
'exact'
"""

import lazy_loader

from psro.deprecation import package_names

_exported, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={"model": ["PSROConfig", "CHOICES", "check_teams", "FieldHelp", "choices", "field_help",
                            "with_field", "algorithm_options", "resolve_run_game", "is_environment_game",
                            "num_players", "spec_kept"]},
)


#: The public names above; any other name the module ``psro.config`` had (before it became this package) still
#: resolves, from :mod:`psro.config.model`, with a DeprecationWarning (CHANGELOG.md)
__getattr__ = package_names(__name__, "psro.config.model", _exported)
