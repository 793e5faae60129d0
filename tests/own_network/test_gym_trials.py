"""neurogym's trials as the book's arrays (lib.own_network.gym_trials), on the pins of requirements.txt."""

from __future__ import annotations

import numpy as np
import pytest

from lib.own_network import gym_trials


def test_the_same_seed_draws_the_same_trials_and_another_seed_others():
    a = gym_trials.neurogym_trials(gym_trials.DEFAULT_TASK, 16, seed=3)
    b = gym_trials.neurogym_trials(gym_trials.DEFAULT_TASK, 16, seed=3)
    c = gym_trials.neurogym_trials(gym_trials.DEFAULT_TASK, 16, seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], c[0])


def test_targets_are_the_one_hot_ground_truth_and_the_mask_marks_each_trial():
    inputs, targets, mask, labels = gym_trials.neurogym_trials("ContextDecisionMaking-v0", 32, seed=0)
    assert inputs.shape[:2] == targets.shape[:2] == mask.shape == labels.shape
    assert inputs.shape[2] == 5 and targets.shape[2] == 3  # fixation, two modalities × two stimuli; three actions
    on = mask.astype(bool)
    assert len(set(on.sum(1))) > 1, "this task's trials differ in length: the shorter ones are padded"
    np.testing.assert_array_equal(targets[on].argmax(1), labels[on])
    assert (targets[on].sum(1) == 1).all() and (targets[~on] == 0).all() and (inputs[~on] == 0).all()
    assert set(np.unique(labels[on])) == {0, 1, 2}


def test_a_perceptual_decision_trial_fixates_then_answers_once():
    inputs, targets, mask, labels = gym_trials.neurogym_trials(gym_trials.DEFAULT_TASK, 64, seed=0)
    assert labels.shape[1] == 22 and mask.all()  # 100 ms fixation, 2 s stimulus, 100 ms decision at dt = 100 ms
    assert (labels[:, :-1] == 0).all() and set(labels[:, -1]) == {1, 2}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "NoSuchTask-v0"}, "task='NoSuchTask-v0' is not allowed; choose one of"),
        ({"n_trials": 0}, "n_trials=0 is out of range"),
        ({"seed": -1}, "seed=-1 is out of range"),
    ],
)
def test_bad_arguments_name_what_is_allowed(kwargs, message):
    given = {"name": gym_trials.DEFAULT_TASK, "n_trials": 4, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        gym_trials.neurogym_trials(given.pop("name"), given.pop("n_trials"), **given)
