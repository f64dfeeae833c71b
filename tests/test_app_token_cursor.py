"""A token cursor by key in the corpus window (< and >): each press selects the next (previous)
token there, marks it in the corpus pane and shows its details, as a click does."""

from test_app_inspect import SIZE, app_from_cli, opened, ranks, ranks_file, ready  # noqa: F401 (fixtures)


async def test_less_and_greater_walk_the_window_tokens(opened, ranks_file):  # noqa: F811
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        spans = app.main.snapshot.window.spans
        assert len(spans) > 3
        text = app.query_one("#corpus-text")
        plain = list(text.render_line(0))
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert app.main.selected_token == spans[0].token
        drawn = list(text.render_line(0))  # the first token is marked: same text, other styles
        assert drawn != plain and "".join(s.text for s in drawn) == "".join(s.text for s in plain)
        assert app.query_one("#corpus").cursor_span == (max(0, spans[0].start), spans[0].end)
        for _ in range(2):
            await pilot.press("greater_than_sign")
        await pilot.press("less_than_sign")
        await pilot.pause()
        assert app.main.selected_token == spans[1].token
        details = str(app.query_one("#token-details").render())
        assert f"id {spans[1].token}" in details
        # before the first token it stays on the first
        for _ in range(5):
            await pilot.press("less_than_sign")
        await pilot.pause()
        assert app.main.selected_token == spans[0].token
        # another window: the mark goes, and the cursor starts again there
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert app.query_one("#corpus").cursor_span is None
        moved = app.main.snapshot.window.spans
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert app.main.selected_token == moved[0].token
        # a click selects its own token and drops the key's mark
        await pilot.click("#corpus-text", offset=(1, 0))
        await pilot.pause()
        assert app.query_one("#corpus").cursor_span is None


async def test_the_keys_are_characters_in_the_encode_box(opened, ranks_file):  # noqa: F811
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        box = app.query_one("#encode-input")
        box.focus()
        await pilot.press("less_than_sign", "greater_than_sign")
        await pilot.pause()
        assert box.value == "<>"
        assert app.main.selected_token is None


async def test_the_keys_go_on_from_the_token_clicked(opened, ranks_file):  # noqa: F811
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        spans = app.main.snapshot.window.spans
        k = next(i for i, s in enumerate(spans) if s.start >= 6 and spans[i + 1].start > s.start)
        await pilot.click("#corpus-text", offset=(spans[k].start + 1, 0))  # + the view's left padding
        await pilot.pause()
        assert app.main.selected_token == spans[k].token
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert app.main.selected_token == spans[k + 1].token
        assert app.query_one("#corpus").cursor_span == (spans[k + 1].start, spans[k + 1].end)


async def test_a_click_after_a_named_invisible_selects_the_token_drawn_there(tmp_path):
    """⟨ZWJ⟩ takes five cells for one character of the text: a click is mapped through the
    run drawn there, not through a count of characters (which landed four characters on)."""
    from recording import RecordingApp
    from test_app import ready as app_ready

    from tokworkbench.core.session.settings import Settings

    doc = tmp_path / "zwj.txt"
    doc.write_text("a\u200db c d e f g", encoding="utf-8")
    app = RecordingApp([str(doc)], settings=Settings(target=300))
    async with app.run_test(size=(100, 30)) as pilot:
        await app_ready(app, pilot)
        window = app.main.snapshot.window
        spans = window.spans
        drawn = "".join(seg.text for seg in app.query_one("#corpus-text").render_line(0))
        x = drawn.index("d")
        await pilot.click("#corpus-text", offset=(x + 1, 0))  # + the view's left padding
        await pilot.pause()
        k = next(i for i, s in enumerate(spans) if window.text[s.start:s.end].strip() == "d")
        assert app.main.selected_token == spans[k].token
