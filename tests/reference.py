"""A plain recount-everything BPE trainer: slow, obvious, and the yardstick for the fast one."""

import unicodedata

from tokworkbench.core.bytelevel import hf_byte_ranks


def reference_train(texts, units, tie_break, pattern_split, merges, normalizer="none"):
    seqs = []
    alphabet = None
    texts = [t if normalizer == "none" else unicodedata.normalize(normalizer.upper(), t) for t in texts]
    chunks = [c for t in texts for c in pattern_split(t)]
    if units == "char":
        alphabet = sorted(set("".join(chunks)))
        index = {c: i for i, c in enumerate(alphabet)}
        vocab = list(alphabet)
        seqs = [[index[c] for c in chunk] for chunk in chunks]
    else:
        vocab = [bytes([i]) for i in range(256)]
        seqs = [list(chunk.encode()) for chunk in chunks]
    ranks = hf_byte_ranks()
    history = []
    for _ in range(merges):
        stats = {}
        for s in seqs:
            for p in zip(s, s[1:]):
                stats[p] = stats.get(p, 0) + 1
        if not stats:
            break
        top = max(stats.values())
        tied = [p for p, n in stats.items() if n == top]
        if tie_break == "first":
            best = tied[0]
        elif tie_break in ("lexmin", "lexmax"):
            key = (lambda p: p) if units == "byte" else (lambda p: (vocab[p[0]], vocab[p[1]]))
            best = min(tied, key=key) if tie_break == "lexmin" else max(tied, key=key)
        else:  # hf
            def key(p):
                if units == "char":
                    return p
                return tuple(ranks[x] if x < 256 else x for x in p)
            best = min(tied, key=key)
        z = len(vocab)
        vocab.append(vocab[best[0]] + vocab[best[1]])
        reps = 0
        new = []
        for s in seqs:
            out, i = [], 0
            while i < len(s):
                if i + 1 < len(s) and (s[i], s[i + 1]) == best:
                    out.append(z)
                    i += 2
                    reps += 1
                else:
                    out.append(s[i])
                    i += 1
            new.append(out)
        seqs = new
        history.append((best, z, top, reps, sum(map(len, seqs))))
    return history, vocab
