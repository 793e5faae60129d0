"""The book's own arithmetic probe: the operations whose bits the book depends on, each hashed.

Run under the pins in a fresh process, the hashes are the same on every machine whose arithmetic is the book's
(``lib.core.arithmetic``): Intel's or another vendor's x86-64 CPU with AVX2 and FMA, the same library versions.
``tests/data/arithmetic_probe.json`` holds the expected hashes and ``tests/test_arithmetic_probe.py`` compares them in
``make test``, so a CPU or library that rounds differently fails there, naming the operation, before any chapter's
numbers are compared. The first 24 operations are those of ``../shared/tools/arithmetic_probe.py`` (the same inputs,
so their hashes compare with that tool's files); the ``book_*`` ones go through the book's own code: the seed-batched
training step, the ordered Schur form, the parameter Jacobian and the gauged lift; the ``book_lift_step_*`` ones
split that lift into its steps, one per routine of ``lib.kernels.cpu_linalg`` (every one of them: a test fails on a
routine the probe does not hash), so a step that rounds by CPU names itself rather than the lift as a whole.

    python -m bookrun.arithmetic python -m lib.arithmetic_probe                    # this machine's hashes (JSON)
    python -m bookrun.arithmetic python -m lib.arithmetic_probe --check tests/data/arithmetic_probe.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable

import numpy as np
import torch


def _hash(x) -> str:
    a = x.detach().contiguous().numpy() if isinstance(x, torch.Tensor) else np.ascontiguousarray(x)
    return hashlib.sha1(a.tobytes()).hexdigest()[:12]


def library_operations() -> dict[str, str]:
    """torch's, numpy's and scipy's kernels as the book calls them (the shared probe's 24 operations, same inputs)."""
    import scipy.linalg

    g = torch.Generator().manual_seed(0)
    rng = np.random.default_rng(0)
    out: dict[str, str] = {}
    W = torch.randn(72, 72, generator=g) / 9
    X = torch.randn(64, 72, generator=g)
    out["torch_matmul_f32_64x72x72"] = _hash(X @ W)
    hs = torch.zeros(64, 72)
    for _ in range(200):
        hs = torch.tanh(hs @ W.T + X)
    out["torch_tanh_recurrence_f32_200"] = _hash(hs)
    Wb, Hb = torch.randn(5, 64, 64, generator=g) / 8, torch.randn(5, 64, 64, generator=g)
    out["torch_baddbmm_f32_5x64"] = _hash(torch.baddbmm(Hb, Hb, Wb))
    out["torch_sigmoid_f32"] = _hash(torch.sigmoid(Hb))
    out["torch_sum_f32_1e6"] = _hash(torch.randn(1_000_000, generator=g).sum())
    w = W.clone().requires_grad_(True)
    loss = ((torch.tanh(X @ w) - 0.5) ** 2).mean()
    loss.backward()
    out["torch_autograd_grad_f32"] = _hash(w.grad)
    opt = torch.optim.Adam([w], lr=1e-3)
    opt.step()
    out["torch_adam_step_f32"] = _hash(w)
    J = torch.randn(408, 300, generator=g, dtype=torch.float64)
    out["torch_gram_f64_408x300"] = _hash(J.T @ J)
    out["torch_svdvals_f64_408x300"] = _hash(torch.linalg.svdvals(J))
    out["torch_eigvalsh_f64_300"] = _hash(torch.linalg.eigvalsh(J.T @ J))
    torch.manual_seed(0)  # the shared probe initialises its MLP from the global generator: the same here
    mlp = torch.nn.Sequential(torch.nn.Linear(2, 32), torch.nn.SiLU(), torch.nn.Linear(32, 2)).double()
    params = dict(mlp.named_parameters())
    pts = torch.randn(50, 2, generator=g, dtype=torch.float64)
    jac = torch.func.jacrev(lambda p: torch.func.functional_call(mlp, p, (pts,)))(params)
    out["torch_func_jacrev_f64"] = _hash(torch.cat([v.reshape(100, -1) for v in jac.values()], 1))
    A = rng.standard_normal((72, 72)) / 9
    T, _ = scipy.linalg.schur(A, output="real")
    out["scipy_schur_f64_72"] = _hash(T)
    B = rng.standard_normal((400, 300))
    out["numpy_svdvals_f64_400x300"] = _hash(np.linalg.svd(B, compute_uv=False))
    out["numpy_eigh_f64_300"] = _hash(np.linalg.eigh(B.T @ B)[0])
    out["numpy_dot_f64_400x300x300"] = _hash(B @ B[:300].T)
    x64, x32 = rng.standard_normal(100_000), rng.standard_normal(100_000).astype(np.float32)
    for f in ("exp", "sin", "tanh", "log1p"):
        out[f"numpy_{f}_f64"] = _hash(getattr(np, f)(np.abs(x64)))
        out[f"numpy_{f}_f32"] = _hash(getattr(np, f)(np.abs(x32)))
    out["numpy_sum_f32"] = _hash(x32.sum(dtype=np.float32))
    return out


def book_operations() -> dict[str, str]:
    """The same kernels through the book's code: a few seed-batched training steps of paper A's RNN (float32 Adam
    over BPTT), the ordered Schur form of a trained-size recurrent matrix, paper B's parameter Jacobian of a small
    tanh MLP and its gauged lift of a rotation."""
    from lib.paper_a.batched_training import train_seeds
    from lib.paper_a.schur.ordered_form import ordered_real_schur
    from lib.paper_a.training_config import TrainConfig
    from lib.paper_b.lifting import lift

    out: dict[str, str] = {}
    configs = [TrainConfig(task="flipflop", n_hidden=16, steps=25, batch_size=16, seed=s) for s in (0, 1)]
    trained = train_seeds(configs, progress=False)
    out["book_seed_batched_training_f32_25_steps"] = _hash(
        np.concatenate([np.concatenate([np.ravel(v) for _, v in sorted(t["weights"].items())]) for t in trained])
    )
    rng = np.random.default_rng(1)
    W = rng.standard_normal((72, 72)) / np.sqrt(72)
    form = ordered_real_schur(W)
    out["book_ordered_schur_f64_72"] = _hash(np.concatenate([form.T.ravel(), np.abs(form.Q).ravel()]))
    J, target = _probe_lift_problem()
    out["book_jacobian_f64_96x697"] = _hash(J)
    result = lift(J, target)
    out["book_lift_sensitivity_gauge_f64"] = _hash(result.coef)
    return out


def _probe_lift_problem() -> tuple[torch.Tensor, torch.Tensor]:
    """The probe's lift: 96 probes of a 2 → 24 → 24 → 1 tanh MLP (697 parameters), J and a rotation's Xf."""
    from lib.paper_b.sensitivity import jacobian, module_params

    g = torch.Generator().manual_seed(2)
    mlp = torch.nn.Sequential(torch.nn.Linear(2, 24), torch.nn.Tanh(), torch.nn.Linear(24, 24), torch.nn.Tanh(),
                              torch.nn.Linear(24, 1)).double()  # fmt: skip
    with torch.no_grad():
        for p in mlp.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64) / np.sqrt(p.shape[-1]))
    probes = torch.randn(96, 2, generator=g, dtype=torch.float64)
    J = jacobian(mlp, module_params(mlp), probes)
    rotated = probes @ torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=torch.float64).T  # the rotation's velocity
    x = probes.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(mlp(x).sum(), x)
    return J, (grad * rotated).sum(1).detach()  # Xf at the probes


def lift_steps() -> dict[str, str]:
    """The probe's gauged lift (``book_lift_sensitivity_gauge_f64``) step by step, as ``lifting.lift`` takes them on
    the Gram route, then the exact route's SVD, the QR route of an ill-conditioned gauge and the other routines of
    ``lib.kernels.cpu_linalg``: one hash per step, named ``book_lift_step_<n>_<routine>``."""
    from lib.kernels import cpu_linalg as la
    from lib.paper_b import lifting

    J, eta = _probe_lift_problem()
    out: dict[str, str] = {}
    d = la.column_norms(J)
    out["book_lift_step_1_column_norms"] = _hash(d)
    G = lifting.DenseJacobian(J).gram()
    out["book_lift_step_2_tn_gram"] = _hash(G)
    w, Q = la.symmetric_eigh(G)
    out["book_lift_step_3_symmetric_eigh"] = _hash(torch.cat([w, Q.abs().reshape(-1)]))
    svd = lifting.truncated_svd(J, method="gram")
    U, S = svd.U, svd.S
    out["book_lift_step_4_rmatmul"] = _hash(svd.V)
    alpha = (U.T @ eta) / S
    out["book_lift_step_5_alpha"] = _hash(alpha)
    At = svd.V * (1.0 / d)[:, None]
    A_gram = la.gram(At)
    out["book_lift_step_6_gram"] = _hash(A_gram)
    y, wa = la.gram_solve(A_gram, alpha)
    out["book_lift_step_7_gram_solve"] = _hash(torch.cat([y, wa]))
    out["book_lift_step_8_coef"] = _hash((1.0 / d) * (At @ y))  # c = D⁻¹c̃: the lift's coefficients themselves
    U_s, S_s, V_s = la.thin_svd(J)
    out["book_lift_step_9_thin_svd"] = _hash(torch.cat([S_s, U_s.abs().reshape(-1), V_s.abs().reshape(-1)]))
    out["book_lift_step_10_svd_route_coef"] = _hash(lifting.lift(J, eta, method="svd").coef)
    spread = torch.logspace(0, -6, At.shape[1], dtype=torch.float64)  # κ(AAᵀ) ≈ 10¹²: the QR route
    out["book_lift_step_11_qr_route"] = _hash(lifting._min_norm_solution(At * spread, alpha))
    out["book_lift_step_12_matmul"] = _hash(la.matmul(J.T, U))
    pairs = [(J[:, :24], J[:, 24:48]), (J[:, 48:72], J[:, 72:97])]
    out["book_lift_step_13_row_gram_numpy"] = _hash(la.row_gram_numpy(pairs))
    return out


OPERATIONS: dict[str, Callable[[], dict[str, str]]] = {
    "libraries": library_operations,
    "own": book_operations,
    "lift": lift_steps,
}


def probe() -> dict[str, str]:
    """Every operation's hash, in this process (which should compute with the book's pins)."""
    torch.set_num_threads(1)
    return {name: digest for group in OPERATIONS.values() for name, digest in group().items()}


def differing(found: dict[str, str], expected: dict[str, str]) -> list[str]:
    """The operations whose hash differs from ``expected`` (or is missing on either side), by name."""
    return sorted(k for k in set(found) | set(expected) if found.get(k) != expected.get(k))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m lib.arithmetic_probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", metavar="FILE", help="compare with the hashes in FILE; exit 1 if any differ")
    args = parser.parse_args(argv)
    found = probe()
    if not args.check:
        print(json.dumps(found, indent=1))
        return 0
    with open(args.check) as fh:
        expected = json.load(fh)["hashes"]
    bad = differing(found, expected)
    for name in bad:
        print(f"{name}: expected {expected.get(name)}, here {found.get(name)}")
    print(f"{len(found) - len(bad)} of {len(expected)} operations give the expected bits")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
