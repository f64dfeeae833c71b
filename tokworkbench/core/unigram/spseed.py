"""sentencepiece 0.2.3's Unigram seed (`MakeSeedSentencePiecesFromCorpus`,
unigram_model_trainer.cc), exactly, without building its suffix array.

It writes every sentence (spmcorpus.py), repeated as often as it occurs, each followed by a NUL,
and takes each internal node of that text's byte-level suffix array (libsais): a substring that
occurs at least twice and is followed by at least two different bytes. One that starts or ends
inside a character, or is not a valid piece (validpiece.py: one script, ▁ only first; never ▅),
or has other than 2..max_len characters, is left out; one found with a trailing NUL is kept
with it trimmed (`spm_seed` adds those). Its score is occurrences x characters.

Substrings are found by extending, one character at a time, every position whose shorter
substring still occurs twice, each a 64-bit polynomial hash (hashing.py; a collision is possible
in principle, about n^2 / 2^65 for n substrings); whether one branches is read off its
extensions one length on, by the next character's first UTF-8 byte: a word's end followed by the
next word's ▁ shares ▁'s (0xE2) with ’, — and the box-drawing characters.
"""

from collections import Counter

import numpy as np

from tokworkbench.core.text.spcoverage import UNK_CHAR
from tokworkbench.core.text.spnormalize import META
from tokworkbench.core.text.spoptions import is_digit
from tokworkbench.core.unigram import validpiece
from tokworkbench.core.unigram.course import check_seed_size
from tokworkbench.core.unigram.hashing import BASE, code_points, first_and_inverse

_META_LEAD = META.encode("utf-8")[0]
_LINE_END = 256  # a class no first byte is


def _lead_byte(codes: np.ndarray) -> np.ndarray:
    """The first UTF-8 byte of each character (`codes` are code points + 1, hashing.code_points)."""
    c = codes.astype(np.int64) - 1
    return np.where(c < 0x80, c, np.where(c < 0x800, 0xC0 | (c >> 6),
                                          np.where(c < 0x10000, 0xE0 | (c >> 12), 0xF0 | (c >> 18))))


def _classes_differ(group: np.ndarray, lead: np.ndarray, word_end: np.ndarray, line_end: np.ndarray) -> np.ndarray:
    """For each group, whether its extensions fall in two or more classes: `lead` for each
    extension (by its group), a word's end in ▁'s class, a line's end in a class of its own."""
    lo = np.full(len(word_end), _LINE_END, dtype=np.int64)
    hi = np.full(len(word_end), -1, dtype=np.int64)
    np.minimum.at(lo, group, lead)
    np.maximum.at(hi, group, lead)
    lo[word_end] = np.minimum(lo[word_end], _META_LEAD)
    hi[word_end] = np.maximum(hi[word_end], _META_LEAD)
    hi[line_end] = _LINE_END
    return lo < hi


def suffix_nodes(words: list[str], freqs: np.ndarray, max_len: int, line_ends: np.ndarray | None = None,
                 split_digits: bool = False, group=first_and_inverse) -> dict[str, int]:
    """Every substring of 2..max_len characters of the words that is an internal node of the
    sentences' byte-level suffix array (see the module docstring) and a valid piece, with its
    occurrences (word counts weighted). `line_ends[w]`: how many of word w's occurrences end a
    sentence (the others are followed by the next word's ▁); default none. With `split_digits`
    no such piece holds a digit; none holds ▅, the trainer's unknown character. `group` numbers
    equal hashes (hashing.first_and_inverse, or compiled group_hashes): the result is the same."""
    codes, lens, offs = code_points(words)
    ends = np.repeat(offs + lens, lens)
    weight = np.repeat(freqs.astype(np.float64), lens)
    at_line_end = np.repeat((np.zeros(len(words)) if line_ends is None else line_ends).astype(np.float64), lens)
    chars, inverse = np.unique(codes, return_inverse=True)
    cls = validpiece.script_classes(chars - np.uint64(1))[inverse]
    digit = np.fromiter((split_digits and is_digit(chr(int(c) - 1)) or int(c) - 1 == ord(UNK_CHAR) for c in chars),
                        dtype=bool, count=len(chars))[inverse]
    levels = []  # per length >= 2, by group: (where it first occurs, occurrences, candidate); positions go
    pos = np.arange(len(codes), dtype=np.int64)
    h = np.zeros(len(codes), dtype=np.uint64)
    parent = None  # each position's group at the length before
    occ_before = None
    for length in range(1, max_len + 2):
        ok = pos + length <= ends[pos]
        if parent is not None and levels:  # a word's end: the next word's ▁ follows, or the line ends
            done, ended = pos[~ok], parent[~ok]
            end_line = np.bincount(ended, weights=at_line_end[done], minlength=len(occ_before))
            end_word = np.bincount(ended, weights=weight[done] - at_line_end[done], minlength=len(occ_before))
        pos, h = pos[ok], h[ok]
        at = pos + length - 1
        h = h * BASE + codes[at]
        if parent is not None:
            parent = parent[ok]
        if not len(pos):
            if parent is not None and levels:
                levels[-1][2] &= (end_line > 0) & (end_word > 0)
            break
        first_at, inv = group(h)
        occ = np.bincount(inv, weights=weight[pos])
        if parent is not None and levels:
            # the extensions of each group before, by the next character's first UTF-8 byte (a word's
            # end: the next word's ▁, or the line's end, a class of its own): a node has two or more
            # (every occurrence weighs more than 0, so one alone would hold all of it)
            levels[-1][2] &= _classes_differ(parent, _lead_byte(codes[at]), end_word > 0, end_line > 0)
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
            levels.append([pos[first_at], occ, often & valid[first_at]])
        keep = often[inv] & valid  # a substring seen once, or no piece, has no candidate above it
        pos, h, base, parent, digits = pos[keep], h[keep], base[keep], inv[keep], digits[keep]
        occ_before = occ
    joined = "".join(words)
    found: dict[str, int] = {}
    for k, (starts, occurrences, candidate) in enumerate(levels):
        cand = np.flatnonzero(candidate)
        for at, n in zip(starts[cand].tolist(), occurrences[cand].tolist()):
            found[joined[at : at + k + 2]] = int(n)
    return found


def spm_seed(corpus, seed_size: int, max_len: int, split_digits: bool = False,
             group=first_and_inverse) -> tuple[list[str], np.ndarray]:
    """sentencepiece 0.2.3's seed of an `SpmCorpus` (spmcorpus.py) and its scores, as
    `MakeSeedSentencePiecesFromCorpus` and `ToLogProb` make them: the characters, most frequent
    first (then by UTF-8 bytes); then the best `seed_size` substrings of `suffix_nodes`,
    scored occurrences x characters in float32, best first, then the longer in bytes, then by
    bytes. Its suffix array ends every sentence with a NUL and keeps a substring found with that
    NUL trimmed: for the sentence that ends the corpus, whose NUL nothing follows, a suffix that
    ends two or more sentences is such a node, and its sentence ends are counted once more.
    Scores are log(score / sum) over the whole seed, summed in double, each kept as float32."""
    chars = [(ch, n) for ch, n in corpus.required if n > 0]
    check_seed_size(seed_size, len(chars))  # spm_train counts substrings alone; fewer than the characters makes no sense
    found = suffix_nodes(corpus.words, corpus.counts, max_len, corpus.line_ends, split_digits, group)
    for piece, ends in _corpus_end(corpus, max_len, split_digits).items():
        found[piece] = found.get(piece, 0) + ends
    pieces = list(found)
    score = (np.fromiter(found.values(), dtype=np.int64, count=len(pieces)).astype(np.float32)
             * np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)).astype(np.float32))
    encoded = [p.encode("utf-8") for p in pieces]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(pieces))
    # best first, then the longer in bytes, then by bytes: as bytes of one length, NUL padding
    # cannot reorder them
    order = np.lexsort((np.array(encoded, dtype=bytes), -lengths, -score))[:seed_size] if pieces else []
    seed = [ch for ch, _ in chars] + [pieces[i] for i in order]
    raw = np.concatenate([np.array([n for _, n in chars], dtype=np.float32), score[order]])
    logsum = np.log(raw.astype(np.float64).sum())
    return seed, (np.log(raw.astype(np.float64)) - logsum).astype(np.float32)


def _corpus_end(corpus, max_len: int, split_digits: bool) -> Counter:
    """The suffixes of the sentence that ends the corpus that two or more sentences end with,
    and how many: each is a node of 0.2.3's suffix array of its own (see `spm_seed`)."""
    out: Counter[str] = Counter()
    last = corpus.last
    if last is None:
        return out
    suffixes = {last[-k:] for k in range(2, min(max_len, len(last)) + 1)}
    for word, ends in zip(corpus.words, corpus.line_ends.tolist()):
        if ends:
            for k in range(2, min(max_len, len(word)) + 1):
                if word[-k:] in suffixes:
                    out[word[-k:]] += ends
    return Counter({p: n for p, n in out.items() if n >= 2 and _valid(p, max_len, split_digits)})


def _valid(piece: str, max_len: int, split_digits: bool) -> bool:
    return (validpiece.is_valid_piece(piece, max_len) and UNK_CHAR not in piece
            and not (split_digits and any(is_digit(c) for c in piece)))
