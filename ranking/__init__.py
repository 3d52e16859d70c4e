"""Who is better: Elo family, alpha-Rank, Nash averaging, adaptive sampling under noise."""

import lazy_loader

# Public names load on first use (PEP 562, through ``lazy_loader``): ``from ranking import elo`` does not import
# alpha-Rank's sparse machinery or networkx. One entry per name: the submodule that defines it.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "alpha_rank.alpharank_ranking": ["AlphaRankResult", "alpharank", "suggest_alpha", "sweep"],
        "elo_ratings": ["elo", "elo_win_probabilities", "online_elo", "online_elo_history"],
        "match_records": ["MatchCounts", "count_matrices", "match_outcomes"],
        "melo_ratings": ["MElo", "melo", "online_melo"],
        "nash_averaging_ratings": ["AgentTaskNashAveraging", "max_entropy_nash", "nash_averaging"],
        "response_graph_sampling": [
            "ResponseGraphUCBResult", "count_wrong_edges", "response_graph", "response_graph_ucb",
        ],
        "samplers": ["BernoulliSampler", "FunctionSampler", "OpenSpielSampler"],
        "alpha_rank.uncertainty": [
            "BootstrapResult", "MassBounds", "alpharank_mass_bounds", "bootstrap_alpharank", "ranking_stability",
        ],
    },
)
