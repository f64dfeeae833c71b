"""A count file opens in the workbench as a corpus: no text to draw, but the pair table, the
merges, undo and encode work, and the merges equal training on the text."""

from recording import RecordingApp
from textual.widgets import Input

from tokworkbench.app.widgets.styledlines import StyledLines
from tokworkbench.cli import main
from tokworkbench.core.session.session import Session
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.text.samples import sample_paths

SIZE = (120, 36)


async def _ready(app, pilot):
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert app.main.session is not None


def _text(app, selector) -> str:
    return app.query_one(selector, StyledLines).plain


def _counts(tmp_path, *args):
    out = tmp_path / "counts.npz"
    assert main(["count", *[str(p) for p in sample_paths()], *args, "-o", str(out)]) == 0
    return out


async def test_a_count_file_opens_as_a_corpus_and_trains_like_the_text(tmp_path, capsys):
    counts = _counts(tmp_path, "--split", "gpt2")
    app = RecordingApp([str(counts)])
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        session = app.main.session
        assert session.counts_source == "counts.npz" and session.settings.split == "gpt2"
        window = _text(app, "#corpus-window")
        assert "count file counts.npz: chunk counts only" in window
        assert "12 docs" in _text(app, "#corpus-stats")  # the file's corpus summary
        for key in "nnnu":
            await pilot.press(key)
        await pilot.pause()
        text = Session.open([str(p) for p in sample_paths()], Settings(split="gpt2"))
        text.step_many(2)
        assert session.learner.merges == text.learner.merges
        app.main.query_one("#encode-input", Input).value = "the end"
        await pilot.pause()
        assert session.model().encode("the end") == text.model().encode("the end")
    capsys.readouterr()


async def test_changing_the_split_of_a_count_file_is_refused_and_keeps_the_session(tmp_path, capsys):
    counts = _counts(tmp_path)
    app = RecordingApp([str(counts)])
    async with app.run_test(size=SIZE) as pilot:
        await _ready(app, pilot)
        before = app.main.session
        await pilot.press("n")
        app.main.start_load(None, before, before.settings.with_(split="gpt2"))
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.main.session is before and len(before.learner.history) == 1
        assert any("counted with fixed settings" in m for m in app.said)
    capsys.readouterr()
