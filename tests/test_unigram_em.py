"""Unigram `em` is spm_train's trainer (sentencepiece 0.2.3), piece for piece and bit for bit:
the judge is sentencepiece itself, trained on the same text with the same options (issue 25).
The lattice arithmetic is also held to plain enumeration, and the compiled kernels to the Python
they are compiled from."""

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core.errors import CorpusError, TrainingError
from tokworkbench.core.text.pretokenize import pre_tokenizer
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner, spmlattice, spmpieces
from tokworkbench.core.unigram.config import EM_SEED_SIZE
from tokworkbench.core.unigram.spmcorpus import SpmReader
from tokworkbench.core.unigram.spmtrain import digamma, edges

spm = pytest.importorskip("sentencepiece")

DATA = Path(__file__).resolve().parent / "data"
SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
BOTCHAN = (DATA / "botchan.txt").read_bytes().decode("utf-8")  # CRLF: spm_train keeps the \r, and so do we


def spm_trained(tmp_path, texts: list[str], vocab: int, **options) -> list[tuple[str, float]]:
    """spm_train's model on `texts` (a file each), every piece with its score, by id."""
    files = []
    for k, text in enumerate(texts):
        path = tmp_path / f"in{k}.txt"
        path.write_bytes(text.encode("utf-8"))
        files.append(str(path))
    options.setdefault("normalization_rule_name", "identity")
    spm.SentencePieceTrainer.train(input=files, model_prefix=str(tmp_path / "m"), vocab_size=vocab,
                                   model_type="unigram", minloglevel=2, **options)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    return [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]


def ours(texts: list[str], vocab: int, **config) -> list[tuple[str, float]]:
    config.setdefault("seed_size", EM_SEED_SIZE)
    learner = UnigramLearner(texts, UnigramConfig(algorithm="em", **config))
    list(learner.run(vocab_size=vocab))
    assert learner.next_step() is None  # finalized, as spm_train always ends
    return [(p, float(np.float32(s))) for p, s in learner.model().pieces]


def assert_same(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> None:
    assert len(got) == len(want)
    wrong = [(i, g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert not wrong, f"{len(wrong)} of {len(want)} ids differ, the first: {wrong[:3]}"


# -- the judge: spm_train's own model ----------------------------------------------------------
@pytest.mark.parametrize("threads", [16, 1, 3])
def test_botchan_at_1000_is_spm_trains_model_at_any_thread_count(tmp_path, threads):
    """Its E-step sums float32 counts thread by thread, so its pieces move with num_threads:
    ours move with them."""
    assert_same(ours([BOTCHAN], 1000, num_threads=threads),
                spm_trained(tmp_path, [BOTCHAN], 1000, num_threads=threads, character_coverage=1.0))


@pytest.mark.parametrize("coverage", [0.9995, 0.98])
def test_the_sample_texts_are_spm_trains_model(tmp_path, coverage):
    """Twelve files in eleven scripts, each a file of spm_train's; the characters coverage drops
    are its unknown character while it trains."""
    texts = [p.read_bytes().decode("utf-8") for p in sorted(SAMPLES.iterdir()) if p.suffix in (".txt", ".py")]
    assert_same(ours(texts, 3000, character_coverage=coverage),
                spm_trained(tmp_path, texts, 3000, character_coverage=coverage))


ODD_LINES = [
    "the </s> and <s> tags, <unk> too",  # meta pieces: spm_train makes each its unknown character
    "   ",  # normalizes to nothing: the last sentence takes its place
    "a line with ▅ in it is skipped",
    "x" * 5000,  # over max_sentence_length: skipped
    "tabs\tstay\tcharacters",
    "  leading and  doubled   spaces  ",
    "ends with a carriage return\r",
    "ends with a lower one eighth block ▁▁",  # spm_train drops trailing ▁s, the text's own too
    "▁starts with one",
]


def test_odd_lines_are_read_as_spm_train_reads_them(tmp_path):
    lines = BOTCHAN.split("\n")[:2000]
    text = "\n".join(lines[:700] + ODD_LINES + lines[700:] + ["   ", "the last line"])
    assert_same(ours([text], 800, character_coverage=1.0),
                spm_trained(tmp_path, [text], 800, character_coverage=1.0))


@pytest.mark.parametrize("option, value", [("split_digits", True), ("required_chars", "☃Q"),
                                           ("user_defined_symbols", ("Botchan", "<sep>")),
                                           ("control_symbols", ("<cls>",)), ("byte_fallback", True)])
def test_spm_trains_piece_options(tmp_path, option, value):
    text = BOTCHAN + "\n12345 678 90 <sep> Botchan <cls>\n"
    spm_value = ",".join(value) if isinstance(value, tuple) else value
    assert_same(ours([text], 900, character_coverage=1.0, **{option: value}),
                spm_trained(tmp_path, [text], 900, character_coverage=1.0, **{option: spm_value}))


def test_pieces_longer_than_the_default_are_spm_trains_model(tmp_path):
    """Runs of one letter put a piece of every length at each position: with 40-character
    pieces a lattice has 41 nodes a character, more than the default's lattices hold."""
    rnd = __import__("random").Random(1)
    text = "\n".join(" ".join("a" * rnd.randint(1, 60) + rnd.choice("bc") for _ in range(6)) for _ in range(400))
    assert_same(ours([text], 40, character_coverage=1.0, max_piece_length=40),
                spm_trained(tmp_path, [text], 40, character_coverage=1.0, max_sentencepiece_length=40))


def test_a_small_corpus_whose_model_is_already_small_still_finalizes(tmp_path):
    """spm_train's loop always prunes once and finalizes, which puts a required character the
    corpus lacks back even when nothing is removed."""
    text = "the cat sat on the mat\nthe dog sat on the log\n" * 20
    assert_same(ours([text], 40, character_coverage=1.0, required_chars="☃"),
                spm_trained(tmp_path, [text], 40, character_coverage=1.0, required_chars="☃",
                            hard_vocab_limit=False))


# -- the lattice against enumeration -----------------------------------------------------------
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


def _lattice_inputs(words, pieces, rnd):
    pieces = ["a", "b", "c"] + [p for p in pieces if p not in "abc"]
    scores = np.array([-rnd.uniform(0.5, 6.0) for _ in pieces], dtype=np.float32)
    lengths, off, start, size, seed = edges(words, pieces, 3)
    cur = np.arange(len(pieces), dtype=np.int64)
    return pieces, scores, (lengths, off, start, size, seed, cur)


@settings(max_examples=60, deadline=None)
@given(WORDS, PIECES, st.randoms(use_true_random=False))
def test_expected_counts_are_the_posteriors_of_every_segmentation(words, pieces, rnd):
    pieces, scores, (lengths, off, start, size, seed, cur) = _lattice_inputs(words, pieces, rnd)
    weights = np.array([rnd.randint(1, 5) for _ in words], dtype=np.int64)
    expected, objective = spmlattice.e_step(lengths, weights, off, start, size, seed, cur, scores,
                                            np.float32(scores.min() - 10), 2, len(pieces))
    want = np.zeros(len(pieces))
    z_total = 0.0
    score = dict(zip(pieces, scores.astype(np.float64)))
    for word, w in zip(words, weights):
        paths = list(segmentations(word, set(pieces)))
        probs = np.array([math.exp(sum(score[p] for p in path)) for path in paths])
        z_total += w * math.log(probs.sum())
        for path, prob in zip(paths, probs):
            for p in path:
                want[pieces.index(p)] += w * prob / probs.sum()
    assert np.allclose(expected, want, rtol=1e-4, atol=1e-5)
    assert objective == pytest.approx(-z_total / weights.sum(), rel=1e-4)


@settings(max_examples=60, deadline=None)
@given(WORDS, PIECES, st.randoms(use_true_random=False))
def test_best_paths_are_the_best_segmentations(words, pieces, rnd):
    pieces, scores, (lengths, off, start, size, seed, cur) = _lattice_inputs(words, pieces, rnd)
    weights = np.ones(len(words), dtype=np.int64)
    counts, loss, tokens = spmlattice.best_paths(lengths, weights, off, start, size, seed, cur, scores,
                                                 np.float32(scores.min() - 10), 1, len(pieces))
    score = dict(zip(pieces, scores.tolist()))
    best_total = 0.0
    for word in words:
        best_total += max(sum(score[p] for p in path) for path in segmentations(word, set(pieces)))
    assert -loss == pytest.approx(best_total, rel=1e-5)
    assert counts.sum() == tokens


def test_digamma_is_the_derivative_of_log_gamma():
    for x in (0.5, 1.0, 3.3, 7.0, 120.0):
        h = 1e-5
        numeric = (math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h)
        assert digamma(np.array([x]))[0] == pytest.approx(numeric, rel=1e-6)


def test_the_compiled_kernels_give_the_pythons_bits(monkeypatch):
    pytest.importorskip("numba")
    from tokworkbench.core.unigram import spmkernel

    reader = SpmReader("none", ["<unk>", "<s>", "</s>"])
    reader.add("\n".join(BOTCHAN.split("\n")[:300]))
    corpus = reader.finish(1.0)
    from tokworkbench.core.unigram.spmtrain import SpmTrainer

    trainer = SpmTrainer(corpus, 5000, 16)
    model = trainer.seed()
    cur, unk = trainer._position(model)
    lengths, off, start, size, seed = trainer.words
    args = (lengths, trainer.weights, off, start, size, seed, cur, model.scores, unk, 3, len(model.seeds))
    for name in ("e_step", "best_paths"):
        for a, b in zip(getattr(spmlattice, name)(*args), getattr(spmkernel, name)(*args)):
            assert np.array_equal(np.asarray(a), np.asarray(b)), name
    lengths, off, start, size, seed = trainer.pieces
    args = (model.seeds, lengths, off, start, size, seed, cur, model.scores, unk)
    keep, alt_off, alt_ids = spmpieces.alternatives(*args)
    assert all(np.array_equal(a, b) for a, b in zip((keep, alt_off, alt_ids), spmkernel.alternatives(*args)))
    assert keep.min() == 0 and len(alt_ids)  # both kinds of piece were met
    assert np.array_equal(spmpieces.unreachable(*args), spmkernel.unreachable(*args))


# -- the learner's rounds -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def texts():
    return [p.read_text(encoding="utf-8") for p in sorted(SAMPLES.iterdir()) if p.is_file()][:3]


def test_em_rounds_reach_the_target(texts):
    learner = UnigramLearner(texts, UnigramConfig(algorithm="em", seed_size=20_000))
    target = learner.base_size + 400
    rounds = list(learner.run(vocab_size=target))
    assert learner.vocab_size == target and rounds
    assert all(r.vocab_size > target for r in rounds[:-1])
    model = learner.model()
    scores = np.array([s for _, s in model.pieces[len(learner.metas):]])
    assert np.isfinite(scores).all() and (scores < 0).all()
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
    with pytest.raises(TrainingError, match="num threads 0 must be 1 to 1024"):
        UnigramConfig(algorithm="em", num_threads=0)


def test_em_table_marks_the_next_removals(texts):
    learner = UnigramLearner(texts[:2], UnigramConfig(algorithm="em", seed_size=5_000))
    learner.steps_for_vocab(learner.base_size + 100)
    rows, total = learner.next_rows(10_000)
    marked = [r.piece for r in rows if r.removed_next]
    assert total == learner.vocab_size - len(learner.metas) and marked
    record = learner.step()
    assert set(marked) <= set(record.removed)


@pytest.mark.parametrize("text", ["hello", "aa bb", "hello world", "x"])
def test_em_on_a_corpus_where_no_substring_repeats_keeps_the_characters(text):
    """The seed then holds only characters; training must not fail on it."""
    learner = UnigramLearner([text], UnigramConfig(algorithm="em", pre_tokenizer=pre_tokenizer("metaspace")))
    list(learner.run(vocab_size=learner.base_size))
    model = learner.model()
    assert model.decode(model.encode(text)) == text


@pytest.mark.parametrize("text", ["\n\n", "x" * 5000])
def test_a_corpus_with_no_line_spm_train_reads_is_one_clear_error(text):
    with pytest.raises(CorpusError, match="no line spm_train would train on"):
        UnigramLearner([text], UnigramConfig(algorithm="em", pre_tokenizer=pre_tokenizer("metaspace")))


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


def test_runs_of_line_breaks_change_nothing():
    """spm_train reads lines and skips empty ones: how many line breaks part them cannot matter."""
    lines = [line for line in BOTCHAN.split("\n") if line.strip()][:1500]

    def model(sep: str) -> list:
        learner = UnigramLearner([sep.join(lines)], UnigramConfig(algorithm="em", seed_size=1_000_000))
        list(learner.run(vocab_size=300))
        return learner.model().pieces

    assert model("\n") == model("\n" * 30)


def test_the_session_runs_em_in_its_training_child_as_in_itself(tmp_path):
    """The app trains in a forked child after the seed's EM ran here: the child's kernels and
    threads must work there, and its model is the one stepping here makes (spm_train's)."""
    from tokworkbench.core.session.childrun import run_in_child
    from tokworkbench.core.session.session import FinishReason, Session
    from tokworkbench.core.session.settings import Settings
    from tokworkbench.core.session.snapshot import View

    settings = Settings(kind="unigram", algorithm="em", split="metaspace", normalizer="none", units="char",
                        seed_size=EM_SEED_SIZE, character_coverage=1.0, target=1000)
    here = Session.open([str(DATA / "botchan.txt")], settings)
    while here.step_many(1):
        pass
    there = Session.open([str(DATA / "botchan.txt")], settings)
    finished = run_in_child(there, View(), lambda: False, lambda progress: None)
    assert finished.reason is FinishReason.TARGET
    assert there.learner.model() == here.learner.model()
    assert_same([(p, float(np.float32(s))) for p, s in there.learner.model().pieces],
                spm_trained(tmp_path, [BOTCHAN], 1000, character_coverage=1.0))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=300))
def test_grouping_hashes_compiled_plain_and_by_sort_agree(small):
    """group_hashes numbers groups as they first appear, where the sort numbers them by value:
    the partition and each group's first index are what the seed reads, and those agree."""
    from tokworkbench.core.unigram import hashing

    values = np.array(small, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)  # spread, some collide in the low bits
    with np.errstate(over="ignore"):  # the table's hash wraps at 2**64, as compiled
        first, inverse = hashing.group_hashes(values)
    assert np.array_equal(values[first[inverse]], values)
    assert list(first) == sorted({v: i for i, v in reversed(list(enumerate(small)))}.values())
    by_sort_first, by_sort_inverse = hashing.first_and_inverse(values)
    assert np.array_equal(values[by_sort_first[by_sort_inverse]], values) and len(by_sort_first) == len(first)
    if importlib.util.find_spec("numba") is not None:
        from tokworkbench.core.unigram import spmkernel

        compiled = spmkernel.group_hashes(values)
        assert np.array_equal(compiled[0], first) and np.array_equal(compiled[1], inverse)


def test_the_seed_is_the_same_grouped_compiled_or_by_sort():
    pytest.importorskip("numba")
    from tokworkbench.core.unigram import hashing, spmkernel
    from tokworkbench.core.unigram.spseed import spm_seed

    reader = SpmReader("none", ["<unk>", "<s>", "</s>"])
    reader.add(BOTCHAN)
    corpus = reader.finish(0.9995)
    pieces, scores = spm_seed(corpus, 1_000_000, 16, group=spmkernel.group_hashes)
    sorted_pieces, sorted_scores = spm_seed(corpus, 1_000_000, 16, group=hashing.first_and_inverse)
    assert pieces == sorted_pieces and scores.tobytes() == sorted_scores.tobytes() and len(pieces) > 5000


def test_the_walks_run_side_by_side_are_the_walks_run_one_after_the_other():
    """SpmTrainer runs its two edges() walks in two threads; each must be what it is alone."""
    from tokworkbench.core.unigram.spmtrain import SpmTrainer, _kernels

    reader = SpmReader("none", ["<unk>", "<s>", "</s>"])
    reader.add(BOTCHAN)
    corpus = reader.finish(0.9995)
    trainer = SpmTrainer(corpus, 5000, 16)
    kernels = _kernels(100 * sum(map(len, corpus.words)))
    for found, strings in ((trainer.words, corpus.words), (trainer.pieces, trainer.strings)):
        alone = edges(strings, trainer.strings, 16, kernels)
        assert all(np.array_equal(a, b) for a, b in zip(found, alone))
