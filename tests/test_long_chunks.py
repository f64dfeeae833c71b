"""Long chunks: the O(n log n) paths of `merge_ids` and `lowest_rank_parts` give exactly what
the plain definitions give, for any merge list or ranks and any input, long runs included.

The fast paths only start at a few hundred units, so most properties run with the thresholds
lowered (`paths`): every path then meets the small, varied inputs hypothesis is good at.
"""

from contextlib import contextmanager
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.bpe import encode
from tokworkbench.core.bpe.batchbpe import MergeTable, bpe_many
from tokworkbench.core.bpe.encode import lowest_rank_parts, merge_ids
from tokworkbench.core.bpe.trainer import train

# name -> thresholds: which path each input takes
PATHS = {
    "as shipped": dict(_LEVELS_FROM=encode._LEVELS_FROM),
    "levels, numpy for every rank": dict(_LEVELS_FROM=2, _RUNS_CHECK_FROM=2, _BYTE_LEVELS_FROM=2,
                                          _RUNS_MAX=0, _FEW=0),
    "levels, a Python loop for few": dict(_LEVELS_FROM=2, _RUNS_CHECK_FROM=2, _BYTE_LEVELS_FROM=2,
                                           _RUNS_MAX=0, _FEW=3),
    "runs": dict(_LEVELS_FROM=2, _RUNS_CHECK_FROM=2, _RUNS_MAX=1 << 30),
}


@contextmanager
def paths(name):
    with mock.patch.multiple(encode, **PATHS[name]):
        yield


# -- plain definitions -----------------------------------------------------------------------
def reference_merge(ids, merges, first_new):
    """Find the lowest-ranked pair, merge all its occurrences left to right; again."""
    ranks = {p: r for r, p in enumerate(merges)}  # a pair listed twice: its last rank
    while True:
        found = [ranks[p] for p in zip(ids, ids[1:]) if p in ranks]
        if not found:
            return ids
        r = min(found)
        pair, out, i = merges[r], [], 0
        while i < len(ids):
            if tuple(ids[i : i + 2]) == pair:
                out.append(first_new + r)
                i += 2
            else:
                out.append(ids[i])
                i += 1
        ids = out


def reference_parts(ranks, data):
    """Join the leftmost adjacent pair whose bytes have the lowest rank; again."""
    parts = [bytes([b]) for b in data]
    while True:
        found = [(ranks[a + b], i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in ranks]
        if not found:
            return parts
        _, i = min(found)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


# -- inputs ----------------------------------------------------------------------------------
@st.composite
def merge_lists(draw, max_merges=30):
    """Any merge list over a small base in which merge r joins ids that exist before it; a few
    pairs may be listed twice (minbpe and our files allow it)."""
    base = draw(st.integers(1, 5))
    merges = []
    for r in range(draw(st.integers(0, max_merges))):
        merges.append((draw(st.integers(0, base + r - 1)), draw(st.integers(0, base + r - 1))))
    return base, merges


def runs_of(units, longest=400, size=1500):
    """Sequences of long runs and repeated short patterns: "a" * 300 + "ab" * 40 + "b" ...
    `units` draws a pattern's pieces: single units, or whole tokens' units. At most `size`."""
    count = st.one_of(st.integers(1, 4), st.integers(1, longest))
    piece = st.tuples(st.lists(units, min_size=1, max_size=3), count)
    return st.lists(piece, max_size=20).map(
        lambda ps: [u for pattern, k in ps for _ in range(k) for part in pattern for u in part][:size])


def expand(merges, base):
    """Each id's base units."""
    units = [[b] for b in range(base)]
    for a, b in merges:
        units.append(units[a] + units[b])
    return units


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=100, deadline=None)
@given(spec=merge_lists(), data=st.data())
def test_merge_ids_equals_the_definition(path, spec, data):
    base, merges = spec
    ids = data.draw(runs_of(st.sampled_from(expand(merges, base))))
    expected = reference_merge(list(ids), merges, base)
    ranks = {a << 32 | b: r for r, (a, b) in enumerate(merges)}
    with paths(path):
        assert merge_ids(list(ids), ranks.get, len(merges), base) == expected
        table = MergeTable.of(merges, base, side=data.draw(st.sampled_from([1024, 3])))
        assert merge_ids(list(ids), ranks.get, len(merges), base, table) == expected


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=100, deadline=None)
@given(ids=runs_of(st.sampled_from([[0], [1], [2], [3], [0, 0], [1, 0, 0], [0, 2], [2, 3, 0]])))
def test_merge_ids_equals_the_plain_loop_for_a_list_out_of_order(path, ids):
    """Merges that join ids made after them (merge 0 joins what merge 1 makes, merge 2 its own
    id): the pair a merge makes can outrank it. No loader accepts such a list, but the long
    paths still give what the plain loop gives."""
    merges = [(4 + 1, 0), (0, 0), (4 + 2, 1), (2, 3), (4 + 3, 4 + 0), (4 + 1, 4 + 1)]
    order = {a << 32 | b: r for r, (a, b) in enumerate(merges)}
    expected = encode._merge_short(list(ids), order.get, len(merges), 4)
    with paths(path):
        assert merge_ids(list(ids), order.get, len(merges), 4) == expected


@st.composite
def rank_tables(draw):
    """Ranks as a file may hold them: sometimes a BPE's tokens in its order, sometimes strings
    in any order (a pair's join can then outrank it), sometimes two strings on one rank."""
    alphabet = b"ab\x00"
    kind = draw(st.sampled_from(["bpe", "any order", "shared ranks"]))
    if kind == "bpe":
        tokens = [bytes([c]) for c in alphabet]
        for _ in range(draw(st.integers(0, 25))):
            joined = draw(st.sampled_from(tokens)) + draw(st.sampled_from(tokens))
            if joined not in tokens:
                tokens.append(joined)
        return {t: r for r, t in enumerate(tokens)}
    strings = draw(st.lists(st.binary(min_size=2, max_size=6).map(lambda b: bytes(alphabet[c % 3] for c in b)),
                            max_size=25, unique=True))
    ranks = {bytes([c]): r for r, c in enumerate(alphabet)}
    top = len(strings) // 2 + 1 if kind == "shared ranks" else 10**6
    for s in strings:
        ranks[s] = draw(st.integers(0, top))
    return ranks


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=100, deadline=None)
@given(ranks=rank_tables(), data=st.data())
def test_lowest_rank_parts_equals_the_definition(path, ranks, data):
    chunk = bytes(data.draw(runs_of(st.sampled_from(sorted(ranks)), longest=100, size=300)))
    with paths(path):
        assert lowest_rank_parts(ranks, chunk) == reference_parts(ranks, chunk)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("ranks, chunk", [
    ({b"a": 0, b"b": 1, b"ab": 5, b"abb": 2}, b"abb"),  # a join's right pair outranks it
    ({b"a": 0, b"b": 1, b"ab": 5, b"abb": 2}, b"abb" * 9),
    ({b"a": 0, b"b": 1, b"ab": 5, b"bab": 2}, b"bab"),  # its left pair does
    ({b"a": 0, b"b": 1, b"ab": 5, b"bab": 2}, b"bab" * 9),
    ({b"a": 0, b"b": 1, b"aa": 3, b"bb": 3}, b"aabb" * 9),  # two strings share a rank
    ({b"a": 0, b"aa": 4, b"aaa": 2}, b"a" * 40),  # a run's second join meets a better pair
    ({b"a": 0, b"b": 1, b"ab": 2, b"ba": 3, b"aba": 4, b"bab": 5}, b"ab" * 30 + b"a"),
])
def test_lowest_rank_parts_where_joining_rank_by_rank_would_differ(path, ranks, chunk):
    with paths(path):
        assert lowest_rank_parts(ranks, chunk) == reference_parts(ranks, chunk)


def test_an_overlapping_run_takes_the_first_and_third_pair():
    """"aaaa" with (a, a): left to right merging takes pairs 1 and 3; "aaaaa" leaves one a."""
    for name in PATHS:
        with paths(name):
            for n, expected in [(4, [1, 1]), (5, [1, 1, 0]), (7, [1, 1, 1, 0])]:
                assert merge_ids([0] * n, {0: 0}.get, 1, 1) == expected
            assert lowest_rank_parts({b"a": 0, b"aa": 1}, b"aaaaa") == [b"aa", b"aa", b"a"]


def test_bpe_many_sends_long_chunks_down_the_long_path():
    merges = [(97, 97), (256, 256), (257, 98), (98, 97)]
    table = MergeTable.of(merges, 256)
    ranks = {a << 32 | b: r for r, (a, b) in enumerate(merges)}
    pieces = [b"a" * 1000 + b"b" + b"ab" * 300, b"aab", b"", b"ba" * 70]
    assert bpe_many(pieces, table) == [reference_merge(list(p), merges, 256) for p in pieces]
    assert bpe_many(pieces, table) == [merge_ids(list(p), ranks.get, len(merges), 256) for p in pieces]


@pytest.fixture(scope="module")
def long_text():
    """200k characters of varied English-like text, no newline: one chunk under `--split none`."""
    words = ("the of and to in a is that for it as was with be by on not he I this are or his from at "
             "which but have an they you were her she there been one all we their has would when if "
             "encoding tokenizer merge pair rank chunk").split()
    out, i, x = [], 0, 12345
    while i < 200_000:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        w = words[x % len(words)] + (", " if x % 11 == 0 else ". " if x % 17 == 0 else " ")
        out.append(w)
        i += len(w)
    return "".join(out)[:200_000]


def test_a_200k_character_chunk_encodes_as_the_definition_says(long_text):
    tok = train([long_text[:20_000]], TrainConfig(pre_tokenizer=pre_tokenizer("none")), merges=40).model()
    ids = tok.encode(long_text)
    assert ids == reference_merge(list(long_text.encode()), list(tok.merges), 256)
    assert tok.decode(ids) == long_text


def test_a_200k_byte_token_splits_as_tiktoken_splits_it(long_text):
    """tiktoken itself is the reference here: the plain definition is quadratic."""
    tiktoken = pytest.importorskip("tiktoken")
    tok = train([long_text[:20_000]], TrainConfig(pre_tokenizer=pre_tokenizer("none")), merges=40).model()
    ranks = {t: r for r, t in enumerate(tok.ranked_tokens)}
    enc = tiktoken.Encoding(name="whole", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    data = long_text.encode()
    assert lowest_rank_parts(ranks, data) == [tok.ranked_tokens[t] for t in enc.encode_ordinary(long_text)]


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.text(alphabet="aab é", max_size=300), min_size=1, max_size=4),
       steps=st.integers(0, 40), units=st.sampled_from(["byte", "char"]), data=st.data())
def test_a_window_of_a_chunk_holds_the_tokens_that_overlap_it(docs, steps, units, data):
    trainer = Trainer(docs, TrainConfig(units=units, pre_tokenizer=pre_tokenizer("none")), keep_layout=True)
    for _ in range(steps):
        trainer.step()
    for index in range(len(trainer.chunk_strings)):
        tokens = trainer.chunk_tokens(index)
        starts = [0]
        for t in tokens:
            starts.append(starts[-1] + len(trainer.token(t)))
        lo = data.draw(st.integers(-2, starts[-1] + 2))
        hi = data.draw(st.integers(-2, starts[-1] + 2))
        first, ids = trainer.chunk_tokens_between(index, lo, hi)
        inside = [i for i in range(len(tokens)) if lo < hi and starts[i] < hi and starts[i + 1] > lo]
        assert ids == [tokens[i] for i in inside]
        if inside:
            assert first == starts[inside[0]]


@settings(max_examples=80, deadline=None)
@given(docs=st.lists(st.text(alphabet="aab é日\n", max_size=200), min_size=1, max_size=3),
       steps=st.integers(0, 30), units=st.sampled_from(["byte", "char"]), data=st.data())
def test_a_window_over_a_long_chunk_draws_what_the_whole_chunk_draws(docs, steps, units, data):
    """The view of a long chunk reads only the window; the spans it draws there are the same."""
    from tokworkbench.core.inspection import segments

    trainer = Trainer(docs, TrainConfig(units=units, pre_tokenizer=pre_tokenizer("none")), keep_layout=True)
    for _ in range(steps):
        trainer.step()
    doc = data.draw(st.integers(0, len(docs) - 1))
    length = len(trainer.layouts[doc].text)
    start = data.draw(st.integers(0, max(0, length)))
    end = data.draw(st.integers(start, max(start, length)))

    def drawn(threshold):
        kept, segments.LONG_CHUNK = segments.LONG_CHUNK, threshold
        try:
            spans = segments.corpus_spans(trainer, doc, start, end, origin=start)
        finally:
            segments.LONG_CHUNK = kept
        width = end - start  # spans are drawn where they overlap the window [0, width)
        return [(s.start, s.end, s.token, s.cut) for s in spans if s.start < width and s.end > 0 and width > 0]

    assert drawn(0) == drawn(10**9)
