"""What is played and how: normal-form games, empirical meta-games and OpenSpiel games."""

import lazy_loader

# Public names load on first use (PEP 562, through ``lazy_loader``): ``import games`` does not pull in pandas,
# pyspiel or the executors until something needs them. One entry per name: the submodule that defines it.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submodules=["catalog", "datasets"],
    submod_attrs={
        "game_checker": ["GameCheckReport", "Problem", "check_game"],
        "env_checker": ["EnvCheckReport", "check_env"],
        "custom_normal_form": ["from_payoff_function"],
        "custom_sequential": ["CHANCE", "TERMINAL", "SequentialGame", "register_game"],
        "empirical": ["EmpiricalGame"],
        "contracts": ["EnvironmentGame", "is_environment_game"],
        "game_resolution": ["ResolvedGame", "resolve"],
        "environment": ["BatchedEnv", "EnvStep", "ObservationGame", "make_env", "num_actions", "observation_size"],
        "gambit": ["read_gambit", "write_gambit"],
        "executors": ["Executor", "ProcessPoolExecutor", "RayExecutor", "SerialExecutor", "TaskError", "make_executor"],
        "normal_form": ["NormalFormGame", "as_game", "product_distribution"],
        "openspiel_games": ["load", "registered_names"],
        "pettingzoo_env": ["from_pettingzoo", "load_pettingzoo"],
    },
)
