"""Oracle jobs through the executor, and learned-oracle runs that resume bit for bit.

Every best-response call is a pure function of its inputs (:mod:`psro.oracles.jobs`):
a learned response's seed comes from (run seed, iteration, player, target index),
never from a counter. So a run gives the same populations, meta-game and gaps on
every engine, and a run killed and resumed from its checkpoint ends exactly where
an uninterrupted one does (killed by SIGKILL: ``tests/psro/run/test_checkpoint_learned.py``).
"""

import math

import numpy as np
import pytest
import torch

from games.executors import ProcessPoolExecutor, SerialExecutor
from psro import PSRO
from psro.config.model import PSROConfig
from psro.meta.targets import meta_targets
from psro.oracles.jobs import job_seed, oracle_jobs, run_oracle_job, tree_for
from psro.oracles.learned.oracle import LearnedOracle
from psro.oracles.learned.ppo import PPOConfig
from psro.policies import realization_plans, uniform_policy

# tiny budgets: a response takes a fraction of a second, and is still a function of its seed
PPO = dict(total_steps=256, num_envs=8, num_steps=16, eval_episodes=32, hidden=(16,))
DQN = dict(total_steps=256, num_envs=8, learning_starts=96, batch_size=32, buffer_size=256, eval_episodes=32,
           hidden=(16,))


@pytest.fixture(scope="module")
def pool():
    """One spawned pool for the module's engine tests: its workers import torch once, and every call through it
    must still equal the serial one (a reused worker's state must not leak into a response)."""
    with ProcessPoolExecutor(workers=2) as executor:
        yield executor


def same_policy(x, y) -> bool:
    """Bit-for-bit equal population members: networks (architecture, provenance and every weight), arrays, or
    other policies (the uniform one) by equality."""
    if hasattr(x, "to_arrays") or hasattr(y, "to_arrays"):
        if not (hasattr(x, "to_arrays") and hasattr(y, "to_arrays")) or x.architecture() != y.architecture():
            return False
        wx, wy = x.to_arrays(), y.to_arrays()
        return wx.keys() == wy.keys() and all(np.array_equal(wx[k], wy[k]) for k in wx)
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return np.array_equal(x, y)
    return x == y


def same_policies(xs, ys) -> bool:
    return len(xs) == len(ys) and all(same_policy(x, y) for x, y in zip(xs, ys))


def assert_same_run(a: PSRO, b: PSRO) -> None:
    """Bit-for-bit: populations and their provenance, the meta-game, the meta-strategy and every gap."""
    assert a.iteration == b.iteration and a.evaluations == b.evaluations
    for pa, pb in zip(a.populations, b.populations):
        assert same_policies(pa.policies, pb.policies)
        assert pa.provenance_table().equals(pb.provenance_table())
    for name in ("count", "total", "total_sq"):
        assert np.array_equal(getattr(a.meta_game, name), getattr(b.meta_game, name))
    assert np.array_equal(a.meta_strategy.joint, b.meta_strategy.joint)
    assert a.history["gap"].tolist() == b.history["gap"].tolist()
    assert a.history["train_gap"].tolist() == b.history["train_gap"].tolist()
    for p in range(len(a.populations)):
        pending_a, pending_b = a.pending_responses[p], b.pending_responses[p]
        assert len(pending_a) == len(pending_b)
        assert all(same_policy(x, y) and va == vb for (x, va), (y, vb) in zip(pending_a, pending_b))


def learned_run(seed=3, oracle="ppo", iterations=3, **kwargs) -> PSRO:
    # (approx_gap, which assert_same_run does not compare, is left out: its own resume is tested elsewhere)
    solver = PSRO("kuhn_poker", oracle=oracle, oracle_options=PPO if oracle == "ppo" else DQN, seed=seed,
                  progress=False, approx_gap_every=None, **kwargs)
    solver.run(iterations=iterations)
    return solver


@pytest.fixture(scope="module")
def serial_ppo_run():
    return learned_run()


# ------------------------------------------------------------------ seeds
def test_job_seed_is_the_documented_seed_sequence_and_depends_on_every_key():
    expected = np.random.SeedSequence(11, spawn_key=(4, 1, 2)).generate_state(1, dtype=np.uint32)[0]
    assert job_seed(11, 4, 1, 2) == int(expected)
    keys = [(11, 4, 1, 2), (12, 4, 1, 2), (11, 5, 1, 2), (11, 4, 0, 2), (11, 4, 1, 3)]
    assert len({job_seed(*k) for k in keys}) == len(keys)
    with pytest.raises(ValueError, match="iteration"):
        job_seed(0, -1, 0, 0)
    with pytest.raises(ValueError, match="player"):
        job_seed(0, 0, 1.5, 0)


def test_a_learned_call_is_a_function_of_its_keys_and_leaves_no_state_behind():
    tree = tree_for("kuhn_poker()")
    plans = [realization_plans(uniform_policy(i)[None], i)[0] for i in tree.infostates]
    oracle = LearnedOracle(tree, "ppo", PPOConfig(**PPO), seed=5)
    first = oracle(0, plans, iteration=2, index=1)
    assert first.training.seed == job_seed(5, 2, 0, 1)
    torch.manual_seed(123)
    state, threads = torch.get_rng_state(), torch.get_num_threads()
    oracle(1, plans, iteration=0)                        # another call in between, with another seed
    assert torch.equal(torch.get_rng_state(), state)     # the caller's torch generator is untouched ...
    assert torch.get_num_threads() == threads            # ... and so is its thread count
    again = LearnedOracle(tree, "ppo", PPOConfig(**PPO), seed=5)(0, plans, iteration=2, index=1)
    assert np.array_equal(first.policy, again.policy) and first.value == again.value
    assert first.estimated_value == again.estimated_value
    weights_a, weights_b = first.network.network.state_dict(), again.network.network.state_dict()
    assert all(torch.equal(weights_a[k], weights_b[k]) for k in weights_a)


# ------------------------------------------------------------------ engines
@pytest.mark.slow
def test_serial_and_process_pool_give_the_same_learned_run(serial_ppo_run, pool):
    assert_same_run(serial_ppo_run, learned_run(executor=pool))


@pytest.mark.slow
def test_learned_ce_jpsro_jobs_equal_in_process_calls():
    """Joint targets, several per player (one per recommendation): every job keeps its own seed and place,
    and the in-process calls (no jobs) use the same seeds."""
    # greedy responses: at this budget the softmax ones leave a pure MGCE (one target per player) in iteration 2
    runs = [PSRO("kuhn_poker(players=3)", meta_solver="mgce", oracle="ppo",
                 oracle_options={**PPO, "response_mode": "greedy"}, seed=1, progress=False, oracle_dispatch=d,
                 approx_gap_every=None)
            for d in ("in_process", "executor")]
    for solver in runs:
        solver.run(iterations=2)
    assert_same_run(*runs)
    solver = runs[0]
    payoffs = solver.meta_game.mean_game().payoffs
    counts = [len(meta_targets(solver.meta_strategy, "ce", solver.populations, payoffs, p)) for p in range(3)]
    assert max(counts) >= 2   # the last iteration had a player with several targets


def test_the_seed_matters(serial_ppo_run):
    """Guards the comparisons above against a budget so small that every seed gives the same responses."""
    other = learned_run(seed=4)
    assert any(not same_policies(pa.policies, pb.policies)
               for pa, pb in zip(serial_ppo_run.populations, other.populations))


@pytest.mark.parametrize("game, meta_solver", [("kuhn_poker", "nash"), ("kuhn_poker(players=3)", "mgce")])
def test_exact_oracle_jobs_through_the_executor_equal_in_process_calls(game, meta_solver):
    # CE-JPSRO gives a player one target per recommendation: the jobs must come back in target order
    runs = [PSRO(game, meta_solver=meta_solver, progress=False, oracle_dispatch=d, executor=SerialExecutor())
            for d in ("auto", "executor")]
    for solver in runs:
        solver.run(iterations=4)
    assert_same_run(*runs)
    assert max(len(pop) for pop in runs[0].populations) >= 4


def test_jobs_answer_in_target_order_with_the_exact_values():
    tree = tree_for("kuhn_poker()")
    solver = PSRO("kuhn_poker", progress=False)
    solver.run(iterations=0)   # the uniform population
    from psro.oracles import Target
    from psro.oracles.exact import best_response

    pops = solver.populations
    targets = [[Target(player=p, populations=pops, mixtures=(np.ones(1), np.ones(1)))] for p in range(2)]
    answers = [run_oracle_job(job) for job in oracle_jobs("exact", "kuhn_poker()", targets, 0, 0)]
    # Kuhn poker against a uniform opponent: 1/2 for the first player, 5/12 for the second (checked against
    # pyspiel.TabularBestResponse in test_rl_oracles), and the same policies as a direct call
    assert [a.value for a in answers] == pytest.approx([0.5, 5 / 12], abs=1e-12)
    plans = [pop.plans[0] for pop in pops]
    for p, answer in enumerate(answers):
        assert np.array_equal(answer.policy, best_response(tree, p, plans).policy)


# ------------------------------------------------------------------ resume
def test_learned_run_resumed_from_a_checkpoint_ends_like_the_uninterrupted_run(tmp_path):
    reference = learned_run(oracle="dqn", iterations=3)
    first = learned_run(oracle="dqn", iterations=1, checkpoint_dir=tmp_path)
    assert first.iteration == 1
    resumed = PSRO.resume(tmp_path, progress=False, executor="serial")
    assert resumed.options["oracle_options"]["total_steps"] == DQN["total_steps"]
    resumed.run(iterations=2)
    assert_same_run(reference, resumed)


# ------------------------------------------------------------------ options
def test_one_executor_for_the_run():
    pool = ProcessPoolExecutor(workers=2)
    solver = PSRO("kuhn_poker", evaluator="monte_carlo", executor=pool, progress=False,
                  evaluator_options={"episodes_per_profile": 10})
    assert solver.evaluator.executor is pool and solver.executor is pool
    solver.close()                 # not ours: left to the caller
    assert solver.executor is pool
    with pytest.warns(DeprecationWarning, match=r"evaluator_options\['executor'\] is deprecated .* executor=\.\.\."):
        legacy = PSRO("kuhn_poker", evaluator="monte_carlo", progress=False,
                      evaluator_options={"episodes_per_profile": 10, "executor": "serial"})
    assert legacy.executor is legacy.evaluator.executor
    assert isinstance(legacy.executor, SerialExecutor)
    pool.close()


def test_bad_options_name_the_argument():
    with pytest.raises(ValueError, match="oracle_dispatch"):
        PSRO("kuhn_poker", oracle_dispatch="parallel")
    with pytest.raises(ValueError, match="executor"):
        PSRO("kuhn_poker", executor="threads")
    with pytest.raises(ValueError, match="executor"), pytest.warns(DeprecationWarning):
        PSRO("kuhn_poker", evaluator="monte_carlo", executor="serial", evaluator_options={"executor": 2})
    with pytest.raises(TypeError, match="oracle_options"):
        PSRO("kuhn_poker", oracle="ppo", oracle_options={"total_step": 10})
    with pytest.raises(TypeError, match="oracle_options"):
        PSRO("kuhn_poker", oracle="exact", oracle_options={"total_steps": 10})


def test_config_executor_field_reaches_the_solver_and_is_validated():
    config = PSROConfig(oracle="ppo").replace_from_strings(["executor=2"])
    assert config.executor_spec() == 2
    assert PSROConfig().executor_spec() == "serial"
    with pytest.raises(ValueError, match="^executor: "):
        PSROConfig(executor="0").validate()
    with pytest.raises(ValueError, match="^executor: "):
        PSROConfig(executor="threads").validate()


# ------------------------------------------------------------------ neural targets
def neural_targets(game, seed=0):
    """Both players' targets over populations of networks and the uniform policy, as the deep loop has them."""
    from types import SimpleNamespace

    from psro.oracles import Target
    from psro.oracles.learned.networks import NeuralPolicy
    from psro.policies.acting import UniformPolicy

    torch.manual_seed(seed)
    num_actions = game.num_distinct_actions()
    pops = [SimpleNamespace(policies=[UniformPolicy(num_actions), NeuralPolicy.for_game(game, hidden=(8,))])
            for _ in range(game.num_players())]
    mixtures = tuple(np.array([0.4, 0.6]) for _ in pops)
    return [[Target(player=p, populations=pops, mixtures=mixtures)] for p in range(game.num_players())]


@pytest.mark.parametrize("game_string, use_tree, warm_start", [("kuhn_poker()", True, True),
                                                                ("leduc_poker()", False, False)])
def test_neural_jobs_in_worker_processes_equal_the_serial_responses(game_string, use_tree, warm_start, pool):
    """The job carries the networks as arrays; a worker's response equals the in-process one bit for bit
    (with a warm start too: the worker finds the same latest network in the responder's own population)."""
    from psro.oracles.jobs import game_for
    from psro.oracles.learned.networks import NeuralPolicy

    game = game_for(game_string)
    targets = neural_targets(game)
    options = {**PPO, "warm_start": warm_start}
    jobs = oracle_jobs("ppo", game_string, targets, iteration=2, seed=9, options=options, use_tree=use_tree)
    assert all(isinstance(e.arrays, dict) and e.obj is None for job in jobs for pol in job.policies for e in pol)
    remote = list(pool.map(run_oracle_job, jobs, chunksize=1))
    oracle = LearnedOracle(tree_for(game_string) if use_tree else None, "ppo", PPOConfig(**PPO), seed=9,
                           game=game, warm_start=warm_start)
    for p, answer in enumerate(remote):
        local = oracle.respond(p, targets[p][0], key=(2, 0))
        assert isinstance(answer.policy, NeuralPolicy) and answer.training.seed == job_seed(9, 2, p, 0)
        assert answer.policy.hidden == ((8,) if warm_start else (16,))   # a warm start keeps the old widths
        assert all(np.array_equal(a, b) for a, b in zip(answer.policy.to_arrays().values(),
                                                        local.policy.to_arrays().values()))
        assert answer.estimated_value == local.estimated_value and answer.estimated_stderr == local.estimated_stderr
        assert (answer.exact_value == local.exact_value) if use_tree else math.isnan(answer.exact_value)


def test_policies_travel_as_arrays_and_come_back_identical():
    from psro.oracles.jobs import PolicyArrays, decode_policy, encode_policy
    from psro.oracles.learned.networks import NeuralPolicy
    from psro.policies.acting import UniformPolicy

    net = NeuralPolicy(5, 3, hidden=(4,), mode="greedy")
    encoded = encode_policy(net)
    assert encoded.kind == "neural" and encoded.spec == {"architecture": net.architecture()}
    back = decode_policy(encoded)
    assert back.mode == "greedy" and all(np.array_equal(a, b) for a, b in zip(back.to_arrays().values(),
                                                                              net.to_arrays().values()))
    assert decode_policy(encode_policy(UniformPolicy(3))) == UniformPolicy(3)
    with pytest.raises(ValueError, match="encoded.kind"):
        decode_policy(PolicyArrays("pickle"))
    # populations of policy objects need no tree; a tabular population does
    targets = neural_targets(tree_for("kuhn_poker()").game)
    job = oracle_jobs("ppo", "kuhn_poker()", targets, 0, 0, options=PPO)[0]
    assert job.use_tree and job.target(None).populations[0].policies[0] == UniformPolicy(2)
    from psro.oracles import Target
    from psro.policies.population import Population, Provenance

    tabular = [Population(info) for info in tree_for("kuhn_poker()").infostates]
    _ = [pop.add(uniform_policy(pop.infostates), Provenance(0, "initial")) for pop in tabular]
    (job,) = oracle_jobs("ppo", "kuhn_poker()", [[Target(player=0, populations=tabular,
                                                         mixtures=(np.ones(1), np.ones(1)))]], 0, 0)
    with pytest.raises(ValueError, match="use_tree=True"):
        job.target(None)
