"""The chunk store gives each chunk its own ids, even when hashes collide, and long texts under
the gpt4/o200k presets encode through it exactly as chunk by chunk."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core import TrainConfig, jit, pre_tokenizer
from tokworkbench.core.bpe.chunkstore import ChunkStore, group_equal
from tokworkbench.core.bpe.trainer import train
from tokworkbench.core.errors import EncodeError
from tokworkbench.core.text import fastsplit


def _cut(chunks: list[str]) -> tuple[np.ndarray, np.ndarray]:
    text = "".join(chunks)
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    starts = np.cumsum([0] + [len(c) for c in chunks[:-1]]).astype(np.int64)
    return cps, starts


def _ids(chunk: str) -> list[int]:
    return [ord(c) * 7 for c in chunk][:3] or [0]


def _store_and_find(store: ChunkStore, chunks: list[str]) -> list[int]:
    cps, starts = _cut(chunks)
    entries, hashes = store.find(cps, starts)
    lens = np.diff(np.append(starts, len(cps)))
    seen: dict[str, int] = {}
    for i in np.flatnonzero(entries < 0).tolist():
        c = chunks[i]
        if c not in seen:
            ids = np.array(_ids(c), dtype=np.int64)
            seen[c] = int(store.add(cps, starts[i : i + 1], lens[i : i + 1], hashes[i : i + 1], ids,
                                    np.array([len(ids)]))[0])
        entries[i] = seen[c]
    return store.ids_of(entries)


chunk_lists = st.lists(st.text(alphabet="ab é中🙂\n", min_size=1, max_size=6), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(first=chunk_lists, second=chunk_lists)
def test_each_chunk_gets_its_own_ids(first, second):
    store = ChunkStore()
    for chunks in (first, second, first + second):
        assert _store_and_find(store, chunks) == [t for c in chunks for t in _ids(c)]


@settings(max_examples=100, deadline=None)
@given(first=chunk_lists, second=chunk_lists)
def test_colliding_hashes_never_mix_chunks_up(first, second):
    store = ChunkStore()
    store._hashes = lambda cps, starts, lens, *a, **k: np.zeros(len(lens), dtype=np.uint64)  # all collide
    for chunks in (first, second, first + second):
        assert _store_and_find(store, chunks) == [t for c in chunks for t in _ids(c)]


def test_it_grows_past_its_first_table():
    store = ChunkStore()
    chunks = [f"w{i}" for i in range(20_000)]
    assert _store_and_find(store, chunks) == [t for c in chunks for t in _ids(c)]
    assert _store_and_find(store, chunks[::-1]) == [t for c in chunks[::-1] for t in _ids(c)]
    assert len(store) == 20_000


@pytest.fixture(scope="module")
def models():
    text = "The quick brown fox's den. 中文字符 and Ελληνικά, 12345 \n\n  spaces\t\ttabs don't WON'T " * 40
    return {p: train([text], TrainConfig(pre_tokenizer=pre_tokenizer(p)), vocab_size=400).model()
            for p in ("gpt4", "o200k")}


@pytest.mark.parametrize("preset", ["gpt4", "o200k"])
@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet="The quick fox's 中文 Ελλ 123 \n\t'sSA" + "é\u0301🙂", max_size=400))
def test_long_texts_encode_as_chunk_by_chunk(models, preset, text):
    tok = models[preset]
    text = text * (1 + fastsplit.FAST_FROM // max(1, len(text)))  # past the numpy threshold
    expected = [t for chunk in tok.pre_tokenizer.split(text) for t in tok.apply_merges(list(chunk.encode()))]
    assert tok.encode_normalized(text) == tok.to_outside(expected)
    assert tok.encode_normalized(text) == tok.to_outside(expected)  # from the store this time


@pytest.mark.parametrize("preset", ["gpt4", "o200k"])
def test_a_lone_surrogate_is_an_error_naming_its_offset(models, preset):
    text = "ok " * 1000 + "\ud800" + " more" * 10
    with pytest.raises(EncodeError, match="offset 3000"):
        models[preset].encode_normalized(text)


@pytest.mark.parametrize("preset", ["gpt4", "o200k"])
def test_long_texts_encode_right_when_every_hash_collides(models, preset, monkeypatch):
    monkeypatch.setenv(jit.OFF_VARIABLE, "1")  # the compiled lookup does not use `_hashes`
    monkeypatch.setattr(ChunkStore, "_hashes", lambda self, chars, bounds, lens, offset:
                        np.zeros(len(lens), dtype=np.uint64))
    tok = train(["some text 中文 don't"], TrainConfig(pre_tokenizer=pre_tokenizer(preset)), vocab_size=300).model()
    text = "The quick brown fox's den. 中文字符 and Ελληνικά, 12345 \n\n  spaces " * 60
    expected = [t for chunk in tok.pre_tokenizer.split(text) for t in tok.apply_merges(list(chunk.encode()))]
    assert tok.encode_normalized(text) == tok.to_outside(expected)
    assert tok.encode_normalized(text) == tok.to_outside(expected)


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(0, 6), max_size=60), spread=st.booleans())
def test_group_equal_gives_one_index_per_value(values, spread):
    hashes = np.array([v * (0x9E3779B97F4A7C15 if spread else 1) % 2**64 for v in values], dtype=np.uint64)
    first, which = group_equal(hashes)
    assert sorted(set(hashes[first].tolist())) == sorted(set(hashes.tolist()))
    assert len(first) == len(set(values))
    assert (hashes[first[which]] == hashes).all()
    assert list(first) == sorted(first)


def test_a_repeated_lone_surrogate_chunk_is_named_at_its_first_offset(models):
    text = "ok " * 1000 + "\ud800 x" + " more" * 10 + " \ud800 x" * 30
    with pytest.raises(EncodeError, match="offset 3000"):
        models["gpt4"].encode_normalized(text)


def _grouped(chunks: list[str], stored: set[str], entries: np.ndarray, stand_in: np.ndarray) -> bool:
    """Each chunk not stored is coded -1 - j, stand-in j holding its characters, one stand-in
    for each set of characters."""
    of: dict[str, int] = {}
    for i, c in enumerate(chunks):
        if c in stored:
            if entries[i] < 0:
                return False
            continue
        j = -1 - int(entries[i])
        if not 0 <= j < len(stand_in) or of.setdefault(c, j) != j or chunks[stand_in[j]] != c:
            return False
    return len(of) == len(stand_in) and list(stand_in) == sorted(stand_in)


def _filled(chunks: list[str]) -> ChunkStore:
    store = ChunkStore()
    if chunks:
        _store_and_find(store, chunks)
    return store


jit_only = pytest.mark.skipif(not jit.available(), reason="numba is not installed here")
if jit.available():
    from tokworkbench.core.bpe import chunkkernel


@jit_only
@settings(max_examples=150, deadline=None)
@given(stored=chunk_lists, text=chunk_lists)
def test_the_compiled_lookup_gives_the_numpy_one(stored, text):
    cps, starts = _cut(text)
    store = _filled(stored)
    compiled = store.find_tiling(cps, starts)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(jit.OFF_VARIABLE, "1")
        plain = store.find_tiling(cps, starts)
        entries = np.arange(len(store), dtype=np.int64)
        none = np.zeros(0, dtype=np.int64)
        assert store.ids_of(entries) == chunkkernel.gather(entries, none, store.id_start, store.id_len,
                                                           store.ids).tolist()
    assert compiled[1].tolist() == plain[1].tolist()  # the hashes
    assert np.maximum(compiled[0], -1).tolist() == np.maximum(plain[0], -1).tolist()  # the entries found
    assert (compiled[0] >= 0).tolist() == [c in stored for c in text]
    assert _grouped(text, set(stored), compiled[0], compiled[2]) and _grouped(text, set(stored), plain[0], plain[2])


@settings(max_examples=80, deadline=None)
@given(text=chunk_lists)
def test_new_chunks_are_grouped_by_their_characters_when_hashes_collide(text):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(jit.OFF_VARIABLE, "1")
        patch.setattr(ChunkStore, "_hashes", lambda self, chars, bounds, lens, offset:
                      np.zeros(len(lens), dtype=np.uint64))
        cps, starts = _cut(text)
        entries, _, stand_in = ChunkStore().find_tiling(cps, starts)
    assert (entries < 0).all()
    assert _grouped(text, set(), entries, stand_in)


@jit_only
def test_the_compiled_lookup_never_takes_another_chunks_entry_under_its_hash():
    cps, starts = _cut(["ab", "cd"])
    store = ChunkStore()
    _, hashes, _ = store.find_tiling(cps, starts)
    # "ab" stored under the hash of "cd": a collision, as far as the table can tell
    store.add(cps, starts[:1], np.array([2]), hashes[1:], np.array([7], dtype=np.int64), np.array([1]))
    entries, _, stand_in = store.find_tiling(cps, starts)
    assert entries.tolist() == [-1, -2] and stand_in.tolist() == [0, 1]
    store.add(cps, starts[1:], np.array([2]), hashes[1:], np.array([9], dtype=np.int64), np.array([1]))
    entries, _, _ = store.find_tiling(cps, starts)
    assert entries.tolist() == [-1, 1]  # found past the colliding entry
    assert store.ids_of(np.array([1, 0])) == [9, 7]


@pytest.mark.parametrize("path", ["compiled", "numpy"])
@settings(max_examples=100, deadline=None)
@given(first=chunk_lists, second=chunk_lists)
def test_stand_ins_stored_give_every_chunk_its_ids(path, first, second):
    if path == "compiled" and not jit.available():
        pytest.skip("numba is not installed here")
    with pytest.MonkeyPatch.context() as patch:
        if path == "numpy":
            patch.setenv(jit.OFF_VARIABLE, "1")
        store = ChunkStore()
        for chunks in (first, second, first + second):
            cps, starts = _cut(chunks)
            entries, hashes, stand_in = store.find_tiling(cps, starts)
            made = None
            if len(stand_in):
                lens = np.diff(np.append(starts, len(cps)))[stand_in]
                ids = [_ids(chunks[i]) for i in stand_in.tolist()]
                made = store.add(cps, starts[stand_in], lens, hashes[stand_in],
                                 np.array([t for i in ids for t in i], dtype=np.int64), np.array([len(i) for i in ids]))
            assert store.ids_of(entries, made) == [t for c in chunks for t in _ids(c)]
