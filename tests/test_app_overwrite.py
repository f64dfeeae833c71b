"""The app refuses to write over a file it has read, as the CLI does (issue 28, item 4): `s`,
`e` and the batch's `w` to the corpus's own path used to replace it after "Overwrite?"."""

import shutil

import pytest
from recording import RecordingApp
from test_app_batches import WITH_ROLES
from test_app_dialogs import burst
from textual.widgets import Input

from tokworkbench.app.dialogs import ConfirmDialog
from tokworkbench.core.errors import OutputError
from tokworkbench.core.session.session import Session
from tokworkbench.core.text.samples import sample_paths

SIZE = (120, 36)


async def _settle(app, pilot, seconds: float = 10.0):
    await app.workers.wait_for_complete()
    for _ in range(int(seconds / 0.05)):
        await pilot.pause(0.05)
        if app.main.session is not None:
            return


def _corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    shutil.copy(sample_paths()[0], path)
    return path


async def _refused(app, pilot, corpus, before: bytes, keys: list[str]):
    app.said.clear()
    burst(app, keys)
    for _ in range(200):
        await pilot.pause(0.02)
        if any("one of the inputs" in m for m in app.said):
            break
    assert not isinstance(app.screen, ConfirmDialog)  # refused, not asked
    assert any("refusing to write" in m and "one of the inputs" in m for m in app.said), app.said
    assert corpus.read_bytes() == before


async def test_save_export_and_batch_refuse_the_corpus_path_without_asking(tmp_path):
    corpus = _corpus(tmp_path)
    before = corpus.read_bytes()
    app = RecordingApp([str(corpus)], settings=WITH_ROLES)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        await pilot.press("N")
        await pilot.pause()
        await _refused(app, pilot, corpus, before, ["s", "ctrl+a", "ctrl+k", *str(corpus), "enter"])
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(corpus)
        await _refused(app, pilot, corpus, before, ["enter"])
        await _refused(app, pilot, corpus, before, ["b", "w", "ctrl+a", "ctrl+k", *str(corpus), "enter"])
        assert app.main.session.unsaved  # nothing counts as saved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]  # and no temp file is left


def test_the_session_refuses_its_inputs_by_the_clis_rule(tmp_path):
    corpus = _corpus(tmp_path)
    (tmp_path / "notes.json").write_text("{}", encoding="utf-8")
    session = Session.open([str(tmp_path)], WITH_ROLES)
    link = tmp_path / "link.txt"
    link.symlink_to(corpus)
    # the corpus by its name and through a link; an export's companion (tiktoken: OUT.json)
    for path, fmt in [(corpus, None), (link, None), (corpus, "hf"), (tmp_path / "notes", "tiktoken")]:
        with pytest.raises(OutputError, match="one of the inputs"):
            session.check_output(path, fmt)
    for write in (session.save, session.export_history):
        with pytest.raises(OutputError, match="one of the inputs"):
            write(corpus)
    session.check_output(tmp_path / "model.json")  # another file is fine
    assert corpus.read_bytes() == sample_paths()[0].read_bytes()
