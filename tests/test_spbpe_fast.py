"""SentencePiece BPE's fast encoding (core/spbpe/fastencode.py, batchmerge.py) gives the ids of
the exact path (model.py's agenda heap, `display_chunks`) and of sentencepiece itself: line by
line on arbitrary, whitespace-heavy and multilingual text, and whole texts of many lines (the
numpy rounds); the rounds also on made-up models whose scores tie and whose pieces outscore
their parts, where the guard must hold them back; and Mistral's real v1 file when
TOKWORKBENCH_REAL_SPBPE names the folder holding it."""

import os
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jitpaths import both_paths

from tokworkbench.core import jit
from tokworkbench.core.formats.sentencepiece import from_sentencepiece
from tokworkbench.core.spbpe.batchmerge import PairTable, merge_many
from tokworkbench.core.spbpe.model import BYTE, CONTROL, NORMAL, UNKNOWN, SpBpeModel, byte_piece
from tokworkbench.core.text.spnormalize import SpNormalizer

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
TRAIN = ["01_en_genesis_kjv.txt", "05_zh_debian_installer.txt", "08_ru_fortunes.txt", "12_code_sample.py"]
CONFIGS = {
    "bytes_520": {"byte_fallback": True, "vocab_size": 520, "character_coverage": 0.98},
    "unk_1000": {"byte_fallback": False, "vocab_size": 1000},
    "bytes_1000_keep_spaces": {"byte_fallback": True, "vocab_size": 1000, "remove_extra_whitespaces": False,
                                   "allow_whitespace_only_pieces": True},
    "across_words": {"byte_fallback": True, "vocab_size": 800, "split_by_whitespace": False},  # ▁ inside pieces
    "user_pieces": {"byte_fallback": True, "vocab_size": 600, "user_defined_symbols": ["foo", "▁bar"]},
    # Mistral's and Llama 2's normalizer: the text as it is (fastencode's per-model line function)
    "identity_bytes": {"byte_fallback": True, "vocab_size": 1000, "normalization_rule_name": "identity",
                       "remove_extra_whitespaces": False},
    "identity_unk": {"byte_fallback": False, "vocab_size": 800, "normalization_rule_name": "identity",
                     "remove_extra_whitespaces": False},
}
WHITESPACE = st.lists(st.sampled_from([" ", "  ", "\t", "\n", "a", "bc", "▁", "中", "é", "ab cd"]),
                      max_size=30).map("".join)
TEXT = st.one_of(st.text(), WHITESPACE, st.text(alphabet="ab \u2581\t中é😀", max_size=40))


jit_path = both_paths()  # every test here runs on the compiled path and on the numpy path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("spbpe_fast")
    models = {}
    for name, options in CONFIGS.items():
        spm.SentencePieceTrainer.train(input=",".join(str(SAMPLES / n) for n in TRAIN), model_prefix=str(out / name),
                                       model_type="bpe", minloglevel=2, **{"character_coverage": 0.98, **options})
        path = out / f"{name}.model"
        models[name] = (spm.SentencePieceProcessor(model_file=str(path)), from_sentencepiece(path.read_bytes()))
    return models


def exact_ids(model: SpBpeModel, text: str) -> list[int]:
    """The reference: the agenda heap word by word (what the corpus view shows)."""
    return [t for _, ids in model.display_chunks(model.normalize_text(text)) for t in ids]


def fresh(model: SpBpeModel) -> SpBpeModel:
    """The same model with empty caches, so a large text meets all its words at once."""
    return SpBpeModel(model.pieces, model.scores, model.types, model.text_normalizer, model.add_dummy_prefix,
                      model.byte_fallback, model.roles, model.unk_surface)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT)
def test_any_line_gets_the_exact_paths_and_sentencepieces_ids(trained, text):
    for name, (sp, ours) in trained.items():
        got = ours.encode_ordinary(text)
        assert got == exact_ids(ours, text), name
        assert got == sp.encode(text), name


LINE_WORD = st.one_of(st.text(alphabet="abé中😀\uffff\t▁", max_size=6),
                     st.sampled_from(["", " ", "the", "\uffff"]),
                     st.integers(40, 520).map(lambda n: ("ab中z9+" * n)[:n]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(LINE_WORD, min_size=1, max_size=12))
def test_a_lines_new_words_merged_in_one_compiled_call_get_the_same_ids(trained, words):
    """A line's new words go to compiled code in one call, U+FFFF between two: a word holding
    U+FFFF itself, one of 500 characters or more, one with a character no piece holds take the
    exact path; so do runs of spaces and a ▁ in the text."""
    line = " ".join(words)
    for name, (sp, ours) in trained.items():
        got = fresh(ours).encode_ordinary(line)
        assert got == sp.encode(line), name
        assert got == exact_ids(ours, line), name


def test_the_compiled_line_cache_grows_and_empties_without_changing_an_id(trained, monkeypatch):
    """lines.py: a cache that fills up grows (its words kept) and, past the limit, is emptied;
    a word the exact path makes (an unknown character) is stored, one of over 4,096 characters
    is not (the line goes word by word)."""
    from tokworkbench.core.spbpe import fastencode, lines

    monkeypatch.setattr(lines, "_FIRST", 16)
    monkeypatch.setattr(fastencode, "_CACHE_LIMIT", 300)
    sample = _sample_lines()
    texts = sample[:800] + ["x" * 5000 + " y", "a " + "中" * 4100 + "  b", "\u2581x y", " ".join(sample[900:1150])]
    assert len(texts[-1]) < fastencode._LINE_UP_TO  # one call, restarted at each growth
    for name in ("identity_bytes", "identity_unk"):
        sp, ours = trained[name]
        model = fresh(ours)
        for _ in range(2):  # the second time from the cache
            assert [model.encode_ordinary(t) for t in texts] == sp.encode(texts), name


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet="abc \u2581", max_size=30))
def test_unknowns_fuse_across_words_where_no_piece_holds_the_meta_symbol(text):
    """Without ▁ among the pieces a word may start with an unknown, which fuses with an unknown
    that ends the word before (sentencepiece_processor.cc): on every path."""
    pieces, kinds = ["<unk>", "<s>", "</s>", "a", "b", "ab"], [UNKNOWN, CONTROL, CONTROL, NORMAL, NORMAL, NORMAL]
    model = SpBpeModel(tuple(pieces), (0.0, 0.0, 0.0, -2.0, -2.0, -1.0), tuple(kinds),
                       SpNormalizer(None, remove_extra_whitespaces=False))
    assert model.encode_ordinary(text) == exact_ids(model, text) == model.encode_batch([text])[0]


def test_the_identity_models_take_the_per_model_line_function(trained):
    for name in ("identity_bytes", "identity_unk"):
        fast = trained[name][1]._fast
        assert fast.identity and fast.plain_words and fast.encode_ordinary.__name__ == "encode_ordinary"
    assert trained["bytes_520"][1]._fast.encode_ordinary.__name__ == "_any_text"


def _sample_lines() -> list[str]:
    lines = []
    for path in sorted(SAMPLES.glob("*.txt")) + [SAMPLES / "12_code_sample.py"]:
        lines += path.read_text(encoding="utf-8").splitlines()
    return lines


@pytest.mark.parametrize("name", list(CONFIGS))
def test_whole_texts_of_many_lines_take_the_rounds_and_get_the_same_ids(trained, name):
    sp, ours = trained[name]
    lines = _sample_lines()
    rng = random.Random(7)
    texts = ["\n".join(lines)] + ["\n".join(rng.sample(lines, 300)) + "   x  " for _ in range(4)]
    texts += [" ".join(lines[:400]), "  ".join(w for line in lines[:300] for w in line.split())]
    for text in texts:
        model = fresh(ours)
        got = model.encode_ordinary(text)
        assert got == sp.encode(text)
        assert got == exact_ids(ours, text)


FILLER = " ".join(f"w{i}x{i * 7 % 13}" for i in range(300))  # enough new words for the rounds


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(TEXT, min_size=1, max_size=60))
def test_arbitrary_text_among_many_new_words_gets_the_same_ids(trained, lines):
    text = FILLER + "\n" + "\n".join(lines) + " " + " ".join(lines)
    for name, (sp, ours) in trained.items():
        got = fresh(ours).encode_ordinary(text)
        assert got == sp.encode(text), name
        assert got == exact_ids(ours, text), name


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_rounds_give_each_distinct_word_the_heaps_ids(trained, name):
    _, ours = trained[name]
    words = sorted({w for line in _sample_lines() for w in ours._chunks(ours.normalize_text(line))})
    words = [w for w in words if w not in ours.user_defined]
    fast = ours._fast
    made = merge_many(words, fast.pair_table, fast.unk, fast.byte_array)
    assert sum(m is not None for m in made) > 0.9 * len(words)
    for word, ids in zip(words, made):
        if ids is not None:
            assert ids == [t for t, _ in ours._resolve(ours._merge(word))], word


# -- made-up models: ties, and pieces that outscore their parts -------------------------------
ALPHABET = "ab▁c"  # "c" is no piece: unknown


def _made_up(pieces: list[str], scores: list[float], byte_fallback: bool) -> SpBpeModel:
    head = ["<unk>", "<s>", "</s>"] + ([byte_piece(b) for b in range(256)] if byte_fallback else [])
    kinds = [UNKNOWN, CONTROL, CONTROL] + ([BYTE] * 256 if byte_fallback else [])
    chars = [c for c in "ab▁" if c not in pieces]  # "c" stays unknown
    body = pieces + chars
    return SpBpeModel(tuple(head + body), tuple([0.0] * len(head) + scores + [-100.0] * len(chars)),
                      tuple(kinds + [NORMAL] * len(body)), SpNormalizer(None, remove_extra_whitespaces=False),
                      byte_fallback=byte_fallback)


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_the_guard_keeps_the_rounds_exact_where_scores_tie_and_children_outscore_parents(data):
    alphabet = data.draw(st.sampled_from(["ab", ALPHABET]))  # two letters: pieces overlap often
    pieces = data.draw(st.lists(st.text(alphabet=alphabet, min_size=2, max_size=4), min_size=1, max_size=12,
                                unique=True))
    scores = data.draw(st.lists(st.sampled_from([-1.0, -2.0, 0.0, -0.5]), min_size=len(pieces),
                                max_size=len(pieces)))
    model = _made_up(pieces, scores, data.draw(st.booleans()))
    words = data.draw(st.lists(st.text(alphabet=ALPHABET if alphabet != "ab" else "aab", min_size=1, max_size=14),
                               min_size=1, max_size=40))
    table = PairTable.of(model._scores, model._ids, model.unk_id)
    made = merge_many(words, table, model.unk_id, model._fast.byte_array)
    for word, ids in zip(words, made):
        assert ids is not None
        assert ids == [t for t, _ in model._resolve(model._merge(word))], (word, pieces, scores)


def test_without_the_guard_the_rounds_go_wrong_on_a_model_that_needs_it(monkeypatch):
    """The guard is not idle: "aa" and "aaa" tie, so after the first "aa" of "aaaab" the agenda
    makes "aaa" (leftmost of the tied pairs) where all tied pairs at once make "aa", "aa"."""
    from tokworkbench.core.spbpe import batchmerge

    monkeypatch.setenv(jit.OFF_VARIABLE, "1")  # the rounds' guard (the compiled path merges one pair at a time)
    model = _made_up(["aa", "aaa"], [-1.0, -1.0], byte_fallback=False)
    word = "aaaab"
    exact = [t for t, _ in model._resolve(model._merge(word))]
    table = PairTable.of(model._scores, model._ids, model.unk_id)
    assert merge_many([word], table, model.unk_id, None) == [exact]
    monkeypatch.setattr(batchmerge, "_guarded", lambda at, *rest: at)
    assert merge_many([word], table, model.unk_id, None) != [exact]


def test_the_pair_table_knows_every_split_of_a_piece_into_symbols():
    model = _made_up(["ab", "abc", "bc", "cab"], [-1.0, -2.0, -3.0, -4.0], byte_fallback=True)
    table = PairTable.of(model._scores, model._ids, model.unk_id)
    texts = table.texts
    pairs = {(texts[k // table.count], texts[k % table.count]) for k in table.keys.tolist()}
    assert pairs == {("a", "b"), ("ab", "c"), ("a", "bc"), ("b", "c"), ("c", "ab")}
    assert np.all(np.diff(table.keys) > 0)


# -- Mistral's real v1 ---------------------------------------------------------------------------
REAL = Path(os.environ.get("TOKWORKBENCH_REAL_SPBPE", "/nonexistent")) / "tokenizer.model.v1"
CORPUS = Path(__file__).resolve().parents[1] / "bench-data" / "corpus" / "en-10M.txt"


@pytest.mark.skipif(not REAL.is_file(), reason="set TOKWORKBENCH_REAL_SPBPE to the folder holding mistral-common's "
                                               "tokenizer.model.v1")
def test_mistral_v1_gets_sentencepieces_ids_line_by_line_and_whole():
    sp = spm.SentencePieceProcessor(model_file=str(REAL))
    ours = from_sentencepiece(REAL.read_bytes())
    texts = [path.read_text(encoding="utf-8") for path in sorted(SAMPLES.glob("*.txt"))]
    if CORPUS.is_file():
        with CORPUS.open("rb") as f:
            texts.append(f.read(400_000).decode("utf-8", "ignore"))
    for text in texts:
        lines = text.splitlines()
        assert [ours.encode_ordinary(line) for line in lines] == sp.encode(lines)
        assert fresh(ours).encode_ordinary(text) == sp.encode(text)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(TEXT, min_size=1, max_size=40))
def test_a_batch_of_lines_gets_each_lines_ids(trained, lines):
    """`encode_batch` (as `sp.encode(lines)` is called): every line's own ids, the new words of
    all merged in one batch; the sample lines and a filler make the rounds run."""
    from tokworkbench.core.models.protocol import encode_batch

    batch = lines + _sample_lines()[:400] + FILLER.split()
    for name, (sp, ours) in trained.items():
        got = encode_batch(fresh(ours), batch)
        assert got == sp.encode(batch), name
        assert got == [exact_ids(ours, t) for t in batch], name


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(length=st.integers(40, 520), seed=st.integers(0, 10**6))
def test_long_words_get_the_exact_paths_ids_in_compiled_code_too(trained, length, seed):
    """Words from 48 to 499 characters go to the compiled per-word loop (the heap merged them
    before); one of 500 or more still takes the heap. Chinese, code-like and repetitive runs."""
    rng = random.Random(seed)
    zh = (SAMPLES / "05_zh_debian_installer.txt").read_text(encoding="utf-8").replace(" ", "").replace("\n", "")
    start = rng.randrange(max(1, len(zh) - length))
    for word in (zh[start:start + length], "".join(rng.choice("abcxyz0189+/=_") for _ in range(length)),
                 "ab" * (length // 2), "中" * length):
        for name, (sp, ours) in trained.items():
            got = fresh(ours).encode_ordinary(word)
            assert got == exact_ids(ours, word) == sp.encode(word), (name, length)
