"""BPE on one chunk: apply the merges by rank (ours), or join the lowest-ranked bytes (tiktoken's)."""


def merge_ids(ids: list[int], rank_of, never: int, first_new: int) -> list[int]:
    """`ids` (base units) after the merges: all occurrences of the lowest-ranked pair are merged
    left to right at once, since a merge only makes pairs that contain its new id, whose ranks
    are all higher. `rank_of(a << 32 | b)` gives a pair's rank or `never`; merge r makes
    id `first_new + r`. Pairs are looked up as one integer: no tuple to build and hash.
    Works in place on `ids` and returns it."""
    if len(ids) < 2:
        return ids
    pair_ranks = [rank_of(a << 32 | b, never) for a, b in zip(ids, ids[1:])]
    while True:
        r = min(pair_ranks)
        if r == never:
            return ids
        z = first_new + r
        i = pair_ranks.index(r)
        while True:
            ids[i : i + 2] = (z,)
            del pair_ranks[i]
            if i:
                pair_ranks[i - 1] = rank_of(ids[i - 1] << 32 | z, never)
            if i < len(pair_ranks):
                pair_ranks[i] = rank_of(z << 32 | ids[i + 1], never)
            elif not pair_ranks:
                return ids
            try:
                i = pair_ranks.index(r, i + 1)
            except ValueError:
                break


def lowest_rank_parts(ranks: dict[bytes, int], data: bytes) -> list[bytes]:
    """tiktoken's rule: repeatedly join the adjacent pair whose bytes have the lowest rank."""
    parts = [bytes([b]) for b in data]
    while len(parts) > 1:
        best, where = None, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best is None or r < best):
                best, where = r, i
        if best is None:
            break
        parts[where : where + 2] = [parts[where] + parts[where + 1]]
    return parts
