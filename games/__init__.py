"""What is played and how: normal-form games, empirical meta-games and OpenSpiel games."""

from games import catalog, datasets
from games.empirical import EmpiricalGame
from games.normal_form import NormalFormGame, as_game, product_distribution
from games.openspiel_games import load, registered_names

__all__ = [
    "NormalFormGame",
    "EmpiricalGame",
    "as_game",
    "product_distribution",
    "catalog",
    "datasets",
    "load",
    "registered_names",
]
