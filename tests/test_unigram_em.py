"""Unigram `em`: the numpy lattice sweeps against plain enumeration, and the learner's rounds."""

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core.errors import CorpusError, TrainingError
from tokworkbench.core.text.pretokenize import pre_tokenizer
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner
from tokworkbench.core.unigram.em import Lattices, digamma, hash_strings, seed_pieces
from tokworkbench.core.unigram.viterbi import Vocab, viterbi

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"


def segmentations(word: str, vocab: set[str]):
    if not word:
        yield []
        return
    for k in range(1, len(word) + 1):
        if word[:k] in vocab:
            for rest in segmentations(word[k:], vocab):
                yield [word[:k]] + rest


WORDS = st.lists(st.text(alphabet="abc", min_size=1, max_size=6), min_size=1, max_size=4, unique=True)
PIECES = st.lists(st.text(alphabet="abc", min_size=2, max_size=3), max_size=6, unique=True)


@settings(max_examples=60, deadline=None)
@given(WORDS, PIECES, st.randoms(use_true_random=False))
def test_forward_backward_equals_enumeration(words, extra, rnd):
    pieces = ["a", "b", "c"] + [p for p in extra if p not in "abc"]
    score = {p: math.log(rnd.uniform(0.01, 1.0)) for p in pieces}
    hashes, prefixes = hash_strings(pieces)
    lat = Lattices(words, hashes, prefixes, 3)
    weight = np.array([rnd.randint(1, 5) for _ in words], dtype=np.float64)
    edge_score = np.array([score[pieces[i]] for i in lat.pid])
    counts, z = lat.forward_backward(edge_score, weight)
    got = np.bincount(lat.pid, weights=counts, minlength=len(pieces))
    want = np.zeros(len(pieces))
    for w, word in enumerate(words):
        paths = list(segmentations(word, set(pieces)))
        probs = [math.exp(sum(score[p] for p in path)) for path in paths]
        assert z[w] == pytest.approx(math.log(sum(probs)))
        for path, p in zip(paths, probs):
            for piece in path:
                want[pieces.index(piece)] += weight[w] * p / sum(probs)
    assert got == pytest.approx(want)


@settings(max_examples=60, deadline=None)
@given(WORDS, PIECES, st.randoms(use_true_random=False))
def test_numpy_viterbi_equals_the_shared_one(words, extra, rnd):
    pieces = ["a", "b", "c"] + [p for p in extra if p not in "abc"]
    # coarse scores make ties common: the tie rule must agree too
    score = {p: -float(rnd.randint(1, 3)) for p in pieces}
    hashes, prefixes = hash_strings(pieces)
    lat = Lattices(words, hashes, prefixes, 3)
    path, best = lat.viterbi(np.array([score[pieces[i]] for i in lat.pid]))
    vocab = Vocab({p: -s for p, s in score.items()})
    for w, word in enumerate(words):
        spans, cost = viterbi(word, vocab)
        edges = sorted(path[lat.word[path] == w].tolist(), key=lambda e: lat.start[e])
        assert [(int(lat.start[e]), int(lat.end[e])) for e in edges] == spans
        assert best[w] == -cost


def test_seed_ranks_by_frequency_times_length():
    words = ["▁abab", "▁ab", "▁c"]
    pieces, scores = seed_pieces(words, np.array([3, 2, 1]), 100, 16)
    chars = [p for p in pieces if len(p) == 1]
    assert set(chars) == set("▁abc") and pieces[: len(chars)] == chars
    rest = dict(zip(pieces[len(chars):], scores[len(chars):].tolist()))
    assert rest["▁ab"] == 5 * 3 and rest["ab"] == (3 * 2 + 2) * 2 and rest["▁abab"] == 3 * 5
    assert "▁c" not in rest  # seen once: not a seed piece
    assert list(rest.values()) == sorted(rest.values(), reverse=True)


def test_digamma():
    for x in (0.5, 1.0, 3.3, 7.0, 120.0):
        h = 1e-5
        numeric = (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)
        assert digamma(np.array([x]))[0] == pytest.approx(numeric, rel=1e-6)


@pytest.fixture(scope="module")
def texts():
    return [p.read_text(encoding="utf-8") for p in sorted(SAMPLES.iterdir()) if p.is_file()][:3]


def test_em_rounds_reach_the_target(texts):
    learner = UnigramLearner(texts, UnigramConfig(algorithm="em", seed_size=20_000))
    chars = learner.base_size - len(learner.metas)  # <unk> <s> </s>, as spm_train lays them out
    target = learner.base_size + 400
    rounds = list(learner.run(vocab_size=target))
    assert learner.vocab_size == target and rounds
    assert all(r.vocab_size > target for r in rounds[:-1])
    model = learner.model()
    assert sum(1 for p, _ in model.pieces if len(p) == 1) == chars
    scores = np.array([s for _, s in model.pieces[len(learner.metas):]])
    assert np.isfinite(scores).all() and (scores < 0).all()
    for text in texts:
        assert model.decode(model.encode(text)) == text
    assert learner.compression > 2.0
    assert learner.next_step() is None


def test_em_undo_is_exact(texts):
    learner = UnigramLearner(texts[:2], UnigramConfig(algorithm="em", seed_size=5_000))
    learner.steps_for_vocab(learner.base_size + 100)
    before = (learner.next_rows(50), learner.history_rows(10), learner.model().pieces)
    learner.step()
    learner.step()
    learner.undo()
    learner.undo()
    assert (learner.next_rows(50), learner.history_rows(10), learner.model().pieces) == before


def test_em_bad_sizes(texts):
    learner = UnigramLearner(texts[:1], UnigramConfig(algorithm="em", seed_size=1000))
    with pytest.raises(TrainingError, match="distinct characters"):
        learner.steps_for_vocab(3)
    with pytest.raises(TrainingError, match="sub iterations"):
        UnigramConfig(algorithm="em", sub_iterations=0)


def test_em_table_marks_the_next_removals(texts):
    learner = UnigramLearner(texts[:2], UnigramConfig(algorithm="em", seed_size=5_000))
    learner.steps_for_vocab(learner.base_size + 100)
    rows, total = learner.next_rows(10_000)
    marked = [r.piece for r in rows if r.removed_next]
    assert total == learner.vocab_size - len(learner.metas) and marked
    assert not any(len(p) == 1 for p in marked)
    record = learner.step()
    assert set(marked) <= set(record.removed)


def test_hash_prefixes_cover_every_prefix():
    pieces = ["abc", "ab", "x"]
    hashes, prefixes = hash_strings(pieces)
    for word in ["a", "ab", "abc", "x"]:
        h, _ = hash_strings([word])
        assert h[0] in prefixes
    assert len(set(hashes.tolist())) == 3


def test_seed_edges_are_the_lattice_lookups_find(texts):
    from tokworkbench.core.text.chunks import count_chunks
    from tokworkbench.core.text.pretokenize import parse_split

    table = count_chunks(texts[:2], "none", parse_split("metaspace"))
    found: list = []
    pieces, _ = seed_pieces(table.chunks, table.counts, 3000, 8, edges=found)
    hashes, prefixes = hash_strings(pieces)
    looked_up = Lattices(table.chunks, hashes, prefixes, 8)
    given = Lattices(table.chunks, hashes, prefixes, 8, found)
    for name in ("word", "start", "end", "pid", "back"):
        assert np.array_equal(getattr(looked_up, name), getattr(given, name)), name
    assert len(given.pid) > len(table.chunks)


@pytest.mark.parametrize("text", ["hello", "aa bb", "hello world", "\n\n", "x"])
def test_em_on_a_corpus_where_no_substring_repeats_keeps_the_characters(text):
    """The seed then holds only characters; training must not fail on it."""
    learner = UnigramLearner([text], UnigramConfig(algorithm="em", pre_tokenizer=pre_tokenizer("metaspace")))
    list(learner.run(vocab_size=learner.base_size))
    model = learner.model()
    assert model.decode(model.encode(text)) == text


@pytest.mark.parametrize("algorithm", ["course", "em"])
def test_an_empty_corpus_is_one_clear_error_for_both_algorithms(algorithm):
    with pytest.raises(CorpusError, match="the corpus is empty"):
        UnigramLearner([""], UnigramConfig(algorithm=algorithm, pre_tokenizer=pre_tokenizer("metaspace")))


@pytest.mark.parametrize("algorithm", ["em", "course"])
def test_a_seed_size_below_the_characters_is_refused_by_both_algorithms(tmp_path, capsys, algorithm):
    from tokworkbench.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text("abc abd xyz", encoding="utf-8")  # ▁ and a, b, c, d, x, y, z: 8 characters
    out = tmp_path / "m.json"
    assert main(["train", str(corpus), "--model", "unigram", "--algorithm", algorithm, "--split", "metaspace",
                 "--vocab-size", "9", "--seed-size", "7", "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("tokworkbench: error: --seed-size 7 is below the number of distinct characters (8); "
                   "the seed holds every character")
    assert not out.exists()


def test_runs_of_line_breaks_weigh_nothing():
    """spm_train reads lines, so how many line breaks part them cannot matter. With thirty, "\\n"
    was our seed's first piece (SentencePiece's unknown credit went to it) and "\\n\\n".. were in
    the seed's total: 280 of 300 pieces shared with one line break's model, scores 0.57 apart."""
    lines = [line for line in (Path(__file__).parent / "data" / "botchan.txt").read_text(encoding="utf-8")
             .split("\n") if line.strip()][:1500]

    def model(sep: str) -> dict[str, float]:
        learner = UnigramLearner([sep.join(lines)], UnigramConfig(algorithm="em", seed_size=1_000_000))
        list(learner.run(vocab_size=300))
        return dict(zip(learner.state.pieces, learner.state.scores))

    one, many = model("\n"), model("\n" * 30)
    assert set(one) == set(many)
    assert max(abs(one[p] - many[p]) for p in one) < 1e-9
