"""The BPE merge loop compiled (numba): pair counts, the pair -> positions index and the lazy
heap as flat arrays, many merges per call.

The interpreter was the floor of the merge loop (issue 26): about 0.4 ms of dict and list
bookkeeping per merge, where the cells a merge rewrites take microseconds. Here the same
algorithm as `trainer.py` and `flatchunks.py` (read the occurrences, write the cells, count
what was lost and gained, a heap with lazy invalidation above a floor) runs over arrays:

- the pair table is open addressing with linear probing, a row a pair (`table_type`): key
  (left << 32 | right), count, and the head, tail and length of its position list; the first
  position (the `first` tie-break) is an array beside it. A pair whose count falls to 0 keeps
  its slot (dead) until the table is rehashed.
- positions live in a pool of linked nodes (position, next node), freed nodes on a free list;
  a list may hold positions where its pair no longer stands, never miss one where it does.
- the heap holds (count, tie key, pair) entries, smallest first by (-count, key, pair).

Scalars live in `meta` (indices below), which the kernels update in place. A kernel never
grows an array: when a step could overflow one, it stops before changing anything and writes
the sizes it needs into `meta`; the caller (`kernelpairs.py`) grows them and calls again.
"""

import numba
import numpy as np

# meta indices
HSIZE, LIVE, USED, POOL_TOP, POOL_FREE, FLOOR, REBUILT, APP_TOP = 0, 1, 2, 3, 4, 5, 6, 7
USE_FIRST, SIGN, SIZE, KEEP, VOCAB, MERGES = 8, 9, 10, 11, 12, 13
NEED_POOL, NEED_TABLE, NEED_HEAP, NEED_APP = 14, 15, 16, 17
REBUILDS = 18  # how many times the heap was rebuilt (the tests bound it)
META = 19

OK, NEED, NONE = 0, -2, -1
_MULT = np.uint64(0x9E3779B97F4A7C15)
MAX_LOAD = 0.6  # a table fuller than this is rehashed


def table_type(link: np.dtype) -> np.dtype:
    """A pair table's row: one pair's key, count and position list together, so that a probe
    and what follows it read one cache line, not one per array (a merge's bound is such reads).
    32 bytes with 32-bit links. The leftmost position (the `first` rule) is an array of its own."""
    return np.dtype([("key", np.int64), ("count", np.int64), ("head", link), ("tail", link),
                     ("length", np.int32), ("spare", np.int32)], align=True)


def empty_table(slots: int, link: np.dtype) -> np.ndarray:
    table = np.empty(slots, dtype=table_type(link))
    _clear(table)
    return table


@numba.njit(cache=True, nogil=True, inline="always")
def _home(key, mask):
    x = np.uint64(key) * _MULT
    return np.int64((x ^ (x >> np.uint64(29))) & np.uint64(mask))


@numba.njit(cache=True, nogil=True)
def _clear(T):
    """No key (-1), no count and no list (-1) in any slot."""
    for s in range(len(T)):
        T[s].key = -1
        T[s].count = 0
        T[s].head = -1
        T[s].tail = -1
        T[s].length = 0
        T[s].spare = 0


@numba.njit(cache=True, nogil=True)
def _slot(T, key):
    """The slot holding `key`, or the empty slot where it would go."""
    mask = len(T) - 1
    h = _home(key, mask)
    while True:
        k = T[h].key
        if k == key or k == -1:
            return h
        h = (h + 1) & mask


@numba.njit(cache=True, nogil=True)
def find(T, key):
    s = _slot(T, key)
    return s if T[s].key == key else -1


@numba.njit(cache=True, nogil=True)
def _take(T, meta, key):
    s = _slot(T, key)
    if T[s].key == -1:
        T[s].key = key
        meta[USED] += 1
    return s


# -- position lists -------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _append(ppos, plink, T, meta, s, pos):
    node = meta[POOL_FREE]
    if node >= 0:
        meta[POOL_FREE] = plink[node]
    else:
        node = meta[POOL_TOP]
        meta[POOL_TOP] = node + 1
    ppos[node] = pos
    plink[node] = -1
    if T[s].head < 0:
        T[s].head = node
    else:
        plink[T[s].tail] = node
    T[s].tail = node
    T[s].length += 1


@numba.njit(cache=True, nogil=True)
def _free_list(plink, T, meta, s):
    if T[s].head >= 0:
        plink[T[s].tail] = meta[POOL_FREE]
        meta[POOL_FREE] = T[s].head
    T[s].head = -1
    T[s].tail = -1
    T[s].length = 0


@numba.njit(cache=True, nogil=True)
def _positions(ppos, plink, T, s):
    out = np.empty(T[s].length, dtype=np.int64)
    node = T[s].head
    i = 0
    while node >= 0:
        out[i] = ppos[node]
        node = plink[node]
        i += 1
    return out


@numba.njit(cache=True, nogil=True)
def _leftmost(ids, nxt, ppos, plink, T, meta, s):
    """The smallest position where the pair of slot s stands; the list keeps only those."""
    a, b = T[s].key >> 32, T[s].key & 0xFFFFFFFF
    node = T[s].head
    best = -1
    head, tail, n = -1, -1, 0
    while node >= 0:
        following = plink[node]
        p = ppos[node]
        if ids[p] == a and ids[nxt[p]] == b:
            if best < 0 or p < best:
                best = p
            if head < 0:
                head = node
            else:
                plink[tail] = node
            tail = node
            n += 1
        else:
            plink[node] = meta[POOL_FREE]
            meta[POOL_FREE] = node
        node = following
    if tail >= 0:
        plink[tail] = -1
    T[s].head, T[s].tail, T[s].length = head, tail, n
    return best


# -- the heap ---------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True, inline="always")
def _before(hc, hk, hp, i, j):
    if hc[i] != hc[j]:
        return hc[i] > hc[j]
    if hk[i] != hk[j]:
        return hk[i] < hk[j]
    return hp[i] < hp[j]


@numba.njit(cache=True, nogil=True)
def _swap(hc, hk, hp, i, j):
    hc[i], hc[j] = hc[j], hc[i]
    hk[i], hk[j] = hk[j], hk[i]
    hp[i], hp[j] = hp[j], hp[i]


@numba.njit(cache=True, nogil=True)
def _sift_down(hc, hk, hp, n, i):
    while True:
        child = 2 * i + 1
        if child >= n:
            return
        if child + 1 < n and _before(hc, hk, hp, child + 1, child):
            child += 1
        if not _before(hc, hk, hp, child, i):
            return
        _swap(hc, hk, hp, i, child)
        i = child


@numba.njit(cache=True, nogil=True)
def _push(hc, hk, hp, meta, c, k, p):
    i = meta[HSIZE]
    meta[HSIZE] = i + 1
    hc[i], hk[i], hp[i] = c, k, p
    while i > 0:
        parent = (i - 1) // 2
        if not _before(hc, hk, hp, i, parent):
            return
        _swap(hc, hk, hp, i, parent)
        i = parent


@numba.njit(cache=True, nogil=True)
def _pop(hc, hk, hp, meta):
    n = meta[HSIZE] - 1
    meta[HSIZE] = n
    if n > 0:
        hc[0], hk[0], hp[0] = hc[n], hk[n], hp[n]
        _sift_down(hc, hk, hp, n, 0)


@numba.njit(cache=True, nogil=True, inline="always")
def _key(order, tfirst, meta, s, pair):
    if meta[USE_FIRST]:
        return tfirst[s]
    return (order[pair >> 32] << 32) + order[pair & 0xFFFFFFFF]


@numba.njit(cache=True, nogil=True)
def rebuild(T, tfirst, order, hc, hk, hp, meta, everything):
    """Rank the pairs counted at least the KEEP-th highest count (every pair if `everything`).
    False, and nothing changed, when the heap cannot hold them."""
    live = meta[LIVE]
    floor = 1
    if live > meta[KEEP] and not everything:
        values = np.empty(live, dtype=np.int64)
        j = 0
        for s in range(len(T)):
            if T[s].count > 0:
                values[j] = T[s].count
                j += 1
        floor = np.partition(values, live - meta[KEEP])[live - meta[KEEP]]
    n = 0
    for s in range(len(T)):
        if T[s].count >= floor:
            n += 1
    if n > len(hc):
        meta[NEED_HEAP] = n
        return False
    n = 0
    for s in range(len(T)):
        c = T[s].count
        if c >= floor:
            hc[n], hk[n], hp[n] = c, _key(order, tfirst, meta, s, T[s].key), T[s].key
            n += 1
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(hc, hk, hp, n, i)
    meta[HSIZE] = n
    meta[REBUILT] = n
    meta[REBUILDS] += 1
    meta[FLOOR] = 0 if floor == 1 else floor
    return True


@numba.njit(cache=True, nogil=True)
def best(T, tfirst, order, hc, hk, hp, meta, lower):
    """The best pair's key; NONE when no pair is left (`lower=False`: also when only pairs below
    the floor are left); NEED when the heap must grow first."""
    while True:
        while meta[HSIZE] > 0:
            pair = hp[0]
            s = find(T, pair)
            n = T[s].count if s >= 0 else 0
            if n == 0:
                _pop(hc, hk, hp, meta)
                continue
            k = _key(order, tfirst, meta, s, pair)
            if n == hc[0] and k == hk[0]:
                return pair
            if n < meta[FLOOR]:
                _pop(hc, hk, hp, meta)
            else:
                hc[0], hk[0] = n, k
                _sift_down(hc, hk, hp, meta[HSIZE], 0)
        if meta[FLOOR] == 0 or meta[LIVE] == 0 or not lower:
            return NONE
        if not rebuild(T, tfirst, order, hc, hk, hp, meta, False):
            return NEED


@numba.njit(cache=True, nogil=True)
def _trim(T, tfirst, order, hc, hk, hp, meta):
    bound = max(min(3 * meta[LIVE] + 4096, 8 * meta[KEEP]), 2 * meta[REBUILT])
    if meta[HSIZE] > bound:
        rebuild(T, tfirst, order, hc, hk, hp, meta, False)  # on False the old heap stays valid


# -- building ----------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def count_pairs(ids, nxt, weight, ppos, plink, meta, T):
    """Every adjacent pair in the empty table T (grown as it fills): its key, count, leftmost
    position and its positions, ascending, as a list in the pool. Returns the table and the
    leftmost positions."""
    size = meta[SIZE]
    tfirst = np.zeros(len(T), dtype=np.int64)
    for p in range(size):
        q = nxt[p]
        if q == size or ids[p] < 0:
            continue
        key = (np.int64(ids[p]) << 32) | ids[q]
        s = _slot(T, key)
        if T[s].key == -1:
            if meta[USED] + 1 > MAX_LOAD * len(T):
                T, tfirst, _ = rehash(T, tfirst, 2 * len(T))
                s = _slot(T, key)
            T[s].key = key
            tfirst[s] = p
            meta[USED] += 1
            meta[LIVE] += 1
        T[s].count += weight[p]
        _append(ppos, plink, T, meta, s, p)
    return T, tfirst


@numba.njit(cache=True, nogil=True)
def rehash(T, tfirst, slots):
    """The live pairs in a table of `slots` slots (dead ones dropped), their leftmost
    positions (kept only for the `first` rule: else an array of one), and how many."""
    N = np.empty(slots, dtype=T.dtype)
    _clear(N)
    nfirst = np.zeros(slots if len(tfirst) > 1 else 1, dtype=np.int64)
    used = 0
    for s in range(len(T)):
        if T[s].count > 0:
            t = _slot(N, T[s].key)
            N[t] = T[s]
            if len(tfirst) > 1:
                nfirst[t] = tfirst[s]
            used += 1
    return N, nfirst, used


# -- a merge and its undo ------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _fits(T, ppos, hc, app_pos, app_start, order, meta, n):
    """Room for a step touching n positions; else the sizes needed go to meta. The pairs a
    step makes are (x, new) and (new, y), or an undo's (x, a), (b, y) and (a, b), with x and y
    ids below the vocabulary's size: at most twice that many new slots and heap entries, however
    many positions (the first merges of a large corpus touch hundreds of thousands)."""
    ok = True
    if meta[POOL_TOP] + 3 * n + 1 > len(ppos):
        meta[NEED_POOL] = meta[POOL_TOP] + 3 * n + 1
        ok = False
    pairs = min(2 * n, 2 * meta[VOCAB] + 2) + 2
    if meta[USED] + pairs > MAX_LOAD * len(T):
        meta[NEED_TABLE] = meta[LIVE] + pairs
        ok = False
    if meta[HSIZE] + pairs > len(hc):  # (a rebuild that does not fit asks for itself)
        meta[NEED_HEAP] = meta[HSIZE] + pairs
        ok = False
    if meta[APP_TOP] + n > len(app_pos) or meta[MERGES] + 2 > len(app_start) or meta[VOCAB] + 1 > len(order):
        meta[NEED_APP] = meta[APP_TOP] + n
        ok = False
    return ok


@numba.njit(cache=True, nogil=True)
def _gain(T, tfirst, ppos, plink, meta, key, pos, w):
    s = _take(T, meta, key)
    if T[s].count == 0:
        meta[LIVE] += 1
        if meta[USE_FIRST]:
            tfirst[s] = pos
    elif meta[USE_FIRST] and pos < tfirst[s]:
        tfirst[s] = pos
    T[s].count += w
    _append(ppos, plink, T, meta, s, pos)
    return s


@numba.njit(cache=True, nogil=True)
def _push_gained(T, tfirst, order, hc, hk, hp, meta, slots, n):
    """One heap entry per pair that gained, with its count after the whole step."""
    floor = meta[FLOOR]
    for i in range(n):  # a pushed pair's count is negated until the end: seen
        s = slots[i]
        c = T[s].count
        if c > 0:
            if c >= floor:
                _push(hc, hk, hp, meta, c, _key(order, tfirst, meta, s, T[s].key), T[s].key)
            T[s].count = -c
    for i in range(n):
        s = slots[i]
        if T[s].count < 0:
            T[s].count = -T[s].count


@numba.njit(cache=True, nogil=True)
def _free_after(P, R, m, size):
    """Whether the token after each occurrence (at R) stays as it is, so that the pair it
    forms with the new token is counted. Occurrences are ascending and do not overlap, so the
    only one that can start at R[i] is the next: no mark per cell, whose random reads and
    writes cost more than the rest of a position's work."""
    free = np.empty(m, dtype=np.bool_)
    for i in range(m):
        free[i] = R[i] != size and (i + 1 == m or P[i + 1] != R[i])
    return free


@numba.njit(cache=True, nogil=True)
def _merge(ids, nxt, prv, weight, T, tfirst, ppos, plink,
           order, hc, hk, hp, app_pos, app_start, meta, a, b, out, row):
    """Replace (a, b) by the next id left to right without overlap; one row of `out`:
    (a, b, new id, count, replacements)."""
    size = meta[SIZE]
    z = meta[VOCAB]
    ab = (np.int64(a) << 32) | b
    s = find(T, ab)
    count = 0
    if s >= 0 and T[s].count > 0:
        count = T[s].count
        cand = np.sort(_positions(ppos, plink, T, s))
        _free_list(plink, T, meta, s)
        T[s].count = 0
        meta[LIVE] -= 1
    else:
        cand = np.empty(0, dtype=np.int64)
    L = len(cand)
    P = np.empty(L, dtype=np.int64)
    Q = np.empty(L, dtype=np.int64)
    R = np.empty(L, dtype=np.int64)
    m = 0
    last = -1
    prev_p = -1
    for p in cand:
        if p == prev_p:
            continue
        prev_p = p
        if ids[p] == a and p != last:
            q = nxt[p]
            if ids[q] == b:
                P[m], Q[m], R[m] = p, q, nxt[q]
                last = q
                m += 1
    free = _free_after(P, R, m, size)
    # the pairs around each occurrence, lost: counted down now, settled after the writes
    lost = np.empty(2 * m, dtype=np.int64)
    nl = 0
    for i in range(m):
        left = prv[P[i]]
        if left != size:
            key = (np.int64(ids[left]) << 32) | a
            if key != ab:
                t = find(T, key)
                T[t].count -= weight[left]
                lost[nl] = t
                nl += 1
        if free[i]:
            key = (np.int64(b) << 32) | ids[R[i]]
            if key != ab:
                t = find(T, key)
                T[t].count -= weight[Q[i]]
                lost[nl] = t
                nl += 1
    reps = 0
    start = meta[APP_TOP]
    for i in range(m):
        p, q, r = P[i], Q[i], R[i]
        ids[p] = z
        ids[q] = -1
        nxt[p] = r
        prv[r] = p
        reps += weight[p]
        app_pos[start + i] = p
    meta[APP_TOP] = start + m
    meta[MERGES] += 1
    app_start[meta[MERGES]] = start + m
    order[z] = meta[SIGN] * z
    meta[VOCAB] = z + 1
    # the pairs holding z
    gained = np.empty(2 * m, dtype=np.int64)
    ng = 0
    for i in range(m):
        left = prv[P[i]]
        if left != size:
            gained[ng] = _gain(T, tfirst, ppos, plink, meta,
                               (np.int64(ids[left]) << 32) | z, left, weight[left])
            ng += 1
    for i in range(m):
        if free[i]:
            gained[ng] = _gain(T, tfirst, ppos, plink, meta,
                               (np.int64(z) << 32) | ids[R[i]], P[i], weight[P[i]])
            ng += 1
    _push_gained(T, tfirst, order, hc, hk, hp, meta, gained, ng)
    for i in range(nl):  # a pair is lost at many places: settled once (a freed list has no head)
        t = lost[i]
        if T[t].count == 0:
            if T[t].head >= 0:
                _free_list(plink, T, meta, t)
                meta[LIVE] -= 1
        elif meta[USE_FIRST]:
            f = tfirst[t]
            if not (ids[f] == T[t].key >> 32 and ids[nxt[f]] == T[t].key & 0xFFFFFFFF):
                tfirst[t] = _leftmost(ids, nxt, ppos, plink, T, meta, t)
    _trim(T, tfirst, order, hc, hk, hp, meta)
    out[row, 0], out[row, 1], out[row, 2], out[row, 3], out[row, 4] = a, b, z, count, reps


@numba.njit(cache=True, nogil=True)
def run(ids, nxt, prv, weight, T, tfirst, ppos, plink,
        order, hc, hk, hp, app_pos, app_start, meta, k, forced, out):
    """Up to k merges, the best pair each time (or `forced`'s pairs first, while they last).
    Returns (merges made, OK | NONE | NEED): NONE when no pair was left, NEED when the arrays
    must grow before the next."""
    done = 0
    while done < k:
        if done < len(forced):
            pair = forced[done]
        else:
            pair = best(T, tfirst, order, hc, hk, hp, meta, True)
            if pair < 0:
                return done, pair
        s = find(T, pair)
        n = T[s].length if s >= 0 else 0
        if not _fits(T, ppos, hc, app_pos, app_start, order, meta, n):
            return done, NEED
        _merge(ids, nxt, prv, weight, T, tfirst, ppos, plink,
               order, hc, hk, hp, app_pos, app_start, meta, pair >> 32, pair & 0xFFFFFFFF, out, done)
        done += 1
    return done, OK


@numba.njit(cache=True, nogil=True)
def undo(ids, nxt, prv, weight, T, tfirst, ppos, plink,
         order, hc, hk, hp, app_pos, app_start, meta, a, b, count, width):
    """Exactly undo the newest merge, of (a, b) with `count`; `width` is the units of token a.
    OK, or NEED (nothing changed)."""
    size = meta[SIZE]
    lo, hi = app_start[meta[MERGES] - 1], app_start[meta[MERGES]]
    m = hi - lo
    if not _fits(T, ppos, hc, app_pos, app_start, order, meta, 2 * m):
        return NEED
    z = meta[VOCAB] - 1
    ab = (np.int64(a) << 32) | b
    P = app_pos[lo:hi].astype(np.int64)
    Q = P + width
    R = np.empty(m, dtype=np.int64)
    for i in range(m):
        R[i] = nxt[P[i]]
    free = _free_after(P, R, m, size)
    # every pair holding z goes
    for i in range(m):
        left = prv[P[i]]
        if left != size:
            t = find(T, (np.int64(ids[left]) << 32) | z)
            if T[t].count > 0:
                T[t].count = 0
                _free_list(plink, T, meta, t)
                meta[LIVE] -= 1
        if free[i]:
            t = find(T, (np.int64(z) << 32) | ids[R[i]])
            if T[t].count > 0:
                T[t].count = 0
                _free_list(plink, T, meta, t)
                meta[LIVE] -= 1
    for i in range(m):
        p, q, r = P[i], Q[i], R[i]
        ids[p] = a
        ids[q] = b
        nxt[p] = q
        prv[r] = q
    gained = np.empty(2 * m + 1, dtype=np.int64)
    ng = 0
    for i in range(m):
        left = prv[P[i]]
        if left != size:
            key = (np.int64(ids[left]) << 32) | a
            if key != ab:
                gained[ng] = _gain(T, tfirst, ppos, plink, meta, key, left, weight[left])
                ng += 1
        if free[i]:
            key = (np.int64(b) << 32) | ids[R[i]]
            if key != ab:
                gained[ng] = _gain(T, tfirst, ppos, plink, meta, key, Q[i], weight[Q[i]])
                ng += 1
    if count:
        s = _take(T, meta, ab)
        T[s].count = count
        meta[LIVE] += 1
        if meta[USE_FIRST]:
            tfirst[s] = P[0]
        for i in range(m):
            _append(ppos, plink, T, meta, s, P[i])
        if a == b:
            for i in range(m):
                _append(ppos, plink, T, meta, s, Q[i])
        gained[ng] = s
        ng += 1
    _push_gained(T, tfirst, order, hc, hk, hp, meta, gained, ng)
    meta[APP_TOP] = lo
    meta[MERGES] -= 1
    meta[VOCAB] = z
    _trim(T, tfirst, order, hc, hk, hp, meta)
    return OK


@numba.njit(cache=True, nogil=True)
def top(T, tfirst, order, hc, hk, hp, meta, k, keys, counts):
    """The k best pairs in selection order into keys/counts; how many, or NEED. The heap keeps
    every entry it had (the popped ones go back)."""
    kc = np.empty(k, dtype=np.int64)
    kk = np.empty(k, dtype=np.int64)
    kp = np.empty(k, dtype=np.int64)
    n = 0
    while n < k:
        pair = best(T, tfirst, order, hc, hk, hp, meta, False)
        if pair == NONE:
            if meta[FLOOR] == 0:
                break
            for i in range(n):  # fewer than k pairs above the floor: rank them all, start again
                _push(hc, hk, hp, meta, kc[i], kk[i], kp[i])
            n = 0
            if not rebuild(T, tfirst, order, hc, hk, hp, meta, True):
                return NEED
            continue
        if pair == NEED:
            for i in range(n):
                _push(hc, hk, hp, meta, kc[i], kk[i], kp[i])
            return NEED
        c, key = hc[0], hk[0]
        _pop(hc, hk, hp, meta)
        seen = False
        for i in range(n):
            if kp[i] == pair:
                seen = True
        if seen:
            continue
        kc[n], kk[n], kp[n] = c, key, pair
        keys[n], counts[n] = pair, c
        n += 1
    for i in range(n):
        _push(hc, hk, hp, meta, kc[i], kk[i], kp[i])
    return n


@numba.njit(cache=True, nogil=True)
def lists(T, ppos, plink):
    """Every live pair's positions end to end, and each one's number, in slot order."""
    total = 0
    for s in range(len(T)):
        if T[s].count > 0:
            total += T[s].length
    out = np.empty(total, dtype=np.int64)
    sizes = np.zeros(len(T), dtype=np.int64)
    j = 0
    for s in range(len(T)):
        if T[s].count > 0:
            node = T[s].head
            while node >= 0:
                out[j] = ppos[node]
                node = plink[node]
                j += 1
            sizes[s] = T[s].length
    return out, sizes
