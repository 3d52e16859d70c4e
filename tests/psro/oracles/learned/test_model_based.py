"""The model-based response (psro/oracles/learned/model_based.py): the estimated decision problem, its exact
solution, and the response against known best responses."""

import math

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psro.config.model import PSROConfig
from psro.evaluation.exact import SequenceFormEvaluator
from psro.oracles import make_oracle, oracle_capabilities
from psro.oracles.exact import best_response
from psro.oracles.learned.decisions import DecisionModel, DecisionSampler, sample_decisions
from psro.oracles.learned.env import OpponentMixture, VectorEnv
from psro.oracles.learned.model_based import ModelBRConfig, solve_decisions, train_model_br, view_size
from psro.oracles.learned.observation_table import ObservationTablePolicy
from psro.policies import decode_policy, encode_policy, random_policies, realization_plans
from psro.policies.acting import TabularStatePolicy, UniformPolicy
from psro.sequence_form.game_tree import build_game_tree


@pytest.fixture(scope="module")
def kuhn():
    return build_game_tree(pyspiel.load_game("kuhn_poker"))


def _value(tree, player, table, opponent_plan):
    plans = [None, None]
    plans[player] = realization_plans(table[None], tree.infostates[player])
    plans[1 - player] = opponent_plan[None]
    return float(SequenceFormEvaluator(tree).payoffs(plans).reshape(2)[player])


def test_solve_by_hand():
    # state 0: action 0 ends with 1 or -1 (mean 0), action 1 leads to state 1 (twice) or state 2 (once);
    # state 1: action 0 ends with 3; state 2: action 0 ends with -3, action 1 ends with -1.
    # V(1) = 3, V(2) = -1, Q(0, 1) = (2 * 3 - 1) / 3 = 5 / 3.
    model = DecisionModel(np.zeros((3, 1), np.float32), np.ones((3, 2), bool),
                          state=np.array([0, 0, 0, 0, 0, 1, 1, 2, 2]), action=np.array([0, 0, 1, 1, 1, 0, 0, 0, 1]),
                          next_state=np.array([-1, -1, 1, 1, 2, -1, -1, -1, -1]),
                          reward=np.array([1.0, -1.0, 0.0, 0.0, 0.0, 3.0, 3.0, -3.0, -1.0]))
    q, v = solve_decisions(model)
    assert q[0].tolist() == [0.0, pytest.approx(5 / 3)]
    assert v.tolist() == [pytest.approx(5 / 3), 3.0, -1.0]
    assert q[1, 1] == -math.inf   # never tried


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), scale=st.sampled_from([1e-3, 1.0, 1e4]), offset=st.floats(-50, 50))
def test_solution_moves_with_affine_returns(seed, scale, offset):
    """Scaling the returns scales Q; adding a constant to every return adds it to Q (each episode ends once)."""
    rng = np.random.default_rng(seed)
    n = 60
    state = rng.integers(0, 3, n)
    action = rng.integers(0, 2, n)
    # a chain 0 -> 1 -> 2: state s may continue to s + 1 only
    going = (state < 2) & (rng.random(n) < 0.5)
    next_state = np.where(going, state + 1, -1)
    reward = np.where(going, 0.0, rng.normal(size=n))
    base = DecisionModel(np.zeros((3, 1), np.float32), np.ones((3, 2), bool), state, action, next_state, reward)
    moved = DecisionModel(base.observations, base.legal, state, action, next_state,
                          np.where(going, 0.0, scale * reward + offset))
    q, _ = solve_decisions(base)
    q2, _ = solve_decisions(moved)
    finite = np.isfinite(q)
    assert np.array_equal(finite, np.isfinite(q2))
    assert np.allclose(q2[finite], scale * q[finite] + offset, rtol=1e-9, atol=1e-9 * (abs(offset) + scale))


def test_sampled_states_are_information_states(kuhn):
    env = VectorEnv(kuhn.game, 1, OpponentMixture.single([UniformPolicy(2), None]), num_envs=16, rng=0)
    model = sample_decisions(env, 3200, max_states=100)
    assert model.num_states == kuhn.infostates[1].num_infostates
    assert not model.overflow
    # every recorded return is a return of Kuhn poker, and a continuing decision has none
    assert set(np.unique(model.reward[model.next_state < 0])) <= {-2.0, -1.0, 1.0, 2.0}
    assert np.all(model.reward[model.next_state >= 0] == 0)


@pytest.mark.parametrize("player", [0, 1])
def test_exact_best_response_on_kuhn(kuhn, player):
    """Against a random mixture of three random policies, enough play gives the exact best response's value."""
    rng = np.random.default_rng(5 + player)
    other = 1 - player
    tables = random_policies(kuhn.infostates[other], 3, rng)
    weights = np.array([0.5, 0.3, 0.2])
    seats = [tuple(TabularStatePolicy(t, kuhn.infostates[other]) if q == other else None for q in range(2))
             for t in tables]
    mixed = weights @ realization_plans(tables, kuhn.infostates[other])
    best = best_response(kuhn, player, [mixed if q == other else None for q in range(2)]).value
    result = train_model_br(kuhn.game, player, OpponentMixture(tuple(seats), weights),
                            ModelBRConfig(total_steps=60_000, eval_episodes=400, seed=1))
    assert isinstance(result.policy, ObservationTablePolicy)
    value = _value(kuhn, player, result.policy.to_tabular(kuhn, player), mixed)
    assert best - value < 0.01
    assert abs(result.evaluation.mean - value) < 4 * result.evaluation.stderr + 1e-9
    # about the budget: every episode started before the cut-off is finished
    assert 60_000 <= result.training_steps < 1.1 * 60_000


def test_oracle_registered_and_saved(kuhn):
    assert oracle_capabilities("model_br").learned and not oracle_capabilities("model_br").needs_tree
    oracle = make_oracle("model_br", None, game="kuhn_poker", total_steps=5000, eval_episodes=100)
    from psro.oracles.base import Target
    from psro.policies.population import PolicyPopulation, Provenance

    pops = [PolicyPopulation(p, 2) for p in range(2)]
    for pop in pops:
        pop.add(UniformPolicy(2), Provenance(0, "initial"))
    br = oracle.respond(0, Target(player=0, populations=pops, mixtures=(np.ones(1), np.ones(1))), key=(1, 0))
    assert isinstance(br.policy, ObservationTablePolicy) and br.policy.provenance.oracle == "model"
    again = decode_policy(*encode_policy(br.policy))
    obs = np.asarray(br.policy.observations)
    mask = np.ones((len(obs), 2), bool)
    assert np.array_equal(again.probabilities_np(obs, mask), br.policy.probabilities_np(obs, mask))
    assert again.provenance == br.policy.provenance


def test_falls_back_on_the_neural_response_past_max_states(kuhn, caplog):
    result = train_model_br(kuhn.game, 0, OpponentMixture.single([None, UniformPolicy(2)]),
                            ModelBRConfig(total_steps=20_000, num_envs=32, max_states=2, eval_episodes=50))
    assert type(result.policy).__name__ == "NeuralPolicy" and result.policy.mode == "greedy"
    assert "max_states=2" in caplog.text and "neural_br" in caplog.text
    # the fitted Q-network is the best response to the uniform policy (value 0.5, as the table's)
    uniform = realization_plans(np.full((1, 6, 2), 0.5), kuhn.infostates[1])[0]
    assert _value(kuhn, 0, result.policy.to_tabular(kuhn, 0), uniform) == pytest.approx(0.5, abs=1e-12)


@pytest.mark.parametrize("field, value", [("total_steps", 0), ("num_envs", -1), ("max_states", 0),
                                          ("eval_episodes", 1.5)])
def test_bad_settings_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        ModelBRConfig(**{field: value})


def test_budget_below_one_decision_per_game():
    with pytest.raises(ValueError, match="total_steps .* num_envs"):
        ModelBRConfig(total_steps=100, num_envs=1024)


def test_later_rounds_act_uniformly_where_the_solution_knows_no_action(kuhn):
    """A state whose actions were never tried has greedy action -1: the behaviour explores there instead of
    playing action 0, which may be illegal (it was on liar's dice)."""
    env = VectorEnv(kuhn.game, 0, OpponentMixture.single([None, UniformPolicy(2)]), num_envs=8, rng=0)
    sampler = DecisionSampler(env, max_states=100)
    sampler.play(80)
    greedy = np.full(sampler.model().num_states, -1)
    sampler.play(80, greedy, explore=0.0)   # every step would be greedy, but nothing is known
    model = sampler.model()
    assert model.legal[model.state, model.action].all()
    assert set(np.unique(model.action)) == {0, 1}


def test_a_table_keyed_by_part_of_the_observation(kuhn):
    """key_size=5 keys Kuhn's first player by its seat and card (the first entries of the tensor): one row per
    card, serving both of its decisions, and acting on whole tensors."""
    result = train_model_br(kuhn.game, 0, OpponentMixture.single([None, UniformPolicy(2)]),
                            ModelBRConfig(total_steps=4000, num_envs=64, eval_episodes=50, key_size=5))
    table = result.policy
    assert (len(table), table.key_size, table.obs_dim) == (3, 5, 11)
    tabular = table.to_tabular(kuhn, 0)
    info = kuhn.infostates[0]
    card = [key[0] for key in info.keys]   # (the information-state string starts with the card)
    for i in range(info.num_infostates):
        for j in range(info.num_infostates):
            if card[i] == card[j]:
                assert np.array_equal(tabular[i], tabular[j])
    again = decode_policy(*encode_policy(table))
    assert (again.key_size, again.obs_dim) == (5, 11)
    obs = np.eye(11, dtype=np.float32)[:4]
    assert np.array_equal(again.probabilities_np(obs, np.ones((4, 2), bool)),
                          table.probabilities_np(obs, np.ones((4, 2), bool)))


def test_a_table_saved_before_keys_reads_as_keyed_by_the_whole_observation():
    table = ObservationTablePolicy(np.eye(3, dtype=np.float32), np.full((3, 2), 0.5))
    architecture = {k: v for k, v in table.architecture().items() if k != "key_size"}
    again = ObservationTablePolicy.from_arrays(architecture, table.to_arrays())
    assert (again.key_size, again.obs_dim) == (3, 3)


def test_a_key_longer_than_the_observation_is_refused(kuhn):
    with pytest.raises(ValueError, match=r"^oracle_options: key_size \(12\) must be at most .* \(11\)"):
        train_model_br(kuhn.game, 0, OpponentMixture.single([None, UniformPolicy(2)]),
                       ModelBRConfig(total_steps=2000, num_envs=64, eval_episodes=50, key_size=12))
    with pytest.raises(ValueError, match="key_size"):
        ModelBRConfig(key_size=0)


def test_a_table_keyed_by_the_board_view_on_the_board_games():
    """key_size: view is the board as the player sees it: 3 entries a cell on phantom tic-tac-toe, 9 on dark hex
    (the start of their information-state tensors, kernels.tensors); a game without a board view is refused."""
    assert view_size(pyspiel.load_game("phantom_ttt")) == 27
    assert view_size(pyspiel.load_game("dark_hex(num_rows=3,num_cols=3,gameversion=adh)")) == 81
    game = pyspiel.load_game("dark_hex(num_rows=2,num_cols=2)")
    state = game.new_initial_state()
    state.apply_action(3)   # (black takes the last cell: only black sees it)
    views = [np.asarray(state.information_state_tensor(p))[:view_size(game)].reshape(4, 9) for p in (0, 1)]
    assert (views[0].sum(axis=1) == 1).all() and (views[1].sum(axis=1) == 1).all()   # (one state a cell)
    assert (views[0][:3] == views[1][:3]).all() and not (views[0][3] == views[1][3]).all()
    tensor = state.information_state_tensor(1)
    result = train_model_br(game, 0, OpponentMixture.single([None, UniformPolicy(4)]),
                            ModelBRConfig(total_steps=2000, num_envs=64, eval_episodes=20, key_size="view"))
    assert (result.policy.key_size, result.policy.obs_dim) == (36, len(tensor))
    with pytest.raises(ValueError, match="^oracle_options: key_size 'view' .* leduc_poker\\(\\) has none"):
        PSROConfig(game="leduc_poker", oracle="model_br", oracle_options={"key_size": "view"}).validate()
    with pytest.raises(ValueError, match="^key_size: must be a positive int, 'view' .* got 'veiw'"):
        ModelBRConfig(key_size="veiw")


def test_the_names_before_the_rename_resolve_for_one_release_with_a_warning():
    import psro.oracles.learned.model_based as model_based

    for old, new in (("ModelConfig", ModelBRConfig), ("train_model", train_model_br)):
        with pytest.warns(DeprecationWarning, match=f"model_based.{old} is deprecated .* it is "
                                                    f"psro.oracles.learned.model_based.{new.__name__}"):
            assert getattr(model_based, old) is new
    with pytest.raises(AttributeError, match="has no attribute 'train_modle'"):
        model_based.train_modle
