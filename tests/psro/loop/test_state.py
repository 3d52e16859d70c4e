"""psro/loop/state.py: the common compute axes of every training loop's history (env_steps, eval_episodes, wall_time,
cpu_time), counted in LoopState and resumed exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from psro import FXP, NFSP, PSRO, FictitiousSelfPlay, League, SelfPlay
from psro.loop.state import HISTORY_COLUMNS, EpisodeCounter
from psro.offline import COffeEPSRO, OfflinePSRO

AXES = ["env_steps", "eval_episodes", "wall_time", "cpu_time"]
PPO = dict(oracle="ppo", evaluator="monte_carlo", episodes_per_profile=20, approx_gap_every=None,
           oracle_options={"total_steps": 256, "num_envs": 8, "num_steps": 16, "eval_episodes": 16, "hidden": [8]})


class ExactModel:
    """The true game as its own model (offline PSRO is then PSRO)."""

    members = 2

    def model_game(self, kind, uncertainty=0.0):
        import pyspiel

        return pyspiel.load_game("kuhn_poker")


def monotone(history: pd.DataFrame) -> None:
    assert set(HISTORY_COLUMNS) <= set(history.columns)
    for column in AXES:
        values = history[column].to_numpy(dtype=np.float64)
        assert np.isfinite(values).all() and (values >= 0).all(), column
        assert (np.diff(values) >= 0).all(), f"{column} decreases: {values}"


LOOPS = {
    "psro exact": lambda: PSRO("kuhn_poker", progress=False),
    "jpsro exact": lambda: PSRO("kuhn_poker(players=3)", meta_solver="mgcce", progress=False),
    "psro ppo": lambda: PSRO("kuhn_poker", progress=False, **PPO),
    "self_play ppo": lambda: SelfPlay("kuhn_poker", progress=False, **PPO),
    "fictitious_self_play ppo": lambda: FictitiousSelfPlay("kuhn_poker", progress=False, **PPO),
    "fxp exact": lambda: FXP("kuhn_poker", progress=False),
    "league ppo": lambda: League("kuhn_poker", progress=False, seed=3, algorithm_options={"win_rate_episodes": 24},
                                 **{k: v for k, v in PPO.items() if k not in ("evaluator", "episodes_per_profile")}),
    "nfsp": lambda: NFSP("kuhn_poker", progress=False, episodes_per_profile=20,
                         algorithm_options={"steps_per_iteration": 128, "hidden": [8], "learning_starts": 32}),
    "offline_psro": lambda: OfflinePSRO(pd.DataFrame(), game="kuhn_poker", model=ExactModel()),
    "coffee_psro": lambda: COffeEPSRO(pd.DataFrame(), game="kuhn_poker", model=ExactModel()),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LOOPS))
def test_every_loop_history_has_monotone_compute_axes(name):
    history = LOOPS[name]().run(iterations=2)
    monotone(history)
    learned = "ppo" in name or name == "nfsp"
    env_steps = history["env_steps"].to_numpy()
    if learned:   # training steps are spent every iteration
        assert (np.diff(env_steps) > 0).all()
    else:         # an exact oracle takes no environment step
        assert (env_steps == 0).all()
    if "ppo" in name:   # ... and the responses' values (beside the uniform policy's) are played
        assert (np.diff(history["eval_episodes"]) > 0).all()
    assert history["response_ok"].astype(bool).all()


def test_learned_psro_counts_what_its_oracle_and_meta_game_used():
    solver = PSRO("kuhn_poker", progress=False, **PPO)
    history = solver.run(iterations=2)
    # each iteration: one PPO response per player of 256 learner steps (two rollouts of 8 x 16)
    assert history["env_steps"].tolist() == [512, 1024, 1536]
    # ... each valued over 16 episodes, beside 16 of the uniform policy, plus the meta-game's 20 per profile
    per_response = 16 + 16
    expected = [2 * per_response * (t + 1) + 20 * (t + 1) ** 2 for t in range(3)]
    assert history["eval_episodes"].tolist() == expected
    assert history["episodes"].tolist() == [20 * (t + 1) ** 2 for t in range(3)]


def test_approx_gap_episodes_count_as_measurement():
    solver = PSRO("kuhn_poker", progress=False, **{**PPO, "approx_gap_every": 0,
                                                   "approx_gap_options": {"episodes": 50, "total_steps": 256}})
    history = solver.run(iterations=1)
    last, before = history.iloc[-1], history.iloc[0]
    assert not np.isnan(last["approx_gap"])
    # the approximate gap's fresh responses and its sampled values (50 per value, 3 values) went into eval_episodes
    spent = last["eval_episodes"] - before["eval_episodes"] - (80 - 20) - 2 * 32
    assert spent >= 3 * 50
    assert solver.state.eval_episodes() == last["eval_episodes"]


def test_a_learned_run_killed_and_resumed_counts_as_the_uninterrupted_one(tmp_path):
    class Killed(Exception):
        pass

    def die_after_1(row):
        if row["iteration"] == 1:
            raise Killed   # after the row of iteration 1, before its checkpoint

    straight = PSRO("kuhn_poker", progress=False, **PPO).run(iterations=3)
    first = PSRO("kuhn_poker", progress=False, checkpoint_dir=tmp_path, **PPO)
    with pytest.raises(Killed):
        first.run(iterations=3, callback=die_after_1)
    resumed = PSRO.resume(tmp_path, progress=False)
    assert resumed.iteration == 0 and resumed.state.env_steps == 512
    history = resumed.run(iterations=3)
    for column in ("env_steps", "eval_episodes", "episodes"):
        assert history[column].tolist() == straight[column].tolist()
    monotone(history)
    assert history["cpu_time"].iloc[0] == pytest.approx(first.history["cpu_time"].iloc[0])   # restored, not reset


def test_episode_counter_counts_plays_and_responses():
    from psro.oracles import BestResponse

    counter = EpisodeCounter(lambda game, policies, count, seed: np.zeros((count, 2)))
    counter.play(None, [], 7, 0)
    assert counter.response(BestResponse(0, np.zeros((1, 2)), 0.0)).value == 0.0   # an exact response: nothing
    assert counter.episodes == 7


def test_a_measurement_plays_paired_episodes_by_default():
    # the loops' approximate gap counts its episodes through EpisodeCounter(): they are paired_returns' (keyed by
    # episode, so the batch width changes nothing), not sample_returns'
    from psro.evaluation.env_play import paired_returns, sample_returns
    from psro.policies import UniformPolicy

    profile = [UniformPolicy(3), UniformPolicy(3)]
    counter = EpisodeCounter()
    played = counter.play("leduc_poker", profile, 200, 4)
    assert counter.episodes == 200
    assert np.array_equal(played, paired_returns("leduc_poker", profile, 200, 4, num_envs=5))
    assert not np.array_equal(played, sample_returns("leduc_poker", profile, 200, 4))
