"""sentencepiece 0.2.3's Unigram lattice in its own float32 arithmetic (unigram_model.cc,
unigram_model_trainer.cc), over flat edge lists. Plain Python that numba also compiles
(spmkernel.py); the float32 steps are spelled out, so both give the bits SentencePiece gives.

A string's edges are its pieces' occurrences, by start, then length (the order its trie gives
them, so `Lattice::Insert`'s); a position no one-character piece starts at gets an unknown edge
after them, scored the lowest piece score - 10, which counts for the model's piece 0 (its
`unk_id_`). Pieces are the model's, by its own order (`cur`: seed index -> position, -1 gone).
Strings are done by virtual thread: thread t takes strings t, t + threads, ..., summing into a
float32 array of its own, and the threads' arrays are added up in thread order, as spm_train's
num_threads are (one thread's array at a time here, so any number of them costs two arrays).
"""

import math

import numpy as np

F32 = np.float32
_LOG_EPSILON = np.float32(50.0)  # kMinusLogEpsilon


def log_sum_exp(x, y):
    """LogSumExp(x, y, false): float32 in, float32 out, log1p(exp()) in double."""
    vmin = min(x, y)
    vmax = max(x, y)
    if vmax > np.float32(vmin + _LOG_EPSILON):
        return vmax
    return np.float32(np.float64(vmax) + math.log1p(math.exp(np.float64(np.float32(vmin - vmax)))))


def string_edges(k, e_off, e_start, e_len, e_seed, cur, scores, unk, length, st, ln, sc, pid):
    """String k's edges in `Insert` order into st/ln/sc/pid; returns how many."""
    n = 0
    j = e_off[k]
    stop = e_off[k + 1]
    for pos in range(length):
        single = False
        while j < stop and e_start[j] == pos:
            c = cur[e_seed[j]]
            if c >= 0:
                st[n] = pos
                ln[n] = e_len[j]
                sc[n] = scores[c]
                pid[n] = c
                n += 1
                if e_len[j] == 1:
                    single = True
            j += 1
        if not single:
            st[n] = pos
            ln[n] = 1
            sc[n] = unk
            pid[n] = 0
            n += 1
    return n


def _longest(lengths):
    longest = 1
    for x in lengths:
        if x > longest:
            longest = x
    return longest


def e_step(lengths, weights, e_off, e_start, e_len, e_seed, cur, scores, unk, threads, size):
    """`RunEStep`: each piece's expected count (float32) and the objective, -sum of weight x
    log Z over the total weight. The virtual threads one after the other (spmtrain.py runs them
    on threads of its own where compiled)."""
    expected = np.zeros(size, np.float32)
    mine = np.zeros(size, np.float32)
    objective = np.float32(0.0)
    total = 0
    for w in weights:
        total += w
    for t in range(min(threads, len(lengths))):
        mine[:] = 0.0
        obj = e_thread(t, threads, lengths, weights, e_off, e_start, e_len, e_seed, cur, scores, unk, total, mine)
        if t == 0:
            expected[:] = mine
            objective = obj
        else:
            objective = np.float32(objective + obj)
            for i in range(size):
                expected[i] = np.float32(expected[i] + mine[i])
    return expected, objective


def e_thread(t, threads, lengths, weights, e_off, e_start, e_len, e_seed, cur, scores, unk, total, mine):
    """Virtual thread t's share of the E-step into `mine`; its objective."""
    cap = (_longest(lengths) + 1) * 18
    st = np.empty(cap, np.int64)
    ln = np.empty(cap, np.int64)
    sc = np.empty(cap, np.float32)
    pid = np.empty(cap, np.int64)
    alpha = np.empty(cap, np.float32)
    beta = np.empty(cap, np.float32)
    seen = np.empty(cap, np.bool_)
    obj = np.float32(0.0)
    for k in range(t, len(lengths), threads):
        length = lengths[k]
        n = string_edges(k, e_off, e_start, e_len, e_seed, cur, scores, unk, length, st, ln, sc, pid)
        # forward: a node's alpha is its start's, the log-sum over the nodes ending there, in
        # insertion order (the earliest start first); the first one found is taken as it is
        for p in range(length + 1):
            seen[p] = False
        alpha[0] = 0.0
        for j in range(n):
            v = np.float32(sc[j] + alpha[st[j]])
            e = st[j] + ln[j]
            if seen[e]:
                alpha[e] = log_sum_exp(alpha[e], v)
            else:
                alpha[e] = v
                seen[e] = True
        z = alpha[length]
        # backward: a node's beta is its end's, over the nodes starting there, in insertion order
        beta[length] = 0.0
        j = n - 1
        while j >= 0:
            s = st[j]
            lo = j
            while lo > 0 and st[lo - 1] == s:
                lo -= 1
            for q in range(lo, j + 1):
                v = np.float32(sc[q] + beta[st[q] + ln[q]])
                beta[s] = log_sum_exp(beta[s], v) if q > lo else v
            j = lo - 1
        f = np.float32(weights[k])
        for q in range(n):
            a = np.float32(np.float32(np.float32(alpha[st[q]] + sc[q]) + beta[st[q] + ln[q]]) - z)
            i = pid[q]
            mine[i] = np.float32(np.float64(mine[i]) + np.float64(f) * math.exp(np.float64(a)))
        obj = np.float32(obj - np.float32(np.float32(f * z) / np.float32(total)))
    return obj


def best_paths(lengths, weights, e_off, e_start, e_len, e_seed, cur, scores, unk, threads, size):
    """`Lattice::Viterbi` over every string: each piece's count on the best paths (float32, by
    thread, as `PruneSentencePieces` counts), the loss (-sum of weight x best score, in double)
    and the tokens (sum of weight x path length)."""
    counts = np.zeros(size, np.float32)
    mine = np.zeros(size, np.float32)
    loss = 0.0
    tokens = 0
    for t in range(min(threads, len(lengths))):
        mine[:] = 0.0
        part, made = best_thread(t, threads, lengths, weights, e_off, e_start, e_len, e_seed, cur, scores, unk, mine)
        loss += part
        tokens += made
        for i in range(size):
            counts[i] = np.float32(counts[i] + mine[i])
    return counts, loss, tokens


def best_thread(t, threads, lengths, weights, e_off, e_start, e_len, e_seed, cur, scores, unk, mine):
    """Virtual thread t's share of `best_paths` into `mine`; its loss and tokens."""
    cap = (_longest(lengths) + 1) * 18
    st, ln, sc, pid, back, prev, by_end, end_off = _viterbi_arrays(cap)
    loss = 0.0
    tokens = 0
    for k in range(t, len(lengths), threads):
        length = lengths[k]
        n = string_edges(k, e_off, e_start, e_len, e_seed, cur, scores, unk, length, st, ln, sc, pid)
        _by_end(n, st, ln, length, by_end, end_off)
        node, score = _viterbi(n, st, sc, length, by_end, end_off, back, prev)
        f = np.float32(weights[k])
        while node >= 0:
            i = pid[node]
            mine[i] = np.float32(mine[i] + f)
            tokens += weights[k]
            node = prev[node]
        loss -= np.float64(weights[k]) * np.float64(score)
    return loss, tokens


def _viterbi_arrays(cap):
    """A string's nodes (start, length, score, piece) and what Viterbi keeps of them (best
    score, previous node, the nodes by end and each end's offset), room for `cap` nodes."""
    return (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.float32), np.empty(cap, np.int64),
            np.empty(cap, np.float32), np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap, np.int64))


def _by_end(n, st, ln, length, by_end, end_off):
    """The nodes by their end, each end's in insertion order: a counting sort."""
    for p in range(length + 2):
        end_off[p] = 0
    for j in range(n):
        end_off[st[j] + ln[j] + 1] += 1
    for p in range(1, length + 2):
        end_off[p] += end_off[p - 1]
    for j in range(n):
        e = st[j] + ln[j]
        by_end[end_off[e]] = j
        end_off[e] += 1
    for p in range(length + 1, 0, -1):
        end_off[p] = end_off[p - 1]
    end_off[0] = 0


def _viterbi(n, st, sc, length, by_end, end_off, back, prev):
    """Each node's best score from the start (BOS is -1, its score 0): the first of the nodes
    ending where it starts that reaches the strictly best sum wins. Returns the last node of
    the best path and its score (what EOS reaches)."""
    for j in range(n + 1):
        pos = length if j == n else st[j]
        own = np.float32(0.0) if j == n else sc[j]
        best = -2
        best_score = np.float32(0.0)
        if pos == 0:
            best = -1
            best_score = np.float32(np.float32(0.0) + own)
        else:
            for q in range(end_off[pos], end_off[pos + 1]):
                left = by_end[q]
                s = np.float32(back[left] + own)
                if best == -2 or s > best_score:
                    best = left
                    best_score = s
        if j == n:
            return best, best_score
        back[j] = best_score
        prev[j] = best
    return -1, np.float32(0.0)



def alternatives(order, lengths, p_off, p_start, p_len, p_seed, cur, scores, unk):
    """`PruneSentencePieces`'s first pass: `Lattice::NBest(2)` over each piece's own string
    (`order`: the model's pieces' seed indices). Returns, by position, 0 where the piece can go
    (its best path is not itself) and 1 where it stays, and the second-best path of each piece
    whose best path is itself (positions, with offsets): what its count falls to without it."""
    size = len(order)
    keep = np.ones(size, np.int8)
    alt_off = np.zeros(size + 1, np.int64)
    alt_ids = np.empty(size * (_longest(lengths) + 1), np.int64)
    cap = (_longest(lengths) + 1) * 18
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
    cap = (_longest(lengths) + 1) * 18
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


def walk(codes, lens, offs, max_len, base, prefix, p_hash):
    """Every occurrence of a piece in the strings (spmtrain.edges: `codes` their code points + 1
    end to end; `prefix` the hashes of every piece's prefixes, `p_hash` each piece's): by string,
    start and length, with each string's offsets."""
    keys, values, bits = _table(prefix, p_hash)
    cap = len(codes) + 16  # about one edge a character in text; more grows the arrays
    start = np.empty(cap, np.int32)
    size = np.empty(cap, np.int32)
    which = np.empty(cap, np.int32)
    off = np.zeros(len(lens) + 1, np.int64)
    n = 0
    for s in range(len(lens)):
        for p in range(lens[s]):
            h = np.uint64(0)
            for length in range(1, min(max_len, lens[s] - p) + 1):
                h = h * base + codes[offs[s] + p + length - 1]
                k = values[_slot(keys, values, bits, h)]
                if k == -1:
                    break
                if k >= 0:
                    if n == cap:
                        cap *= 2
                        start = _grown(start, cap)
                        size = _grown(size, cap)
                        which = _grown(which, cap)
                    start[n] = p
                    size[n] = length
                    which[n] = k
                    n += 1
        off[s + 1] = n
    return off, start[:n].copy(), size[:n].copy(), which[:n].copy()


def _table(prefix, p_hash):
    """An open-addressing table: each prefix's hash -> -2, each piece's -> its index; -1 empty."""
    bits = 4
    while (1 << bits) < 2 * len(prefix) + 2:
        bits += 1
    keys = np.zeros(1 << bits, np.uint64)
    values = np.full(1 << bits, -1, np.int64)
    for h in prefix:
        i = _slot(keys, values, bits, h)
        keys[i] = h
        values[i] = -2
    for k in range(len(p_hash)):
        values[_slot(keys, values, bits, p_hash[k])] = k
    return keys, values, bits


def _slot(keys, values, bits, h):
    """Where `h` is, or the empty slot it would take (linear probing from a Fibonacci hash)."""
    mixed = (h ^ (h >> np.uint64(31))) * np.uint64(0x9E3779B97F4A7C15)
    i = np.int64(mixed >> np.uint64(64 - bits))
    mask = (1 << bits) - 1
    while values[i] != -1 and keys[i] != h:
        i = (i + 1) & mask
    return i


def _grown(values, cap):
    out = np.empty(cap, values.dtype)
    out[: len(values)] = values
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


_HYPS = 1 << 16  # NBest(2) over a piece of at most 16 characters makes far fewer hypotheses


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
    hole = size
    parent = (hole - 1) // 2
    while hole > 0 and key[heap[parent]] < key[item]:
        heap[hole] = heap[parent]
        hole = parent
        parent = (hole - 1) // 2
    heap[hole] = item
    return size + 1


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
        parent = (hole - 1) // 2
        while hole > 0 and key[heap[parent]] < key[value]:
            heap[hole] = heap[parent]
            hole = parent
            parent = (hole - 1) // 2
        heap[hole] = value
    return size - 1
