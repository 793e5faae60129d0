"""What paper A left open, for one trained solution at a time, and the rules that turn the numbers into verdicts.

:func:`study_solution` measures, for each ablation of :data:`lib.paper_a.subspace.BLOCK_SETS`:

- where the change of the hidden trajectories Δh(t) and the removed coupling's direct action ΔW h(t) lie: their
  energy fractions in the readout row space, the top-k PCs (k at each variance level), the task-conditioned manifold
  and the union of readout and PCs at ``pc_level`` (the "readout/PC subspace" U);
- the inside/outside control: ΔW = P ΔW + (I − P) ΔW (P = U Uᵀ), each part ablated alone;
- random perturbations of the same Frobenius norm (:mod:`lib.paper_a.perturbation`), each kind ``draws`` times;
- for the single blocks, the path W(λ) = Q (T − λ T_S) Qᵀ on the full held-out batch.

Subspaces, Δh and the controls use the first ``n_eval`` held-out trials (the ablation's own ΔFVU is recomputed on
them by :func:`lib.paper_a.ablation.subset_ablations`, in one stack with its controls, so an ablation and its controls
are compared on the same trials). :mod:`.open_questions` turns the records into the chapter's numbers and verdicts.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from lib.core import params
from lib.paper_a import ablation as abl
from lib.paper_a import perturbation as pt
from lib.paper_a import schur
from lib.paper_a import subspace as sub
from lib.paper_a.ablation import SolutionAblations

#: Variance levels at which k PCs are taken.
LEVELS = (0.9, 0.95, 0.99)
SUBSPACES = ("readout", "pc90", "pc95", "pc99", "manifold", "union")


@dataclass
class AblationRecord:
    """One ablation of one solution. Fractions map a name of :data:`SUBSPACES` to a float (NaN if nothing moved).

    ``evaluation``: the solution's ablations on the evaluation trials (:class:`~lib.paper_a.ablation.SolutionAblations`,
    empty ones scored too), whence ``seed``, ``mass`` and ``dfvu_eval``; ``dfvu``: the chapters' ΔFVU on the full
    held-out batch. ``dims`` maps the names of :data:`SUBSPACES` to each subspace's dimension; ``energy_*`` are Σ‖·‖²
    of the direct action over the visited states (inside U, outside U, all); ``draws`` maps a kind of
    :data:`.perturbation.KINDS` to the draws' ΔFVU (on the evaluation trials, like ``dfvu_eval``, ``dfvu_inside`` and
    ``dfvu_outside``).
    """

    task: str
    ablation: str
    evaluation: SolutionAblations = field(repr=False)
    dfvu: float
    frac_dh: dict[str, float]
    frac_dw: dict[str, float]
    union_dim: int
    n_hidden: int
    action: float
    action_in: float
    energy_in: float
    energy_out: float
    energy_total: float
    dfvu_inside: float
    dfvu_outside: float
    draws: dict[str, np.ndarray] = field(repr=False)
    dims: dict[str, int] = field(default_factory=dict)
    lambdas: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))
    dfvu_path: np.ndarray = field(repr=False, default_factory=lambda: np.zeros(0))

    @property
    def key(self) -> str:
        """The ablation's subset key (``"CR"``, ``"RR+CR+CC"`` for ``"all"``)."""
        return abl.subset_key(sub.block_set(self.ablation))

    @property
    def seed(self) -> int:
        """The solution's seed."""
        return self.evaluation.seed

    @property
    def mass(self) -> float:
        """The removed Schur mass ‖T_S‖_F/‖T‖_F."""
        return self.evaluation.mass[self.key]

    @property
    def dfvu_eval(self) -> float:
        """The ablation's ΔFVU on the evaluation trials."""
        return self.evaluation.dfvu[self.key]

    @property
    def enrichment(self) -> float:
        """Direct-action fraction in U over its chance level dim(U)/N (below 1: the coupling avoids U)."""
        return self.frac_dw["union"] / (self.union_dim / self.n_hidden)


def draw_seed(seed: int, task: str, solution: int, ablation: str) -> np.random.Generator:
    """The Generator of one ablation's random controls (independent of the order of computation)."""
    return np.random.default_rng([seed, zlib.crc32(task.encode()), solution, zlib.crc32(ablation.encode())])


def study_solution(
    task: str,
    seed: int,
    weights: dict,
    batch,
    *,
    alpha: float,
    dfvu: dict[str, float],
    n_eval: int,
    draws: int,
    lambdas: Sequence[float],
    pc_level: float = 0.95,
    draw_base_seed: int = 0,
) -> list[AblationRecord]:
    """Every measurement of the module docstring for one solution (W_xh, W_hh, W_hy float64).

    ``dfvu`` maps subset keys ("RR", "RR+CR+CC", …) to the chapters' ΔFVU on the full held-out ``batch``.
    """
    n_eval = params.integer("n_eval", n_eval, min=2, max=int(batch[0].shape[0]))
    draws = params.integer("draws", draws, min=1)
    pc_level = params.real("pc_level", pc_level, min=0.0, max=1.0, min_open=True)
    lam = pt.lambda_grid(lambdas)
    W = np.asarray(weights["W_hh"], dtype=np.float64)
    n = W.shape[0]
    form = schur.ordered_real_schur(W)
    sectors = schur.split(form, alpha)
    ev = tuple(None if b is None else b[:n_eval] for b in batch)
    H = sub.rollout_many(weights, W[None], ev[0])[0].numpy()  # (B, T, N)
    comps, cum = sub.pca(H)
    bases = {"readout": sub.readout_basis(weights["W_hy"])}
    for lvl in LEVELS:
        bases[f"pc{round(100 * lvl)}"] = sub.pc_basis(comps, sub.n_components(cum, lvl))
    bases["manifold"] = sub.manifold_basis(H, sub.condition_labels(task, ev[0], ev[1]))
    bases["union"] = sub.union_basis(bases["readout"], sub.pc_basis(comps, sub.n_components(cum, pc_level)))
    U = bases["union"]
    H_flat = H.reshape(-1, n)
    h_norm = np.linalg.norm(H_flat)

    names = {sub.block_set(name): name for name in sub.BLOCK_SETS}
    records, scored = [], {}

    def score(ablations: Sequence[schur.Ablation]) -> list[float]:
        """The full model, then each ablation W − ΔW with its controls (ΔW inside and outside U alone, random draws of
        its norm), all in one stack on the evaluation trials; the ablations' FVUs, the controls' kept in ``scored``."""
        stack, at = [W], []
        for ab in ablations[1:]:
            name = names[ab.remove]
            dW, T_S = sub.removed_coupling(sectors, ab.remove)
            inside, outside = sub.inside_outside(dW, U)
            rng = draw_seed(draw_base_seed, task, seed, name)
            rand = {}
            for kind in pt.KINDS:
                if ab.removed_mass == 0.0:
                    rand[kind] = np.zeros((0, n, n))
                    continue
                rand[kind] = pt.random_directions(
                    kind, float(np.linalg.norm(dW)), draws, rng, n=n, form=form, mask_nn=T_S != 0.0, basis_nr=U
                )
            at.append(len(stack))
            stack += [W - dW, W - inside, W - outside, *[W - d for k in pt.KINDS for d in rand[k]]]
            action = H_flat @ dW.T  # (B·T, N): ΔW h on every visited state
            records.append(
                dict(name=name, dW=dW, T_S=T_S, action=action, n_draws={k: len(v) for k, v in rand.items()},
                     e_in=float(np.sum((H_flat @ inside.T) ** 2)), e_out=float(np.sum((H_flat @ outside.T) ** 2)))
            )  # fmt: skip
        scored["fvu"] = fvu = sub.fvu_many(weights, np.stack(stack), ev)
        return [fvu[0], *fvu[at]]

    evaluation = abl.subset_ablations(sectors, list(names), score, seed=seed, score_empty=True)
    fvu = scored["fvu"]
    states = sub.rollout_many(weights, np.stack([W - r["dW"] for r in records]), ev[0]).numpy()

    # λ-paths of the single blocks on the full batch, one stack
    singles = [r for r in records if r["name"] in schur.ABLATION_BLOCKS]
    paths = np.concatenate([W[None]] + [pt.ablation_path(form, r["T_S"], lam) for r in singles])
    path_fvu = sub.fvu_many(weights, paths, batch)

    out, pos = [], 1
    for i, r in enumerate(records):
        _, f_in, f_out = fvu[pos : pos + 3]
        pos += 3
        draw_dfvu = {}
        for k in pt.KINDS:
            draw_dfvu[k] = fvu[pos : pos + r["n_draws"][k]] - fvu[0]
            pos += r["n_draws"][k]
        dh = states[i] - H
        key = abl.subset_key(sub.block_set(r["name"]))
        frac = lambda v: {s: sub.energy_fraction(v, bases[s]) for s in SUBSPACES}  # noqa: E731
        rec = AblationRecord(
            task=task, ablation=r["name"], evaluation=evaluation, dfvu=float(dfvu[key]), frac_dh=frac(dh),
            frac_dw=frac(r["action"]), union_dim=U.shape[1], n_hidden=n,
            action=float(np.linalg.norm(r["action"]) / h_norm),
            action_in=float(np.linalg.norm(r["action"] @ U) / h_norm), energy_in=r["e_in"], energy_out=r["e_out"],
            energy_total=float(np.sum(r["action"] ** 2)),
            dfvu_inside=float(f_in - fvu[0]), dfvu_outside=float(f_out - fvu[0]), draws=draw_dfvu,
        )  # fmt: skip
        rec.dims = {k: int(v.shape[1]) for k, v in bases.items()}
        if r["name"] in schur.ABLATION_BLOCKS:
            j = schur.ABLATION_BLOCKS.index(r["name"])
            rec.lambdas = lam
            rec.dfvu_path = path_fvu[1 + j * lam.size : 1 + (j + 1) * lam.size] - path_fvu[0]
        out.append(rec)
    return out
