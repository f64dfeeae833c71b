"""`tokworkbench -m FILE` on a T5-laid-out HF Unigram file (<pad> 0, </s> 1, <unk> 2): the piece
table holds the pieces Viterbi matches, the vocabulary browser the special pieces, and the
encode pane says where unknown characters went."""

from pathlib import Path

import pytest
from recording import RecordingApp
from test_app_dialogs import burst, keys_done, wait_for
from test_app_inspect import ready
from textual.widgets import Input

import tokworkbench.app as app_package
from tokworkbench.app.widgets.vocab import VocabPanel
from tokworkbench.cli import main
from tokworkbench.core.session.frozen import FrozenLearner

tokenizers = pytest.importorskip("tokenizers")
SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
SPECIALS = ["<pad>", "</s>", "<unk>"]


@pytest.fixture(scope="module")
def t5_file(tmp_path_factory):
    tok = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = tokenizers.decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = tokenizers.trainers.UnigramTrainer(vocab_size=500, special_tokens=SPECIALS, unk_token="<unk>",
                                                 show_progress=False)
    tok.train([str(SAMPLES / "01_en_genesis_kjv.txt")], trainer)
    tok.post_processor = tokenizers.processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    path = tmp_path_factory.mktemp("t5") / "tokenizer.json"
    tok.save(str(path))
    return path


@pytest.fixture
def opened(monkeypatch):
    calls = []
    monkeypatch.setattr(app_package, "run_app", lambda *args: calls.append(args) or 0)
    return calls


def cells(row) -> list[str]:
    return [c if isinstance(c, str) else c[0] for c in row]


async def test_a_t5_layout_opens_with_specials_in_the_vocabulary_not_the_piece_table(opened, t5_file):
    assert main(["-m", str(t5_file), str(SAMPLES / "01_en_genesis_kjv.txt")]) == 0
    app = RecordingApp(*opened[-1])
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        assert isinstance(app.main.session.learner, FrozenLearner) and app.main.kind == "unigram"
        model = app.main.snapshot.model
        # the piece table: likeliest first, no special piece (they never match text)
        app.main.query_one("#piece-filter", Input).value = ""
        rows, total = app.main.session.learner.next_rows(1000)
        assert total == model.vocab_size - 3 and not {r.id for r in rows} & {0, 1, 2}
        shown = [cells(r) for r in app.main.query_one("#piece-table").rows]
        assert shown and not any(t in row for row in shown for t in SPECIALS)
        # the vocabulary browser: each special piece at its own id, marked special
        panel = app.query_one(VocabPanel)
        burst(app, ["v", "#", "0"])  # v focuses the search box; the keys behind it land there
        await keys_done(app, pilot)
        await pilot.pause(0.3)
        for tid, text in enumerate(SPECIALS):
            app.query_one("#vocab-search", Input).value = f"#{tid}"
            await pilot.pause()
            assert [r.id for r in panel.page.rows] == [tid]
            row = cells(app.query_one("#vocab-table").rows[0])
            assert (row[0], row[1], row[4]) == (str(tid), text, "special")
        # an unknown character becomes <unk>, id 2, and the encode pane says so
        app.main.query_one("#encode-input", Input).value = "In the beginning ☃"
        await pilot.pause()
        shown = str(app.main.query_one("#encode-result").render())
        assert "→ '<unk>'" in shown and "became <unk>" in shown


async def test_an_inspected_unigram_models_pieces_are_counted_over_the_corpus(opened, t5_file):
    """Inspecting, a piece's freq is how often the corpus's segmentation uses it (issue 22, item 9):
    it was 0 for every piece, as no training had counted them."""
    from tokworkbench.core.inspection.vocab import count_tokens

    corpus = SAMPLES / "01_en_genesis_kjv.txt"
    assert main(["-m", str(t5_file), str(corpus)]) == 0
    app = RecordingApp(*opened[-1])
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        main_screen = app.main
        await wait_for(lambda: main_screen.token_counts is not None)
        await pilot.pause()
        expected = count_tokens(main_screen.snapshot.model, [corpus.read_text()])
        rows = main_screen.query_one("#piece-table").rows
        freqs = [int(cells(r)[4].replace(",", "")) for r in rows]
        ids = [int(cells(r)[5]) for r in rows]
        assert any(f > 0 for f in freqs)
        assert freqs == [int(expected[i]) for i in ids]
