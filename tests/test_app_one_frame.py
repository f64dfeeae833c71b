"""A key's whole change reaches the screen in one frame: the corpus text is drawn before the
key's handler returns, not when the pane's turn comes (a frame, 17-35 ms, after the tables)."""

import pytest
from recording import RecordingApp as WorkbenchApp

from tokworkbench.app.main_screen import MainScreen
from tokworkbench.app.widgets.styledlines import StyledLines


@pytest.mark.parametrize("key", ["n", "u"])
async def test_the_corpus_text_is_drawn_by_the_time_the_key_is_handled(monkeypatch, key):
    app = WorkbenchApp()
    seen = []
    refresh = MainScreen.refresh_snapshot

    def refreshed(screen):
        refresh(screen)
        corpus = screen.corpus_pane
        stats = corpus.query_one("#corpus-stats", StyledLines).plain
        seen.append((screen.session.steps, stats))

    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n", "n")
        await pilot.pause()
        monkeypatch.setattr(MainScreen, "refresh_snapshot", refreshed)
        app.simulate_key(key)
        await pilot.pause()
        steps, stats = seen[-1]
        assert steps == (3 if key == "n" else 1)
        assert f"· {steps} merge" in stats  # this key's count, drawn before the handler returned
