"""SentencePiece BPE's plain lines through linekernel.py: the Python around the one call.

`CompiledLines.encoder()` is `encode_ordinary` for a model whose normalizer returns the text as
it is and whose words never merge across a space (fastencode.py chooses it once per model,
where numba runs and every score is finite). What the kernel leaves (module docstring there)
is done here, and the line is asked again: a full cache is grown (twice the words) or, past
`limit` words, emptied; the words for the exact path are worked out by `exact_ids` and stored;
a text holding ▁ goes to `by_words`, which cuts it as model.py does. A long text goes to the
dict path (fastencode.py), which merges its many new words in one batch, where here each time
the cache grows the kernel would start it again.
"""

from collections.abc import Callable

import numpy as np

from tokworkbench.core.text.spnormalize import META

_FIRST = 1 << 12  # words in a new cache
_STORED_UP_TO = 4096  # characters: a longer word is not stored (a cache fits it by growing)


class CompiledLines:
    def __init__(self, table: np.ndarray, unk: int, fuse: bool, longest: int, limit: int,
                 exact_ids: Callable[[str], list[int]], by_words: Callable[[str], list[int]]):
        from tokworkbench.core.spbpe import linekernel

        self.kernel = linekernel
        self.table = table  # PairTable.packed
        self.unk, self.fuse = unk, fuse
        self.longest = longest  # characters: a longer word takes the exact path
        self.limit = limit  # words kept before the cache is emptied
        self.exact_ids = exact_ids
        self.by_words = by_words
        self.cell = [linekernel.new_cache(_FIRST, unk, fuse)]  # the cache; replaced when it grows

    def encoder(self, long_text: Callable[[str], list[int]], line_up_to: int) -> Callable[[str], list[int]]:
        """encode_ordinary: a text over `line_up_to` characters goes to `long_text` (a cache
        that fills up makes the kernel start the text again; the dict path merges its many new
        words in one batch)."""
        encode_line, table, longest, cell, again = self.kernel.encode_line, self.table, self.longest, self.cell, \
            self.not_taken

        def encode_ordinary(text: str) -> list[int]:
            if len(text) > line_up_to or not text:
                return long_text(text)
            ids = encode_line(text.encode("utf-32-le", "surrogatepass"), table, longest, cell[0]).tolist()
            return ids if ids[0] >= 0 else again(text, ids)

        return encode_ordinary

    def not_taken(self, text: str, answer: list[int]) -> list[int]:
        """The ids of a text the kernel did not finish (`answer`: why): what it left is done
        here, then it is asked again."""
        k = self.kernel
        raw = text.encode("utf-32-le", "surrogatepass")
        emptied = False
        while True:
            why = -1 - answer[0]
            if why == k.META_IN_TEXT:
                return self.by_words(text)
            if why == k.FULL:
                emptied = self.grow(may_empty=not emptied) or emptied
            else:
                for a, b in zip(answer[1::2], answer[2::2]):
                    if b - a > _STORED_UP_TO:
                        return self.by_words(text)  # not kept here: by_words' own cache has it
                    word = (META + text[:b] if a == 0 else text[a:b]).replace(" ", META)
                    ids = np.array(self.exact_ids(word), dtype=np.int64)
                    while not k.store(self.cell[0], word.encode("utf-32-le", "surrogatepass"), ids):
                        emptied = self.grow(may_empty=not emptied) or emptied
            answer = k.encode_line(raw, self.table, self.longest, self.cell[0]).tolist()
            if answer[0] >= 0:
                return answer

    def grow(self, may_empty: bool = True) -> bool:
        """A larger cache with the same words, or, past `limit` words, an empty one (as the dict
        caches are emptied; not twice for one text, which may hold more words than that).
        Whether it emptied it."""
        k, old = self.kernel, self.cell[0]
        words = int(old[k.CAP_ENTRIES])
        if may_empty and old[k.ENTRIES] >= self.limit:
            self.cell[0] = k.new_cache(words, self.unk, self.fuse)
            return True
        new = k.new_cache(2 * words, self.unk, self.fuse)
        k.regrow(old, new)
        self.cell[0] = new
        return False
