"""The rank guard finds every piece that holds an odd token, whatever the slicing."""

from hypothesis import given, settings
from hypothesis import strategies as st
from jitpaths import both_paths

from tokworkbench.core.bpe import rankguard
from tokworkbench.core.bpe.rankguard import RankGuard

ODD = [b"ab", b"abc", b"\xe1\xbb\x87c", b"zz", b"q", b"", b"\x00\xff"]
pieces = st.lists(st.binary(max_size=6) | st.sampled_from(ODD + [b"xabx", b"a", b"b", b"z"]), max_size=40)


jit_path = both_paths()  # every test here runs on the compiled path and on the numpy path


@settings(max_examples=300, deadline=None)
@given(pieces, st.sampled_from([1, 3, 1 << 20]))
def test_unsafe_is_a_substring_check(found, slice_bytes):
    guard = RankGuard(ODD)
    # single bytes are base tokens, never odd; the empty token is no part of anything
    naive = [i for i, p in enumerate(found) if any(t in p for t in ODD if len(t) > 1)]
    saved, rankguard._SLICE_BYTES = rankguard._SLICE_BYTES, slice_bytes
    try:
        assert guard.unsafe(found) == naive
    finally:
        rankguard._SLICE_BYTES = saved


def test_no_odd_token_means_no_unsafe_piece():
    assert RankGuard([]).unsafe([b"abc", b""]) == []
