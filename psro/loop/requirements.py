"""What a training loop needs of its config and game, declared on its class (:class:`LoopRequirements`, the
``requirements`` attribute) and checked by :class:`psro.PSRO` before anything is built (tree, oracles, executor):
one rule, one message, naming the field and the loop's reason.

Examples
--------
>>> from psro.config.model import PSROConfig
>>> require_product_meta_solver(PSROConfig(game="kuhn_poker", meta_solver="mgcce"), "RectifiedPSRO")
... # doctest: +ELLIPSIS
Traceback (most recent call last):
...
psro.errors.ConfigError: meta_solver: RectifiedPSRO needs a product (Nash-style) meta-strategy, ... as JPSRO uses.
"""

from __future__ import annotations

from dataclasses import dataclass

from psro.config.model import PSROConfig, is_environment_game, num_players
from psro.errors import ConfigError

__all__ = ["LoopRequirements", "require_product_meta_solver", "require_two_players", "check_two_player_zero_sum",
           "require_constant_sum"]


@dataclass(frozen=True)
class LoopRequirements:
    """What a training loop declares it needs; each text field is the loop's reason, added to the rule's message
    (None: no such rule).

    Attributes
    ----------
    two_players : bool
        A two-player game.
    zero_sum : str or None
        A two-player zero-sum (or constant-sum) game (:func:`check_two_player_zero_sum`); the text ends its message.
    product_meta_solver : bool
        Product (Nash-style) meta-solvers, not correlated ones (:func:`require_product_meta_solver`).
    own_eval_meta_solver : str or None
        ``eval_meta_solver`` unset (or the meta-solver itself): the loop reports the gap of its own meta-strategy.
    learned_oracle : str or None
        A learned oracle.
    no_teams : str or None
        No ``teams``.
    fixed : tuple of (field, allowed values, reason)
        Fields the loop decides itself: each must hold one of its allowed values (the first is the default).

    Examples
    --------
    >>> needs = LoopRequirements(product_meta_solver=True, fixed=(("warm_start", (False,), "warm-starts itself"),))
    >>> needs.check(PSROConfig(warm_start=True, oracle="ppo"), None, None, "MyLoop")
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: warm_start: MyLoop warm-starts itself; leave warm_start=False (got True).
    """

    two_players: bool = False
    zero_sum: str | None = None
    product_meta_solver: bool = False
    own_eval_meta_solver: str | None = None
    learned_oracle: str | None = None
    no_teams: str | None = None
    fixed: tuple = ()

    def check(self, config: PSROConfig, game, normal_form, loop: str) -> None:
        """Raise ``ValueError`` for the first rule ``config`` and ``game`` break, naming the field and ``loop``."""
        if self.product_meta_solver:
            require_product_meta_solver(config, loop)
        if self.own_eval_meta_solver is not None and config.eval_meta_solver not in (None, config.meta_solver):
            raise ConfigError("eval_meta_solver", f"{loop} {self.own_eval_meta_solver}; leave eval_meta_solver unset "
                              f"(got {config.eval_meta_solver!r}).")   # (a checkpoint names the meta-solver itself)
        if self.no_teams is not None and config.teams is not None:
            raise ConfigError("teams", f"{loop} {self.no_teams}; leave teams unset.")
        if self.learned_oracle is not None:
            from psro.oracles import learned_oracle_names, oracle_info

            if not oracle_info(config.oracle).learned:
                raise ConfigError("oracle", f"{loop} {self.learned_oracle}; use a learned oracle "
                                  f"({', '.join(learned_oracle_names())}), not {config.oracle!r}.")
        for field, allowed, why in self.fixed:
            if getattr(config, field) not in allowed:
                raise ConfigError(field, f"{loop} {why}; leave {field}={allowed[0]!r} (got "
                                  f"{getattr(config, field)!r}).")
        if game is None:
            return
        if self.zero_sum is not None:
            check_two_player_zero_sum(game, normal_form, loop, self.zero_sum)
        elif self.two_players:
            require_two_players(game, loop)


def require_product_meta_solver(config: PSROConfig, loop: str) -> None:
    """Refuse a correlated (JPSRO) meta-solver, naming ``meta_solver`` or ``eval_meta_solver``."""
    from psro.meta.solvers import get_meta_solver

    for field in ("meta_solver", "eval_meta_solver"):
        name = getattr(config, field)
        if name is None:
            continue
        options = (config.meta_solver_options or {}) if field == "meta_solver" else {}
        kind = get_meta_solver(name, **options).kind
        if kind != "product":
            raise ConfigError(field, f"{loop} needs a product (Nash-style) meta-strategy, one mixture per player; "
                              f"{name!r} gives a joint ({kind}) one, as JPSRO uses.")


def require_two_players(game, loop: str) -> None:
    """Refuse a game that is not two-player (the ``game`` field).

    Examples
    --------
    >>> import pyspiel
    >>> require_two_players(pyspiel.load_game("kuhn_poker(players=3)"), "DiversePSRO")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: game: DiversePSRO is defined for two-player games; ... has 3 players.
    """
    n = num_players(game)
    if n != 2:
        raise ConfigError("game", f"{loop} is defined for two-player games; {game} has {n} players.")


def check_two_player_zero_sum(game, normal_form=None, loop: str = "XDO", why: str = "") -> None:
    """Refuse a game that is not two-player zero-sum or constant-sum (the ``game`` field): from the payoffs of a
    normal-form game, else from the OpenSpiel game's declared utility; an environment game declares neither.
    ``why``: the loop's reason, added to the message.

    Examples
    --------
    >>> import pyspiel
    >>> check_two_player_zero_sum(pyspiel.load_game("kuhn_poker"), None, "XDO")
    >>> check_two_player_zero_sum(pyspiel.load_game("matrix_pd"), None, "XDO")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    psro.errors.ConfigError: game: XDO is defined for two-player zero-sum (or constant-sum) games; matrix_pd() is \
general-sum ...
    """
    from psro.sequence_form.matrix_game import game_is_constant_sum

    require_two_players(game, loop)
    if is_environment_game(game) or not game_is_constant_sum(game, normal_form):
        name = game if normal_form is None else "the normal-form game"
        raise ConfigError("game", f"{loop} is defined for two-player zero-sum (or constant-sum) games{why}; {name} is "
                          "general-sum (not declared or found constant-sum; algorithm psro takes any game).")


#: The name the variants used before the check took its public name (the same function).
require_constant_sum = check_two_player_zero_sum
