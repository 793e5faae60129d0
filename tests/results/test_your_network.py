"""The chapter *Your own network*: a network read from a file is analysed exactly as the book's own, and the
chapter's example network is the one its page describes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.results import evidence as ev

pytestmark = pytest.mark.results


@pytest.mark.parametrize("task", ["flipflop", "sine", "context"])
def test_a_task_chapters_solution_read_from_a_file_gives_the_chapters_numbers(results, task, tmp_path):
    """A bias-free, leak-free network, saved as a reader would (an .npz of W_hh, W_xh, W_hy), read back and analysed
    by the chapter's own route (``chapter.analyse_study``, as ``-p weights … -p task …`` runs it): the task chapter's
    ΔFVU and S_ΔT of its solution (seed 0), to the last bits."""
    from lib.own_network import chapter, load_rnn

    np.savez(tmp_path / "solution.npz", **ev.cached_task_weights(task, 1)[0])
    study = chapter.OwnNetworkStudy(weights=str(tmp_path / "solution.npz"), task=task)
    result, accuracy = chapter.analyse_study(load_rnn(study.model_file()), study)
    assert math.isnan(accuracy), "a task of the book is scored by the FVU alone"
    for kind in ("dfvu", "sens"):
        for block in ("RR", "CR", "CC"):
            ours, chapter_value = getattr(result.profile, kind)[block], ev.per_seed(results, task, kind, block)[0]
            assert (math.isnan(ours) and math.isnan(chapter_value)) or ours == pytest.approx(chapter_value, rel=1e-12)


def test_the_example_network_is_the_one_the_page_describes(results):
    from lib.own_network import chapter

    study = chapter.OwnNetworkStudy()
    r = {k.split("::", 1)[1]: v for k, v in results.items() if k.startswith("your_network::")}
    assert (r["own_n_hidden"], r["own_task"], r["own_leak"]) == (study.hidden, study.task, 1.0)
    assert r["own_biases"] == "recurrent and readout biases"  # nn.RNN's and nn.Linear's defaults
    assert r["own_fvu_full"] < 1, "the network does better than its targets' mean (FVU 1)"
    assert "held-out steps" in r["own_accuracy_sentence"], "a neurogym task is scored by its actions too"
