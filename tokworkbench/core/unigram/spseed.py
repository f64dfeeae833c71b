"""SentencePiece's Unigram seed (`MakeSeedSentencePiecesInternal`, unigram_model_trainer.cc):
the substrings that are internal nodes of the suffix tree of the distinct words, as esaxx
enumerates them, exactly, without building the tree.

SentencePiece joins each distinct word once (its count plays no part here) with a boundary
after each, and takes every internal node of the suffix tree: a substring of 2..max_len
characters that occurs at least twice and is not always followed by the same character (the
word's end counting as one character, the boundary), and that is a valid piece (validpiece.py:
one script, ▁ only first). Its score is occurrences x length; the characters come first, scored
by their counts (word counts weighted), then the best `seed_size` substrings. On botchan this
is 16,112 substrings where every repeated substring would be 34,494.

The substrings are found as em.py finds them (a 64-bit polynomial hash per position, extended a
character at a time while the shorter one still repeats); whether one branches is read off its
extensions one length on: it branches when no single extension (nor the word's end) holds all
its occurrences. SentencePiece 0.2.3 builds its suffix array over UTF-8 bytes (libsais), so
extensions count as one when their characters share a first byte, and a word's end followed by
the next word's ▁ shares ▁'s (0xE2) with ’, — and the box-drawing characters: on en-10M's
first 2 MB this is its 71,170 seed pieces, which a branch by character exceeded by 79.
"""

from collections import Counter

import numpy as np
import regex

from tokworkbench.core.text.spcoverage import UNK_CHAR, kept_characters
from tokworkbench.core.text.spnormalize import META
from tokworkbench.core.text.spoptions import is_digit
from tokworkbench.core.unigram import validpiece
from tokworkbench.core.unigram.course import check_seed_size
from tokworkbench.core.unigram.hashing import _BASE, _codes, _group

_META_LEAD = META.encode("utf-8")[0]


def _lead_byte(codes: np.ndarray) -> np.ndarray:
    """The first UTF-8 byte of each character (`codes` are code points + 1, hashing._codes)."""
    c = codes.astype(np.int64) - 1
    return np.where(c < 0x80, c, np.where(c < 0x800, 0xC0 | (c >> 6),
                                          np.where(c < 0x10000, 0xE0 | (c >> 12), 0xF0 | (c >> 18))))


def sp_seed_pieces(words: list[str], freqs: np.ndarray, seed_size: int, max_len: int,
                   edges: list | None = None, line_ends: np.ndarray | None = None, split_digits: bool = False,
                   required_chars: str = "") -> tuple[list[str], np.ndarray]:
    """The seed (characters first, by weighted count, then code point) and its scores; with
    `edges`, appends (text position, length, piece id) arrays of every seed piece's occurrences,
    as em.seed_pieces does. `line_ends[w]`: how many of word w's occurrences end a line (the
    others are followed by the next word's ▁); default none. With `split_digits` no piece of two
    or more characters holds a digit (spm_train's IsValidSentencePiece); `required_chars` the
    corpus lacks follow its characters with count 0, by code point (spm_train keeps them out of
    its seed and adds them at its finalization, where these, expected never, come back too). No
    piece of two or more characters holds ▅, the dropped characters' stand-in (`covered_words`),
    as spm_train rejects a substring with its kUNKChar."""
    joined = "".join(words)
    codes, lens, offs = _codes(words)
    ends = np.repeat(offs + lens, lens)
    weight = np.repeat(freqs.astype(np.float64), lens)
    at_line_end = np.repeat((np.zeros(len(words)) if line_ends is None else line_ends).astype(np.float64), lens)
    chars, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    char_freq = np.bincount(inverse, weights=weight)
    corder = np.argsort(-char_freq, kind="stable")
    pieces = [joined[first[i]] for i in corder]
    missing = sorted(set(required_chars) - set(pieces) - {"\0"})
    pieces += missing
    check_seed_size(seed_size, len(pieces))
    cls = validpiece.script_classes(chars - np.uint64(1))[inverse]
    digit = np.fromiter((split_digits and is_digit(chr(int(c) - 1)) or int(c) - 1 == ord(UNK_CHAR) for c in chars),
                        dtype=bool, count=len(chars))[inverse]
    levels = []  # per length >= 2: (positions, group of each, groups' first position, occurrences, candidate)
    pos = np.arange(len(codes), dtype=np.int64)
    h = np.zeros(len(codes), dtype=np.uint64)
    parent = None  # each position's group at the length before
    occ_before = None
    for length in range(1, max_len + 2):
        ok = pos + length <= ends[pos]
        if parent is not None and levels:  # a word's end: the next word's ▁ follows, or the line ends
            done, group = pos[~ok], parent[~ok]
            end_line = np.bincount(group, weights=at_line_end[done], minlength=len(occ_before))
            end_word = np.bincount(group, weights=weight[done] - at_line_end[done], minlength=len(occ_before))
        pos, h = pos[ok], h[ok]
        at = pos + length - 1
        h = h * _BASE + codes[at]
        if parent is not None:
            parent = parent[ok]
        if not len(pos):
            if parent is not None and levels:
                levels[-1][4] &= np.maximum(end_line, end_word) < occ_before
            break
        _, first_at, inv = _group(h)
        occ = np.bincount(inv, weights=weight[pos])
        if parent is not None and levels:
            # the extensions of each group before, by the next character's first UTF-8 byte (a word's
            # end: the next word's ▁, or the line's end): does one of them hold all of it?
            key = parent * 256 + _lead_byte(codes[at])
            keys, key_inv = np.unique(np.concatenate([key, np.flatnonzero(end_word) * 256 + _META_LEAD]),
                                      return_inverse=True)
            by_lead = np.bincount(key_inv, weights=np.concatenate([weight[pos], end_word[end_word > 0]]))
            most = np.zeros(len(occ_before))
            np.maximum.at(most, keys // 256, by_lead)
            levels[-1][4] &= np.maximum(most, end_line) < occ_before
        if length > max_len:
            break
        new = cls[at]
        if length == 1:
            base = validpiece.start(new)
            valid = np.ones(len(pos), dtype=bool)
            digits = digit[at]
        else:
            valid, base = validpiece.extend(base[ok], new)
            digits = digits[ok] | digit[at]
            valid &= ~digits
        often = occ >= 2
        if length >= 2:
            levels.append([pos, inv, first_at, occ, often & valid[first_at]])
        keep = often[inv] & valid  # a substring seen once, or no piece, has no candidate above it
        pos, h, base, parent, digits = pos[keep], h[keep], base[keep], inv[keep], digits[keep]
        occ_before = occ
    candidates = [(level, np.flatnonzero(level[4])) for level in levels]
    score = np.concatenate([lv[3][c] * (k + 2) for k, (lv, c) in enumerate(candidates)]) if candidates \
        else np.zeros(0, np.int64)
    at = np.concatenate([lv[0][lv[2][c]] for lv, c in candidates]) if candidates else np.zeros(0, np.int64)
    size = np.concatenate([np.full(len(c), k + 2) for k, (_, c) in enumerate(candidates)]) if candidates \
        else np.zeros(0, np.int64)
    room = max(0, seed_size - len(pieces))
    best = np.argsort(-score, kind="stable")[:room]
    pieces += [joined[a : a + n] for a, n in zip(at[best].tolist(), size[best].tolist())]
    scores = np.concatenate([char_freq[corder], np.zeros(len(missing)), score[best].astype(np.float64)])
    if edges is not None:
        rank = np.empty(len(corder), dtype=np.int64)
        rank[corder] = np.arange(len(corder))
        edges.append((np.arange(len(codes), dtype=np.int64), np.ones(len(codes), np.int64), rank[inverse]))
        piece_of = np.full(len(score), -1, dtype=np.int64)
        piece_of[best] = len(corder) + len(missing) + np.arange(len(best))
        start = 0
        for k, (level, cand) in enumerate(candidates):
            group_piece = np.full(len(level[3]), -1, dtype=np.int64)
            group_piece[cand] = piece_of[start : start + len(cand)]
            start += len(cand)
            pid = group_piece[level[1]]
            hit = pid >= 0
            edges.append((level[0][hit], np.full(int(hit.sum()), k + 2), pid[hit]))
    return pieces, scores


def sentencepiece_words(words: list[str], freqs: list[int],
                        document_ends: Counter | None = None) -> tuple[list[str], list[int], list[int]]:
    """The words spm_train trains on, from metaspace chunks, with how often each ends a line:
    SentencePiece reads a line at a time, so a chunk is cut at each run of line breaks and a part
    after one starts with the line's dummy ▁; most frequent first, then by UTF-8 bytes, as
    `SplitSentencesByWhitespace` sorts them. Unlike SentencePiece, the run of line breaks stays,
    as a word of its own, and so does a lone ▁ (what a space before a line break or extra spaces
    leave; SentencePiece collapses them): our model encodes whole documents, and must still
    spell them. `document_ends` counts the chunks that end a document: their last part ends a
    line too."""
    counts: Counter[str] = Counter()
    ending: Counter[str] = Counter()
    for word, n in zip(words, freqs):
        if "\n" not in word and "\r" not in word:
            counts[word] += n
            if document_ends:
                ending[word] += document_ends.get(word, 0)
            continue
        parts = regex.split("([\r\n]+)", word)
        for k, part in enumerate(parts):
            if k % 2:
                counts[part] += n  # the line break itself: a word of its own, so the model still spells it
                continue
            if k and part and not part.startswith(META):
                part = META + part
            if part:
                counts[part] += n
                if k + 1 < len(parts):
                    ending[part] += n
                elif document_ends:
                    ending[part] += document_ends.get(word, 0)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0].encode("utf-8")))
    return [w for w, _ in ordered], [n for _, n in ordered], [ending[w] for w, _ in ordered]


def covered_words(words: list[str], freqs: list[int], line_ends: list[int], seen: np.ndarray,
                  character_coverage: float, required_chars: str) -> tuple[list[str], list[int], list[int]]:
    """The words with each character `character_coverage` leaves out (core/text/spcoverage.py,
    counted over the words spm_train sees, `seen`) turned into ▅, as spm_train turns its
    sentences' before it splits them into words: words that then read alike are one, the order
    `sentencepiece_words`'. A ▅ already in the text is dropped too (spm_train skips its line; ours
    must still spell it, as an unknown). The characters of the unseen words alone (line breaks)
    are kept: the model spells them."""
    codes, lens, _ = _codes(words)
    chars, inverse = np.unique(codes, return_inverse=True)
    weight = np.repeat(np.where(seen, np.asarray(freqs, dtype=np.float64), 0.0), lens)
    count = np.bincount(inverse, weights=weight, minlength=len(chars))
    counts = Counter({chr(int(c) - 1): int(n) for c, n in zip(chars.tolist(), count.tolist()) if n > 0})
    counts.pop(UNK_CHAR, None)
    kept = {ch for ch, _ in kept_characters(counts, character_coverage, required_chars)}
    dropped = set(counts) - kept
    if ord(UNK_CHAR) + 1 in chars:
        dropped.add(UNK_CHAR)
    if not dropped:
        return words, freqs, line_ends
    table = str.maketrans({ch: UNK_CHAR for ch in dropped})
    merged: Counter[str] = Counter()
    ending: Counter[str] = Counter()
    for word, n, e in zip(words, freqs, line_ends):
        word = word.translate(table)
        merged[word] += n
        ending[word] += e
    ordered = sorted(merged.items(), key=lambda item: (-item[1], item[0].encode("utf-8")))
    return [w for w, _ in ordered], [n for _, n in ordered], [ending[w] for w, _ in ordered]


def cut_at_symbols(words: list[str], freqs: list[int], ends: Counter,
                   symbols: tuple[str, ...]) -> tuple[list[str], list[int], Counter]:
    """The chunks cut at each control or user-defined symbol, the symbols left out, as spm_train
    cuts its sentences at its meta pieces (longest first); the part that ends a chunk ends
    the document where the chunk did."""
    matcher = regex.compile("|".join(regex.escape(s) for s in sorted(symbols, key=len, reverse=True)))
    counts: Counter[str] = Counter()
    ending: Counter[str] = Counter()
    for word, n in zip(words, freqs):
        parts = [p for p in matcher.split(word) if p] if matcher.search(word) else [word]
        for part in parts:
            counts[part] += n
        if parts and ends.get(word):
            ending[parts[-1]] += ends[word]
    return list(counts), list(counts.values()), ending


def last_chunk(pre, normalized: str) -> str | None:
    """The metaspace chunk that ends a normalized document (None for another pre-tokenizer,
    whose chunks say nothing of line ends): ▁ and what follows its last space."""
    if not pre.rewrites or not normalized:
        return None
    cut = normalized.rfind(" ")
    return META + normalized[cut + 1:] if cut >= 0 else pre.surface(normalized)
