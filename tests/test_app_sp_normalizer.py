"""`tokworkbench -m FILE` on a SentencePiece model trained with its defaults (nmt_nfkc, whitespace
collapsed): the corpus view draws every token over the characters it covers although the
normalizer changed the text's length (ligatures, full-width, circled digits, repeated spaces),
and the encode pane says the model normalized the text rather than showing a bare mismatch."""

from pathlib import Path

import pytest
from recording import RecordingApp
from test_app_inspect import ready
from textual.widgets import Input

import tokworkbench.app as app_package
from tokworkbench.app.labels import describe_inspection
from tokworkbench.cli import main
from tokworkbench.core.session.frozen import FrozenLearner

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")
SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
CORPUS = "The ﬁrst  day: ①②, Ｆｕｌｌ width.\n   Second \t line ☃☃ end  \nplain text here\n"


@pytest.fixture(scope="module")
def sp_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("spapp")
    spm.SentencePieceTrainer.train(input=str(SAMPLES / "01_en_genesis_kjv.txt"), model_prefix=str(out / "m"),
                                   vocab_size=400, model_type="unigram", minloglevel=2)
    (out / "corpus.txt").write_text(CORPUS, encoding="utf-8")
    return out / "m.model", out / "corpus.txt", spm.SentencePieceProcessor(model_file=str(out / "m.model"))


@pytest.fixture
def opened(monkeypatch):
    calls = []
    monkeypatch.setattr(app_package, "run_app", lambda *args: calls.append(args) or 0)
    return calls


async def test_tokens_are_drawn_over_the_text_the_model_normalized(opened, sp_files):
    model_path, corpus, sp = sp_files
    assert main(["-m", str(model_path), str(corpus)]) == 0
    app = RecordingApp(*opened[-1])
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        learner = app.main.session.learner
        assert isinstance(learner, FrozenLearner)
        model = app.main.snapshot.model
        assert "normalizer sentencepiece nmt_nfkc" in describe_inspection(str(model_path), model)
        start, shown, spans, length = learner.window(0, 0, 400)
        # the view shows what the pieces cover: ﬁ as fi, full-width as ASCII, ① as 1, one space
        assert shown.startswith("▁The▁first▁day:▁12,▁Full▁width.▁Second▁line▁☃☃▁end▁plain")
        assert [s.token for s in spans] == sp.encode(CORPUS)
        assert "".join(shown[s.start : s.end] for s in spans) == shown  # end to end, no gap, no overlap
        unknown = [shown[s.start : s.end] for s in spans if s.token == model.unk_id]
        assert "☃☃" in unknown  # a fused <unk> covers its whole run
        for s in spans:  # every other span is its token's own characters
            assert s.token == model.unk_id or shown[s.start : s.end] == model.token(s.token)
        # the encode pane: the ids are SentencePiece's, and the changed text is the model's doing
        app.main.query_one("#encode-input", Input).value = "ﬁne  ①"
        await pilot.pause()
        text = str(app.main.query_one("#encode-result").render())
        assert "normalized by the model: sentencepiece nmt_nfkc" in text
        assert app.main.query_one("#encode").last.ids == sp.encode("ﬁne  ①")
