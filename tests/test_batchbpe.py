"""Encoding many chunks at once (numpy rounds, or the compiled per-piece loop) gives exactly the
per-chunk merge loop's ids."""

from hypothesis import given, settings
from hypothesis import strategies as st
from jitpaths import both_paths

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.bpe.batchbpe import MergeTable, bpe_many

jit_path = both_paths()  # every test here runs on the compiled path and on the numpy path

# few distinct bytes, so runs ("aaaa"), repeats and shared prefixes are common
few_bytes = st.lists(st.sampled_from(b"aab \xc3\xa9\x00"), max_size=24).map(bytes)


@st.composite
def merge_lists(draw):
    """Any valid merge list over a small base: merge r joins ids that exist before it."""
    base = draw(st.integers(2, 8))
    merges, seen = [], set()
    for r in range(draw(st.integers(0, 30))):
        pair = (draw(st.integers(0, base + r - 1)), draw(st.integers(0, base + r - 1)))
        if pair not in seen:
            seen.add(pair)
            merges.append(pair)
    return base, merges


@settings(max_examples=300, deadline=None)
@given(spec=merge_lists(), words=st.lists(st.lists(st.integers(0, 7), max_size=20), max_size=12))
def test_equals_per_chunk_merging_for_any_merge_list(spec, words):
    base, merges = spec
    words = [[t % base for t in w] for w in words]
    expected = [_reference_bpe(list(w), merges, base) for w in words]
    for side in (1024, 6, 1):  # every pair in the dense table; some; none (binary search only)
        assert bpe_many([bytes(w) for w in words], MergeTable.of(merges, base, side)) == expected


def _reference_bpe(ids, merges, base):
    """Lowest rank first, all its occurrences left to right: DESIGN.md's encode rule."""
    ranks = {p: r for r, p in enumerate(merges)}
    while True:
        found = [ranks[p] for p in zip(ids, ids[1:]) if p in ranks]
        if not found:
            return ids
        r = min(found)
        a, b = merges[r]
        out, i = [], 0
        while i < len(ids):
            if i + 1 < len(ids) and ids[i] == a and ids[i + 1] == b:
                out.append(base + r)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(st.text(alphabet="ab é\n", max_size=40), min_size=1, max_size=4),
       chunks=st.lists(few_bytes, max_size=30))
def test_equals_the_tokenizers_own_loop_on_trained_models(texts, chunks):
    t = Trainer(texts, TrainConfig(pre_tokenizer=pre_tokenizer("gpt4")))
    list(t.run(merges=40))
    tok = t.model()
    table = MergeTable.of(tok.merges, tok.base_size)
    assert bpe_many(chunks, table) == [tok.apply_merges(list(c)) for c in chunks]


def test_large_text_encodes_as_chunk_by_chunk():
    """The tokenizer batches new chunks past a threshold; the ids must not change."""
    text = " ".join(f"w{i % 997}x{i % 13}é" for i in range(5000))
    t = Trainer([text[:20000]], TrainConfig(pre_tokenizer=pre_tokenizer("gpt2")))
    list(t.run(merges=200))
    tok = t.model()
    expected = [i for c in tok.pre_tokenizer.split(text) for i in tok.apply_merges(list(c.encode()))]
    assert tok.encode_ordinary(text) == expected
