"""Paper B's chapters' answers to the questions several chapters answer (``lib.core.questions``).

The annulus and the Mexican hat each answer whether the moves c* and b* realise are orthogonal, by one criterion
(``lib.paper_b.relations.realised_cosine_bound``: the targets taken as orthogonal, as eq. 22 says); each network's
chapter is the ledger for its network.
"""

from __future__ import annotations

from lib.core import questions

#: Each network's claim that the realised moves are orthogonal.
CLAIMS = {"annulus": "B_c3_annulus_orthogonal", "mexican_hat": "B_c3_orthogonal_lifts"}


def orthogonality_answer(network: str, claims) -> tuple[str, str]:
    """The glue name and text (:data:`lib.core.questions.GLUE`) of chapter ``network``'s answer on its network: the
    verdict of its claim among ``claims`` that the realised moves are orthogonal (:data:`CLAIMS`)."""
    (claim,) = [c for c in claims if c.id == CLAIMS[network]]
    a = questions.answer("cb_orthogonal", network, network, holds=claim.holds)
    return questions.GLUE, questions.glue_value([a])
