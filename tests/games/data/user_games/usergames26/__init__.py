"""A user's own games, outside the toolkit (tests/games/test_imported_games.py imports them by name)."""
