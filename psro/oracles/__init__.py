"""Best-response oracles behind one protocol and one registry (:mod:`psro.oracles.base`).

Importing this package registers the built-in oracles: ``"exact"``
(:mod:`psro.oracles.exact`), ``"openspiel"`` (:mod:`psro.oracles.openspiel`),
``"dqn"`` and ``"ppo"`` (:mod:`psro.oracles.learned`, torch loaded on first
use; they need no game tree: ``make_oracle("ppo", None, game=...)`` trains
networks on sampled play, and their responses are the networks).
:mod:`psro.oracles.jobs` turns each call into a picklable job for an
executor (networks travel as plain arrays).

>>> from psro.oracles import oracle_names, learned_oracle_names
>>> oracle_names()[:4], learned_oracle_names()[:2]
(['exact', 'openspiel', 'dqn', 'ppo'], ['dqn', 'ppo'])
"""

# each registers its oracles, in this order (what oracle_names() and the CLI help list)
from psro.oracles import exact, openspiel  # noqa: F401, I001
from psro.oracles import learned  # noqa: F401, I001
from psro.oracles import team_pg  # noqa: F401, I001
from psro.oracles.base import (
    BestResponse,
    Oracle,
    OracleCapabilities,
    OracleInfo,
    Target,
    learned_oracle_names,
    make_oracle,
    oracle_capabilities,
    oracle_info,
    oracle_names,
    register_oracle,
    unregister_oracle,
)

__all__ = ["BestResponse", "Oracle", "OracleCapabilities", "OracleInfo", "Target", "learned_oracle_names",
           "make_oracle", "oracle_capabilities", "oracle_info", "oracle_names", "register_oracle",
           "unregister_oracle"]
