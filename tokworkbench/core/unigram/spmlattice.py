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


def _room(lengths, e_off):
    """Room for any one string's lattice: its edges, an unknown edge a position, and the two
    positions past its end that `_by_end` counts in (pieces may be up to 512 characters long,
    so a fixed share of the string's length will not do)."""
    room = 1
    for k in range(len(lengths)):
        n = e_off[k + 1] - e_off[k] + lengths[k]
        if n > room:
            room = n
    return room + 2


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
    cap = _room(lengths, e_off)
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
    cap = _room(lengths, e_off)
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
