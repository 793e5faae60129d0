"""What decides that a chapter executes again (issue #34): its execution record holds the code it started with
(``bookrun.fingerprints.repository_digests``). What decides that a model is trained again (the fingerprint of its code,
``lib.core.cache.fingerprint``) is tested in ``tests/core/test_cache.py``; the re-execution rules end to end in
``tests/bookrun/test_cli.py``.
"""

from bookrun import fingerprints
from lib.core.paths import REPO_ROOT


def test_a_chapter_records_the_code_it_started_with():
    """A file edited while a chapter runs is recorded with its digest at the start: the next run executes again."""
    start = fingerprints.repository_digests()
    rel = "lib/paper_a/rnn.py"
    assert start[rel] == fingerprints.file_digest(REPO_ROOT / rel)
    edited = {**start, rel: "digest-at-start"}
    record = fingerprints.make_record(REPO_ROOT / "book" / "intro.md", {}, [rel], {}, edited)
    assert record["imports"][rel] == "digest-at-start"
    assert fingerprints.why_stale(record, REPO_ROOT / "book" / "intro.md", {}) == f"{rel} changed"
