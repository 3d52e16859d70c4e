"""Who is better: Elo family, alpha-Rank, Nash averaging, adaptive sampling under noise."""
