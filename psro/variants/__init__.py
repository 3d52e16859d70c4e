"""PSRO variants that papers compare against: training loops built on :class:`psro.PSRO` that override one or
more of its public phases, each in its own module (``xdo``: extensive-form double oracle, XDO and NXDO, with
``restricted_game``: the restricted game and CFR+ on it), registered in :mod:`psro.algorithms`."""
