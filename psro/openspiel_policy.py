"""Kept for existing imports: the OpenSpiel conversion lives in :mod:`psro.policies.openspiel`."""

from psro.policies.openspiel import from_openspiel_policy, members_policy, to_openspiel_policy

__all__ = ["to_openspiel_policy", "from_openspiel_policy", "members_policy"]
