"""The real app driven by Textual's pilot: each test checks what the screen shows and the core state."""

import asyncio
import json

import pytest
from recording import RecordingApp
from textual.widgets import Input, Static

from tokworkbench.app.actions import ACTIONS
from tokworkbench.app.dialogs import HelpDialog
from tokworkbench.app.widgets.bytes_view import BytesPanel
from tokworkbench.app.widgets.merges import MergesPanel
from tokworkbench.app.widgets.pairs import PairsPanel
from tokworkbench.app.widgets.styledlines import StyledLines
from tokworkbench.core import Trainer
from tokworkbench.core.registry import modelfile
from tokworkbench.core.session.settings import Settings

SIZE = (160, 48)


WorkbenchApp = RecordingApp  # noqa: F811  every test below records what it said


async def ready(app, pilot):
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert app.main.session is not None


async def wait_until(condition, seconds=60.0):
    """Every wait in these tests ends: a stuck app fails the test instead of hanging CI."""
    async def poll():
        while not condition():
            await asyncio.sleep(0.002)

    await asyncio.wait_for(poll(), seconds)


def learner(app):
    return app.main.session.learner


def static_text(app, selector) -> str:
    return str(app.query_one(selector, Static).render())


def pair_cells(app, row=0):
    cells = app.query_one("#pair-table").rows[row]
    return [c if isinstance(c, str) else c[0] for c in cells]


async def test_step_undo_and_the_screen_follow_the_core():
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        nxt = learner(app).top_pairs(1)[0]
        assert pair_cells(app)[0] == "▶"
        await pilot.press("n")
        await pilot.pause()
        assert len(learner(app).history) == 1
        assert learner(app).history[0].pair == (nxt.left, nxt.right)
        merges = app.main.query_one(MergesPanel)
        assert merges.row_count == 1 and str(merges.border_subtitle) == "1 merge"
        assert f"{learner(app).total_tokens:,} tokens" in app.query_one("#corpus-stats", StyledLines).plain
        await pilot.press("N")
        await pilot.pause()
        assert len(learner(app).history) == 11 and merges.row_count == 11
        before = learner(app).total_tokens
        await pilot.press("u", "backspace")
        await pilot.pause()
        assert len(learner(app).history) == 9 and merges.row_count == 9
        assert learner(app).total_tokens > before
        assert f"{learner(app).total_tokens:,} tokens" in app.query_one("#corpus-stats", StyledLines).plain


async def test_undo_is_dimmed_when_there_is_nothing_to_undo():
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert app.main.check_action("undo", ()) is None
        await pilot.press("u")
        await pilot.pause()
        assert learner(app).history == []
        await pilot.press("n")
        assert app.main.check_action("undo", ()) is True


async def test_run_to_target_in_a_worker_and_cancel():
    app = WorkbenchApp(settings=Settings(target=400))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert learner(app).vocab_size == 400 and not app.main.running
        assert app.main.query_one(MergesPanel).border_subtitle == "144 merges"

        app.main.session.set_target(60_000)
        app.main.action_run()  # trains in a child process; the UI thread stays free
        assert app.main.running and app.main.check_action("step", ()) is None  # dimmed while running
        app.simulate_key("question_mark")  # the UI answers keys while the child trains
        await wait_until(lambda: isinstance(app.screen, HelpDialog))
        app.simulate_key("escape")  # closes help
        await wait_until(lambda: not isinstance(app.screen, HelpDialog))
        app.main.action_cancel()
        await wait_until(lambda: not app.main.running)
        await pilot.pause()
        if app.main.last_run.reason.value == "cancelled":
            assert app.main.last_run.after_cancel is not None  # the merges after the key are counted
        t = learner(app)
        assert 400 - 256 <= len(t.history) == t.vocab_size - 256 < 60_000 - 256
        assert app.main.query_one(MergesPanel).border_subtitle == f"{len(t.history):,} merges"
        assert any(m.startswith(("cancelled", "no pair left")) for m in app.said)
        done = len(t.history)
        await pilot.press("u")  # the trainer, with the child's work, is usable here
        assert len(learner(app).history) == done - 1
        # what came back equals training the same merges in this process
        again = Trainer([d.text for d in app.main.session.corpus.documents], learner(app).config)
        assert [r.pair for r in again.run(merges=done - 1)] == [r.pair for r in learner(app).history]


async def test_change_settings_restarts_after_confirmation():
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("n")
        await pilot.press("c")
        await pilot.pause()
        app.screen.query_one("#units").value = "char"
        app.screen.query_one("#split").value = "custom"
        app.screen.query_one("#pattern", Input).value = "(unclosed"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "invalid pre-tokenizer regex" in static_text(app.screen, "#settings-error")
        app.screen.query_one("#pattern", Input).value = r"\w+|\s+|[^\w\s]+"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "1 merge will be discarded" in str(app.screen.query_one(".question").render())
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert learner(app).config.units == "char" and learner(app).history == []
        assert learner(app).config.pre_tokenizer.pattern == r"\w+|\s+|[^\w\s]+"
        assert "chars/token" in app.query_one("#corpus-stats", StyledLines).plain


async def test_encode_round_trip_korean_emoji_and_a_failing_normalizer():
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.query_one("#encode-input", Input).value = "안녕하세요 👋🏽 세계!"
        await pilot.pause()
        shown = static_text(app, "#encode-result")
        assert "✓ round trip is lossless" in shown
        ids = app.main.snapshot.model.encode("안녕하세요 👋🏽 세계!")
        assert " ".join(map(str, ids)) in shown
        app.query_one("#bottom").active = "tab-bytes"
        await pilot.pause()
        assert app.main.query_one(BytesPanel).row_text(6)[1] == "👋" and app.main.query_one(BytesPanel).row_text(6)[6] == "✂ cut"

    app = WorkbenchApp(settings=Settings(normalizer="nfkc"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        app.query_one("#encode-input", Input).value = "ＡＩ ok"
        await pilot.pause()
        shown = static_text(app, "#encode-result")
        assert "✗ round trip differs at char 0" in shown and "normalizer changed the text" in shown


async def test_decode_typed_ids_shows_strict_and_replace():
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        app.query_one("#decode-input", Input).value = "236 149"  # two bytes of a three-byte character
        await pilot.pause()
        shown = static_text(app, "#decode-result")
        assert "EC 95" in shown and "not valid UTF-8" in shown
        assert "replace \ufffd" in shown and "bytes 0–1 (EC 95): unexpected end of data — a partial UTF-8 sequence" in shown
        app.query_one("#decode-input", Input).value = "72 105 99999"
        await pilot.pause()
        assert "id 99999 at position 2 is out of range" in static_text(app, "#decode-result")


async def test_open_non_utf8_file_keeps_the_current_session(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"hello \xff world")
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("n")
        trainer = learner(app)
        await pilot.press("o")
        await pilot.pause()
        app.screen.query_one("#open-input", Input).value = str(bad)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("y")  # the model is unsaved: confirm opening
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert learner(app) is trainer and len(trainer.history) == 1
        messages = app.said
        assert any("not valid UTF-8 at byte offset 6" in m and "kept" in m for m in messages)


async def test_open_a_folder(tmp_path):
    (tmp_path / "a.txt").write_text("aaa bbb aaa", encoding="utf-8")
    (tmp_path / "b.txt").write_text("bbb ccc", encoding="utf-8")
    app = WorkbenchApp([str(tmp_path)])
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert [d.text for d in app.main.session.corpus.documents] == ["aaa bbb aaa", "bbb ccc"]
        assert "2 docs" in app.query_one("#corpus-stats", StyledLines).plain


async def test_tiny_terminal_shows_a_message_and_keeps_state():
    """Only the notice shows there, so a key that would change what cannot be seen says so
    and waits for room (n and u merged and undid unseen); q still quits."""
    app = WorkbenchApp()
    async with app.run_test(size=(60, 20)) as pilot:
        await ready(app, pilot)
        assert app.screen.has_class("too-small")
        assert "needs at least 80×24" in static_text(app, "#too-small")
        said = len(app.said)
        await pilot.press("n", "u", "N")
        await pilot.pause()
        assert len(learner(app).history) == 0
        assert any("too small" in m for m in app.said[said:])
        await pilot.resize_terminal(120, 36)
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert not app.screen.has_class("too-small") and app.screen.has_class("-narrow")
        assert len(learner(app).history) == 1
        assert "· 1 merge\n" in app.query_one("#corpus-stats", StyledLines).plain


async def test_save_is_atomic_and_asks_before_overwriting(tmp_path):
    path = tmp_path / "model.json"
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("N")
        await pilot.press("s")
        await pilot.pause()
        app.screen.query_one(Input).value = str(path)
        await pilot.press("enter")
        await pilot.pause()
        assert modelfile.load(path).merges == tuple(learner(app).merges)
        await pilot.press("n")
        await pilot.press("s")
        await pilot.pause()
        app.screen.query_one(Input).value = str(path)
        await pilot.press("enter")
        await pilot.pause()
        assert "exists. Overwrite it?" in str(app.screen.query_one(".question").render())
        await pilot.press("n")
        await pilot.pause()
        assert len(json.loads(path.read_text(encoding="utf-8"))["merges"]) == 10
        await pilot.press("q")
        await pilot.pause()
        assert "Quit without saving" in str(app.screen.query_one(".question").render())
        await pilot.press("n")
        assert app.is_running


async def test_help_lists_every_key():
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        text = app.screen.query_one(Static).content.plain
        flat = " ".join(text.split())
        for action in ACTIONS:  # a BPE session: every key but Unigram's own
            assert (action.tooltip in flat) == (action.kinds is None or "bpe" in action.kinds), action.action
        assert "plus" not in flat and "question_mark" not in flat and "less_than_sign" not in flat  # keys as shown
        assert "n / space" in flat
        # a description that wraps goes on under itself, not under its key
        assert all(line.startswith("  ") for line in text.split("\n")[3:12] if line)


@pytest.mark.parametrize("size", [(160, 48), (100, 30)])
def test_main_screen_snapshot(snap_compare, size):
    async def run_before(pilot):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        for _ in range(3):
            await pilot.press("N")
        await pilot.pause(0.3)
        pilot.app.clear_notifications()
        await pilot.pause(0.3)

    assert snap_compare(WorkbenchApp(), terminal_size=size, run_before=run_before)


async def test_export_from_the_app_and_refuse_what_a_format_cannot_hold(tmp_path):
    from tokworkbench.core.registry.load import load_any

    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("N")
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(tmp_path / "tokenizer.json")
        await pilot.press("enter")
        await pilot.pause()
        assert load_any(tmp_path / "tokenizer.json").merges == tuple(learner(app).merges)

    app = WorkbenchApp(settings=Settings(units="char"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-format").value = "tiktoken"
        app.screen.query_one("#export-path", Input).value = str(tmp_path / "m.tiktoken")
        await pilot.press("enter")
        await pilot.pause()
        assert not (tmp_path / "m.tiktoken").exists()
        assert any("byte-level only" in m for m in app.said)


async def test_replay_another_tokenizers_merges_on_this_corpus(tmp_path):
    from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
    from tokworkbench.core.registry import modelfile

    other = Trainer(["zzz qqq zzz qqq " * 20], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4")))
    list(other.run(merges=5))
    path = tmp_path / "other.json"
    modelfile.save(other.model(), path)
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("l")
        await pilot.pause()
        app.screen.query_one(Input).value = str(path)
        await pilot.press("enter")
        await pilot.pause()
        assert learner(app).replaying == 5
        assert "replay: next" in str(app.main.query_one(PairsPanel).border_subtitle)
        await pilot.press("n")
        await pilot.pause()
        rec = learner(app).history[0]
        assert rec.pair == other.merges[0] and learner(app).token_text(rec.new_id) == other.token_text(rec.new_id)
        await pilot.press("N")
        await pilot.pause()
        assert learner(app).merges[:5] == other.merges and learner(app).replaying == 0


async def test_byte_view_follows_the_selected_pair_in_the_corpus():
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("N")
        app.query_one("#bottom").active = "tab-bytes"
        await pilot.pause()
        assert "the selected pair's first occurrence" in str(app.main.query_one(BytesPanel).border_subtitle)
        shown = " ".join(app.main.query_one(BytesPanel).row_text(i)[4] for i in range(len(app.main.query_one(BytesPanel).rows)))
        a, b = app.main.selected_pair
        merged = learner(app).token_bytes(a) + learner(app).token_bytes(b)
        assert " ".join(f"{x:02X}" for x in merged) in shown


async def test_progress_reports_repaint_without_laying_out_the_screen(monkeypatch):
    """A layout pass of the whole screen on every report held keys (escape) behind it on a
    large window: the reports change text and rows, never sizes."""
    from textual.screen import Screen

    from tokworkbench.app import messages as msg
    from tokworkbench.core.session.session import RunProgress

    app = WorkbenchApp()
    async with app.run_test(size=(200, 60)) as pilot:
        await ready(app, pilot)
        main = app.main
        main.progress_row.show("training…", 0, 100)
        main.session.step_many(40)  # the history taller than its pane: its scrollbar is there
        main.refresh_snapshot()
        await pilot.pause()
        layouts = []
        original = Screen._refresh_layout

        def counted(screen, *args, **kwargs):
            layouts.append(screen)
            return original(screen, *args, **kwargs)

        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        for k in range(1, 6):
            main.session.step_many(5)
            main.post_message(msg.TrainProgress(RunProgress(5 * k, 30, 100.0, main.session.snapshot(main.view))))
            await pilot.pause()
        assert main.query_one(MergesPanel).row_count == 65  # the reports were drawn
        assert layouts == []


async def test_live_tables_fit_their_pane_and_keep_the_count_in_view():
    """The tables refilled on every report never scroll sideways (a scrollbar that came and
    went was a layout pass each time); a long merged text gives up width to the count."""
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        for table in (app.main.query_one("#pair-table"), app.main.query_one(MergesPanel)):
            room = table.scrollable_content_region.width
            long_row = ("1", "a" * 18, "4,195", "9,999", "99,999", "1.000", "x" * 13, "99999")[: len(table.columns)]
            table.set_rows([long_row])
            await pilot.pause()
            assert table.virtual_size.width <= room and not table.show_horizontal_scrollbar
            header, row = (table.render_line(y).text for y in (0, 1))
            assert "count" in header and "4,195" in row and "a…" in row


async def test_the_progress_line_stands_in_for_the_footer_so_the_panes_keep_their_size():
    """A run's start and end lay out no pane again (the corpus text rewrapped for one line less,
    and the keys waited behind it); the line says that escape cancels."""
    from tokworkbench.app.widgets.keys_footer import KeysFooter

    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        main = app.main
        corpus, footer = main.query_one("#corpus-text"), main.query_one(KeysFooter)
        size = corpus.size
        main.progress_row.show("training… (escape cancels)", 0, 10)
        await pilot.pause()
        assert corpus.size == size and not footer.display and main.progress_row.display
        main.progress_row.hide()
        await pilot.pause()
        assert corpus.size == size and footer.display and not main.progress_row.display


async def test_a_target_below_the_vocabulary_is_said_when_it_is_set():
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("N")
        await pilot.press("t", "ctrl+u", "2", "6", "0", "enter")
        await wait_until(lambda: app.main.session.settings.target == 260)
        await pilot.pause()
        assert any("already 266 for a target of 260: r has nothing to do; u or R goes back" in m for m in app.said)


async def test_a_message_still_on_screen_is_not_stacked_again():
    app = WorkbenchApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        app.clear_notifications()
        for _ in range(5):
            await pilot.press("comma")  # the first document: each press says so
        await pilot.pause(0.3)
        assert sum("first of" in m for m in app.said) == 5  # said each time...
        assert sum("first of" in m for m in app.shown) == 1  # ...shown once


async def test_the_corpus_windows_line_keeps_its_range_at_80_columns():
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.pause(0.2)
        line = app.main.query_one("#corpus-window", StyledLines)
        assert "chars 0–2,400 of 39,457" in line.drawn[0] and "… (1/12)" in line.drawn[0]


async def test_the_range_stays_on_the_line_of_a_long_document_at_80_columns(tmp_path):
    """A document of 1.6M chars: its range left no room for a name cut to 4 chars, the line
    broke after the name, and the range (its second row) was not drawn."""
    (tmp_path / "onelongline.txt").write_text("word " * 320_000, encoding="utf-8")
    app = WorkbenchApp([str(tmp_path / "onelongline.txt")])
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await ready(app, pilot)
        await pilot.press("right_square_bracket")
        await pilot.pause(0.2)
        line = app.main.query_one("#corpus-window", StyledLines)
        assert "of 1,600,000" in line.drawn[0] and len(line.drawn[0]) <= line.size.width


@pytest.mark.parametrize(("room", "item"), [
    (None, "a-long-name.txt (2/9)  ·  "), (26, "a-long-name.txt (2/9)  ·  "), (25, "a-long-name.t… (2/9)  ·  "),
    (16, "a-lo… (2/9)  ·  "), (15, "(2/9)  ·  "), (10, "(2/9)  ·  "), (9, ""), (0, ""),
])
def test_the_document_item_gives_way_to_the_range(room, item):
    from tokworkbench.app.widgets.corpus import _document_item

    assert _document_item(["first.txt", "a-long-name.txt"] + ["x"] * 7, 1, room) == item
    assert _document_item([], 0, room) == ""
