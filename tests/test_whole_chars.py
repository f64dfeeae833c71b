"""Rounds that start from whole characters (batchbpe.WholeChars) give exactly the ids that
joining byte by byte gives, also with tokens that begin or end inside a character (`' \\xe4'`,
a character and the next one's lead byte), which is where starting whole could go wrong."""

import random

import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from test_batchbpe import _reference_bpe as reference_bpe

from tokworkbench.core.bpe import batchbpe
from tokworkbench.core.bpe.batchbpe import MergeTable, bpe_many
from tokworkbench.core.formats.tiktoken import ranks_tokenizer
from tokworkbench.core.text.pretokenize import parse_split


@pytest.fixture(autouse=True)
def whole_chars_always(monkeypatch):
    """Batches here are small: let them build the table of whole characters all the same."""
    monkeypatch.setattr(batchbpe, "_WHOLE_BUILD_FROM", 0)


ALPHABET = "a b中文字ж😀é\u0928\u094d"  # ASCII, 2-, 3- and 4-byte characters, a virama


def _reference_bpe(ids: list[int], merges: list[tuple[int, int]]) -> list[int]:
    """DESIGN.md's encode rule on bytes (test_batchbpe's reference, base 256)."""
    return reference_bpe(ids, merges, 256)


def _random_merges(words: list[bytes], count: int, rng: random.Random) -> list[tuple[int, int]]:
    """Merges that fire on these words, each an adjacent pair met while encoding them with the
    merges so far: partial characters join each other and their neighbours freely."""
    merges: list[tuple[int, int]] = []
    seen = set()
    for _ in range(count):
        word = list(rng.choice(words))
        ids = _reference_bpe(word, merges)
        if len(ids) < 2:
            continue
        i = rng.randrange(len(ids) - 1)
        pair = (ids[i], ids[i + 1])
        if pair not in seen:
            seen.add(pair)
            merges.append(pair)
    return merges


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**9),
       texts=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=16), min_size=1, max_size=12),
       count=st.integers(0, 80))
def test_whole_characters_change_no_id(seed, texts, count):
    rng = random.Random(seed)
    words = [t.encode("utf-8") for t in texts]
    merges = _random_merges(words, count, rng)
    table = MergeTable.of(merges, 256)
    assert bpe_many(words, table) == [_reference_bpe(list(w), merges) for w in words]


def test_a_space_and_a_lead_byte_keep_the_character_in_bytes():
    """' \\xe4' and ' \\xe4\\xb8' rank below the joins that make 中 (e4 b8 ad): after a space,
    中 must not start whole; elsewhere it may."""
    merges = [(0x20, 0xE4), (256, 0xB8), (0xB8, 0xAD), (0xE4, 258)]  # 257: ' \xe4\xb8'; 259: 中
    pieces = [" 中".encode(), "中".encode(), "a中中".encode(), " 中 中".encode()]
    table = MergeTable.of(merges, 256)
    assert bpe_many(pieces, table) == [_reference_bpe(list(p), merges) for p in pieces]
    assert bpe_many(pieces, table)[:2] == [[257, 0xAD], [259]]


def test_bytes_that_are_not_text_are_joined_byte_by_byte():
    merges = [(0xB8, 0xAD), (0xE4, 256), (0xAD, 0xE4)]
    pieces = [b"\xb8\xad\xe4", b"\xe4\xb8\xad\xe4\xb8\xad", b"\xad\xe4\xb8\xad"]
    table = MergeTable.of(merges, 256)
    assert bpe_many(pieces, table) == [_reference_bpe(list(p), merges) for p in pieces]


def _cjk_ranks(rng: random.Random) -> dict[bytes, int]:
    """o200k-like ranks: Chinese characters as tokens, pairs of them, and tokens that end
    inside a character (' \\xe4', 中 + a lead byte), all recoverable by tiktoken's rule."""
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + 300)]
    ranks = {bytes([b]): r for r, b in enumerate(range(256))}

    def add(token: bytes) -> None:
        if token not in ranks:
            ranks[token] = len(ranks)

    add(b" \xe4")  # a space and a lead byte, ranked below every character: they join first
    add(" 一".encode()[:3])  # ' \xe4\xb8'
    for c in chars[:250]:  # two joins each, as UTF-8's bytes go: (lead, cont) then + cont
        data = c.encode()
        add(data[:2])
        add(data)
    for _ in range(400):
        a, b = rng.sample(chars[:250], 2)
        add((a + b).encode())
    add("中".encode() + b"\xe4")
    return ranks


def test_long_cjk_chunks_equal_tiktoken():
    """Long runs of Chinese take the batch path through the chunk store with the o200k
    pattern; the ids are tiktoken's own on the same ranks."""
    rng = random.Random(13)
    ranks = _cjk_ranks(rng)
    pre = parse_split("o200k")
    ours = ranks_tokenizer(ranks, pre, {})
    theirs = tiktoken.Encoding("cjk", pat_str=pre.pattern, mergeable_ranks=ranks, special_tokens={})
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + 300)]
    words = ["".join(rng.choice(chars) for _ in range(rng.randint(1, 120))) for _ in range(3000)]
    text = "".join(w + rng.choice([" ", "，", "。", " a ", "\n"]) for w in words)
    assert ours.encode_normalized(text) == theirs.encode_ordinary(text)
    assert ours.encode_normalized(text) == theirs.encode_ordinary(text)  # and from the chunk store


@pytest.mark.parametrize("text", ["中" * 40, " 中中", "中\u4e00" * 30, "😀中 中"])
def test_tokenizer_batches_equal_its_own_loop(text):
    ranks = _cjk_ranks(random.Random(5))
    tok = ranks_tokenizer(ranks, parse_split("o200k"), {})
    table = MergeTable.of(tok.merges, 256)
    pieces = [c.encode() for c in tok.pre_tokenizer.split(text)] * 300
    assert bpe_many(pieces, table) == [tok.apply_merges(list(p)) for p in pieces]
