"""Games played as numpy arrays over the batch: exact, faster stand-ins for :class:`games.environment.OpenSpielEnv`.

A kernel is a batched env written for one game: its state lives in arrays
over the batch, and a step is a fixed number of numpy calls for all the envs
stepped, with no Python call per env and no pyspiel call. It gives exactly
the :class:`games.environment.EnvStep` rows that the generic env gives for
the same actions (the tests compare them bit for bit), so that choosing one
changes only the speed. :func:`games.environment.make_env` picks a kernel
where :func:`kernel_for` finds one (``kernel=False`` forces the generic env).

Kernels: ``phantom_ttt`` (:class:`games.kernels.phantom_ttt.PhantomTTTEnv`,
every parameter value).

Examples
--------
>>> import pyspiel
>>> kernel_for(pyspiel.load_game("phantom_ttt")).__name__
'PhantomTTTEnv'
>>> kernel_for(pyspiel.load_game("tic_tac_toe")) is None
True
"""

from __future__ import annotations

import importlib

__all__ = ["KERNELS", "kernel_for"]

#: OpenSpiel short name -> "module:class" of the kernel env that plays it.
KERNELS = {"phantom_ttt": "games.kernels.phantom_ttt:PhantomTTTEnv"}


def kernel_for(game):
    """The kernel env class that plays ``game`` (a ``pyspiel.Game``) exactly, or ``None`` where there is none.

    A kernel is chosen by the game's short name and then asked (its
    ``supports(game)``) whether it plays the game's parameters. Games written
    in Python are never matched: their name may not say what they are.
    """
    if hasattr(game, "make_py_observer") or not hasattr(game, "get_type"):
        return None
    target = KERNELS.get(game.get_type().short_name)
    if target is None:
        return None
    module, name = target.split(":")
    cls = getattr(importlib.import_module(module), name)
    return cls if cls.supports(game) else None
