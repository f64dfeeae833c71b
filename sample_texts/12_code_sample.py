"""A small, self-contained byte-pair encoding trainer (written for this project).

It is part of the sample corpus because source code tokenizes very
differently from prose: indentation, operators, identifiers in snake_case
and camelCase, string escapes and numbers all make their own pairs.
"""

from collections import Counter
from typing import Iterable


def get_pair_counts(ids: list[int], counts: Counter | None = None) -> Counter:
    counts = Counter() if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] += 1
    return counts


def merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    out: list[int] = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


class TinyBPE:
    def __init__(self) -> None:
        self.merges: dict[tuple[int, int], int] = {}
        self.vocab: dict[int, bytes] = {i: bytes([i]) for i in range(256)}

    def train(self, texts: Iterable[str], vocab_size: int = 512) -> None:
        sequences = [list(t.encode("utf-8")) for t in texts]
        for new_id in range(256, vocab_size):
            counts: Counter = Counter()
            for seq in sequences:
                get_pair_counts(seq, counts)
            if not counts:
                break
            pair = max(counts, key=counts.get)
            sequences = [merge(seq, pair, new_id) for seq in sequences]
            self.merges[pair] = new_id
            self.vocab[new_id] = self.vocab[pair[0]] + self.vocab[pair[1]]

    def decode(self, ids: list[int]) -> str:
        return b"".join(self.vocab[i] for i in ids).decode("utf-8", errors="replace")


if __name__ == "__main__":
    bpe = TinyBPE()
    bpe.train(["hello world", "hello there", "¡hola mundo!"], vocab_size=270)
    print({k: bpe.vocab[v] for k, v in bpe.merges.items()})
    config = {"vocab_size": 270, "dropout": 0.0, "special": ["<|endoftext|>"], "ok": True, "ratio": 3.5e-1}
    print(f"{len(bpe.merges)=} {config!r}\t\\n done")
