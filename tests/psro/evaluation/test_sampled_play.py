"""Sampled play over the compiled play tree: simultaneous-move games as they are."""

import numpy as np
import pyspiel

from psro.evaluation.exact import SequenceFormEvaluator
from psro.evaluation.sampled_play import ProfileSampler, build_play_tree
from psro.policies import random_policies, realization_plans
from psro.sequence_form.game_tree import build_game_tree


def test_simultaneous_goofspiel_samples_match_the_exact_payoffs():
    # a simultaneous node is seat 0's decision, then seat 1's at the same state (as in the game tree); random
    # behaviour policies, so a wrong seat order or a lost pending choice would move the means
    tree = build_game_tree(pyspiel.load_game("goofspiel(num_cards=3,imp_info=True,points_order=descending)"))
    rng = np.random.default_rng(0)
    policies = [random_policies(info, 1, rng) for info in tree.infostates]
    plans = [realization_plans(pol, info) for pol, info in zip(policies, tree.infostates)]
    exact = SequenceFormEvaluator(tree).payoffs(plans).reshape(2)
    episodes = 40_000
    stats = ProfileSampler(build_play_tree(tree), policies, seed=1)(np.array([[0, 0, 0, episodes]]))
    mean = stats.total[0] / episodes
    stderr = np.sqrt(stats.total_sq[0] / episodes - mean ** 2) / np.sqrt(episodes)
    assert np.all(np.abs(mean - exact) <= 4 * stderr + 1e-12)
    assert abs(exact[0] + exact[1]) < 1e-12 and abs(exact[0]) > 0.05   # zero-sum, and the profile is not even
