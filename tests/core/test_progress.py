"""Progress bars go where $BOOK_PROGRESS says: the notebook's stderr, nowhere, or a file the executor relays."""

import pytest

from lib.core import progress


def test_default_is_the_notebook(monkeypatch, capsys):
    monkeypatch.delenv("BOOK_PROGRESS", raising=False)
    assert progress.destination() == "notebook"
    with progress.bar(total=3, desc="work", mininterval=0) as bar:
        bar.update(3)
    assert "work" in capsys.readouterr().err


def test_off_silences_bars_and_notes(monkeypatch, capsys):
    monkeypatch.setenv("BOOK_PROGRESS", "off")
    with progress.bar(total=3, desc="work") as bar:
        bar.update(3)
    progress.note("loaded from cache")
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_file_receives_bars_and_notes_and_nothing_reaches_stderr(monkeypatch, capsys, tmp_path):
    target = tmp_path / "chapter.progress"
    monkeypatch.setenv("BOOK_PROGRESS", str(target))
    with progress.bar(total=2, desc="training", mininterval=0) as bar:
        bar.update(2)
    progress.note("loaded from cache: x.pt")
    progress.close()
    text = target.read_text()
    assert "training" in text and "2/2" in text and "loaded from cache: x.pt\n" in text
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("value", ["terminal", "relative/path.txt", "/no/such/folder/x.progress"])
def test_bad_values_are_refused_with_the_variable_and_what_is_allowed(monkeypatch, value):
    monkeypatch.setenv("BOOK_PROGRESS", value)
    with pytest.raises(ValueError, match=r"\$BOOK_PROGRESS=.*'notebook'.*'off'.*absolute path"):
        progress.bar(total=1)


def test_child_processes_write_their_stderr_where_the_bars_go(monkeypatch, tmp_path):
    import subprocess
    import sys

    target = tmp_path / "chapter.progress"
    monkeypatch.setenv("BOOK_PROGRESS", str(target))
    with progress.child_stderr():
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('nested kernel says hi\\n')"], check=True)
    assert target.read_text() == "nested kernel says hi\n"
    monkeypatch.setenv("BOOK_PROGRESS", "off")
    with progress.child_stderr():  # to /dev/null, and the process's own stderr comes back afterwards
        subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('gone\\n')"], check=True)
    assert target.read_text() == "nested kernel says hi\n"
