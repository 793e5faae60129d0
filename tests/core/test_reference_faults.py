"""A published reference that checks itself (issue 50): ``published/SHA256SUMS``, written by every publish, is verified
on every machine, pinned or not, so a value edited by hand fails ``make test`` naming the file, where before only a
pinned Intel build's bit-for-bit comparison could notice (elsewhere that test skips)."""

from __future__ import annotations

import json
import shutil

import pytest

from lib.core import reference


def test_the_published_reference_is_as_make_publish_wrote_it():
    assert reference.checksum_problems() == [], "published/ differs from its SHA256SUMS: publish with `make publish`"


@pytest.mark.faults
def test_a_hand_edited_missing_or_unlisted_file_is_named(tmp_path):
    folder = tmp_path / "published"
    shutil.copytree(reference.PUBLISHED, folder)
    assert reference.checksum_problems(folder) == []
    results = json.loads((folder / "results.json").read_text())
    key = next(k for k, v in results.items() if isinstance(v, float))
    results[key] *= 1.0000001  # one value, edited by hand
    (folder / "results.json").write_text(json.dumps(results))
    (folder / "claims.json").unlink()
    (folder / "notes.json").write_text("{}")
    assert reference.checksum_problems(folder) == [
        "published/results.json differs from what `make publish` wrote (edited by hand?)",
        "published/claims.json is missing",
        "published/notes.json is not in SHA256SUMS",
    ]
    (folder / reference.CHECKSUMS).unlink()
    assert reference.checksum_problems(folder)[0].endswith(
        "is missing: the reference was not written by `make publish`"
    )
