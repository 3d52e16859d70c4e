"""One registry helper for every name a config can give: solvers, meta-solvers, oracles, evaluators, training
loops, policy kinds and games.

A :class:`Registry` maps names to entries with the same verbs everywhere
(``register``, ``unregister``, ``names``, ``get``, ``in``) and the same rule
for a second registration: registering a taken name raises ``ValueError``
unless ``replace=True`` is passed or the entry is the same one again (equal,
or the same definition re-run: its functions and classes of the same module
and qualified name, as when a notebook cell runs twice; it then replaces the
old one).

A name ``"package.module:name"`` is found on demand: :meth:`Registry.get`
imports ``package.module`` (which registers its entries when imported) and
answers the entry registered as ``"package.module:name"`` or as ``"name"``
(when the registry has an ``adopt`` hook, an attribute ``name`` of the module
that registered nothing is adopted as the entry). So ``psro run``, process-pool
and Ray workers find user code by name alone.

Importing runs code, and a name may come from a file someone else wrote. The rule (:func:`import_named`), the
same for every registry and for ``module:Name`` games (:mod:`games.imported_games`):

* a name the user gives (Python code, a config passed to ``psro run``, a command-line option) imports its
  module on demand, in worker processes too (they inherit ``sys.path`` and ``PYTHONPATH``);
* a name read from a checkpoint or a run directory (inside :func:`from_untrusted_file`, as ``psro resume`` and
  every ``resume`` read them) imports a module only when it is already imported, part of this library, or
  allowed by the user: listed (itself or a package above it) in the environment variable ``PSRO_IMPORT``
  (comma-separated), which ``--import MODULE`` on the command line and :func:`allow_imports` extend. Otherwise
  it is a ``ValueError`` saying how to allow it.

Examples
--------
>>> shapes = Registry("shape", hint="Register one with shapes.register(name, entry).")
>>> shapes.register("square", 4)
4
>>> shapes.get("square"), shapes.names(), "circle" in shapes
(4, ['square'], False)
>>> shapes.register("square", 5)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: shape 'square' is already registered; pass replace=True to replace it, or register another name.
>>> shapes.register("square", 5, replace=True)
5
>>> shapes.get("math:tau")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: shape 'math:tau': importing math registered no shape named 'math:tau' or 'tau'; register one with ...
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import importlib
import os
import re
import sys
from collections.abc import Callable

__all__ = ["Registry", "import_named", "allow_imports", "allowed_modules", "is_allowed", "split_name",
           "from_untrusted_file", "reading_untrusted", "IMPORT_VARIABLE"]

IMPORT_VARIABLE = "PSRO_IMPORT"
"""The environment variable listing the modules a ``module:name`` may import (comma-separated)."""

_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def split_name(name: str) -> tuple:
    """``(module, attribute)`` of ``"module:attribute"``; ``(None, name)`` for a plain name.

    Examples
    --------
    >>> split_name("user_pkg.oracles:greedy"), split_name("exact")
    (('user_pkg.oracles', 'greedy'), (None, 'exact'))
    """
    module, colon, attribute = name.partition(":")
    if not colon or not _MODULE.fullmatch(module) or not attribute:
        return None, name
    return module, attribute


def allowed_modules() -> list:
    """The modules a name read from a file may import (the ``PSRO_IMPORT`` environment variable, split on commas).

    Examples
    --------
    >>> import os
    >>> _ = os.environ.pop(IMPORT_VARIABLE, None)
    >>> allow_imports("user_pkg", "other.tools")
    >>> allowed_modules()
    ['user_pkg', 'other.tools']
    >>> del os.environ[IMPORT_VARIABLE]
    """
    return [m.strip() for m in os.environ.get(IMPORT_VARIABLE, "").split(",") if m.strip()]


def allow_imports(*modules: str) -> None:
    """Allow names read from a checkpoint or run directory to import ``modules`` (and the modules below them),
    here and in processes started later (they inherit ``PSRO_IMPORT``).

    Raises ``ValueError`` naming the bad entry when one is not a dotted module name.
    """
    for module in modules:
        if not isinstance(module, str) or not _MODULE.fullmatch(module):
            raise ValueError(f"import: {module!r} is not a module name; give a dotted name such as 'user_pkg' or "
                             "'user_pkg.oracles'.")
    known = allowed_modules()
    os.environ[IMPORT_VARIABLE] = ",".join(known + [m for m in modules if m not in known])


#: The library's own packages, whose modules a name may always import.
LIBRARY = ("games", "solvers", "ranking", "psro", "experiments")

_UNTRUSTED = contextvars.ContextVar("games.registry.untrusted", default=False)


@contextlib.contextmanager
def from_untrusted_file():
    """Inside this block names come from a file (a checkpoint, a run directory): :func:`import_named` imports only
    allowed modules (see the module docstring)."""
    token = _UNTRUSTED.set(True)
    try:
        yield
    finally:
        _UNTRUSTED.reset(token)


def reading_untrusted() -> bool:
    """Whether the caller is inside :func:`from_untrusted_file`."""
    return _UNTRUSTED.get()


def is_allowed(module: str) -> bool:
    """Whether ``module`` is the library's or allowed by ``PSRO_IMPORT`` (itself or a package above it)."""
    return any(module == m or module.startswith(m + ".") for m in list(LIBRARY) + allowed_modules())


def import_named(module: str, *, field: str = "name"):
    """Import ``module`` for a ``module:name`` given in ``field``, under the rule of the module docstring;
    ``ValueError`` naming ``field`` and the fix when it may not be imported or does not import.

    Examples
    --------
    >>> import_named("math").__name__
    'math'
    >>> with from_untrusted_file():
    ...     import_named("antigravity", field="oracle")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: oracle: 'antigravity' was named by a checkpoint or run directory, which never decides what code ...
    """
    if module in sys.modules:
        return sys.modules[module]
    if reading_untrusted() and not is_allowed(module):
        top = module.split(".")[0]
        raise ValueError(
            f"{field}: {module!r} was named by a checkpoint or run directory, which never decides what code runs; "
            f"if you trust it, allow it: --import {top} (psro resume / run), {IMPORT_VARIABLE}={top} in the "
            f"environment, or games.registry.allow_imports({top!r}) in Python.")
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is None or not (module == exc.name or module.startswith(exc.name + ".")):
            raise   # (the module was found, and an import inside it failed: its own error)
        raise ValueError(f"{field}: cannot import {module!r} ({type(exc).__name__}: {exc}); is it installed, or "
                         "its folder on PYTHONPATH?") from None


class Registry:
    """Named entries of one kind, with ``module:name`` found on demand (see the module docstring).

    Parameters
    ----------
    kind : str
        What the entries are, for messages (``"oracle"``); also the config field named in errors.
    hint : str
        How to register one, appended to "unknown name" errors.
    adopt : callable, optional
        ``adopt(name, obj) -> entry``: for ``module:name`` whose module registered nothing under that name, turn the
        module's attribute ``name`` into an entry (registered under the full ``module:name``).
    """

    def __init__(self, kind: str, *, hint: str, adopt: Callable | None = None):
        self.kind, self.hint, self.adopt = kind, hint, adopt
        self._entries: dict = {}

    def register(self, name: str, entry, *, replace: bool = False):
        """Register ``entry`` under ``name``; a taken name raises ``ValueError`` unless ``entry`` is the registered
        one again (see the module docstring) or ``replace=True``. Returns ``entry``."""
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"name must be a non-empty string naming the {self.kind}; got {name!r}.")
        if name in self._entries and not replace and not _same(self._entries[name], entry):
            raise ValueError(f"{self.kind} {name!r} is already registered; pass replace=True to replace it, or "
                             "register another name.")
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove ``name`` (nothing happens when it is not registered)."""
        self._entries.pop(name, None)

    def names(self) -> list:
        """The registered names, in registration order."""
        return list(self._entries)

    def items(self) -> list:
        """``(name, entry)`` pairs, in registration order."""
        return list(self._entries.items())

    def __iter__(self):
        """The registered names (``list(registry)``)."""
        return iter(self.names())

    def __contains__(self, name) -> bool:
        """Whether ``name`` is registered now (imports nothing)."""
        return name in self._entries

    def get(self, name: str):
        """The entry of ``name``, importing the module of a ``module:name`` first; ``ValueError`` naming the
        known names (or the import's problem) otherwise."""
        if not isinstance(name, str):
            raise TypeError(f"{self.kind} must be a name (str); got {type(name).__name__}.")
        if name in self._entries:
            return self._entries[name]
        module, attribute = split_name(name)
        if module is None:
            raise ValueError(f"{self.kind} must be one of {self.names()} or 'module:name'; got {name!r}. "
                             f"{self.hint}")
        loaded = import_named(module, field=self.kind)
        for key in (name, attribute):
            if key in self._entries:
                return self._entries[key]
        if self.adopt is not None and hasattr(loaded, attribute):
            return self.register(name, self.adopt(name, getattr(loaded, attribute)))
        raise ValueError(f"{self.kind} {name!r}: importing {module} registered no {self.kind} named {name!r} or "
                         f"{attribute!r}; {self.hint[0].lower()}{self.hint[1:]}")


def _same(old, new) -> bool:
    """Whether ``new`` is ``old`` again: equal, or the same definition run again (functions and classes compared
    by module and qualified name, also inside a dataclass entry), as when a notebook cell or module is re-run."""
    if old is new:
        return True
    try:
        if bool(old == new):
            return True
    except Exception:   # (arrays and other entries whose == is not a truth value)
        return False
    if dataclasses.is_dataclass(old) and type(old) is type(new):
        return all(_definition(getattr(old, f.name)) == _definition(getattr(new, f.name))
                   for f in dataclasses.fields(old))
    return _definition(old) == _definition(new) and _definition(old) is not old


def _definition(value):
    """``(module, qualname)`` of a named function or class (what a re-run definition keeps); else the value
    itself (a lambda has no name to keep)."""
    qualname = getattr(value, "__qualname__", None)
    if callable(value) and isinstance(qualname, str) and not qualname.endswith("<lambda>") \
            and hasattr(value, "__module__"):
        return (value.__module__, value.__qualname__)
    return value
