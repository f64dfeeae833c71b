"""A chunk's paths drawn two ways: the whole lattice with its best path marked (what the lattice
view and the learner show), and the characters each id of a given path covers (what the views
need where a path came from another start score than the chunk's own)."""

from tokworkbench.core.unigram.rows import Lattice, LatticeEdge
from tokworkbench.core.unigram.spviterbi import best_costs_sp
from tokworkbench.core.unigram.viterbi import Vocab, best_costs, segment


def build_lattice(word: str, vocab: Vocab, ids: dict[str, int], start_cost: float,
                  unk_cost: float | None, unk_id: int = 0, float32: bool = False) -> Lattice:
    ends = vocab.edges(word, unk_cost)
    edges = sorted((LatticeEdge(start, end, word[start:end], ids.get(piece, unk_id) if piece is not None else unk_id, c)
                    for end, at in enumerate(ends) for start, piece, c in at), key=lambda e: (e.start, e.end))
    if not word:
        return Lattice(word, (), (), (start_cost,), start_cost)
    best, back = best_costs_sp(ends)[:2] if float32 else best_costs(ends, start_cost)
    where = {(e.start, e.end): i for i, e in enumerate(edges)}
    path = tuple(where[s] for s in segment(len(word), back)) if back[len(word)] >= 0 else ()
    return Lattice(word, tuple(edges), path, tuple(best), start_cost)


def fit_lengths(chunk: str, ids: list[int], pieces, unk: int) -> list[int] | None:
    """Characters each id covers, read off the ids (a path from another start score than the
    chunk's own): a piece its text, an unknown run up to where the next piece's text starts
    (through the chunk's end if it is last). None where the ids do not fit the chunk."""
    out, pos, n = [], 0, len(chunk)
    for k, tid in enumerate(ids):
        if tid != unk:
            text = pieces[tid][0]
            if not chunk.startswith(text, pos):
                return None
            out.append(len(text))
            pos += len(text)
            continue
        follow = pieces[ids[k + 1]][0] if k + 1 < len(ids) else None
        end = n if follow is None else chunk.find(follow, pos + 1)
        if end <= pos:
            return None
        out.append(end - pos)
        pos = end
    return out if pos == n else None
