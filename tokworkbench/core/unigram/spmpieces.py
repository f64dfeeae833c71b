"""sentencepiece 0.2.3's checks of each piece over its own string (unigram_model_trainer.cc's
`PruneSentencePieces` first and last passes, `PruneUnreachableSentencePieces`), float32 as
there; plain Python that numba compiles as it is (spmkernel.py), as spmlattice.py."""

import math

import numpy as np

from tokworkbench.core.unigram.spmlattice import _by_end, _longest, _room, _viterbi, _viterbi_arrays, string_edges


def alternatives(order, lengths, p_off, p_start, p_len, p_seed, cur, scores, unk):
    """`PruneSentencePieces`'s first pass: `Lattice::NBest(2)` over each piece's own string
    (`order`: the model's pieces' seed indices). Returns, by position, 0 where the piece can go
    (its best path is not itself) and 1 where it stays, and the second-best path of each piece
    whose best path is itself (positions, with offsets): what its count falls to without it."""
    size = len(order)
    keep = np.ones(size, np.int8)
    alt_off = np.zeros(size + 1, np.int64)
    alt_ids = np.empty(size * (_longest(lengths) + 1), np.int64)
    cap = _room(lengths, p_off)
    st, ln, sc, pid, back, prev, by_end, end_off = _viterbi_arrays(cap)
    path = np.empty(cap, np.int64)
    hyps = _HYPS
    h_node = np.empty(hyps, np.int64)
    h_next = np.empty(hyps, np.int64)
    h_fx = np.empty(hyps, np.float32)
    h_gx = np.empty(hyps, np.float32)
    heap = np.empty(hyps, np.int64)
    used = 0
    for i in range(size):
        k = order[i]
        length = lengths[k]
        n = string_edges(k, p_off, p_start, p_len, p_seed, cur, scores, unk, length, st, ln, sc, pid)
        _by_end(n, st, ln, length, by_end, end_off)
        _, best = _viterbi(n, st, sc, length, by_end, end_off, back, prev)
        first, second = _two_best(n, st, sc, length, by_end, end_off, back, best, pid, h_node, h_next, h_fx,
                                  h_gx, heap, path)
        if second >= 0:
            if first >= 2:
                keep[i] = 0
            elif first == 1:
                for q in range(second):
                    alt_ids[used] = path[q]
                    used += 1
        alt_off[i + 1] = used
    return keep, alt_off, alt_ids[:used].copy()


def unreachable(order, lengths, p_off, p_start, p_len, p_seed, cur, scores, unk):
    """`PruneUnreachableSentencePieces`: 1 for each piece whose string's best path without the
    piece itself scores strictly higher than the piece (Viterbi can never choose it)."""
    size = len(order)
    out = np.zeros(size, np.int8)
    cap = _room(lengths, p_off)
    st, ln, sc, pid, back, prev, by_end, end_off = _viterbi_arrays(cap)
    for i in range(size):
        k = order[i]
        length = lengths[k]
        n = string_edges(k, p_off, p_start, p_len, p_seed, cur, scores, unk, length, st, ln, sc, pid)
        own = -1
        for j in range(n):
            if st[j] == 0 and ln[j] == length and pid[j] == i:
                own = j
                break
        if own < 0:
            continue
        original = sc[own]
        sc[own] = -np.inf
        _by_end(n, st, ln, length, by_end, end_off)
        last, score = _viterbi(n, st, sc, length, by_end, end_off, back, prev)
        if last >= 0 and score > original:
            out[i] = 1
    return out


def losses(counts, keep, alt_off, alt_ids, total):
    """`PruneSentencePieces`' last pass, by position: 0 for a piece that goes at once (no best
    path uses it, or its best path is not itself), 1 for one that stays (no second path), 2 for
    one weighed by the likelihood lost were its count given to its second path (the loss, float32
    as there, in the second array)."""
    size = len(counts)
    kind = np.zeros(size, np.int8)
    loss = np.zeros(size, np.float32)
    logsum = np.float32(math.log(np.float64(total)))
    for i in range(size):
        f = counts[i]
        if f == 0 or keep[i] == 0:
            continue
        n = alt_off[i + 1] - alt_off[i]
        if n == 0:
            kind[i] = 1
            continue
        kind[i] = 2
        logprob = np.float32(math.log(np.float64(f)) - np.float64(logsum))
        logsum_alt = np.float32(math.log(np.float64(np.float32(total + np.float32(f * np.float32(n - 1))))))
        logprob_alt = np.float32(0.0)
        for q in range(alt_off[i], alt_off[i + 1]):
            a = alt_ids[q]
            logprob_alt = np.float32(np.float64(logprob_alt)
                                     + (math.log(np.float64(np.float32(counts[a] + f))) - np.float64(logsum_alt)))
        loss[i] = np.float32(np.float32(f / total) * np.float32(logprob - logprob_alt))
    return kind, loss


_HYPS = 1 << 16  # room for NBest(2)'s hypotheses over one piece (200 of one letter fit); more: an error


def _two_best(n, st, sc, length, by_end, end_off, back, best, pid, h_node, h_next, h_fx, h_gx, heap, path):
    """`Lattice::NBest(2, false)`: A* from EOS with std::priority_queue's exact order among
    equal priorities (`_push`, `_pop`). Returns the length of the best path and of the second
    (-1: none), the second's pieces in `path`."""
    bos = n
    eos = n + 1
    h_node[0] = eos
    h_next[0] = -1
    h_gx[0] = 0.0
    h_fx[0] = best
    made = 1
    size = _push(heap, 0, 0, h_fx)
    first = -1
    while size > 0:
        top = heap[0]
        size = _pop(heap, size, h_fx)
        node = h_node[top]
        if node == bos:
            m = 0
            h = h_next[top]
            while h >= 0 and h_next[h] >= 0:
                path[m] = pid[h_node[h]]
                m += 1
                h = h_next[h]
            if first >= 0:
                return first, m
            first = m
            continue
        pos = length if node == eos else st[node]
        lo = end_off[pos]
        hi = end_off[pos + 1]
        if pos == 0:
            lo, hi = 0, 1  # BOS alone ends at 0
        for q in range(lo, hi):
            left = bos if pos == 0 else by_end[q]
            if made == len(h_node):
                raise ValueError("NBest(2) over one piece made more hypotheses than it can hold")
            h_node[made] = left
            if left == bos:
                h_gx[made] = h_gx[top]
                h_fx[made] = h_gx[top]
            else:
                h_gx[made] = np.float32(sc[left] + h_gx[top])
                h_fx[made] = np.float32(back[left] + h_gx[top])
            h_next[made] = top
            size = _push(heap, size, made, h_fx)
            made += 1
    return first, -1


def _push(heap, size, item, key):
    """std::push_heap on a max-heap by `key`."""
    _sift_up(heap, size, item, key)
    return size + 1


def _sift_up(heap, hole, item, key):
    """libstdc++'s __push_heap: `item` rises from `hole` past every parent keyed below it."""
    parent = (hole - 1) // 2
    while hole > 0 and key[heap[parent]] < key[item]:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = item


def _pop(heap, size, key):
    """std::pop_heap (libstdc++'s __adjust_heap, then __push_heap), then pop_back."""
    if size > 1:
        last = size - 1
        value = heap[last]
        heap[last] = heap[0]
        hole = 0
        child = 0
        while child < (last - 1) // 2:
            child = 2 * (child + 1)
            if key[heap[child]] < key[heap[child - 1]]:
                child -= 1
            heap[hole] = heap[child]
            hole = child
        if (last & 1) == 0 and child == (last - 2) // 2:
            child = 2 * (child + 1)
            heap[hole] = heap[child - 1]
            hole = child - 1
        _sift_up(heap, hole, value, key)
    return size - 1
