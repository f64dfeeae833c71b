"""The Arena tab: this session's model scored beside other tokenizers on the corpus, in a worker,
debounced, only while shown; its numbers are the core's (and the session's own token count)."""

import asyncio

import pytest
from recording import RecordingApp as WorkbenchApp
from rich.console import Console
from textual.widgets import Input, TabbedContent
from textual.worker import WorkerState

from tokworkbench.app.widgets.arena import THIS, ArenaPanel, corpus_texts, describe_chart, describe_table, parse_names
from tokworkbench.core.formats.presets import load_preset
from tokworkbench.core.inspection.arena import score_tokenizer

SIZES = [(160, 48), (80, 24)]


async def ready(app, pilot):
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert app.main.session is not None


async def wait_until(condition, seconds=120.0):
    async def poll():
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), seconds)


def arena_workers(app):
    return [w for w in app.workers if w.group == "arena" and w.state in (WorkerState.PENDING, WorkerState.RUNNING)]


async def choose(app, pilot, names: str):
    await pilot.press("A")
    await pilot.pause()
    box = app.screen.query_one("#prompt-input", Input)
    assert box.value == "cl100k_base o200k_base"  # the presets by default
    box.value = names
    await pilot.press("enter")


@pytest.mark.parametrize("size", SIZES, ids=["160x48", "80x24"])
async def test_the_arena_scores_this_model_and_the_chosen_ones(size):
    app = WorkbenchApp()
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        panel = app.main.query_one(ArenaPanel)
        await choose(app, pilot, "gpt2")
        assert app.main.query_one("#bottom", TabbedContent).active == "tab-arena"
        await wait_until(lambda: panel.scored is not None and panel.scored.key == panel._key())
        scored = panel.scored
        assert [t.name for t in (scored.own, *scored.others)] == [THIS, "gpt2"] and not scored.failed
        texts = corpus_texts(app.main.session.corpus)
        gpt2 = load_preset("gpt2")
        for (name, text), score in zip(texts, scored.others[0].scores):
            assert score.tokens == len(gpt2.encode_ordinary(text)), name
        # this model's tokens over the corpus are the session's own count
        assert scored.own.total.tokens == app.main.snapshot.total_tokens
        await pilot.press("N")  # ten merges: the row follows the model
        await wait_until(lambda: panel.scored.key == panel._key() and panel.scored is not scored)
        assert app.main.snapshot.steps == 10
        assert panel.scored.own.total.tokens == app.main.snapshot.total_tokens < scored.own.total.tokens
        assert panel.scored.others[0] is scored.others[0]  # the others are not scored again
        expected = score_tokenizer(THIS, app.main.snapshot.model, texts, texts[0][0])
        assert [s.tokens for s in panel.scored.own.scores] == [s.tokens for s in expected.scores]
        shown = str(app.main.query_one("#arena-status").render())
        assert "12 texts" in shown and "A: other tokenizers" in shown


async def test_scoring_never_blocks_the_keys_and_a_hidden_tab_waits():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        panel = app.main.query_one(ArenaPanel)
        await pilot.press("N")
        await pilot.pause(1.0)
        assert panel.scored is None and not arena_workers(app)  # hidden: nothing scored yet
        await pilot.press("8")
        # the worker starts once the tab shows; on a quick machine it may be done before a poll sees it
        await wait_until(lambda: arena_workers(app) or panel.scored is not None, 10)
        await pilot.press("1")  # answered while the worker scores
        await pilot.pause()
        assert app.main.query_one("#bottom", TabbedContent).active == "tab-encode"
        assert arena_workers(app) or panel.scored is not None
        await wait_until(lambda: panel.scored is not None)


async def test_changes_in_a_burst_are_scored_once_they_settle():
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        panel = app.main.query_one(ArenaPanel)
        await choose(app, pilot, "")  # this model alone
        await wait_until(lambda: panel.scored is not None)
        starts = []
        original = panel._start
        panel._start = lambda: (starts.append(app.main.snapshot.steps), original())
        for _ in range(5):
            await pilot.press("n")
        await wait_until(lambda: panel.scored.key == panel._key())
        assert app.main.snapshot.steps == 5
        assert len(starts) < 5 and starts[-1] == 5  # debounced: the last model is the one scored
        assert panel.scored.own.total.tokens == app.main.snapshot.total_tokens
        assert panel.scored.others == []


async def test_a_tokenizer_that_does_not_load_is_named_and_the_rest_still_shown(tmp_path):
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        panel = app.main.query_one(ArenaPanel)
        await choose(app, pilot, f"gpt2, {tmp_path / 'missing.json'}")
        await wait_until(lambda: panel.scored is not None)
        assert [t.name for t in panel.scored.others] == ["gpt2"]
        assert len(panel.scored.failed) == 1 and "missing.json" in panel.scored.failed[0]
        assert "missing.json" in str(app.main.query_one("#arena-status").render())


def test_names_are_split_at_commas_and_spaces_once_each():
    assert parse_names(" gpt2, cl100k_base  gpt2,,o200k_base ") == ("gpt2", "cl100k_base", "o200k_base")
    assert parse_names("") == ()


@pytest.mark.parametrize("width", [78, 158])
def test_the_table_and_chart_fit_their_width(width):
    from tokworkbench.core.text.samples import sample_paths

    texts = [(p.name, p.read_text(encoding="utf-8")) for p in sample_paths()]
    rows = [score_tokenizer(n, load_preset(n), texts, texts[0][0]) for n in ("gpt2", "r50k_base")]
    console = Console(width=width, record=True, color_system=None)
    console.print(describe_table(rows, {}, width))
    console.print(describe_chart(rows, [n for n, _ in texts], {}, width))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= width
    assert "✓" in lines[1] and "…" not in lines[0]  # every header whole, the verdict shown
    assert sum("gpt2" in line for line in lines) == 1 + len(texts)


@pytest.mark.parametrize("width", [80, 160])
def test_a_long_path_keeps_its_file_name_in_the_table_and_the_chart(width):
    from tokworkbench.app.widgets.arena import NAME_ROOM, shown_name

    path = "/home/someone/models/llama_models/llama3/tokenizer.model"
    assert shown_name(path, NAME_ROOM) == "…" + path[-(NAME_ROOM - 1):] and len(shown_name(path, 14)) == 14
    assert shown_name("a-very-long-preset-name-here", 14) == "a-very-long-p…" and shown_name("gpt2", 14) == "gpt2"
    texts = [("a.txt", "hello world, hello tokens"), ("b.txt", "another text")]
    rows = [score_tokenizer(n, load_preset("gpt2"), texts, "a.txt") for n in (path, "gpt2")]
    console = Console(width=width, record=True, color_system=None)
    console.print(describe_table(rows, {}, width))
    console.print(describe_chart(rows, [n for n, _ in texts], {}, width))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= width
    assert "tokenizer" in lines[0] and any(line.startswith("…") and "izer.model" in line for line in lines[1:3])
    assert sum(line.endswith("llama3/tokenizer.model") for line in lines) == len(texts)
