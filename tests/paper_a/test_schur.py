"""Tests of lib.paper_a.schur: the ordered real Schur form, the R/C split, the coupling masks and the ablation operator.

Tolerances are relative to ‖W‖_F. The main ones (reconstruction and orthogonality ≤ 1e-12, moduli non-increasing up to
1e-12·‖W‖_F) hold for every family below, defective ones included: the decomposition is backward stable. Only the
*eigenvalues* of a defective (Jordan) block are ill-conditioned (a size-k Jordan block's computed eigenvalues spread
over a circle of radius ~eps^(1/k)), so for those families the cross-check of n_R against scipy's own reordering keeps
the clusters well away from the threshold, and the modulus order is checked up to the form's own ``order_tolerance``
(how far the swaps moved any modulus), which the test bounds by eps^(1/k)·‖W‖_F.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg as sl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lib.paper_a import schur as S
from lib.paper_a.schur import (
    ABLATION_BLOCKS,
    SchurForm,
    SchurOrderingError,
    ablate,
    all_subsets,
    coupling_mass,
    diagonal_blocks,
    label,
    ordered_form,
    ordered_real_schur,
    split,
)

EPS = np.finfo(float).eps


# --------------------------------------------------------------------------------------------------------------------
# matrix families (all seeded)


def _orth(n: int, rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def _rot(theta: float, r: float = 1.0) -> np.ndarray:
    c, s = np.cos(theta), np.sin(theta)
    return r * np.array([[c, -s], [s, c]])


def _normal(eigs: list[complex], rng: np.random.Generator) -> np.ndarray:
    """A normal matrix P D Pᵀ with the given eigenvalues (complex ones stand for their conjugate pair)."""
    blocks = [_rot(np.angle(z), abs(z)) if abs(np.imag(z)) > 0 else np.array([[np.real(z)]]) for z in eigs]
    D = sl.block_diag(*blocks)
    P = _orth(D.shape[0], rng)
    return P @ D @ P.T


def _nonnormal(eigs: list[complex], rng: np.random.Generator, coupling: float = 0.5) -> np.ndarray:
    """P (D + strictly block-upper noise) Pᵀ with the given eigenvalues."""
    blocks = [_rot(np.angle(z), abs(z)) if abs(np.imag(z)) > 0 else np.array([[np.real(z)]]) for z in eigs]
    D = sl.block_diag(*blocks)
    n = D.shape[0]
    bid = S.block_coordinates(_blocks_of(blocks), n)
    U = np.where(bid[:, None] < bid[None, :], coupling * rng.standard_normal((n, n)), 0.0)
    P = _orth(n, rng)
    return P @ (D + U) @ P.T


def _blocks_of(blocks):
    out, start = [], 0
    for b in blocks:
        out.append((start, b.shape[0]))
        start += b.shape[0]
    return out


def _jordan(n: int, rng: np.random.Generator, k: int, lam: float) -> np.ndarray:
    """A size-k Jordan block at lam (defective) plus n-k eigenvalues well below 0.9·|lam|, in a random basis."""
    k = min(k, n)
    J = np.diag(np.concatenate([np.full(k, lam), rng.uniform(-0.5, 0.5, n - k) * abs(lam)]))
    J[:k, :k] += np.diag(np.ones(k - 1), 1)
    J += np.triu(0.3 * rng.standard_normal((n, n)), 1) * (np.arange(n)[:, None] >= k)
    P = _orth(n, rng)
    return P @ J @ P.T


def _jordan_complex(n: int, rng: np.random.Generator) -> np.ndarray:
    """A defective complex pair: real Jordan form [[R, I], [0, R]] with R a rotation, plus small eigenvalues."""
    R = _rot(0.7)
    J = np.block([[R, np.eye(2)], [np.zeros((2, 2)), R]])
    m = max(n - 4, 0)
    W = sl.block_diag(J, np.diag(rng.uniform(-0.5, 0.5, m))) if m else J
    P = _orth(W.shape[0], rng)
    return P @ W @ P.T


def make_matrix(kind: str, n: int, seed: int) -> np.ndarray:
    """A seeded test matrix of one family (``n`` may be raised to fit the family)."""
    rng = np.random.default_rng(seed)
    if kind == "gauss":
        return rng.standard_normal((n, n)) / np.sqrt(n)
    if kind == "orthogonal":
        return _orth(n, rng)
    if kind == "jordan":
        return _jordan(max(n, 2), rng, k=int(rng.integers(2, 4)), lam=float(rng.choice([1.0, -1.0])))
    if kind == "jordan_complex":
        return _jordan_complex(max(n, 4), rng)
    if kind == "repeated":  # repeated eigenvalues (a 3-fold real and a 2-fold complex pair), nonnormal
        return _nonnormal([1.0, 1.0, 1.0, 0.8 + 0.5j, 0.8 + 0.5j, 0.3], rng)
    if kind == "near_equal":  # moduli 1, 1 - 1e-9, 1 - 2e-9 ... with different arguments
        eigs = [(1 - 1e-9 * i) * np.exp(1j * (0.3 + 0.4 * i)) for i in range(4)] + [1 - 5e-9, -(1 - 7e-9), 0.2]
        return _nonnormal(eigs, rng)
    if kind == "threshold":  # one real and one complex block exactly at 0.9·ρ (ρ = 1)
        return _nonnormal([1.0, 0.9, 0.9j * np.exp(0.5j), 0.5, -0.3], rng, coupling=0.2)
    if kind == "normal":
        return _normal(list(rng.uniform(-1, 1, n // 2) + 1j * rng.uniform(-1, 1, n // 2)) + [0.4] * (n % 2), rng)
    if kind == "nilpotent":
        return np.triu(rng.standard_normal((n, n)), 1)
    if kind == "triangular":
        return np.triu(rng.standard_normal((n, n)))
    raise ValueError(kind)


KINDS = [
    "gauss",
    "orthogonal",
    "jordan",
    "jordan_complex",
    "repeated",
    "near_equal",
    "threshold",
    "normal",
    "nilpotent",
    "triangular",
]
DEFECTIVE = {"jordan": 3, "jordan_complex": 2, "nilpotent": None, "repeated": 3}  # largest Jordan size (None: n)


# --------------------------------------------------------------------------------------------------------------------
# helpers


def _scipy_count(W: np.ndarray, alpha: float) -> int:
    """n_R from scipy's sort callable (2-argument form for real input) with the same threshold and tie rule."""
    form = ordered_real_schur(W)
    thr = alpha * form.rho - S.SPLIT_RTOL * form.rho
    _, _, sdim = sl.schur(W, output="real", sort=lambda re, im: np.hypot(re, im) >= thr)
    return int(sdim)


def _check_form(form: SchurForm, W: np.ndarray, order_rtol: float = 1e-12, eig_rtol: float = 1e-6) -> None:
    n = W.shape[0]
    nw = np.linalg.norm(W) or 1.0
    assert form.T.dtype == np.float64 and form.Q.dtype == np.float64
    assert np.linalg.norm(form.Q @ form.T @ form.Q.T - W) / nw <= 1e-12
    assert np.linalg.norm(form.Q.T @ form.Q - np.eye(n)) <= 1e-12
    # quasi-triangular, the blocks tile the diagonal, 2×2 blocks are genuine conjugate pairs
    assert not np.any(np.tril(form.T, -2))
    pos = 0
    for (start, size), lam in zip(form.blocks, form.eigenvalues, strict=True):
        assert start == pos and size in (1, 2)
        assert (size == 2) == (form.T[start + 1, start] != 0 if start + 1 < n else False)
        assert (size == 2) == (lam.imag > 0)
        pos += size
    assert pos == n
    assert np.all(np.diff(form.moduli) <= order_rtol * nw)
    assert form.rho == max(form.moduli) and form.moduli[0] >= form.rho - order_rtol * nw
    # the moduli are the eigenvalues of W (up to eigenvalue conditioning; sorted moduli compared per coordinate)
    coord = np.sort(np.repeat(form.moduli, [s for _, s in form.blocks]))
    assert np.allclose(coord, np.sort(np.abs(np.linalg.eigvals(W))), atol=eig_rtol * nw)


# --------------------------------------------------------------------------------------------------------------------
# ordered_real_schur


@pytest.mark.parametrize("kind", ["gauss", "orthogonal", "normal", "triangular", "threshold", "near_equal"])
@pytest.mark.parametrize("n", [1, 2, 3, 8, 72])
def test_ordered_form_postconditions(kind, n):
    W = make_matrix(kind, n, seed=n)
    form = ordered_real_schur(W)
    _check_form(form, W)


def test_72_paper_size_against_scipy_partition():
    """The paper's N_h = 72: ordered form, and the R count agrees with scipy's sort callable (peers note: 29 = 29)."""
    for seed in range(3):
        W = make_matrix("gauss", 72, seed)
        form = ordered_real_schur(W)
        _check_form(form, W)
        for alpha in (0.5, 0.85, 0.9, 0.95, 1.0):
            assert split(form, alpha).n_R == _scipy_count(W, alpha)


def test_ordered_eigenvalues_match_numpy():
    W = make_matrix("gauss", 30, 4)
    form = ordered_real_schur(W)
    ref = np.linalg.eigvals(W)
    ref = ref[ref.imag >= 0]
    ref = ref[np.argsort(-np.abs(ref), kind="stable")]
    assert np.allclose(np.abs(form.eigenvalues), np.abs(ref), atol=1e-12)
    assert np.allclose(np.sort_complex(form.eigenvalues), np.sort_complex(ref), atol=1e-12)


def test_arrays_are_read_only_and_input_is_not_modified():
    W = make_matrix("gauss", 6, 0)
    W0 = W.copy()
    form = ordered_real_schur(W)
    assert np.array_equal(W, W0)
    for arr in (form.T, form.Q, form.moduli, form.eigenvalues, form.W, form.N):
        with pytest.raises(ValueError):
            arr[0] = 1.0


def test_accepts_torch_and_integer_input():
    torch = pytest.importorskip("torch")
    W = make_matrix("gauss", 5, 1)
    a = ordered_real_schur(torch.tensor(W, dtype=torch.float32))
    assert a.T.dtype == np.float64
    b = ordered_real_schur(np.eye(3, dtype=int))
    assert b.rho == 1.0 and coupling_mass(b) == 0.0


def test_zero_matrix():
    form = ordered_real_schur(np.zeros((4, 4)))
    assert form.rho == 0.0 and coupling_mass(form) == 0.0
    sp = split(form, 0.9)
    assert sp.n_R == 4  # every block ties with ρ = 0
    assert np.array_equal(ablate(form, ABLATION_BLOCKS).W, np.zeros((4, 4)))


def test_failed_swap_raises(monkeypatch):
    """dtrexc's info = 1 (blocks too close to swap) must raise, never return a partially ordered form."""
    real = ordered_form.lapack.dtrexc

    def failing(a, q, ifst, ilst, **kw):
        a, q, _ = real(a, q, ifst, ilst, **kw)
        return a, q, 1

    monkeypatch.setattr(ordered_form.lapack, "dtrexc", failing)
    with pytest.raises(SchurOrderingError, match="info=1"):
        ordered_real_schur(make_matrix("gauss", 10, 0))


def test_rescan_after_structure_change(monkeypatch):
    """If a swap splits a 2×2 block or merges two 1×1 blocks, the loop re-reads the tail of T.

    Such changes are rare in practice (none in the property sweep), so force the re-scan path at every move and
    check that it gives the same form as the fast path.
    """
    W = make_matrix("gauss", 30, 11)
    fast = ordered_real_schur(W)
    monkeypatch.setattr(ordered_form, "_sizes_in", lambda T, lo, hi: None)
    slow = ordered_real_schur(W)
    assert slow.blocks == fast.blocks
    assert np.array_equal(slow.T, fast.T) and np.array_equal(slow.Q, fast.Q)


def test_broken_ordering_is_caught(monkeypatch):
    """If the loop produced a mis-ordered form, the post-condition raises (the check can fail)."""
    do_nothing = lambda a, q, ifst, ilst, **kw: (a, q, 0)  # noqa: E731 (a swap that does nothing)
    monkeypatch.setattr(ordered_form.lapack, "dtrexc", do_nothing)
    with pytest.raises(SchurOrderingError, match="non-increasing"):
        ordered_real_schur(make_matrix("gauss", 10, 0))


# --------------------------------------------------------------------------------------------------------------------
# split


def test_split_masks_partition_N():
    W = make_matrix("gauss", 40, 2)
    form = ordered_real_schur(W)
    sp = split(form, 0.9)
    n, n_R = form.n, sp.n_R
    assert 0 < n_R < n
    m = sp.masks
    assert not (m["RR"] & m["CR"]).any() and not (m["RR"] & m["CC"]).any() and not (m["CR"] & m["CC"]).any()
    union = m["RR"] | m["CR"] | m["CC"]
    assert np.array_equal(np.where(union, form.T, 0.0), sp.N)
    assert np.array_equal(form.B + form.N, form.T)
    # eq. (5): T_C→R is the whole rows-R × cols-C block; RR/CC lie inside their sectors
    assert m["CR"][:n_R, n_R:].all() and m["CR"].sum() == n_R * (n - n_R)
    assert not m["RR"][n_R:, :].any() and not m["RR"][:, n_R:].any()
    assert not m["CC"][:n_R, :].any() and not m["CC"][:, :n_R].any()
    # 2×2 interiors are never couplings
    for start, size in form.blocks:
        if size == 2:
            assert not union[start : start + 2, start : start + 2].any()
    # the lower-left (R→C) block of T is zero
    assert not form.T[n_R:, :n_R].any()
    # gaps
    assert np.allclose(sp.block_gaps, form.moduli / form.rho - 0.9)
    assert sp.min_gap == pytest.approx(np.min(np.abs(sp.block_gaps)))
    assert (sp.block_gaps[sp.in_R] >= -S.SPLIT_RTOL).all() and (sp.block_gaps[~sp.in_R] < 0).all()
    assert sum(sp.masses()[k] ** 2 for k in ABLATION_BLOCKS) == pytest.approx(coupling_mass(form) ** 2)


def test_split_never_cuts_a_conjugate_pair():
    for seed in range(20):
        W = make_matrix("gauss", 20, seed)
        form = ordered_real_schur(W)
        for alpha in np.linspace(0.05, 1.0, 20):
            sp = split(form, float(alpha))
            assert any(start == sp.n_R for start, _ in form.blocks) or sp.n_R == form.n


def test_threshold_block_goes_to_R():
    """Eigenvalues exactly at α·ρ (a real one and a complex pair) belong to R under the documented tie rule."""
    W = make_matrix("threshold", 0, 0)
    form = ordered_real_schur(W)
    sp = split(form, 0.9)
    assert sp.n_R == 4  # 1 (ρ) + 1 (0.9) + 2 (0.9 e^{iθ} pair)
    assert sp.min_gap < 1e-12
    assert _scipy_count(W, 0.9) == 4


def test_split_monotone_in_alpha():
    form = ordered_real_schur(make_matrix("gauss", 50, 3))
    counts = [split(form, a).n_R for a in np.linspace(0.05, 1.0, 40)]
    assert counts == sorted(counts, reverse=True)
    assert split(form, 1.0).n_R in (1, 2)


# --------------------------------------------------------------------------------------------------------------------
# coupling mass and ablation


@pytest.mark.parametrize("n", [1, 2, 7, 72])
def test_normal_matrix_has_no_coupling(n):
    for W in (
        make_matrix("normal", n, n),
        make_matrix("orthogonal", n, n),
        (lambda A: A + A.T)(make_matrix("gauss", n, n)),
    ):
        form = ordered_real_schur(W)
        assert coupling_mass(form) <= 1e-12
        assert np.linalg.norm(ablate(form, ABLATION_BLOCKS).W - W) <= 1e-12 * np.linalg.norm(W)


def test_empty_remove_returns_W_exactly():
    W = make_matrix("gauss", 9, 5)
    for source in (W, ordered_real_schur(W)):
        ab = ablate(source, [])
        assert np.array_equal(ab.W, W) and ab.removed_mass == 0.0 and ab.label == "full"


def test_ablation_definition():
    W = make_matrix("gauss", 30, 6)
    form = ordered_real_schur(W)
    sp = split(form, 0.9)
    for sub in all_subsets():
        ab = ablate(form, sub, 0.9)
        assert ab.remove == sub
        delta = form.T - ab.T
        mask = np.zeros_like(form.T, dtype=bool)
        for k in sub:
            mask |= sp.masks[k]
        assert np.array_equal(delta != 0, mask & (form.T != 0))
        assert ab.removed_mass == pytest.approx(np.linalg.norm(delta) / np.linalg.norm(form.T), rel=1e-14)
        assert np.allclose(ab.W, form.Q @ ab.T @ form.Q.T, atol=1e-14 * np.linalg.norm(W))
        # spectrum untouched: the ablated matrix has the same eigenvalues
        assert np.allclose(np.sort(np.abs(np.linalg.eigvals(ab.W))), np.sort(np.abs(np.linalg.eigvals(W))), atol=1e-8)
    # recomputing from W gives the same result as reusing the form
    assert np.array_equal(ablate(W, ["CR"]).W, ablate(form, ["CR"]).W)
    # removing all three blocks removes exactly N
    assert ablate(form, ABLATION_BLOCKS).removed_mass == pytest.approx(coupling_mass(form), rel=1e-14)


def test_ablation_commutes_with_orthogonal_change_of_basis():
    """ablate(P W Pᵀ) = P ablate(W) Pᵀ.

    The ordered Schur form of P W Pᵀ is (P Q D, Dᵀ T D) with D block-diagonal orthogonal (signs of 1×1 blocks, a
    rotation/reflection of each 2×2 block's invariant plane): the ordered form is unique only up to that gauge. The
    masks are unions of block pairs, so ΔT transforms like T and Q ΔT Qᵀ is gauge-free. This needs *distinct*
    moduli: with tied moduli the order inside a tie is arbitrary and T_RR/T_CC differ. Random Gaussian matrices have
    distinct moduli almost surely (checked below).
    """
    for seed in range(4):
        rng = np.random.default_rng(100 + seed)
        W = make_matrix("gauss", 24, seed)
        P = _orth(24, rng)
        fa = ordered_real_schur(W)
        assert np.min(-np.diff(fa.moduli)) > 1e-6
        for sub in all_subsets():
            a = ablate(W, sub).W
            b = ablate(P @ W @ P.T, sub).W
            assert np.linalg.norm(P @ a @ P.T - b) <= 1e-10 * np.linalg.norm(W)


def test_slicing_an_unordered_form_is_wrong():
    """Regression: slicing scipy's *unordered* Schur form by the eigenvalue count n_R picks the wrong blocks.

    The count is right (scipy's sort callable finds the same n_R) but in the unordered form the first n_R coordinates
    are not the R blocks, so the "T_CC" and "T_C→R" slices hold other couplings and the ablated matrix differs.
    """
    W = make_matrix("gauss", 40, 7)
    form = ordered_real_schur(W)
    sp = split(form, 0.9)
    T_u, Q_u = sl.schur(W, output="real")
    starts, sizes = diagonal_blocks._scan(T_u, 0)
    bid = S.block_coordinates(zip(starts.tolist(), sizes.tolist(), strict=True), 40)
    N_u = np.where(bid[:, None] < bid[None, :], T_u, 0.0)
    n_R = sp.n_R
    wrong = T_u.copy()
    wrong[n_R:, n_R:] -= N_u[n_R:, n_R:]  # "remove T_CC" by slicing the unordered form
    W_wrong = Q_u @ wrong @ Q_u.T
    W_right = ablate(form, ["CC"]).W
    assert np.linalg.norm(W_wrong - W_right) > 1e-2 * np.linalg.norm(W)
    # the leading n_R coordinates of the unordered form are not the leading invariant subspace
    top = np.abs(np.linalg.eigvals(T_u[:n_R, :n_R]))
    assert top.min() < sp.threshold
    # whereas the ordered form's leading block holds exactly the R eigenvalues
    assert np.abs(np.linalg.eigvals(form.T[:n_R, :n_R])).min() >= sp.threshold


# --------------------------------------------------------------------------------------------------------------------
# subsets and labels


def test_subsets_and_labels():
    subs = all_subsets()
    assert len(subs) == 8 and len(set(subs)) == 8
    assert set(subs) == {c for r in range(4) for c in itertools.combinations(ABLATION_BLOCKS, r)}
    assert subs[0] == () and subs[-1] == ABLATION_BLOCKS
    assert [label(s) for s in subs][:4] == ["full", "−T_CC", "−T_RR", "−T_RR, −T_CC"]
    assert label(["CC", "RR"]) == "−T_RR, −T_CC"
    assert label(("CR",)) == "−T_C→R"


# --------------------------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    ("W", "exc", "match"),
    [
        (np.zeros((2, 3)), ValueError, r"W must be a square 2-D matrix; got shape \(2, 3\)"),
        (np.zeros(4), ValueError, "square 2-D"),
        (np.zeros((2, 2, 2)), ValueError, "square 2-D"),
        (np.zeros((0, 0)), ValueError, "non-empty"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), ValueError, "finite; it has 1 NaN/inf"),
        (np.array([[np.inf]]), ValueError, "finite"),
        (np.eye(2) * 1j, TypeError, "real"),
        (np.array([["a"]]), TypeError, "numeric"),
    ],
)
def test_bad_matrix(W, exc, match):
    with pytest.raises(exc, match=match):
        ordered_real_schur(W)
    with pytest.raises(exc, match=match):
        ablate(W, ["CC"])


@pytest.mark.parametrize("alpha", [0.0, -0.1, 1.5, float("nan"), "0.9", True])
def test_bad_alpha(alpha):
    form = ordered_real_schur(np.eye(2))
    with pytest.raises((ValueError, TypeError), match="alpha"):
        split(form, alpha)
    with pytest.raises((ValueError, TypeError), match="alpha"):
        ablate(np.eye(2), ["CC"], alpha)


@pytest.mark.parametrize("remove", [["XX"], ["RR", "T_CC"], "CC", [None]])
def test_bad_block_names(remove):
    with pytest.raises((ValueError, TypeError), match="remove"):
        ablate(np.eye(3), remove)


def test_split_needs_a_form():
    with pytest.raises(TypeError, match="SchurForm"):
        split(np.eye(3), 0.9)


# --------------------------------------------------------------------------------------------------------------------
# property-based sweep (derandomized: the same examples every run)


@settings(derandomize=True, max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    n=st.integers(1, 12),
    seed=st.integers(0, 2**16),
    log_scale=st.integers(-8, 8),
    alpha=st.sampled_from([0.5, 0.85, 0.9, 0.95, 1.0]),
)
def test_property_sweep(kind, n, seed, log_scale, alpha):
    W = make_matrix(kind, n, seed) * 10.0**log_scale
    nw = np.linalg.norm(W)
    form = ordered_real_schur(W)
    if kind in DEFECTIVE:
        # order up to the measured swap drift, which is bounded by the eigenvalue sensitivity eps^(1/k)
        k = DEFECTIVE[kind] or W.shape[0]
        assert form.order_tolerance <= 10 * EPS ** (1 / k) * nw
        bound = 10 * EPS ** (1 / k)
        _check_form(form, W, order_rtol=form.order_tolerance / (nw or 1.0), eig_rtol=bound)
    else:
        _check_form(form, W)
    sp = split(form, alpha)
    # blocks are atomic: n_R is a block boundary
    assert sp.n_R == form.n or any(start == sp.n_R for start, _ in form.blocks)
    if kind not in ("nilpotent",):  # a nilpotent matrix's computed spectrum is pure rounding noise at ~eps^(1/n)
        if kind not in DEFECTIVE or sp.min_gap > 1e-3:
            assert sp.n_R == _scipy_count(W, alpha)
    assert coupling_mass(form) <= 1.0 + 1e-12
    full = ablate(form, ABLATION_BLOCKS, alpha)
    assert full.removed_mass == pytest.approx(coupling_mass(form), rel=1e-12, abs=1e-300)
    assert np.array_equal(ablate(form, (), alpha).W, W)


def test_partitioned_form_agrees_on_partition_not_on_within_sector_order():
    """scipy's sort-callable form has the same R subspace and n_R, and the same T_C→R ablation (P_R W P_C is
    basis-free), but T_RR depends on the order inside R."""
    W = make_matrix("gauss", 40, 8)
    ordered = ordered_real_schur(W)
    part = S.partitioned_schur(W, 0.9)
    assert not part.fully_ordered and ordered.fully_ordered
    sp_o, sp_p = split(ordered, 0.9), split(part, 0.9)
    assert sp_o.n_R == sp_p.n_R
    n_R = sp_o.n_R
    angles = sl.subspace_angles(ordered.Q[:, :n_R], part.Q[:, :n_R])
    assert np.max(angles) < 1e-10
    nw = np.linalg.norm(W)
    assert np.linalg.norm(ablate(ordered, ["CR"]).W - ablate(part, ["CR"]).W) <= 1e-12 * nw
    assert np.linalg.norm(ablate(ordered, ["RR"]).W - ablate(part, ["RR"]).W) > 1e-3 * nw
    with pytest.raises(SchurOrderingError, match="only partitioned"):
        split(part, 0.5)


def test_block_structure_matches_form():
    form = ordered_real_schur(make_matrix("gauss", 15, 9))
    blocks, eig = S.block_structure(form.T)
    assert blocks == form.blocks and np.array_equal(eig, form.eigenvalues)


# --------------------------------------------------------------------------------------------------------------------
# extreme scales


def _example(n: int = 24, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (n, n)) / np.sqrt(n)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 2.0**900, 2.0**-900, 1e307])
def test_extreme_scales_give_the_scaled_form(scale):
    """W·c decomposes like W: the same blocks, split and masses, |λ| times c (T is unique up to signs in blocks)."""
    W = _example()
    ref, form = ordered_real_schur(W), ordered_real_schur(W * scale)
    assert form.blocks == ref.blocks and form.reconstruction_error() < 1e-13
    np.testing.assert_allclose(form.moduli / scale, ref.moduli, rtol=1e-12)
    assert form.rho == pytest.approx(ref.rho * scale, rel=1e-12)
    assert split(form).n_R == split(ref).n_R
    assert coupling_mass(form) == pytest.approx(coupling_mass(ref), rel=1e-12)
    assert ablate(form, ["CC"]).removed_mass == pytest.approx(ablate(ref, ["CC"]).removed_mass, rel=1e-12)
    part, part_ref = S.partitioned_schur(W * scale), S.partitioned_schur(W)
    np.testing.assert_allclose(np.sort(part.moduli) / scale, np.sort(part_ref.moduli), rtol=1e-12)


def test_exact_power_of_two_scale_is_bitwise():
    """A power-of-two scaling of W scales T exactly (up to the same power)."""
    W = _example()
    ref, form = ordered_real_schur(W), ordered_real_schur(np.ldexp(W, 700))
    assert np.array_equal(np.ldexp(form.T, -700), ref.T) and np.array_equal(form.Q, ref.Q)


def test_ordinary_matrices_are_not_rescaled(monkeypatch):
    """The scaled route is for extreme matrices only: ordinary ones take the exact same path as before."""
    monkeypatch.setattr(ordered_form, "_scaled_back", lambda *a: pytest.fail("an ordinary matrix was rescaled"))
    for c in (1.0, 1e-50, 1e50):
        ordered_real_schur(_example() * c)


def test_unrepresentable_schur_form_is_a_clear_error():
    with pytest.raises(ValueError, match=r"W's entries span 1\.7e\+308 … 1\.7e\+308, beyond what double precision"):
        ordered_real_schur(np.full((2, 2), 1.7e308))  # its eigenvalue 3.4e308 overflows


@pytest.mark.parametrize("remove", [None, 3, 2.5])
def test_ablate_names_a_non_collection_remove(remove):
    with pytest.raises(TypeError, match=rf"remove={remove!r} must be a collection"):
        ablate(np.eye(3), remove)
