"""OpenSpiel's torch NFSP as a side of a Leduc comparison (adapter ``openspiel_nfsp``).

The torch agent ``open_spiel.python.pytorch.nfsp.NFSP`` (it needs ``dm-tree``, in the ``bench`` and ``dev`` extras),
set up with the flag defaults of OpenSpiel's ``examples/nfsp_leduc_pytorch.py`` (:class:`Options`): one hidden layer
of 128 for the average network and the Q-network, replay buffer 200,000, reservoir buffer 2,000,000, learning from
1,000 samples, anticipatory parameter 0.1, batches of 128, a learning step every 64 agent steps, SGD at 0.01 for
both the best response (DQN) and the average policy, MSE loss, target network updated every 19,200 steps, discount
1, epsilon start 0.06, end 0.001, decay duration 20M steps (the DQN's default exponential schedule: ``0.001 + 0.059
exp(-min(t, 20M) / 20M)`` after ``t`` of its steps). Two agents train in self-play on ``rl_environment.Environment``
episode by episode, as the example does. Every 1,000 episodes (``measure_every``; the example evaluates every
10,000, too rarely for short budgets) the clock stops and its output, the agents' average policies, is tabulated by
one batched pass through each average network (as average-policy mode acts: illegal logits penalised, softmax) and
measured like the others; its rows' ``iteration`` is the episodes trained and ``env_steps`` the environment steps.
Seed ``k`` gives both agents ``NFSP(seed=42 + k)`` (the example's 42 at seed 0) and seeds the environment's chance
events with ``k``. """

from __future__ import annotations

import dataclasses

from experiments.benchmarks.leduc.measure import GAME, Measure, NetworkPolicy, row
from experiments.clock import Clock, until_budget

__all__ = ["Options", "run", "OPENSPIEL_NFSP_SEED", "agents_for", "play_episode", "average_profile"]

#: What a row's ``iteration`` counts.
UNIT = "episodes"


@dataclasses.dataclass(frozen=True)
class Options:
    """OpenSpiel's torch NFSP as its Leduc example ``examples/nfsp_leduc_pytorch.py`` sets it up: the example's flag
    defaults, given to ``open_spiel.python.pytorch.nfsp.NFSP`` (which passes the DQN ones on to its inner
    best-response agent), and how often the benchmark measures (``measure_every``, not the example's)."""

    hidden_layers_sizes: tuple = (128,)
    replay_buffer_capacity: int = 200_000
    reservoir_buffer_capacity: int = 2_000_000
    min_buffer_size_to_learn: int = 1000
    anticipatory_param: float = 0.1
    batch_size: int = 128
    learn_every: int = 64
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.01
    optimizer_str: str = "sgd"
    loss_str: str = "mse"
    update_target_network_every: int = 19_200
    discount_factor: float = 1.0
    epsilon_decay_duration: int = 20_000_000
    epsilon_start: float = 0.06
    epsilon_end: float = 0.001
    measure_every: int = 1000
    """training episodes between two measurements (the example evaluates every 10,000; measuring takes about
    10 ms, off the clock, against seconds for 1000 episodes)"""

    def agent_kwargs(self) -> dict:
        """The keyword arguments of ``nfsp.NFSP`` after its positional ones (everything but ``measure_every``)."""
        return {f.name: (list(getattr(self, f.name)) if f.name == "hidden_layers_sizes" else getattr(self, f.name))
                for f in dataclasses.fields(self) if f.name != "measure_every"}


#: The seed OpenSpiel's NFSP agents get by default (``NFSP(seed=42)``, as in the example): the benchmark's seed ``k``
#: gives both agents ``OPENSPIEL_NFSP_SEED + k``, so seed 0 builds the example's networks.
OPENSPIEL_NFSP_SEED = 42


def agents_for(env, seed: int, options: Options) -> list:
    """One ``nfsp.NFSP`` agent per player of ``env`` (an ``rl_environment.Environment``), as the example makes
    them; both get the seed ``OPENSPIEL_NFSP_SEED + seed`` (the agent seeds numpy's and torch's global generators
    with it, which its sampling then uses)."""
    from open_spiel.python.pytorch import nfsp

    size, actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    kwargs = options.agent_kwargs()
    layers = kwargs.pop("hidden_layers_sizes")
    return [nfsp.NFSP(player, size, actions, layers, seed=OPENSPIEL_NFSP_SEED + seed, **kwargs)
            for player in range(env.num_players)]


def play_episode(env, agents) -> int:
    """One training episode of self-play, as the example plays it: the player to move steps its agent, the
    environment takes the action; at the end every agent sees the final time step. Returns the episode's
    environment steps (transitions)."""
    time_step, steps = env.reset(), 0
    while not time_step.last():
        player = time_step.observations["current_player"]
        time_step = env.step([agents[player].step(time_step).action])
        steps += 1
    for agent in agents:
        agent.step(time_step)
    return steps


def _nfsp_average_probabilities(agents):
    """The agents' average policies on a batch, as ``NFSP._act`` computes them in average-policy mode: the
    average network's logits, illegal actions set to OpenSpiel's penalty logit, softmax."""
    import torch
    from open_spiel.python.pytorch import dqn

    def probabilities(player, obs, mask):
        with torch.no_grad():
            logits = agents[player]._avg_network(torch.tensor(obs, dtype=torch.float32))
            logits = torch.where(torch.as_tensor(mask), logits,
                                 torch.full_like(logits, dqn.ILLEGAL_ACTION_LOGITS_PENALTY))
            return torch.softmax(logits, dim=1).double().numpy()

    return probabilities


def average_profile(agents, frozen: bool = False) -> list:
    """The agents' average policies as :func:`psro.exact_nash_conv` takes them (one
    :class:`~experiments.benchmarks.leduc.measure.NetworkPolicy` per player); ``frozen``: over copies of the
    average networks, so that the profile stays what it is while the agents train on."""
    if frozen:
        import copy
        from types import SimpleNamespace

        agents = [SimpleNamespace(_avg_network=copy.deepcopy(agent._avg_network)) for agent in agents]
    average = _nfsp_average_probabilities(agents)
    return [NetworkPolicy(average, p) for p in range(len(agents))]


def run(seed: int, budget: float, options: Options, clock: str = "wall", side: str = "openspiel_nfsp") -> list:
    """OpenSpiel's torch NFSP in self-play on ``rl_environment.Environment("leduc_poker")`` for ``budget``
    seconds of ``clock``; a row at the start and after every ``options.measure_every`` episodes (its
    ``iteration``: the episodes trained; its ``env_steps``: the environment steps).

    The output measured is the agents' average policies, tabulated over the measuring tree's information states
    by one batched pass through each average network (:func:`_nfsp_average_probabilities`). The environment's
    chance events are seeded with ``seed`` (the example leaves them unseeded). The block of episodes running at
    the end of the budget does not count.
    """
    import pyspiel
    from open_spiel.python import rl_environment

    game = pyspiel.load_game(GAME)
    clock = Clock(budget, clock)
    with clock:
        env = rl_environment.Environment(game)
        env.seed(seed)
        agents = agents_for(env, seed, options)
    exact, average = Measure(game), _nfsp_average_probabilities(agents)

    def measure(episodes, steps):
        plans = [[exact.plan_of(p, exact.network_table(p, average))] for p in range(len(agents))]
        return row(side, seed, clock, episodes, exact.nash_conv(plans, [[1.0]] * len(agents)), steps)

    rows, episodes, steps = [measure(0, 0)], 0, 0
    with until_budget():   # the block of episodes running at the end of the budget does not count
        while True:
            with clock:
                for _ in range(options.measure_every):
                    steps += play_episode(env, agents)
            episodes += options.measure_every
            rows.append(measure(episodes, steps))
    return rows
