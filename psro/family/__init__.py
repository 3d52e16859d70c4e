"""The self-play family: training loops beside PSRO (self-play, fictitious self-play, FXP, league, NFSP)."""
