"""Who is better: Elo family, alpha-Rank, Nash averaging, adaptive sampling under noise."""

from ranking.alpharank import AlphaRankResult, alpharank, suggest_alpha, sweep
from ranking.elo import elo, elo_win_probabilities, online_elo, online_elo_history
from ranking.match_records import MatchCounts, count_matrices, match_outcomes
from ranking.melo import MElo, melo, online_melo
from ranking.nash_averaging import max_entropy_nash, nash_averaging
from ranking.response_graph_ucb import (
    ResponseGraphUCBResult,
    count_wrong_edges,
    response_graph,
    response_graph_ucb,
)
from ranking.samplers import BernoulliSampler, FunctionSampler, OpenSpielSampler
from ranking.uncertainty import (
    BootstrapResult,
    MassBounds,
    alpharank_mass_bounds,
    bootstrap_alpharank,
    ranking_stability,
)

__all__ = [
    "AlphaRankResult",
    "alpharank",
    "suggest_alpha",
    "sweep",
    "elo",
    "elo_win_probabilities",
    "online_elo",
    "online_elo_history",
    "MatchCounts",
    "count_matrices",
    "match_outcomes",
    "MElo",
    "melo",
    "online_melo",
    "max_entropy_nash",
    "nash_averaging",
    "ResponseGraphUCBResult",
    "count_wrong_edges",
    "response_graph",
    "response_graph_ucb",
    "BernoulliSampler",
    "FunctionSampler",
    "OpenSpielSampler",
    "BootstrapResult",
    "MassBounds",
    "alpharank_mass_bounds",
    "bootstrap_alpharank",
    "ranking_stability",
]
