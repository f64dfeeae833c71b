"""The rewrites a training step and an undo make on chunks, with the pair-count changes they cause.

Both report deltas locally (left neighbour from the output, right neighbour from the input), the
way the fast trainers do, so a step costs the length of the chunks it touches and nothing more.
"""


def unmerge_word(ids: list[int], a: int, b: int, z: int) -> tuple[list[int], dict]:
    """Split every z back into (a, b): the exact inverse of `merge_chunks` when z is the newest id.

    Returns the new ids and the change in count of every pair (left neighbour from the output,
    right neighbour from the input, as in the merge)."""
    out: list[int] = []
    delta: dict[tuple[int, int], int] = {}
    n = len(ids)
    for i, t in enumerate(ids):
        if t == z:
            if out:
                x = out[-1]
                delta[(x, z)] = delta.get((x, z), 0) - 1
                delta[(x, a)] = delta.get((x, a), 0) + 1
            delta[(a, b)] = delta.get((a, b), 0) + 1
            if i + 1 < n:
                y = ids[i + 1]
                delta[(z, y)] = delta.get((z, y), 0) - 1
                delta[(b, y)] = delta.get((b, y), 0) + 1
            out.append(a)
            out.append(b)
        else:
            out.append(t)
    return out, delta


def first_offset(ids: list[int], pair: tuple[int, int], lengths: list[int]) -> int:
    """Offset, in base units, of the leftmost occurrence of `pair` in `ids` (-1 if absent)."""
    a, b = pair
    off = 0
    for i in range(len(ids) - 1):
        t = ids[i]
        if t == a and ids[i + 1] == b:
            return off
        off += lengths[t]
    return -1


def merge_chunks(words, weights, chunks, a: int, b: int, z: int, delta: dict, where: dict) -> tuple[int, list[int]]:
    """The hot loop of training: replace (a, b) by z left to right without overlap ("aaa" with
    (a, a) gives [z, a]) in many chunks at once, in place, folding the
    weighted count changes straight into `delta` and adding each chunk to `where` under the
    pairs it gains. `where` may keep chunks that lost a pair (a superset is enough to find the
    chunks of a pair; those are skipped here).

    Occurrences are found with list.index and replaced by slice assignment, so a long chunk
    costs C-speed scans, not a Python step per token.

    Returns the weighted number of replacements and the chunks actually rewritten.
    """
    replacements = 0
    touched = []
    get = delta.get
    for c in chunks:
        ids = words[c]
        try:
            j = ids.index(a)
        except ValueError:
            continue
        w = weights[c]
        reps = 0
        while True:  # the two neighbour updates below stay inline: this loop is the hot path
            if j + 1 < len(ids) and ids[j + 1] == b:
                if j:
                    x = ids[j - 1]  # already rewritten: may be z
                    k = (x, a)
                    delta[k] = get(k, 0) - w
                    k = (x, z)
                    delta[k] = get(k, 0) + w
                    s = where.get(k)
                    if s is None:
                        where[k] = {c}
                    else:
                        s.add(c)
                if j + 2 < len(ids):
                    y = ids[j + 2]
                    k = (b, y)
                    delta[k] = get(k, 0) - w
                    k = (z, y)
                    delta[k] = get(k, 0) + w
                    s = where.get(k)
                    if s is None:
                        where[k] = {c}
                    else:
                        s.add(c)
                ids[j : j + 2] = (z,)
                reps += 1
            try:
                j = ids.index(a, j + 1)
            except ValueError:
                break
        if reps:
            replacements += reps * w
            touched.append(c)
    delta.pop((a, b), None)
    return replacements, touched
