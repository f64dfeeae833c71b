"""SentencePiece's Unigram training (what `spm_train --model_type=unigram` and HF's
`UnigramTrainer` do), over the distinct pre-tokenized words, in numpy.

- Seed: SentencePiece's (spseed.py: the words it reads, the internal nodes of its suffix tree).
  `seed_pieces` here is the seed before it, every substring of 2..max_piece_length characters
  that occurs at least twice (word frequencies counted), ranked by frequency x length; the
  tests' lattice checks still build on it. Both find substrings by extending, one character at
  a time, every position whose shorter substring still occurs twice, each kept as a 64-bit
  polynomial hash (hashing.py); a collision is possible in principle and vanishingly rare
  (about n^2 / 2^65 for n substrings). Initial scores are log(score / total).
- Words spm_train never sees (line breaks, a lone ▁) weigh nothing (`unseen_words`).
- E-step: forward-backward over each word's lattice gives every piece's expected count, the
  word's frequency as weight. M-step: pieces expected less than 0.5 times go (a character
  stays ours but leaves SentencePiece's model: `_em`), scores are digamma(count) -
  digamma(total), SentencePiece's Bayesian update.
- Pruning: Viterbi-segment the corpus; a piece no best path uses, or whose own best segmentation
  is not itself, goes at once; for the others the loss of removing a piece is estimated with
  its alternative (its best segmentation without itself) taking over its count, and the pieces
  with the smallest loss go, keeping max(1.1 x target, shrinking_factor x size). Once at 1.1 x
  the target, a last round keeps the target's best-scored pieces (`_finalize`, SentencePiece's
  finalization).
- One round: prune, then `sub_iterations` EM iterations (none after the pruning that reaches
  1.1 x the target, as spm_train 0.2.3); round 0 is the seed after its EM.

The lattice of all words is one set of flat arrays (an edge per piece occurrence); forward,
backward and Viterbi sweep it by position, all words at once.
"""

import math
from collections import Counter
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from tokworkbench.core.heap import keep_large_frees
from tokworkbench.core.text.spcoverage import UNK_CHAR
from tokworkbench.core.text.spnormalize import META
from tokworkbench.core.unigram import validpiece
from tokworkbench.core.unigram.course import check_seed_size
from tokworkbench.core.unigram.hashing import _BASE, _codes, _group, _run_starts
from tokworkbench.core.unigram.parallel_em import BlockSweeps, partition
from tokworkbench.core.unigram.spseed import covered_words, sentencepiece_words, sp_seed_pieces
from tokworkbench.core.unigram.state import RoundAnalysis, RoundState

EXPECTED_MIN = 0.5  # SentencePiece's kExpectedFrequencyThreshold
UNKNOWN_PENALTY = 10.0  # SentencePiece's kUnkPenalty: an unknown character costs min_score - 10
FINAL_PENALTY_STEP = 0.0001  # SentencePiece's kMinScorePenaltyDelta: a required character put back
FINAL_MARGIN = 1.1  # prune to 1.1 x the target, then keep the target's best-scored pieces (as SentencePiece)


@dataclass(frozen=True)
class Target:
    """Where em's pruning stops, as spm_train counts: rounds prune until the model has at
    most `desired` pieces (1.1 x the whole vocabulary, meta and byte pieces included), then
    the last keeps `pieces`, what the whole vocabulary has room for after them. 0, 0: none."""

    pieces: int
    desired: int


def hash_strings(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each string's hash, and the sorted hashes of all their prefixes."""
    codes, lens, offs = _codes(strings)
    h = np.zeros(len(strings), dtype=np.uint64)
    prefixes = []
    idx = np.arange(len(strings))
    for length in range(1, int(lens.max(initial=0)) + 1):
        idx = idx[lens[idx] >= length]
        h[idx] = h[idx] * _BASE + codes[offs[idx] + length - 1]
        prefixes.append(h[idx])
    return h, _sorted_unique(np.concatenate(prefixes)) if prefixes else np.zeros(0, dtype=np.uint64)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique by sorting (numpy's hashing unique is slower on these arrays)."""
    values = np.sort(values)
    return values[_run_starts(values)]


def _extend(codes: np.ndarray, ends: np.ndarray, pos: np.ndarray, h: np.ndarray, length: int):
    """Positions whose substring can grow to `length` characters, and their hashes."""
    ok = pos + length <= ends[pos]
    pos, h = pos[ok], h[ok]
    return pos, h * _BASE + codes[pos + length - 1]


def seed_pieces(words: list[str], freqs: np.ndarray, seed_size: int, max_len: int,
                by_script: bool = True, edges: list | None = None) -> tuple[list[str], np.ndarray]:
    """The seed vocabulary (characters first, by frequency) and its SentencePiece scores
    (frequency for a character, frequency x length for a longer piece). With `by_script`, a
    longer piece is one SentencePiece would take (`validpiece`: one script, ▁ only first).
    Given a list as `edges`, appends (text position, length, piece id) arrays: every occurrence
    of every seed piece in the words, found on the way (the corpus lattice, with no look-up)."""
    joined = "".join(words)
    codes, lens, offs = _codes(words)
    ends = np.repeat(offs + lens, lens)
    weight = np.repeat(freqs.astype(np.float64), lens)
    chars, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    char_freq = np.bincount(inverse, weights=weight)
    corder = np.argsort(-char_freq, kind="stable")
    pieces = [joined[first[i]] for i in corder]
    check_seed_size(seed_size, len(pieces))
    scores = [char_freq[corder]]
    found_h, found_score, found_pos, found_len = [], [], [], []
    seen = []  # per length: (positions, candidate index of each, or -1)
    pos = np.arange(len(codes), dtype=np.int64)
    h = np.zeros(len(codes), dtype=np.uint64)
    if by_script:
        cls = validpiece.script_classes(chars - np.uint64(1))[inverse]
    for length in range(1, max_len + 1):
        ok = pos + length <= ends[pos]
        pos, h = pos[ok], h[ok]
        at = pos + length - 1
        h = h * _BASE + codes[at]
        if by_script:
            new = cls[at]
            if length == 1:
                base = validpiece.start(new)
            else:  # a substring that mixes scripts or holds a later ▁ never grows into a piece
                good, base = validpiece.extend(base[ok], new)
                pos, h, base = pos[good], h[good], base[good]
        if not len(pos):
            break
        uniq, first_at, inv = _group(h)
        count = np.bincount(inv, weights=weight[pos])
        often = count >= 2
        if length >= 2:
            if edges is not None:
                first_candidate = sum(len(f) for f in found_score)
                candidate = np.where(often, np.cumsum(often) - 1 + first_candidate, -1)
                small = np.int32 if len(codes) < 2**31 else np.int64  # kept for every length: half the memory
                seen.append((pos.astype(small), candidate[inv].astype(small), length))
            found_score.append(count[often] * length)
            found_pos.append(pos[first_at[often]])
            found_len.append(np.full(int(often.sum()), length))
            found_h.append(uniq[often])
        keep = often[inv]  # a substring seen once cannot grow into one seen twice
        pos, h = pos[keep], h[keep]
        if by_script:
            base = base[keep]
    room = max(0, seed_size - len(pieces))
    if found_score and room:
        score = np.concatenate(found_score)
        at = np.concatenate(found_pos)
        size = np.concatenate(found_len)
        best = np.argsort(-score, kind="stable")[:room]
        pieces += [joined[a : a + n] for a, n in zip(at[best].tolist(), size[best].tolist())]
        scores.append(score[best])
    else:
        best = np.zeros(0, np.int64)
    if edges is not None:
        rank = np.empty(len(corder), dtype=np.int64)
        rank[corder] = np.arange(len(corder))
        edges.append((np.arange(len(codes), dtype=np.int64), np.ones(len(codes), np.int64), rank[inverse]))
        piece_of = np.full(sum(len(f) for f in found_score), -1, dtype=np.int64)
        piece_of[best] = len(corder) + np.arange(len(best))
        for at_pos, candidate, length in seen:
            if not len(piece_of):  # no substring made the seed (none repeats): characters only
                continue
            pid = np.where(candidate >= 0, piece_of[np.maximum(candidate, 0)], -1)
            hit = pid >= 0
            edges.append((at_pos[hit], np.full(int(hit.sum()), length), pid[hit]))
    return pieces, np.concatenate(scores)


class Lattices:
    """Every piece of a vocabulary over every span of a set of strings, as flat edge arrays.

    Nodes are the positions 0..len of each string (string w's node k is `node_off[w] + k`).
    Edges are kept sorted by (end, destination node, start): the order forward and Viterbi
    sweep, and the tie rule's (an earlier start first)."""

    def __init__(self, strings: list[str], piece_hashes: np.ndarray, prefix_hashes: np.ndarray, max_len: int,
                 found: list | None = None):
        """Edges found by hashing every substring up to `max_len` and looking it up among the
        pieces, or given as `found`: (text position, length, piece) arrays (`seed_pieces`)."""
        codes, lens, offs = _codes(strings)
        self.count = len(strings)
        self.lens = lens
        self.node_off = offs + np.arange(len(strings))
        self.nodes = int(len(codes) + len(strings))
        word_of = np.repeat(np.arange(len(strings)), lens)
        if found is not None:
            self._place([a for a, _, _ in found], [n for _, n, _ in found], [p for _, _, p in found], word_of, offs)
            return
        # one look-up a position: the prefix table says both "a piece starts so" and which piece
        piece_at = np.full(len(prefix_hashes), -1, dtype=np.int64)
        if len(prefix_hashes):
            piece_at[np.searchsorted(prefix_hashes, piece_hashes)] = np.arange(len(piece_hashes))
        ends = np.repeat(offs + lens, lens)
        pos = np.arange(len(codes), dtype=np.int64)
        h = np.zeros(len(codes), dtype=np.uint64)
        at, size, pid = [], [], []
        for length in range(1, max_len + 1):
            pos, h = _extend(codes, ends, pos, h, length)
            if not len(pos) or not len(prefix_hashes):
                break
            k = np.minimum(np.searchsorted(prefix_hashes, h), len(prefix_hashes) - 1)
            going = prefix_hashes[k] == h
            pos, h, k = pos[going], h[going], k[going]
            piece = piece_at[k]
            hit = piece >= 0
            at.append(pos[hit])
            size.append(np.full(int(hit.sum()), length))
            pid.append(piece[hit])
        self._place(at, size, pid, word_of, offs)

    def _place(self, at: list, size: list, pid: list, word_of: np.ndarray, offs: np.ndarray) -> None:
        at = np.concatenate(at) if at else np.zeros(0, np.int64)
        size = np.concatenate(size) if size else np.zeros(0, np.int64)
        pid = np.concatenate(pid) if pid else np.zeros(0, np.int64)
        # each length's positions are ascending: a stable sort merges the runs into text order
        by_pos = np.argsort(at, kind="stable")
        at, size, pid = at[by_pos], size[by_pos], pid[by_pos]
        word = word_of[at]
        start = at - offs[word]
        self.assign(word, start, start + size, pid)

    def assign(self, word, start, end, pid) -> None:
        """Set the edges (string, start, end, piece), given in text order, and the orders the
        sweeps need: stable sorts by end (forward) and by start, descending (backward), keep
        text order inside each, which is (string, start) order."""
        small = np.int32 if self.nodes < 2**31 - 1 else np.int64  # half the memory, faster gathers
        word, start, end, pid = (a.astype(small, copy=False) for a in (word, start, end, pid))
        src = (self.node_off[word] + start).astype(small, copy=False)
        dst = src + (end - start)
        order = np.argsort(_narrow(end), kind="stable")
        self.word, self.start, self.end = word[order], start[order], end[order]
        self.src, self.dst, self.pid = src[order], dst[order], pid[order]
        self.group_start = _run_starts(self.dst)
        self.back = np.argsort(_narrow(-start), kind="stable")
        self.back = _compose(order, self.back).astype(small, copy=False)
        self.back_src, self.back_dst, self.back_start = self.src[self.back], self.dst[self.back], self.start[self.back]
        self.back_group_start = _run_starts(self.back_src)

    def restricted(self, keep_piece: np.ndarray, keep_word: np.ndarray | None = None) -> "Lattices":
        """The same lattices with only the edges of pieces where `keep_piece[pid]` is true, and
        with `keep_word`, of strings where `keep_word[word]` is (a string left out keeps its
        nodes, with no edge). A filter keeps both sweep orders: nothing is sorted again."""
        out = object.__new__(Lattices)
        out.count, out.lens, out.node_off, out.nodes = self.count, self.lens, self.node_off, self.nodes
        keep = keep_piece[self.pid]
        if keep_word is not None:
            keep &= keep_word[self.word]
        remap = np.cumsum(keep) - 1
        out.word, out.start, out.end = self.word[keep], self.start[keep], self.end[keep]
        out.src, out.dst, out.pid = self.src[keep], self.dst[keep], self.pid[keep]
        out.back = remap[self.back[keep[self.back]]]
        out.group_start = _run_starts(out.dst)
        out.back_src, out.back_dst, out.back_start = out.src[out.back], out.dst[out.back], out.start[out.back]
        out.back_group_start = _run_starts(out.back_src)
        return out

    def words(self, words: np.ndarray) -> "Lattices":
        """The lattices of strings `words` only (ascending indices), numbered 0.. in that order:
        a filter, so both sweep orders hold without sorting again."""
        out = object.__new__(Lattices)
        out.count, out.lens = len(words), self.lens[words]
        out.node_off = np.cumsum(out.lens + 1) - (out.lens + 1)
        out.nodes = int(out.node_off[-1] + out.lens[-1] + 1) if len(words) else 0
        row = np.full(self.count, -1, dtype=np.int64)
        row[words] = np.arange(len(words))
        keep = row[self.word] >= 0
        shift = (out.node_off - self.node_off[words])  # each kept string's node offset moves by this
        small = self.src.dtype
        out.word = row[self.word[keep]].astype(small)
        out.start, out.end, out.pid = self.start[keep], self.end[keep], self.pid[keep]
        out.src = (self.src[keep] + shift[out.word]).astype(small)
        out.dst = (self.dst[keep] + shift[out.word]).astype(small)
        out.back = (np.cumsum(keep) - 1)[self.back[keep[self.back]]].astype(small)
        out.group_start = _run_starts(out.dst)
        out.back_src, out.back_dst, out.back_start = out.src[out.back], out.dst[out.back], out.start[out.back]
        out.back_group_start = _run_starts(out.back_src)
        return out

    def _blocks(self, key: np.ndarray, starts: np.ndarray):
        """Runs of equal `key` (sorted), each as (lo, hi, group starts inside it, group sizes).
        All found by one pass each, then sliced: a sweep has a run per position of the
        longest word, and per-run allocations were a fifth of its time."""
        if not len(key):
            return
        cuts = np.flatnonzero(_run_starts(key)).tolist() + [len(key)]
        group = np.flatnonzero(starts)  # a group never spans two runs: runs start groups
        sizes = np.diff(group, append=len(key))
        at = np.searchsorted(group, cuts).tolist()
        for k in range(len(cuts) - 1):
            lo, a, b = cuts[k], at[k], at[k + 1]
            yield lo, cuts[k + 1], group[a:b] - lo, sizes[a:b]

    @property
    def end_nodes(self) -> np.ndarray:
        return self.node_off + self.lens

    # -- sweeps ----------------------------------------------------------------------------
    def forward_backward(self, score: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each edge's expected count (the word's weight x the edge's posterior probability),
        and each word's log partition function. `score` is per edge."""
        alpha = np.full(self.nodes, -np.inf)
        alpha[self.node_off] = 0.0
        for lo, hi, g, sizes in self._blocks(self.end, self.group_start):
            v = alpha[self.src[lo:hi]] + score[lo:hi]
            # a group's last edge (the latest start) is its one-character piece: the reference
            alpha[self.dst[lo:hi][g]] = _segment_logsumexp(v, g, g + sizes - 1, sizes)
        beta = np.full(self.nodes, -np.inf)
        beta[self.end_nodes] = 0.0
        b_src, b_dst, b_score = self.back_src, self.back_dst, score[self.back]
        for lo, hi, g, sizes in self._blocks(self.back_start, self.back_group_start):
            v = beta[b_dst[lo:hi]] + b_score[lo:hi]
            beta[b_src[lo:hi][g]] = _segment_logsumexp(v, g, g, sizes)  # first edge: the one-character piece
        z = alpha[self.end_nodes]
        post = np.exp(alpha[self.src] + score + beta[self.dst] - z[self.word])
        return weight[self.word] * post, z

    def viterbi(self, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The edges of each word's best path (an earlier start wins a tie), as edge indices in
        path order word by word, and each word's best total score."""
        best = np.full(self.nodes, -np.inf)
        best[self.node_off] = 0.0
        back = np.full(self.nodes, -1, dtype=np.int64)
        for lo, hi, g, sizes in self._blocks(self.end, self.group_start):
            v = best[self.src[lo:hi]] + score[lo:hi]
            top = np.maximum.reduceat(v, g)
            group = np.repeat(np.arange(len(g)), sizes)
            winners = np.flatnonzero(v == top[group])
            won = group[winners]  # ascending: each group's first winner is where its run starts
            chosen = winners[_run_starts(won)]
            dst = self.dst[lo:hi][g]
            best[dst] = top
            back[dst[group[chosen]]] = lo + chosen
        path: list[np.ndarray] = []
        cur = self.end_nodes[self.lens > 0]
        while len(cur):
            e = back[cur]
            e = e[e >= 0]
            path.append(e)
            cur = self.src[e]
            cur = cur[self.start[e] > 0]
        edges = np.concatenate(path) if path else np.zeros(0, np.int64)
        return edges, best[self.end_nodes]


class PieceBlock:
    """Part `k` of `parts` of the pruning pass's lattices: the longer pieces of the vocabulary as
    strings, over the vocabulary. Built at the first call, in the process that sweeps it (from
    the engine's seed, which every worker inherits), and cut down after as the vocabulary
    shrinks (built again for one that is not a subset, after an undo). Each string's paths are
    its own, whatever else is in the part: the parts change no float."""

    def __init__(self, engine: "EmEngine", k: int, parts: int):
        self.strings, self.hashes, self.single = engine.seed_strings, engine.hashes, engine.single
        self.max_len, self.k, self.parts = engine.max_len, k, parts
        self.built_for = None
        self.last = None

    def run(self, ids: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For this part's strings of longer pieces in `ids` (scored `scores`): those whose best
        segmentation is themselves, and the best path without the whole-string edge, as
        (string, piece) seed indices edge by edge."""
        local = np.full(len(self.strings), -1, dtype=np.int64)
        local[ids] = np.arange(len(ids))
        wanted = local >= 0
        if self.built_for is None or not self.built_for[ids].all():
            multi = np.sort(ids[~self.single[ids]])
            self.mine = np.array_split(multi, self.parts)[self.k]
            _, prefixes = hash_strings([self.strings[i] for i in ids.tolist()])
            self.last = None
            built = Lattices([self.strings[i] for i in self.mine.tolist()], self.hashes[ids], prefixes, self.max_len)
            built.pid = ids[built.pid].astype(built.pid.dtype)  # seed indices, as the filter takes them
            self.built_for, self.base = wanted, built
        base = self.last[1] if self.last is not None and self.last[0][wanted].all() else self.base
        sub = base.restricted(wanted, wanted[self.mine])
        self.last = (wanted, sub)
        edge_score = scores[local[sub.pid]]
        full = (sub.start == 0) & (sub.end == sub.lens[sub.word])
        path, _ = sub.viterbi(edge_score)
        alt_path, _ = sub.viterbi(np.where(full, -np.inf, edge_score))
        return self.mine[sub.word[path[full[path]]]], self.mine[sub.word[alt_path]], sub.pid[alt_path]


def found_blocks(words: list[str], found: list, hashes: np.ndarray, prefixes: np.ndarray,
                  max_len: int) -> tuple[list, int]:
    """The corpus cut into blocks (`partition`), each with what builds its lattices from the
    seed's `found` edges (its words only, their positions moved into the block's text), and
    the corpus's edge count. A block built so is the whole lattices' `words` of it, exactly."""
    lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    offs = np.cumsum(lens) - lens
    word_of = np.repeat(np.arange(len(words)), lens)
    edges = np.zeros(len(words), dtype=np.int64)
    for at, _, _ in found:
        edges += np.bincount(word_of[at], minlength=len(words))
    out = []
    for block in partition(lens, edges):
        row = np.full(len(words), -1, dtype=np.int64)
        row[block] = np.arange(len(block))
        out.append((block, partial(_block_lattices, words, block, row, offs, lens, word_of, found, hashes,
                                   prefixes, max_len)))
    return out, int(edges.sum())


def _block_lattices(words, block, row, offs, lens, word_of, found, hashes, prefixes, max_len) -> "Lattices":
    """One block's lattices from the seed's edges (see `found_blocks`)."""
    block_offs = np.cumsum(lens[block]) - lens[block]
    parts = []
    for at, size, pid in found:
        w = word_of[at]
        r = row[w]
        keep = r >= 0  # a monotone move: each length's positions stay ascending
        parts.append((at[keep] - offs[w[keep]] + block_offs[r[keep]], size[keep], pid[keep]))
    return Lattices([words[i] for i in block.tolist()], hashes, prefixes, max_len, parts)


def _narrow(values: np.ndarray) -> np.ndarray:
    """Small integers as int16 where they fit: numpy sorts those by radix, stably, in linear time."""
    if len(values) and -32768 <= values.min() and values.max() < 32768:
        return values.astype(np.int16)
    return values


def _compose(order: np.ndarray, back_in_text_order: np.ndarray) -> np.ndarray:
    """`back_in_text_order` indexes the text-order edges; the same permutation as indices into
    the forward order (`order[k]` is the text-order index of forward edge k)."""
    where = np.empty_like(order)
    where[order] = np.arange(len(order))
    return where[back_in_text_order]


def _segment_logsumexp(v: np.ndarray, g: np.ndarray, ref: np.ndarray | None = None,
                       sizes: np.ndarray | None = None) -> np.ndarray:
    """log(sum(exp(v))) over each group (groups start at `g`). Each group's values are taken
    relative to one of them, for range: its maximum, or with `ref` the value at index `ref` of
    each group, which saves the pass that finds the maximum; a group where that overflows or
    the reference is not finite is done again with the maximum."""
    if sizes is None:
        sizes = np.diff(g, append=len(v))
    if ref is not None:
        top = v[ref]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            total = np.add.reduceat(np.exp(v - np.repeat(top, sizes)), g)
            out = top + np.log(total)
        bad = ~(np.isfinite(top) & np.isfinite(total))
        if not bad.any():
            return out
        out[bad] = _segment_logsumexp(v, g, sizes=sizes)[bad]
        return out
    top = np.maximum.reduceat(v, g)
    safe = np.where(np.isfinite(top), top, 0.0)
    total = np.add.reduceat(np.exp(v - np.repeat(safe, sizes)), g)
    with np.errstate(divide="ignore"):
        return safe + np.log(total)


def _absent(state: RoundState) -> np.ndarray:
    return np.zeros(len(state.pieces), bool) if state.absent is None else np.asarray(state.absent, dtype=bool)


def _present(state: RoundState) -> int:
    """The size of SentencePiece's model in this state: the characters it dropped are not in it."""
    return len(state.pieces) - int(_absent(state).sum())


def _unknown_scores(scores: np.ndarray, absent: np.ndarray) -> np.ndarray:
    """Scores with each dropped character at SentencePiece's unknown's: the lowest other - 10."""
    if not absent.any() or absent.all():
        return scores
    scores = scores.copy()
    scores[absent] = scores[~absent].min() - UNKNOWN_PENALTY
    return scores


def _score_order(scores: np.ndarray, pieces: list[str]) -> np.ndarray:
    """Best score first, ties by UTF-8 bytes: SentencePiece's `Sorted`, whose scores are
    float32 (two pieces expected equally often tie there, whatever double's last bits say)."""
    return np.array(sorted(range(len(pieces)), key=lambda i: (-float(np.float32(scores[i])), pieces[i].encode())),
                    dtype=np.int64)


def _final_order(state: RoundState, single: np.ndarray) -> np.ndarray:
    """The longer pieces, worst first as SentencePiece's finalization would leave them out."""
    longer = np.flatnonzero(~single[state.ids])
    kept = _score_order(np.asarray(state.scores)[longer], [state.pieces[i] for i in longer.tolist()])
    return longer[kept][::-1]


def digamma(x: np.ndarray) -> np.ndarray:
    """SentencePiece's digamma: recurrence up to 7, then the asymptotic series."""
    x = np.asarray(x, dtype=np.float64).copy()
    result = np.zeros_like(x)
    small = x < 7
    while small.any():
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
        small = x < 7
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    return result + np.log(x) + xx2 / 24.0 - 7.0 / 960.0 * xx4 + 31.0 / 8064.0 * xx4 * xx2 - 127.0 / 30720.0 * xx4 * xx4


def unseen_words(words: list[str]) -> np.ndarray:
    """Which words spm_train never trains on: a run of line breaks (it reads a line at a time)
    and a lone ▁ (its remove_extra_whitespaces trims spaces at a line's ends and collapses runs
    of them). They stay in our corpus, so that the model spells them, but weigh nothing in EM
    and pruning: counted, a line break and the ▁s of indentation raised the total and ▁'s
    probability, so pieces such as ▁t lost to ▁ + t (86 % of spm_train's pieces on 2 MB of
    English at 8,000, 98 % without them). A corpus of nothing else keeps them all (EM needs a word)."""
    unseen = np.fromiter((w == META or not w.strip("\r\n") for w in words), dtype=bool, count=len(words))
    return unseen if not unseen.all() else np.zeros(len(words), dtype=bool)


def _seed_log_scores(pieces: list[str], scores: np.ndarray, words: list[str], weight: np.ndarray,
                     unseen: np.ndarray, stand_in: int = -1) -> tuple[np.ndarray, int]:
    """log(score / total) over what spm_train sees, and its first piece (the most frequent
    character it sees, the one its unknown node's counts go to: `_credit`). A character's count
    leaves out the unseen words; one only they hold (the line break) keeps its count but not in
    the total, since its score only ever meets words that weigh nothing; so does a longer piece
    of line breaks alone (only a run of them holds one: on en-10M's first 2 MB "\n\n" was 0.1 %
    of the total, which shifted every seed score off spm_train's). The dropped characters'
    stand-in (`stand_in`, ▅) is no piece of spm_train's seed: out of the total too. A required
    character the corpus lacks (count 0) is in no seed of spm_train's either: its log is left at
    0 here, never read, since it is unknown from the start (`EmEngine.seed`)."""
    scores = scores.astype(np.float64).copy()
    seen_only = np.ones(len(pieces), dtype=bool)
    if stand_in >= 0:
        seen_only[stand_in] = False
    if unseen.any():
        index = {p: i for i, p in enumerate(pieces) if len(p) == 1}
        lost: Counter[str] = Counter()
        for i in np.flatnonzero(unseen).tolist():
            for ch in words[i]:
                lost[ch] += weight[i]
        for ch, n in lost.items():
            k = index[ch]
            if scores[k] > n:
                scores[k] -= n
            else:
                seen_only[k] = False
        for k, p in enumerate(pieces):
            if len(p) > 1 and not p.strip("\r\n"):
                seen_only[k] = False
    chars = np.flatnonzero(seen_only & (np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)) == 1))
    first = int(chars[np.argmax(scores[chars])]) if len(chars) else 0
    logs = np.zeros(len(scores))
    np.log(scores, out=logs, where=scores > 0)
    return logs - math.log(float(scores[seen_only].sum())), first


class EmEngine:
    """What the learner calls for `--algorithm em`: the seed, a round, and the analysis that says
    what the next round removes."""

    def __init__(self, words: list[str], freqs: list[int], config, vocabulary: list[tuple[str, float]] | None = None,
                 workers: int | None = None, document_ends=None):
        """`vocabulary`, (piece, log probability) pairs of another model, replaces the seed:
        round 0 is then that model as it is (no EM), with any character of the corpus it lacks
        added at its lowest score - 10, as an unknown character would cost. `workers`: processes
        sweeping the corpus (default: every core, on a corpus large enough); the model is the
        same whatever their number."""
        self.config = config
        line_ends = None
        if vocabulary is None:
            words, freqs, line_ends = sentencepiece_words(words, freqs, document_ends)
        keep_large_frees()  # the sweeps' temporaries stay in the heap between passes (core/heap.py)
        self.weight = np.asarray(freqs, dtype=np.float64)
        self.replayed = vocabulary is not None
        self.unseen_tokens = 0.0  # tokens of the words spm_train never sees, spelled a character each
        self.first = 0  # the seed piece SentencePiece's unknown node is (`_credit`)
        self.stand_in = -1  # the seed index of ▅, the characters character_coverage drops: never a piece
        self.outside: np.ndarray | None = None  # seed pieces unknown from the start: ▅, absent required characters
        found: list | None = None
        if vocabulary is None:
            words, freqs, line_ends = covered_words(words, freqs, line_ends, ~unseen_words(words),
                                                    config.character_coverage, config.required_chars)
            self.weight = np.asarray(freqs, dtype=np.float64)
            unseen = unseen_words(words)
            found = []
            pieces, scores = sp_seed_pieces(words, np.asarray(freqs, dtype=np.int64), config.seed_size,
                                            config.max_piece_length, edges=found, line_ends=np.asarray(line_ends),
                                            split_digits=config.split_digits, required_chars=config.required_chars)
            self.stand_in = pieces.index(UNK_CHAR) if UNK_CHAR in pieces else -1
            self.outside = np.asarray(scores) <= 0  # required characters the corpus lacks
            if self.stand_in >= 0:
                self.outside[self.stand_in] = True
            log_scores, self.first = _seed_log_scores(pieces, scores, words, self.weight, unseen, self.stand_in)
            self.unseen_tokens = float(np.dot(self.weight[unseen], [len(words[i]) for i in np.flatnonzero(unseen)]))
            self.weight[unseen] = 0.0
        else:
            pieces = list(dict((p, None) for p, _ in vocabulary))
            given = dict(vocabulary)
            low = min(given.values(), default=0.0) - 10.0
            missing = sorted(set("".join(words)) - set(pieces))
            pieces += missing
            log_scores = np.array([given.get(p, low) for p in pieces], dtype=np.float64)
        self.max_len = max(map(len, pieces), default=1) if vocabulary is not None else config.max_piece_length
        self.seed_strings = pieces
        self.single = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)) == 1
        self.seed_scores = log_scores
        hashes, prefixes = hash_strings(pieces)
        self.hashes = hashes
        # the corpus lattices live in blocks only (`parallel_em`), built and swept on every core
        if found is None:
            whole = Lattices(words, hashes, prefixes, self.max_len)
            blocks = [(b, partial(whole.words, b)) for b in
                      partition(whole.lens, np.bincount(whole.word, minlength=whole.count))]
            edges = len(whole.pid)
        else:
            blocks, edges = found_blocks(words, found, hashes, prefixes, self.max_len)
        pruning = [PieceBlock(self, k, len(blocks)) for k in range(len(blocks))]
        self.sweeps = BlockSweeps(blocks, self.weight, len(pieces), edges, workers, pruning)
        self.words = words
        self._measured: tuple | None = None  # (state, what `_measure` found for it)
        self._best_of: tuple | None = None  # (state, its best paths' sweep)

    # -- the learner's calls -----------------------------------------------------------------
    def seed(self) -> RoundState:
        ids = np.arange(len(self.seed_strings))
        if self.replayed:  # the other model's scores as they are; expected counts for the table
            expected = self.sweeps.run("expected", ids, self.seed_scores).per_piece
            order = np.argsort(-self.seed_scores, kind="stable")
            return RoundState([self.seed_strings[i] for i in order.tolist()], expected[order].tolist(),
                              self.seed_scores[order].tolist(), ids[order])
        return self._em(ids, self.seed_scores.copy(), 0, self.outside)

    def round(self, state: RoundState, going: set[str], target: Target) -> RoundState:
        keep = np.fromiter((p not in going for p in state.pieces), dtype=bool, count=len(state.pieces))
        absent = _absent(state)
        if _present(state) <= target.desired:
            return self._finalize(state, keep, absent)
        # pruning: a character on no best path leaves SentencePiece's model too (it comes back at the end)
        used = self._measure(state)[0].per_piece
        absent = absent | (self.single[state.ids] & (used <= 0))
        if int((keep & ~absent).sum()) <= target.desired:
            # spm_train 0.2.3 runs no EM after the pruning that reaches 1.1 x the target (its log
            # shows none): its finalization cuts by the scores of the EM before
            scores = _unknown_scores(np.asarray(state.scores)[keep], absent[keep])
            return RoundState([p for p, k in zip(state.pieces, keep) if k], np.asarray(state.freqs)[keep].tolist(),
                              scores.tolist(), state.ids[keep], absent[keep])
        return self._em(state.ids[keep], np.asarray(state.scores)[keep], target.pieces, absent[keep])

    def analyze(self, state: RoundState, target: Target) -> RoundAnalysis:
        ids = state.ids
        swept, increases, order, removable = self._measure(state)
        n = len(ids)
        tokens = int(round(swept.tokens + self.unseen_tokens))
        loss = swept.loss
        chars = int(self.single[ids].sum())
        present = _present(state)  # SentencePiece's model size: the characters it dropped are not in it
        floor, desired = target.pieces, target.desired
        if present > desired:
            keep = max(desired, present - n + chars, int(present * self.config.shrinking_factor))
            # every piece that can go at once goes, as in SentencePiece, but never below the target
            count = min(max(present - keep, removable), n - max(floor, chars))
        else:  # SentencePiece's finalization: every character, then the best-scored pieces make the target
            order = _final_order(state, self.single)
            stand_in = int((ids == self.stand_in).any())  # the dropped characters' stand-in stays, no piece
            count = n - stand_in - max(floor, chars - stand_in)
        going = [state.pieces[i] for i in order[: max(0, count)]] if n > floor else []
        return RoundAnalysis(loss, dict(zip([state.pieces[i] for i in increases[0]], increases[1])), going, tokens,
                             dict(zip(state.pieces, state.freqs)))

    # -- internals -------------------------------------------------------------------------
    def totals(self, state: RoundState) -> tuple[float, int]:
        """The loss and the tokens of a state: its best paths alone, without the removal order
        that `analyze` adds (a run's last round needs no order)."""
        swept = self._best(state)
        return swept.loss, int(round(swept.tokens + self.unseen_tokens))

    def _best(self, state: RoundState):
        if self._best_of is None or self._best_of[0] is not state:
            self._best_of = (state, self.sweeps.run("best", state.ids, np.asarray(state.scores)))
        return self._best_of[1]

    def _measure(self, state: RoundState):
        """The best paths (with what the unknown's edges took credited as SentencePiece credits
        it, `_credit`), the removal order of a state and how many of its first pieces can go at
        once; none depends on the floor: a new target (the CLI sets it after the seed is
        analysed) asks only for a new cut."""
        if self._measured is not None and self._measured[0] is state:
            return self._measured[1]
        ids, scores, absent = state.ids, np.asarray(state.scores), _absent(state)
        swept = self._best(state)
        swept = replace(swept, per_piece=self._credit(ids, swept.per_piece, absent))
        increases, order, removable = self._prune_order(ids, scores, swept.per_piece, absent)
        self._measured = (state, (swept, increases, order, removable))
        return self._measured[1]

    def _credit(self, ids: np.ndarray, counts: np.ndarray, absent: np.ndarray) -> np.ndarray:
        """Counts as SentencePiece's trainer makes them: its unknown node has id 0, which in its
        trainer's model is the first piece, the most frequent character it sees (`self.first`,
        which no round removes; not our seed's piece 0 where that is a line break, whose words
        weigh nothing), so what the dropped characters' edges took goes to that piece."""
        if not absent.any():
            return counts
        counts = counts.copy()
        first = np.flatnonzero(ids == self.first)
        if len(first):
            counts[first[0]] += counts[absent].sum()
        counts[absent] = 0.0
        return counts

    def _em(self, ids: np.ndarray, scores: np.ndarray, floor: int, absent: np.ndarray | None = None) -> RoundState:
        """`sub_iterations` EM iterations. A character expected under 0.5 times leaves
        SentencePiece's model as any piece does (its M-step has no exception); ours keeps it, for
        the text it spells, but as SentencePiece's lattice then has it: an unknown character,
        scored min_score - 10, out of the total and the model's size, until the final round puts
        it back (`_finalize`)."""
        absent = np.zeros(len(ids), bool) if absent is None else absent.copy()
        expected = np.zeros(len(ids))
        scores = _unknown_scores(scores, absent)
        for _ in range(self.config.sub_iterations):
            expected = self._credit(ids, self.sweeps.run("expected", ids, scores).per_piece, absent)
            # M-step: rare pieces go (never below the floor, never a single character)
            single = self.single[ids]
            rare = np.flatnonzero((expected < EXPECTED_MIN) & ~single)
            room = max(0, len(ids) - max(floor, int(single.sum())))
            if len(rare) and room:
                drop = rare[np.argsort(expected[rare], kind="stable")[:room]]
                keep = np.ones(len(ids), bool)
                keep[drop] = False
                ids, expected, absent, single = ids[keep], expected[keep], absent[keep], single[keep]
            absent |= single & (expected < EXPECTED_MIN)
            if absent.all():  # nothing left to score (a corpus of unseen words only)
                absent[:] = False
            present = ~absent
            scores = np.zeros(len(ids))
            kept = np.maximum(expected[present], EXPECTED_MIN)  # (only where absent.all() was undone)
            scores[present] = digamma(kept) - digamma(np.array([kept.sum()]))[0]
            scores = _unknown_scores(scores, absent)
        order = np.argsort(-scores, kind="stable")
        ids, scores, expected, absent = ids[order], scores[order], expected[order], absent[order]
        return RoundState([self.seed_strings[i] for i in ids.tolist()], expected.tolist(), scores.tolist(), ids,
                          absent)

    def _finalize(self, state: RoundState, keep: np.ndarray, absent: np.ndarray) -> RoundState:
        """SentencePiece's FinalizeSentencePieces: the kept pieces with the scores they have (no
        EM after the cut), each dropped character back at the model's lowest score plus
        0.0001 x its rank among them (most frequent first, seed order), then sorted by score,
        ties by UTF-8 bytes. The dropped characters' stand-in stays last, an unknown as before
        (min score - 10): the model leaves it out (they are <unk>), the corpus' lattices need it."""
        ids, scores = state.ids, np.asarray(state.scores, dtype=np.float64).copy()
        freqs = np.asarray(state.freqs, dtype=np.float64)
        real = ids != self.stand_in  # the stand-in does not come back: spm_train's model lacks them
        absent = absent & real
        if absent.any():
            low = scores[~absent & real].min() if (~absent & real).any() else 0.0
            back = np.flatnonzero(absent)
            back = back[np.argsort(ids[back], kind="stable")]
            scores[back] = low + FINAL_PENALTY_STEP * np.arange(len(back))
        kept = np.flatnonzero(keep & real)
        order = kept[_score_order(scores[kept], [state.pieces[i] for i in kept.tolist()])]
        stand_in = np.flatnonzero(keep & ~real)
        if not len(stand_in):
            return RoundState([state.pieces[i] for i in order.tolist()], freqs[order].tolist(),
                              scores[order].tolist(), ids[order])
        scores[stand_in] = scores[order].min() - UNKNOWN_PENALTY
        order = np.concatenate([order, stand_in])
        return RoundState([state.pieces[i] for i in order.tolist()], freqs[order].tolist(), scores[order].tolist(),
                          ids[order], ~real[order])

    def _prune_order(self, ids: np.ndarray, scores: np.ndarray, used: np.ndarray,
                     absent: np.ndarray) -> tuple[tuple[list[int], list[float]], np.ndarray, int]:
        """Removal order over positions in `ids`: the pieces that can go at once (no best path
        uses them, or their own best segmentation is not themselves), least likely first; then
        the others by estimated loss, smallest first; single characters never. Also the
        estimated loss of every longer piece (0 for those that can go at once), as (positions,
        losses) lists."""
        n = len(ids)
        single = self.single[ids]
        losses = np.zeros(n)
        removable = ~single & (used <= 0)
        multi = np.flatnonzero(~single & (used > 0))
        candidates = np.zeros(0, np.int64)
        if len(multi):
            # every longer piece's own best segmentations, on every core (`PieceBlock`), in
            # seed indices; kept for the pieces in multi, -1 marks the others
            parts = self.sweeps.pieces(ids, scores)
            row = np.full(len(self.seed_strings), -1, dtype=np.int64)
            row[ids[multi]] = np.arange(len(multi))
            local = np.full(len(self.seed_strings), -1, dtype=np.int64)
            local[ids] = np.arange(n)
            whole = np.zeros(len(multi), bool)
            itself = row[np.concatenate([p[0] for p in parts])]
            whole[itself[itself >= 0]] = True
            removable[multi[~whole]] = True
            alt_string = row[np.concatenate([p[1] for p in parts])]
            kept = alt_string >= 0  # a string's path keeps its order: the sums below are the same
            alt_word, alt_piece = alt_string[kept], local[np.concatenate([p[2] for p in parts])[kept]]
            first_piece = np.flatnonzero(ids == self.first)
            if absent.any() and len(first_piece):  # a dropped character is the unknown: self.first's (`_credit`)
                alt_piece = np.where(absent[alt_piece], first_piece[0], alt_piece)
            n_alt = np.bincount(alt_word, minlength=len(multi))
            total = float(used.sum())
            f_i = used[multi]
            with np.errstate(divide="ignore", invalid="ignore"):
                logsum_alt = np.log(total + f_i * (n_alt - 1))
                part = np.log(used[alt_piece] + f_i[alt_word]) - logsum_alt[alt_word]
                logprob_alt = np.bincount(alt_word, weights=part, minlength=len(multi))
                loss = f_i / self.weight.sum() * (np.log(f_i) - math.log(total) - logprob_alt)
            ok = whole & (n_alt > 0)
            losses[multi[ok]] = loss[ok]
            candidates = multi[ok]
        first = np.flatnonzero(removable)
        first = first[np.argsort(scores[first], kind="stable")]
        rest = candidates[np.argsort(losses[candidates], kind="stable")]
        longer = np.flatnonzero(~single)
        return (longer.tolist(), losses[longer].tolist()), np.concatenate([first, rest]), len(first)
