"""The book's release work, apart from the executor: what a build leaves for the pages and the release
(:mod:`~bookrelease.records`: provenance, the reference comparison, the runtime table, the downloads), the published
reference (:mod:`~bookrelease.publish`, ``make publish``), the changelog and the page of changed verdicts
(:mod:`~bookrelease.changelog`, :mod:`~bookrelease.changes`), the citation (:mod:`~bookrelease.citation`), the
version and commit (:mod:`~bookrelease.release`), the appendix's build record (:mod:`~bookrelease.provenance`) and
its cost table (:mod:`~bookrelease.costs`), and the archive for readers (:mod:`~bookrelease.dist`, ``make dist``).
"""
