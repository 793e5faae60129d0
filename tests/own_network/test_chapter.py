"""The chapter *Your own network*: its settings refuse what they cannot analyse before anything runs, its trials
have the shapes the analysis takes, the state dict its page saves is read back as the module it came from, and the
split it draws is the one that decides."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from lib.core.cache import save_checkpoint
from lib.own_network import chapter, deciding_split, lift_report, load_rnn


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    rnn, readout = nn.RNN(3, 8, batch_first=True), nn.Linear(8, 3)
    state = {f"rnn.{k}": v for k, v in rnn.state_dict().items()}
    state |= {f"readout.{k}": v for k, v in readout.state_dict().items()}
    save_checkpoint(root / "ok.pt", state)  # as the chapter saves its example network
    save_checkpoint(root / "upper.PT", state)
    torch.save(nn.LSTM(3, 8).state_dict(), root / "lstm.pt")
    (root / "notes.txt").write_text("not a model")
    torch.save(nn.Sequential(nn.Linear(2, 2)), root / "module.pt")  # a whole module, pickled
    (root / "broken.pt").write_bytes(b"PK\x03\x04 truncated")
    (root / "folder.pt").mkdir()
    return root, rnn, readout


REFUSED = {
    "missing": ({"weights": "missing.pt"}, FileNotFoundError, "weights='missing.pt' does not exist"),
    "folder": ({"weights": "folder.pt"}, FileNotFoundError, "weights='folder.pt' is a folder"),
    "not-a-model": ({"weights": "notes.txt"}, ValueError, "allowed files end in .npz, .pt, .pth"),
    "lstm": ({"weights": "lstm.pt"}, ValueError, "an LSTM's stacked gates; only nn.RNN (tanh) is supported"),
    "corrupt": ({"weights": "broken.pt"}, ValueError, "broken.pt"),
    "wrong-size": ({"weights": "ok.pt", "task": "ContextDecisionMaking-v0"}, ValueError, "has 3 inputs and 3 outputs"),
    "unknown-task": ({"task": "NoSuchTask-v0"}, ValueError, "neither a task registered with the book"),
    "continuous": ({"task": "ReachingDelayResponse-v0"}, ValueError, "has continuous actions (Box)"),
    "leak": ({"weights": "ok.pt", "task": "flipflop", "leak": 0.0}, ValueError, "leak=0.0 is out of range"),
    "leaky-example": ({"leak": 0.5}, ValueError, "the example network is a plain nn.RNN"),
    "alphas-order": ({"alphas": [0.9, 0.5]}, ValueError, "must be a list of at least two increasing values"),
    "alphas-float": ({"alphas": 0.9}, TypeError, "alphas=0.9 must be a list"),
    "hidden": ({"hidden": 1}, ValueError, "hidden=1 is out of range"),
    "does-not-solve": (
        {"weights": "ok.pt", "task": "flipflop"},
        chapter.NetworkDoesNotSolveTask,
        "does not solve task='flipflop' as loaded: its held-out FVU is",
    ),
    "nonlinearity": ({"nonlinearity": "relu"}, ValueError, "nonlinearity='relu' is not supported"),
    "pickled-module": (
        {"weights": "module.pt", "task": "flipflop"},
        ValueError,
        "holds a pickled Python object (a whole module?), which the book does not unpickle",
    ),
    "type": ({"weights": 3}, TypeError, "must be a path"),
}


@pytest.mark.parametrize(("given", "error", "message"), REFUSED.values(), ids=REFUSED.keys())
def test_bad_settings_are_refused_naming_the_parameter(files, given, error, message, monkeypatch):
    monkeypatch.chdir(files[0])
    with pytest.raises(Exception) as caught:  # noqa: B017,PT011 - the type is checked below, with the message
        chapter.OwnNetworkStudy(**given)
    assert isinstance(caught.value, error) and message in str(caught.value), repr(caught.value)


def test_the_saved_state_dict_is_read_back_as_the_module_it_came_from(files, monkeypatch):
    root, rnn, readout = files
    monkeypatch.chdir(root)
    for name in ("ok.pt", "upper.PT"):
        study = chapter.OwnNetworkStudy(weights=name, task="flipflop", analyse_anyway=True)  # untrained: fails it
        net = load_rnn(study.model_file())
        x = torch.randn(4, 7, 3, dtype=torch.float64)
        expected = readout.double()(rnn.double()(x)[0])
        np.testing.assert_allclose(net.run(x)[0].numpy(), expected.detach().numpy(), rtol=0, atol=1e-12)


def test_the_example_network_file_depends_on_every_training_setting():
    base = chapter.OwnNetworkStudy()
    assert base.model_file() == chapter.OwnNetworkStudy().model_file()
    others = [
        chapter.OwnNetworkStudy(**{k: v})
        for k, v in {"hidden": 32, "steps": 10, "lr": 0.01, "batch_size": 8, "seed": 1, "task": "flipflop"}.items()
    ]
    assert len({base.model_file(), *(s.model_file() for s in others)}) == 7


@pytest.mark.parametrize("task", ["PerceptualDecisionMaking-v0", "copy", "flipflop"])
def test_trials_have_the_shapes_the_analysis_takes(task):
    study = chapter.OwnNetworkStudy(task=task, n_trials=16)
    inputs, targets, mask = chapter.study_trials(study, heldout=False)
    assert inputs.shape[:2] == targets.shape[:2] and mask.shape == targets.shape and len(inputs) == chapter.N_TRAIN
    assert set(np.unique(mask)) <= {0.0, 1.0} and mask.any()
    if task == "copy":  # scored on the replay steps only
        assert not mask.all()
    if study.neurogym:
        assert len(chapter.study_trials(study, heldout=True)[0]) == 16
    else:  # a task of the book is held out as in its chapter
        with pytest.raises(ValueError, match="held out as in its chapter"):
            chapter.study_trials(study, heldout=True)


def test_step_accuracy_counts_the_masked_steps_where_the_largest_output_is_the_answer():
    net = load_rnn({"W_hh": np.zeros((2, 2)), "W_xh": np.eye(2), "W_hy": np.eye(2)})
    inputs = np.array([[[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]])  # the output follows the input
    targets = np.array([[[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]])
    mask = np.array([[[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]])  # the third step is padding
    assert chapter.step_accuracy(net, (inputs, targets, mask)) == 0.5


def test_a_leaky_networks_drawn_split_is_the_one_that_decides():
    rng = np.random.default_rng(3)
    W = rng.standard_normal((12, 12)) / np.sqrt(12)
    net = load_rnn({"W_hh": W, "W_xh": rng.standard_normal((12, 2)), "W_hy": rng.standard_normal((1, 12)), "a": 0.2})
    sp = deciding_split(net, 0.9)
    M = 0.8 * np.eye(12) + 0.2 * W
    np.testing.assert_allclose(sp.form.rho, np.abs(np.linalg.eigvals(M)).max(), rtol=1e-12)
    moduli = np.abs(np.asarray(sp.form.eigenvalues))
    assert np.array_equal(moduli >= sp.threshold, np.asarray(sp.in_R))
    assert sp.threshold == pytest.approx(0.9 * sp.form.rho, rel=1e-15)


def test_parameter_tensors_are_named_in_words():
    names = ["0.weight", "0.bias", "2.weight", "2.bias", "scale"]
    assert list(lift_report.tensor_names(names).values()) == [
        "layer 1 weights", "layer 1 biases", "layer 2 weights", "layer 2 biases", "scale",
    ]  # fmt: skip


def test_a_network_shows_itself_in_one_line_not_its_weights():
    net = load_rnn({"W_hh": np.eye(48), "W_xh": np.ones((48, 3)), "W_hy": np.ones((3, 48)), "b_h": np.zeros(48)})
    assert repr(net) == "RecurrentNet(N=48, 3 in, 3 out, b_h, a=1)"
