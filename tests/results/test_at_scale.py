"""The chapter *Paper B at a million parameters*: its network has a million parameters, its known answer comes out, the
lifts without the dense J (column blocks, per-layer factors) agree with the dense one within the bound
``tests/paper_b/test_streaming.py`` states, and the re-solved flow follows the rotation better than the frozen one
(paper B's finding, at this size)."""

from __future__ import annotations

import pytest

from lib.core.lines import line

pytestmark = pytest.mark.results

CH = "at_scale::"


def test_the_network_has_a_million_parameters(results):
    assert results[CH + "scale_parameters"] >= 10**6


def test_the_first_layer_direction_realises_the_rotation_to_round_off(results):
    """The known answer: dW₁ = W₁Ω gives J c = X f exactly (f(R_t x) is f with W₁R_t), so the chapter's forward-mode
    product must reach the book's round-off line, and the page must say so."""
    assert results[CH + "scale_hand_residual"] <= line("round_off")
    assert results[CH + "scale_known_answer"].startswith("confirmed")


def test_the_streamed_lift_agrees_with_the_dense_one_within_its_bound(results):
    assert results[CH + "scale_agreement"] <= results[CH + "scale_bound"]
    assert results[CH + "scale_passes"] == 3  # J's norms and Grams, then c*, then b*
    assert results[CH + "scale_streaming_gib"] < results[CH + "scale_dense_gib"]
    assert results[CH + "scale_factors_mib"] < 2**10 * results[CH + "scale_streaming_gib"]


def test_the_resolved_flow_follows_the_rotation_and_the_frozen_one_drifts(results):
    assert results[CH + "scale_resolved_dist"] < results[CH + "scale_frozen_dist"]
    assert results[CH + "scale_flow_text"].startswith("stays closer")
