"""The core of inspect mode: the vocabulary's search and sort against a plain loop over every
token, and a frozen model's windows against encoding the whole document."""

import base64

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokworkbench.core.bpe.trainer import TrainConfig, Trainer
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import DecodeError, TrainingError
from tokworkbench.core.inspection.segments import text_spans
from tokworkbench.core.inspection.vocab import count_tokens, parse_query, search, token_info, vocab_of
from tokworkbench.core.models.protocol import Learner
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.session.frozen import FrozenLearner
from tokworkbench.core.session.session import Session
from tokworkbench.core.session.snapshot import View
from tokworkbench.core.text.corpus import load_corpus
from tokworkbench.core.text.pretokenize import pre_tokenizer
from tokworkbench.core.text.samples import sample_paths

EOT = "<|endoftext|>"


def samples() -> list[str]:
    return [d.text for d in load_corpus(sample_paths()).documents]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    """A ranks file as real ones are: single bytes in GPT-2's order, merges after a gap, and a
    special token further on, read back as outside ids through an id map."""
    t = Trainer(samples(), TrainConfig(pre_tokenizer=pre_tokenizer("gpt4")))
    list(t.run(vocab_size=700))
    tokens = list(t.model().ranked_tokens)
    ranks = {bytes([b]): r for r, b in enumerate(bytes_to_unicode())}
    ranks.update({tok: 400 + k for k, tok in enumerate(tokens[256:])})
    path = tmp_path_factory.mktemp("ranks") / "r.tiktoken"
    path.write_text("".join(f"{base64.b64encode(tok).decode()} {r}\n" for tok, r in ranks.items()))
    return load_any(path, "gpt4", specials={EOT: 2000})


def every_token(model) -> dict[int, bytes]:
    """The vocabulary the slow way: every outside id, asked one at a time."""
    ids = list(model.ids) + list(model.special_ids.values())
    return {i: model.token_bytes(i) if i not in model.special_ids.values() else EOT.encode() for i in ids}


@pytest.mark.parametrize("query, wanted", [
    ("th", lambda t: b"th" in t),
    (" the", lambda t: b" the" in t),
    ("␣the", lambda t: b" the" in t),  # the mark the views draw for a space
    ("x:e4 b8", lambda t: b"\xe4\xb8" in t),
    ("0xe4b8", lambda t: b"\xe4\xb8" in t),
    ("\\xe4\\xb8", lambda t: b"\xe4\xb8" in t),
    ("e4 b8", lambda t: b"\xe4\xb8" in t),
    ("be", lambda t: b"be" in t),  # two letters are text, not the byte 0xbe
    ("aa", lambda t: b"aa" in t),  # overlapping matches, and one across two tokens, are no match
    ("endoftext", lambda t: b"endoftext" in t),  # special tokens are searched by their name
])
def test_search_by_text_and_hex_finds_what_a_loop_finds(model, query, wanted):
    vocab = vocab_of(model)
    page = search(vocab, query, "id", limit=10_000)
    expected = sorted(i for i, t in every_token(model).items() if wanted(t))
    assert [r.id for r in page.rows] == expected and page.matched == len(expected)


def test_search_by_id_and_by_range(model):
    vocab = vocab_of(model)
    assert [r.id for r in search(vocab, "#401").rows] == [401]
    assert [r.id for r in search(vocab, "id: 2000").rows] == [2000]
    assert [r.id for r in search(vocab, "#300-420").rows] == [i for i in range(300, 421) if i < 256 or i >= 400]
    assert search(vocab, "#5000").matched == 0
    assert parse_query("#12") == ("ids", (12, 12)) and parse_query("12")[0] == "text"


def test_sorting_by_length_and_count(model):
    vocab = vocab_of(model)
    tokens = every_token(model)
    by_length = search(vocab, "", "length", limit=50)
    assert [r.id for r in by_length.rows] == sorted(tokens, key=lambda i: (-len(tokens[i]), i))[:50]
    counts = count_tokens(model, samples())
    assert counts.sum() == sum(len(model.encode_ordinary(t)) for t in samples())
    by_count = search(vocab, "", "count", counts, limit=50)
    count = lambda i: int(counts[i]) if i < len(counts) else 0  # noqa: E731
    assert [r.id for r in by_count.rows] == sorted(tokens, key=lambda i: (-count(i), i))[:50]
    assert [r.count for r in by_count.rows] == [count(i) for i in (r.id for r in by_count.rows)]
    assert search(vocab, "", "count", None).order == "id"  # nothing counted yet: by id


def test_token_info_names_the_merge_and_its_parents(model):
    for k, (a, b) in enumerate(model.merges[:50]):
        made = model.to_outside([model.base_size + k])[0]
        info = token_info(model, made)
        assert info.step == k + 1 and info.parents == tuple(model.to_outside([a, b]))
        assert info.data == model.token_bytes(info.parents[0]) + model.token_bytes(info.parents[1])
    bang = token_info(model, 0)
    assert bang.data == b"!" and bang.step is None and bang.parents is None and not bang.special
    eot = token_info(model, 2000)
    assert eot.special and eot.text == EOT
    with pytest.raises(DecodeError, match="not in this vocabulary"):
        token_info(model, 300)  # in the gap
    lone = token_info(model, list(bytes_to_unicode()).index(0xA1))  # a byte that is not UTF-8 alone
    assert lone.data == b"\xa1" and lone.text == "\\xa1"  # escaped once


def test_a_frozen_learner_is_a_learner_that_makes_no_steps(model):
    learner = FrozenLearner(model, samples(), "r.tiktoken")
    assert isinstance(learner, Learner)
    assert learner.step() is None and learner.undo() is None and list(learner.run(merges=5)) == []
    with pytest.raises(TrainingError, match="inspected, not trained"):
        learner.steps_for_vocab(5000)
    assert len(learner.history) == len(model.merges)
    last = learner.history_rows(3)
    assert [r.record.step for r in last] == [len(model.merges) - 2, len(model.merges) - 1, len(model.merges)]
    assert last[-1].record.new_id == model.to_outside([model.base_size + len(model.merges) - 1])[0]
    assert learner.total_tokens == 0  # nothing is encoded until measured
    counts = learner.measure()
    assert learner.total_tokens == counts.sum() == sum(len(model.encode_ordinary(t)) for t in samples())


def test_a_session_inspects_without_counting_and_keeps_its_model(model):
    corpus = load_corpus(sample_paths())
    session = Session.inspect(corpus, model, "r.tiktoken")
    snap = session.snapshot(View(doc=4, start=100, size=500))
    assert session.inspected == "r.tiktoken" and snap.model is model and not snap.can_step
    assert snap.steps == len(model.merges) and not session.unsaved
    assert session.settings.split == "gpt4" and session.settings.target == model.vocab_size


texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.one_of(texts, st.sampled_from(samples())), min_size=1, max_size=3),
       start=st.integers(0, 20_000), size=st.integers(1, 3_000))
def test_a_window_has_the_ids_the_whole_document_has(model, pieces, start, size):
    text = "".join(pieces)
    learner = FrozenLearner(model, [text])
    at, shown, spans, length = learner.window(0, start, start + size)
    assert length == len(text) and shown == text[at: at + size]
    _, whole = text_spans(model, text)
    expected = [(s.start - at, s.end - at, s.token) for s in whole if s.end > at and s.start < at + len(shown)]
    assert [(s.start, s.end, s.token) for s in spans] == expected


def test_only_the_window_is_encoded(model, monkeypatch):
    text = " ".join(samples()) * 20
    learner = FrozenLearner(model, [text])
    seen = []
    real = model.encode_chunks
    monkeypatch.setattr(type(model), "encode_chunks", lambda self, t: seen.append(len(t)) or real(t))
    learner.window(0, 100_000, 102_400)
    assert len(seen) == 1 and seen[0] < 2_400 + 2 * 4_096


def test_counts_are_indexed_by_outside_id(model):
    counts = count_tokens(model, ["!!! the"])
    assert counts[0] == len([i for i in model.encode_ordinary("!!! the") if i == 0])
    assert np.flatnonzero(counts).tolist() == sorted(set(model.encode_ordinary("!!! the")))


def test_the_browser_keeps_the_ids_of_kinds_without_rank_tables():
    """Unigram and fixed vocabularies number their specials first: every row keeps the model's
    own id (the browser had numbered the other tokens from 0)."""
    from tokworkbench.core.fixed.model import FixedVocab
    from tokworkbench.core.models.roles import Roles
    from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

    fixed = FixedVocab(("<s>", "</s>", "<pad>", "<unk>", "我", "喜欢", "学习", "AI"),
                       Roles(bos="<s>", eos="</s>", pad="<pad>", unk="<unk>"))
    unigram = UnigramLearner(["ab ab ba"], UnigramConfig(seed_size=10)).model()
    for model in (fixed, unigram):
        vocab = vocab_of(model)
        assert sorted(vocab.ids.tolist()) == list(range(model.vocab_size))
        for row in range(len(vocab)):
            tid = int(vocab.ids[row])
            assert vocab.data[row] == model.token_bytes(tid) or vocab.special[row]
            assert token_info(model, tid).id == tid


def test_a_frozen_unigram_model_shows_its_pieces_and_rounds():
    from tokworkbench.core.session.frozen import FrozenLearner
    from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

    learner = UnigramLearner(["ab ab ba abba"], UnigramConfig(seed_size=12))
    list(learner.run(merges=2))
    model = learner.model()
    frozen = FrozenLearner(model, ["ab ba"], "u.json")
    rows, total = frozen.next_rows(400)
    assert total == model.vocab_size - 1  # every piece but <unk>
    assert [r.score for r in rows] == sorted((r.score for r in rows), reverse=True)
    assert {r.id for r in rows} == set(range(1, model.vocab_size))
    assert [r.vocab_size for r in frozen.history_rows(10)] == [r.vocab_size for r in model.history]
    only = frozen.next_rows(400, "b")[0]
    assert only and all("b" in r.piece for r in only)
