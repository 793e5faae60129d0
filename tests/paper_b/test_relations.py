"""lib.paper_b.relations: cosines of c* and b*, and shares over layer blocks."""

import numpy as np
import pytest
import torch

from lib.paper_b import relations
from lib.paper_b.symmetry import cosine


def test_cosine_known_values():
    assert cosine(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 2.0])) == 0.0
    assert cosine(np.array([1.0, 1.0]), np.array([2.0, 2.0])) == pytest.approx(1.0)
    assert np.isnan(cosine(np.zeros(3), np.ones(3)))
    with pytest.raises(ValueError, match="lengths 2 and 3"):
        cosine(np.ones(2), np.ones(3))


def test_direction_relation_realised_moves():
    J = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], dtype=torch.float64)
    c = torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)
    b = torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64)
    out = relations.direction_relation(J, c, b)
    assert out["cos_param"] == 0.0  # orthogonal in parameters ...
    assert out["cos_function"] == pytest.approx(1 / np.sqrt(2))  # ... not in what they realise
    with pytest.raises(ValueError, match="length 3"):
        relations.direction_relation(J, c[:2], b)


def test_block_shares():
    shares = relations.block_shares(np.array([1.0, 1.0, 2.0]), [("a", slice(0, 2)), ("b", slice(2, 3))])
    assert shares == {"a": 0.5, "b": 0.5}
    with pytest.raises(ValueError, match="cover 2 of 3"):
        relations.block_shares(np.ones(3), [("a", slice(0, 2))])
    with pytest.raises(ValueError, match="non-negative"):
        relations.block_shares(np.array([-1.0, 1.0]), [("a", slice(0, 2))])
