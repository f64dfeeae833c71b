"""A long paste into the encode box draws a bounded part of it (issue 28, item 11): 50,000
characters took 28 s to lay out in full. The counts and the round trip still cover it all."""

from recording import RecordingApp
from textual.widgets import Input, Static

from tokworkbench.app.widgets.encode import DRAWN_TOKENS


async def test_a_long_paste_draws_the_first_tokens_and_counts_them_all():
    app = RecordingApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("N")
        await pilot.pause()
        text = ("the quick brown fox jumps over the lazy dog. " * 1200)[:50_000]
        app.main.query_one("#encode-input", Input).value = text
        await pilot.pause()
        await pilot.pause()
        shown = str(app.main.query_one("#encode-result", Static).render())
        n = len(app.main.session.model().encode(text))
        assert n > DRAWN_TOKENS
        assert f"the first {DRAWN_TOKENS:,} of {n:,} tokens are drawn" in shown
        assert f"{n} tokens · 50000 chars" in shown and "round trip is lossless" in shown
        assert shown.count("the quick") < 1200  # not the whole text
