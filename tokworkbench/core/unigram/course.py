"""The Hugging Face course's Unigram, exactly as it is taught, so a learner sees its figures.

- Seed: every character (first-seen order) with its frequency, then the most frequent substrings
  of 2..max_piece_length (16) characters (counted word by word in first-appearance order, start
  then end ascending, and stably sorted by frequency, descending), up to `seed_size` pieces in
  all. The course has no length bound; its words are shorter than 16, so its figures stand.
- A piece's cost is -log(freq / total), total the summed seed frequency of the current pieces
  (the frequencies are never re-estimated: that is the course's simplification).
- A word's cost is its Viterbi cost *starting at 1*, the course's `{"start": 0, "score": 1}`
  (a quirk, kept so the published numbers come out); the corpus loss is sum(freq * cost),
  summed word by word in first-appearance order.
- A round computes, for every piece longer than one character, the loss increase if it alone
  were removed; removes the int(len(vocab) * prune_fraction) smallest (a stable sort in
  vocabulary order); and recomputes the costs.

The course recomputes the whole loss once per piece. Here only the words whose best path uses a
piece are segmented again (a word that does not use it keeps its cost bit for bit), and the
corpus loss is then re-added in the same order (numpy's cumulative sum is sequential), so every
increase is the float the course computes, and the same pieces go.
"""

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from tokworkbench.core.errors import SettingError, TrainingError
from tokworkbench.core.inspection.escape import quote
from tokworkbench.core.text.spoptions import MAX_SENTENCE_BYTES
from tokworkbench.core.unigram.viterbi import Vocab, best_costs, best_costs_indexed, segment

COURSE_START_COST = 1.0


def check_seed_size(seed_size: int, chars: int) -> None:
    """Both algorithms' seed holds every character: a smaller seed size is refused, not raised."""
    if seed_size < chars:
        raise SettingError("seed_size", seed_size, f"is below the number of distinct characters ({chars}); "
                           "the seed holds every character")


def seed_course(words: list[str], freqs: list[int], seed_size: int,
                max_length: int = 16) -> tuple[list[str], list[int]]:
    """The seed vocabulary and its frequencies (characters first). Substrings are at most
    `max_length` characters (SentencePiece's max_sentencepiece_length, 16): the course takes
    every substring, which on one 5,000-character word is 12.5 million of them (155 s, 22 GB),
    while words as short as the course's lose nothing."""
    chars: dict[str, int] = {}
    subs: Counter[str] = Counter()
    for word, f in zip(words, freqs):
        n = len(word)
        for i in range(n):
            ch = word[i]
            chars[ch] = chars.get(ch, 0) + f
            for j in range(i + 2, min(n, i + max_length) + 1):
                subs[word[i:j]] += f
    check_seed_size(seed_size, len(chars))
    ranked = sorted(subs.items(), key=lambda kv: kv[1], reverse=True)[: seed_size - len(chars)]
    pieces = list(chars) + [p for p, _ in ranked]
    return pieces, list(chars.values()) + [f for _, f in ranked]


def costs_of(pieces: list[str], freqs: list[float]) -> dict[str, float]:
    total = sum(freqs)
    return {p: -math.log(f / total) for p, f in zip(pieces, freqs)}


@dataclass
class Analysis:
    """What the next round would do, for the current vocabulary."""

    loss: float  # the course's corpus loss
    increases: dict[str, float]  # piece (longer than one character) -> loss increase if removed
    paths: list[list[tuple[int, int]]]  # each word's best segmentation
    to_remove: list[str]  # what the next round removes, in order


def analyze(words: list[str], freqs: list[int], pieces: list[str], cost: dict[str, float],
            prune_fraction: float, seed: "SeedLattices | None" = None) -> Analysis:
    """`seed` (`seed_lattices`) spares scanning every word for pieces again: the vocabulary only
    shrinks, so a round's edges are the seed's whose piece still has a cost."""
    if seed is not None:
        return _analyze_seeded(words, freqs, pieces, cost, prune_fraction, seed)
    vocab = Vocab(cost)
    ends = [vocab.edges(word) for word in words]

    def without(w: int, piece: str, best, back):
        # nothing before the piece's first occurrence can change
        return best_costs(ends[w], COURSE_START_COST, piece, words[w].find(piece), best, back)[0]

    return _analyze(words, freqs, pieces, prune_fraction,
                    lambda w: best_costs(ends[w], COURSE_START_COST), without)


def _analyze(words, freqs, pieces, prune_fraction, solve, without) -> Analysis:
    """The round's analysis, whichever way a word's lattice is held: `solve(w)` is word w's
    (best, back) tables, `without(w, piece, best, back)` its best costs with `piece` removed."""
    n = len(words)
    contrib = np.empty(n, dtype=np.float64)
    paths: list[list[tuple[int, int]]] = []
    tables = []
    users: dict[str, list[int]] = {}
    for w, (word, f) in enumerate(zip(words, freqs)):
        best, back = solve(w)
        path = segment(len(word), back)
        paths.append(path)
        tables.append((best, back))
        contrib[w] = f * best[len(word)]
        for a, b in path:
            if b - a > 1:
                users.setdefault(word[a:b], []).append(w)
    loss = float(np.add.accumulate(contrib)[-1]) if n else 0.0
    increases: dict[str, float] = {}
    for piece in pieces:
        if len(piece) == 1:
            continue
        using = users.get(piece)
        if not using:
            increases[piece] = loss - loss  # what the course's full recount gives: exactly 0.0
            continue
        changed = contrib.copy()
        for w in dict.fromkeys(using):
            best, back = tables[w]
            changed[w] = freqs[w] * without(w, piece, best, back)[len(words[w])]
        increases[piece] = float(np.add.accumulate(changed)[-1]) - loss
    return _finish(loss, increases, paths, pieces, prune_fraction)


def _finish(loss, increases, paths, pieces, prune_fraction) -> Analysis:
    ranked = sorted(increases.items(), key=lambda kv: kv[1])  # stable: vocabulary order among ties
    count = max(1, int(len(pieces) * prune_fraction))
    return Analysis(loss, increases, paths, [p for p, _ in ranked[:count]])


@dataclass
class SeedLattices:
    """Each word's edges under the seed vocabulary, as (start, seed piece index) per end."""

    index: dict[str, int]  # seed piece -> index
    edges: list[list[list[tuple[int, int]]]]


def seed_lattices(words: list[str], cost: dict[str, float]) -> SeedLattices:
    vocab = Vocab(cost)
    index = {p: i for i, p in enumerate(cost)}
    return SeedLattices(index, [[[(a, index[p]) for a, p, _ in at] for at in vocab.edges(word)] for word in words])


def _analyze_seeded(words, freqs, pieces, cost, prune_fraction, seed: SeedLattices) -> Analysis:
    """`analyze` over the seed's edges, a piece's cost looked up by its seed index."""
    costs: list = [None] * len(seed.index)
    for p, c in cost.items():
        costs[seed.index[p]] = c

    def without(w: int, piece: str, best, back):
        return best_costs_indexed(seed.edges[w], costs, COURSE_START_COST, seed.index[piece], words[w].find(piece),
                                  best, back)[0]

    return _analyze(words, freqs, pieces, prune_fraction,
                    lambda w: best_costs_indexed(seed.edges[w], costs, COURSE_START_COST), without)


def check_chunk_lengths(words: list[str]) -> None:
    """Refuse a chunk longer than SentencePiece's max_sentence_length (4,192 bytes), which
    spm_train skips: training's sweeps go position by position, so one 100,000-character
    chunk took minutes a round (course: every substring of it, 22 GB at 5,000 characters)."""
    for word in words:
        if len(word) * 4 > MAX_SENTENCE_BYTES and len(data := word.encode("utf-8")) > MAX_SENTENCE_BYTES:
            raise TrainingError(f"a chunk of {len(data):,} bytes ({quote(word[:24])}…) is longer than Unigram trains "
                                f"on ({MAX_SENTENCE_BYTES:,} bytes, SentencePiece's max_sentence_length); split the "
                                "text (metaspace cuts only at spaces; --split regex:PATTERN cuts where you choose)")


def scores(freqs: list[float]) -> list[float]:
    """log(freq / total): the course's -log cost, negated (exactly: negation does not round)."""
    total = sum(freqs)
    return [-(-math.log(f / total)) for f in freqs]
