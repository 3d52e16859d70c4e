"""What is played and how: normal-form games, empirical meta-games and OpenSpiel games."""

from games import catalog, datasets
from games.check_game import GameCheckReport, Problem, check_game
from games.custom_normal_form import from_payoff_function
from games.custom_sequential import CHANCE, TERMINAL, SequentialGame, register_game
from games.empirical import EmpiricalGame
from games.executors import Executor, ProcessPoolExecutor, RayExecutor, SerialExecutor, TaskError, make_executor
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
    "from_payoff_function",
    "SequentialGame",
    "register_game",
    "CHANCE",
    "TERMINAL",
    "check_game",
    "GameCheckReport",
    "Problem",
    "Executor",
    "SerialExecutor",
    "ProcessPoolExecutor",
    "RayExecutor",
    "TaskError",
    "make_executor",
]
