"""Example custom games written with :class:`games.SequentialGame`; importing a module registers its game."""
