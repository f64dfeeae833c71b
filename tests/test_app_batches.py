"""The Batches tab, Compare, roles in settings and the encode pane's specials, driven by keys as a
user drives them; each test checks what the screen shows against what the core computes."""

import asyncio

import numpy as np
import pytest
from recording import RecordingApp as WorkbenchApp
from rich.console import Console
from test_app_dialogs import burst, steady_cursors
from textual.widgets import Input, Static

from tokworkbench.app.batchdraw import draw_allowed, draw_grid, draw_stream
from tokworkbench.app.dialogs import PromptDialog, ReplayDialog, SettingsDialog
from tokworkbench.app.render import PALETTES
from tokworkbench.app.widgets.batches import BatchChoice, BatchesPanel, line_documents, parse_choice
from tokworkbench.app.widgets.compare import ComparePanel
from tokworkbench.core.batching import make_batch
from tokworkbench.core.compat import fingerprint
from tokworkbench.core.fixed.model import FixedVocab
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.registry import modelfile
from tokworkbench.core.session.settings import Settings

SPECIALS = ("<s>", "</s>", "<pad>")
WITH_ROLES = Settings(special_tokens=SPECIALS, roles=Roles(bos="<s>", eos="</s>", pad="<pad>"))


def shown(app, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def wait_for(condition, seconds=30.0):
    """A bounded wait for what a busy machine draws a little later."""
    async def poll():
        while not condition():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), seconds)


def expected(app, choice: BatchChoice):
    """The batch the core cuts from the same texts with the session's model and roles."""
    texts = line_documents(d.text for d in app.main.session.corpus.documents)
    return make_batch(app.main.session.model(), texts, choice.spec())


def numbers(line: str) -> list[int]:
    """The ids on a grid line ("▶0  in   12   7 …" or "   tgt    7 …")."""
    words = line.split()
    return [int(w) for w in words[words.index("in" if "in" in words else "tgt") + 1:]]


def grid_rows(app) -> list[str]:
    return shown(app, "#batch-grid").splitlines()


# -- drawing, without an app ------------------------------------------------------------------
def draw(text, width=100) -> str:
    console = Console(width=width, color_system=None, record=True)
    console.print(text)
    return console.export_text()


def test_the_grid_marks_pad_cells_and_ignored_targets_in_characters():
    roles = {0: "bos", 1: "eos", 2: "pad"}
    inputs = np.array([[0, 5, 6, 1, 2, 2]])
    targets = np.array([[5, 6, 1, -100, -100, -100]])
    mask = inputs != 2
    text = draw_grid(inputs, targets, lambda i: "abcdefg"[i], roles, mask, PALETTES["none"], chosen=0)
    lines = draw(text).splitlines()
    assert lines[1].split() == ["▶0", "in", "0", "5", "6", "1", "2", "2"]
    assert lines[2].split() == ["⟨bos⟩", "f", "g", "⟨eos⟩", "⟨pad⟩", "⟨pad⟩"]
    assert lines[3].split() == ["tgt", "5", "6", "1", "-100", "-100", "-100"]
    assert lines[4].split() == ["f", "g", "⟨eos⟩", "✗", "✗", "✗"]
    # without colour the marks are still there: PAD dimmed, -100 in reverse video
    styles = {str(span.style) for span in text.spans if text.plain[span.start:span.end].strip() == "-100"}
    assert styles == {PALETTES["none"].ignored}
    assert any(str(s.style) == "dim" and text.plain[s.start:s.end].strip() == "2" for s in text.spans)


def test_hindi_tokens_fill_every_grid_line_to_its_width_in_cells():
    """Issue 22: in tmux, ै and । stayed at the ends of the id rows after a mode change. Every
    line is the widget's width in terminal cells, a token is cut by whole clusters, and no
    combining mark starts a line or a column (it would combine with the cell before it)."""
    import unicodedata
    from pathlib import Path

    from rich.cells import cell_len

    hindi = (Path(__file__).parent.parent / "sample_texts" / "10_hi_tokenization_notes.txt").read_text()
    hindi = "".join(hindi.split())
    # pieces as a Unigram or BPE vocabulary cuts them: some begin with a vowel sign (ै), some
    # are long enough to be cut under an id, some end with a virama
    pieces = [hindi[i:i + n] for i, n in zip(range(0, 600, 7), [1, 2, 3, 9, 4, 12, 2, 1] * 20)]
    pieces += ["ै", "।", "क्षेत्र", "ैैैैैैैै", "中文字符", "ab"]
    assert any(unicodedata.combining(p[0]) for p in pieces)
    ids = (np.arange(96) % len(pieces)).reshape(8, 12)[::-1]  # the odd pieces (last) in the first rows
    for width in (60, 97, 140):
        text = draw_grid(ids, np.roll(ids, -1), lambda i: pieces[i], {}, None, PALETTES["none"], 0, width)
        for line in text.plain.split("\n"):
            assert cell_len(line) == width, (width, line)
            assert not unicodedata.combining(line[0]), line
            for before, after in zip(line, line[1:]):
                assert not (before == " " and unicodedata.combining(after)), line
    # with no width given, every line is as wide as the widest band
    plain = draw_grid(ids, ids, lambda i: pieces[i], {}).plain.split("\n")
    assert len({cell_len(line) for line in plain}) == 1


def test_the_stream_shows_every_document_start_without_colour():
    text = draw_stream([7, 8, 9, 7, 8], [0, 3], lambda i: "xyz"[i - 7], {}, PALETTES["none"], window=(1, 3))
    assert draw(text).strip() == "xyz ┃ xy"


def test_the_allowed_matrix_is_causal_and_hides_pad():
    allowed = np.tri(4, dtype=bool) & np.array([True, True, True, False])[None, :]
    lines = draw(draw_allowed(allowed, 1, 10, 2)).splitlines()
    assert lines[0].strip() == "row 1 · start 10" and "allowed 9/16" in lines[2]
    assert [line.split()[1:] for line in lines[5:9]] == [["■", "·", "·", "·"], ["■", "■", "·", "·"],
                                                         ["■", "■", "■", "·"], ["■", "■", "■", "·"]]


def test_documents_are_the_first_lines_of_each_file_cut_short():
    docs = line_documents(["a\n\n  \nb\n" + "c" * 500, "".join(f"{i}\n" for i in range(20))])
    assert docs[:3] == ("a", "b", "c" * 200) and docs[3:] == tuple("01234567")


def test_parse_choice_takes_the_prompt_and_says_what_is_wrong():
    base = BatchChoice()
    assert parse_choice("T=16 B=2 mode=random seed=7", base) == BatchChoice(16, 2, "random", None, 7)
    starts = parse_choice("starts=0,5,9", base)
    assert starts.mode == "starts" and starts.starts == (0, 5, 9) and starts.batch == 3
    for bad, said in [("T=x", "whole number"), ("mode=wide", "one of"), ("colour=3", "key=value"),
                      ("T=0", "T from 1"), ("mode=starts", "needs starts")]:
        with pytest.raises(ValueError, match=said):
            parse_choice(bad, base)


# -- the Batches tab --------------------------------------------------------------------------
async def test_the_batches_tab_draws_the_cores_batch_and_its_keys_change_it():
    app = WorkbenchApp(settings=WITH_ROLES)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("N", "b")
        await pilot.pause()
        panel = app.query_one(BatchesPanel)
        assert app.query_one("#bottom").active == "tab-batches" and app.focused is panel
        batch = expected(app, BatchChoice())
        rows = grid_rows(app)
        assert numbers(rows[1]) == batch.inputs[0].tolist() and numbers(rows[3]) == batch.targets[0].tolist()
        assert rows[2].split()[0] == "⟨bos⟩"  # the stream starts with the first document's BOS
        assert f"{batch.valid_targets}/{batch.targets.size} targets valid" in shown(app, "#batch-summary")
        second = panel.result.boundaries[1]  # where the second document starts: drawn when in view
        panel.choose(parse_choice(f"starts={second - 3}", panel.choice))
        await pilot.pause()
        assert "⟨eos⟩ ┃ ⟨bos⟩" in shown(app, "#batch-stream")
        assert numbers(grid_rows(app)[1])[2:4] == [panel.result.stream[second - 1], panel.result.stream[second]]
        panel.choose(BatchChoice())

        await pilot.press("plus", "plus", "greater_than_sign")  # T 8 → 10, B 4 → 5
        await pilot.pause()
        assert panel.result.batch.inputs.shape == (5, 10)
        assert "T 10 · B 5" in shown(app, "#batch-summary")
        assert np.array_equal(panel.result.batch.inputs, expected(app, BatchChoice(10, 5)).inputs)

        await pilot.press("m")  # random starts: the seed reproduces them, g draws others
        await pilot.pause()
        first = panel.result.batch.starts.tolist()
        assert first == expected(app, BatchChoice(10, 5, "random")).starts.tolist()
        await pilot.press("g")
        await pilot.pause()
        assert panel.choice.seed == 1 and panel.result.batch.starts.tolist() != first

        await pilot.press("down", "down")
        await pilot.pause()
        allowed = panel.result.batch.allowed(2)
        assert shown(app, "#batch-matrix").startswith("row 2") and f"allowed {allowed.sum()}/100" in shown(
            app, "#batch-matrix")

        for _ in range(3):  # merges while the tab is shown: the newest model is cut, soon if not at once
            await pilot.press("n")
        newest = fingerprint(app.main.session.model())
        await wait_for(lambda: panel.result.batch.fingerprint == newest)
        assert f"fp {newest[:8]}" in shown(app, "#batch-summary")


async def test_padded_rows_show_pad_the_mask_and_ignored_targets():
    app = WorkbenchApp(settings=WITH_ROLES)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("b", "m", "m")  # stride → random → pad
        await pilot.pause()
        panel = app.query_one(BatchesPanel)
        batch = panel.result.batch
        assert panel.choice.mode == "pad" and batch.attention_mask is not None
        want = expected(app, BatchChoice(mode="pad"))
        assert np.array_equal(batch.targets, want.targets) and batch.valid_targets == want.valid_targets
        assert f"ln V {np.log(batch.vocab_size):.3f}" in shown(app, "#batch-summary")
        # a short document makes PAD cells and -100 targets: T grows until one row is padded
        for _ in range(60):
            if not panel.result.batch.attention_mask.all():
                break
            await pilot.press("plus")
            await pilot.pause()
        batch = panel.result.batch
        assert not batch.attention_mask.all()
        text = shown(app, "#batch-grid")
        assert "⟨pad⟩" in text and "-100" in text and "✗" in text
        row = int(np.argmin(batch.attention_mask.all(axis=1)))
        for _ in range(row):
            await pilot.press("down")
        await pilot.pause()
        assert f"allowed {batch.allowed(row).sum()}/" in shown(app, "#batch-matrix")


async def test_padded_mode_without_a_pad_token_says_so_and_keeps_the_session():
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n", "b", "m", "m")
        await pilot.pause()
        panel = app.query_one(BatchesPanel)
        assert panel.result.batch is None and "PAD" in panel.result.error
        assert "PAD" in shown(app, "#batch-notes") and "roles in settings" in shown(app, "#batch-notes")
        await pilot.press("w")
        await pilot.pause()
        assert app.screen is app.main and app.main.session.steps == 1  # nothing written, nothing lost


async def test_the_batch_is_written_as_npz_through_the_path_prompt(tmp_path):
    app = WorkbenchApp(settings=WITH_ROLES)
    async with app.run_test(size=(80, 24)) as pilot:
        path = tmp_path / "batch.npz"
        burst(app, ["b", "minus", "w", "ctrl+a", "ctrl+k", *str(path), "enter"])
        await wait_for(lambda: path.is_file())
        await pilot.pause()
        batch = app.query_one(BatchesPanel).result.batch
        with np.load(path) as data:
            assert np.array_equal(data["inputs"], batch.inputs) and data["inputs"].shape == (4, 7)
            assert np.array_equal(data["targets"], batch.targets)
            assert str(data["fingerprint"]) == batch.fingerprint
        assert any("wrote a 4×7 batch" in m for m in app.said)


async def test_the_params_prompt_checks_what_is_typed():
    app = WorkbenchApp(settings=WITH_ROLES)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("b", "p")
        await pilot.pause()
        assert isinstance(app.screen, PromptDialog)
        box = app.screen.query_one(Input)
        box.value = "T=99"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PromptDialog)  # the view's own limits
        assert "T from 1 to 64" in str(app.screen.query_one("#prompt-error").render())
        box.value = "T=5 starts=0,3,999999"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PromptDialog)  # the core's checks, before the box closes
        assert "out of range" in str(app.screen.query_one("#prompt-error").render())
        box.value = "T=5 starts=0,3"
        await pilot.press("enter")
        await pilot.pause()
        panel = app.query_one(BatchesPanel)
        assert panel.result.batch.starts.tolist() == [0, 3] and panel.result.batch.inputs.shape == (2, 5)
        await pilot.press("greater_than_sign")  # with given starts, B is how many there are
        await pilot.pause()
        assert panel.result.batch.inputs.shape == (2, 5) and "T 5 · B 2 · starts 0,3" in shown(app, "#batch-summary")
        panel.choose(parse_choice("starts=0,999999", panel.choice))  # the core's range check is shown
        await pilot.pause()
        assert panel.result.batch is None and "out of range" in shown(app, "#batch-notes")


# -- Compare ----------------------------------------------------------------------------------
async def test_compare_shows_both_tokenizations_the_fingerprints_and_the_differing_ids(tmp_path):
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("N")
        await pilot.pause()
        same = tmp_path / "same.json"
        app.main.session.save(same)
        await pilot.press("n")  # one merge more: id 266 now exists here and not in the file
        app.main.query_one("#encode-input", Input).value = "the theory"
        await pilot.press("C")
        await pilot.pause()
        assert isinstance(app.screen, ReplayDialog)
        app.screen.query_one("#replay-path", Input).value = str(same)
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#bottom").active == "tab-compare"
        c = app.query_one(ComparePanel).comparison
        summary = shown(app, "#compare-summary")
        assert "INCOMPATIBLE" in summary and c.differing == 1 and "id 266:" in summary
        assert c.fingerprint_a[:16] in summary and c.fingerprint_b[:16] in summary
        a, b = shown(app, "#compare-a-text"), shown(app, "#compare-b-text")
        assert f"{c.count_a} tokens" in a and f"{c.count_b} tokens" in b and "same.json" in b


async def test_two_fixed_vocabularies_that_swap_two_ids_are_incompatible(tmp_path):
    tokens = ["<s>", "</s>", "<pad>", "<unk>", "我", "喜欢", "学习", "AI"]
    roles = Roles(bos="<s>", eos="</s>", pad="<pad>", unk="<unk>")
    swapped = tmp_path / "swapped.json"
    modelfile.save(FixedVocab(tuple(tokens[:5] + ["AI", "学习", "喜欢"]), roles), swapped)
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        panel = app.query_one(ComparePanel)
        panel.set_other(FixedVocab(tuple(tokens), roles), "mine.json")  # side A stays the session's model
        app.main.query_one("#encode-input", Input).value = "我喜欢学习AI"
        await pilot.press("C")
        await pilot.pause()
        app.screen.query_one("#replay-path", Input).value = str(swapped)
        await pilot.press("enter")
        await pilot.pause()
        assert panel.other_name == "swapped.json"
        b = shown(app, "#compare-b-text")
        assert "5 tokens" not in b and "4 tokens" in b  # 我 喜欢 学习 AI, whatever their ids
        assert "7 5 6 4" not in b and "4 7 6 5" in b


async def test_comparing_a_file_that_is_not_a_tokenizer_is_one_message(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("just some words\n", encoding="utf-8")
    app = WorkbenchApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("n", "C")
        await pilot.pause()
        app.screen.query_one("#replay-path", Input).value = str(bad)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is app.main and app.query_one(ComparePanel).other is None
        assert app.said and "notes.txt" in app.said[-1]


# -- roles in settings, specials in encode/decode --------------------------------------------
async def test_roles_set_in_settings_reach_encode_and_decode():
    app = WorkbenchApp(settings=Settings(special_tokens=SPECIALS))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("c")
        await pilot.pause()
        assert isinstance(app.screen, SettingsDialog)
        app.screen.query_one("#role-bos", Input).value = "<s>"
        app.screen.query_one("#role-eos", Input).value = "<nope>"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SettingsDialog)  # a role naming no special token is refused
        assert "<nope>" in str(app.screen.query_one("#settings-error").render())
        app.screen.query_one("#role-eos", Input).value = "</s>"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is app.main and app.main.session.settings.roles == Roles(bos="<s>", eos="</s>")
        model = app.main.snapshot.model
        bos, eos = model.special_ids["<s>"], model.special_ids["</s>"]

        box = app.main.query_one("#encode-input", Input)
        box.focus()
        await pilot.press("h", "i", "ctrl+t")
        await pilot.pause()
        text = shown(app, "#encode-result")
        ids = [int(w) for w in text.split("ids ")[1].splitlines()[0].split()]
        assert ids[0] == bos and ids[-1] == eos and "⟨bos⟩hi⟨eos⟩" in text.splitlines()[0]

        app.main.query_one("#decode-input", Input).value = " ".join(map(str, ids))
        await pilot.pause()
        assert "'<s>hi</s>'" in shown(app, "#decode-result")
        app.main.query_one("#decode-input", Input).focus()
        await pilot.press("ctrl+g")
        await pilot.pause()
        decoded = shown(app, "#decode-result")
        assert "'hi'" in decoded and "2 hidden" in decoded


# -- how it looks -----------------------------------------------------------------------------
@pytest.mark.parametrize("size", [(160, 48), (80, 24)], ids=["160x48", "80x24"])
def test_batches_tab_snapshot(snap_compare, size):
    async def run_before(pilot):
        await pilot.press("N", "b", "m", "m")
        await pilot.pause(0.3)
        steady_cursors(pilot.app)
        pilot.app.clear_notifications()
        await pilot.pause(0.2)

    assert snap_compare(WorkbenchApp(settings=WITH_ROLES), terminal_size=size, run_before=run_before)


def test_compare_tab_snapshot(snap_compare, tmp_path):
    vocab = tmp_path / "mine.json"
    modelfile.save(FixedVocab(("<s>", "</s>", "<pad>", "<unk>", "我", "喜欢", "学习", "AI"),
                              Roles(bos="<s>", eos="</s>", pad="<pad>", unk="<unk>")), vocab)

    async def run_before(pilot):
        await pilot.press("N")
        pilot.app.main.query_one("#encode-input", Input).value = "我喜欢学习AI"
        await pilot.press("C")
        await pilot.pause()
        pilot.app.screen.query_one("#replay-path", Input).value = str(vocab)
        await pilot.press("enter")
        await pilot.pause(0.3)
        await pilot.app.workers.wait_for_complete()  # the diff and the corpus counts
        await pilot.pause(0.2)
        steady_cursors(pilot.app)
        pilot.app.clear_notifications()
        await pilot.pause(0.2)

    assert snap_compare(WorkbenchApp(), terminal_size=(80, 24), run_before=run_before)


async def test_escape_gives_the_batches_keys_back_to_the_screen():
    """After b the pane has the keys (m is its mode); escape hands them back."""
    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("b")
        await pilot.pause()
        assert isinstance(app.focused, BatchesPanel)
        mode = app.query_one(BatchesPanel).choice
        await pilot.press("escape", "m")
        await pilot.pause()
        assert not isinstance(app.focused, BatchesPanel)
        assert app.query_one(BatchesPanel).choice == mode  # m no longer reached the pane
