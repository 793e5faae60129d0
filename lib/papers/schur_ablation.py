"""Paper A, Dräger (2026), *Task-Restricted Symmetries in Recurrent Weight Space* (arXiv 2606.18457), as data.

Every number the book quotes from it, as printed (:class:`lib.papers.Quote`), with its section, and every setting it
states. The verdicts are computed (``lib.core.claims``) and checked against the published reference (``published/``).
"""

from __future__ import annotations

from lib.papers import Quote

PAPER = "A"
CITATION = "drager2026schur"

# ------------------------------------------------------------------------------------------------- settings
#: §2.3: the R/C split threshold of the main experiments, and the thresholds of Table 1.
ALPHA = 0.9
TABLE1_ALPHAS = (0.85, 0.9, 0.95)
#: §3.1–3.3: the copy task and its controllers.
COPY = {
    "symbols": 8,  # s: symbols per sequence
    "symbol_dim": 8,  # d: each symbol in {−1, +1}^d
    "lags": 128,  # replay accuracy over the first 128 generated symbols
    "widths": (56, 64, 72),
    "representative_width": 72,
}
#: §4.1: training of the neuroscience-style tasks.
TASKS_TRAINING = {
    "n_hidden": 64,
    "construction": "dense_orthogonal",
    "lr": 1e-3,
    "batch_size": 64,
    "epochs": 30,
    "batches_per_epoch": 128,
    "seeds": 3,
}
#: §4.1: trial lengths T.
TASK_LENGTHS = {"flipflop": 25, "sine": 50, "context": 48}

# ------------------------------------------------------------------------------------------------- §3, copy task
_FIG1 = "§3, Fig. 1"
#: Replay accuracy of the dense orthogonal N_h = 72 controller per ablated subset (in ``schur.all_subsets()`` order).
COPY_DENSE_ORTH = {
    (): Quote("1.00", _FIG1),
    ("CC",): Quote("1.00", _FIG1),
    ("RR",): Quote("0.876", _FIG1),
    ("RR", "CC"): Quote("0.875", _FIG1),
    ("CR",): Quote("0.639", _FIG1),
    ("CR", "CC"): Quote("0.639", _FIG1),
    ("RR", "CR"): Quote("0.624", _FIG1),
    ("RR", "CR", "CC"): Quote("0.624", _FIG1),
}
#: §3.5, Table 1 (the same at α = 0.85, 0.9, 0.95): n_R and replay accuracy per model.
TABLE1 = {
    "dense orthogonal": {
        "n_R": Quote("64", "§3.5, Table 1"),
        "full": Quote("1", "§3.5, Table 1"),
        "minus_CC": Quote("1", "§3.5, Table 1"),
        "minus_CR": Quote("0.634", "§3.5, Table 1"),
    },
    "Cayley": {
        "n_R": Quote("68", "§3.5, Table 1"),
        "full": Quote("1", "§3.5, Table 1"),
        "minus_CC": Quote("1", "§3.5, Table 1"),
        "minus_CR": Quote("1", "§3.5, Table 1"),
    },
}
#: §3.4: the functional classes (accuracy plateaus) of the dense orthogonal controller, highest first.
CLASSES = (Quote("1.00", "§3.4"), Quote("0.875", "§3.4"), Quote("0.639", "§3.4"), Quote("0.624", "§3.4"))
#: §3.4: the Cayley controller's accuracy under every ablation (the §3 text prints 1.00).
CAYLEY_ACCURACY = Quote("1.00", "§3.4")

# ------------------------------------------------------------------------------------------------- §4, the tasks
_S4 = "§4, Fig. 2"
#: §4: full-model held-out FVU (mean over 3 seeds), and single-block ΔFVU / S_ΔT (mean ± SEM over 3 seeds).
TASKS = {
    "flipflop": {
        "fvu_full": Quote("0.0048", "§4"),
        "dfvu": {"CR": Quote("9.45e-2", _S4, "9.35e-3"), "CC": Quote("4.96e-2", _S4, "5.39e-3")},
        "sens": {},
        "claim": "ΔFVU(−T_C→R) is the largest; T_RR has almost no raw effect",
    },
    "sine": {
        "fvu_full": Quote("0.0036", "§4"),
        "dfvu": {"CC": Quote("2.08", _S4, "0.23"), "CR": Quote("1.73", _S4, "0.34")},
        "sens": {"CR": Quote("21.1", _S4, "5.1"), "CC": Quote("12.3", _S4, "1.5")},
        "claim": "ΔFVU(−T_CC) > ΔFVU(−T_C→R) (both large), but S_ΔT(−T_C→R) > S_ΔT(−T_CC); T_RR has little effect",
    },
    "context": {
        "fvu_full": Quote("0.0104", "§4"),
        "dfvu": {"CC": Quote("0.94", _S4, "0.03"), "CR": Quote("0.37", _S4, "0.16")},
        "sens": {},
        "claim": "ΔFVU(−T_CC) > ΔFVU(−T_C→R)",
    },
}
#: §4: the orderings the paper reports per task (names of ``lib.paper_a.task_analysis.ORDERINGS``).
TASK_ORDERINGS = {
    "flipflop": ("CR_largest",),
    "sine": ("sens_CR_gt_CC", "CC_gt_CR"),
    "context": ("CC_gt_CR",),
}
#: §4: blocks the paper calls (nearly) harmless per task, in words.
TASK_NEGLIGIBLE = {"flipflop": ("RR", "almost no raw effect"), "sine": ("RR", "little effect at this width")}
