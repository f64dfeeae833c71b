"""The encode tab's pipeline view (ctrl+l in the pane, p anywhere), driven by the pilot at
160×48 and 80×24: each stage on its own line, as core/inspection/pipeline.py computes it; the
normalizer's changes, the chunks with their offsets, the tokens (clickable), what the
post-processor adds, and where the decode differs."""

import pytest
from recording import RecordingApp
from test_app import ready
from test_app_key_order import post, settled
from textual.widgets import Input, TabbedContent

from tokworkbench.app.widgets.encode import EncodePanel
from tokworkbench.core.inspection.escape import visible
from tokworkbench.core.inspection.pipeline import pipeline
from tokworkbench.core.models.roles import role_ids
from tokworkbench.core.session.settings import Settings

SIZES = [(160, 48), (80, 24)]
TEXT = "Héllo,  WORLD!! naïve café 日本語 👋🏽 x"


def shown(app) -> str:
    return str(app.query_one("#encode-result").render())


def stage_lines(text: str) -> dict[str, str]:
    """Each stage's heading line by its number, '1' … '5'."""
    return {line[:1]: line for line in text.splitlines() if line[:1].isdigit() and line[1:2] == " "}


@pytest.mark.parametrize("size", SIZES)
async def test_ctrl_l_shows_each_stage_of_the_pipeline(size):
    app = RecordingApp()
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        await pilot.press("N")
        await app.workers.wait_for_complete()
        box = app.query_one("#encode-input", Input)
        box.value = TEXT
        box.focus()
        await pilot.pause()
        assert "1 normalizer" not in shown(app)
        await pilot.press("ctrl+l")  # a key of the pane: it works while the box has focus
        await pilot.pause()
        model = app.main.snapshot.model
        p = pipeline(model, TEXT)
        text = shown(app)
        stages = stage_lines(text)
        assert sorted(stages) == ["1", "2", "3", "4", "5"]
        assert "none: no change" in stages["1"]
        assert f"gpt4: {len(p.chunks)} chunks" in stages["2"]
        flat = " ".join(text.split())
        for c in p.chunks:
            assert f"{visible(c.text)} {c.start}–{c.end}" in flat
        assert f"BPE: {len(p.ids)} tokens" in stages["3"]
        assert " ".join(f"{visible(t)}({i})" for i, t in zip(p.chunks[0].ids, p.chunks[0].tokens)) in flat
        assert "adds nothing" in stages["4"] and "the ids decode to the input" in stages["5"]
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert "1 normalizer" not in shown(app) and "round trip is lossless" in shown(app)


async def test_a_token_in_the_model_stage_is_a_click_that_selects_it():
    app = RecordingApp()
    async with app.run_test(size=SIZES[0]) as pilot:
        await ready(app, pilot)
        box = app.query_one("#encode-input", Input)
        box.value = "hello world"
        app.query_one(EncodePanel).action_toggle_pipeline()
        await pilot.pause()
        lines = shown(app).splitlines()
        row = next(k for k, line in enumerate(lines) if line.startswith("3 model")) + 1
        await pilot.click("#encode-result", offset=(3, row))
        await pilot.pause()
        first = pipeline(app.main.snapshot.model, "hello world").ids[0]
        assert app.main.selected_token == first
        assert f"id {first}" in str(app.query_one("#token-details").render())


async def test_p_shows_the_encode_tab_with_the_pipeline_from_another_tab():
    app = RecordingApp()
    async with app.run_test(size=SIZES[1]) as pilot:
        await ready(app, pilot)
        app.query_one("#encode-input", Input).value = "abc"
        app.query_one("#bottom", TabbedContent).active = "tab-charts"
        await pilot.pause()
        await pilot.press("p")
        await pilot.pause()
        assert app.query_one("#bottom", TabbedContent).active == "tab-encode"
        assert app.query_one(EncodePanel).show_pipeline and "2 pre-tokenizer" in shown(app)


async def test_the_normalizer_and_the_post_processor_say_what_they_did():
    app = RecordingApp(settings=Settings(normalizer="nfkc", special_tokens=("<|endoftext|>",), roles={"bos": "<|endoftext|>"}))
    async with app.run_test(size=SIZES[0]) as pilot:
        await ready(app, pilot)
        app.query_one("#encode-input", Input).value = "ＡＩ ﬁne"
        app.query_one(EncodePanel).action_toggle_pipeline()
        await pilot.pause()
        text = shown(app)
        stages = stage_lines(text)
        assert "nfkc: 2 changes" in stages["1"]
        assert "ＡＩ→AI" in text and "ﬁ→fi" in text
        bos = role_ids(app.main.snapshot.model)["bos"]
        assert "<|endoftext|> $A: adds 1 id" in stages["4"] and f"⟨bos⟩ {bos} in front" in text
        assert "the normalizer changed the text" in stages["5"] and "differs at char 0" in text


async def test_a_long_paste_draws_the_first_chunks_and_counts_them_all():
    app = RecordingApp(settings=Settings(normalizer="nfkc"))
    async with app.run_test(size=SIZES[0]) as pilot:
        await ready(app, pilot)
        text = "ﬁne day, " * 6000
        app.query_one("#encode-input", Input).value = text
        app.query_one(EncodePanel).action_toggle_pipeline()
        await pilot.pause()
        p = pipeline(app.main.snapshot.model, text)
        shown_text = shown(app)
        stages = stage_lines(shown_text)
        assert f"{len(p.chunks):,} chunks" in stages["2"] and f"{len(p.ids):,} tokens" in stages["3"]
        assert f"… {len(p.chunks) - 400:,} more" in shown_text and "more characters" in shown_text
        assert len(shown_text) < 40_000  # drawn: the first chunks and characters, not all 54,000


async def test_p_with_an_empty_box_takes_the_keys_behind_it_as_the_text():
    """Keys in one burst: p, the text, escape, n. The text lands in the box and its stages are
    shown; escape leaves the box and n merges as ever."""
    app = RecordingApp()
    async with app.run_test(size=SIZES[1]) as pilot:
        await ready(app, pilot)
        before = app.main.session.steps
        for key in ("p", "H", "é", "l", "l", "o", "space", "a", "b", "escape", "n"):
            post(app, key)
        await settled(app, pilot)
        assert app.query_one("#encode-input", Input).value == "Héllo ab"
        assert "2 pre-tokenizer" in shown(app) and app.main.session.steps == before + 1
