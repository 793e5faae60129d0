"""Beyond the papers: paper B's functional sensitivity read in paper A's Schur coordinates (chapter ``two_lenses``).

:mod:`.jacobian` (the Jacobian of the held-out rollout with respect to the coupling entries of T, its exact routes),
:mod:`.solution` (one solution seen through both lenses: real and predicted ablations, the near-null fraction),
:mod:`.scores` (rank correlation, ROC AUC, the factor error), :mod:`.chapter` (the chapter's settings, glue and
tables).
"""
