"""minbpe `.model` files: a version line, the pattern, the special tokens, then one merge a line."""

from ..errors import ForeignModelError
from ..models.tokenizer import Tokenizer
from ..text.pretokenize import from_pattern

HEADER = "minbpe v1"


def from_minbpe(text: str) -> Tokenizer:
    lines = text.splitlines()
    try:
        pattern = lines[1]
        n_special = int(lines[2])
        specials = {}
        for line in lines[3 : 3 + n_special]:
            s, i = line.rsplit(" ", 1)
            specials[s] = int(i)
        merges = [tuple(map(int, line.split())) for line in lines[3 + n_special :] if line.strip()]
    except (IndexError, ValueError):
        raise ForeignModelError("not a minbpe v1 .model file (version, pattern, specials, then 'id id' merges)") from None
    for r, m in enumerate(merges):
        if len(m) != 2 or not all(0 <= x < 256 + r for x in m):
            raise ForeignModelError(f"merge {r} is {m}; it must be two ids below {256 + r}")
    order = sorted(specials, key=specials.get)
    if [specials[s] for s in order] != list(range(256 + len(merges), 256 + len(merges) + len(order))):
        raise ForeignModelError("special tokens must take the ids right after the merges")
    return Tokenizer("byte", "none", from_pattern(pattern), "first", None, tuple(merges), tuple(order))


def to_minbpe(tok: Tokenizer) -> str:
    lines = [HEADER, tok.pre_tokenizer.pattern or "", str(len(tok.special_tokens))]
    lines += [f"{s} {i}" for s, i in tok.special_ids.items()]
    lines += [f"{a} {b}" for a, b in tok.merges]
    return "\n".join(lines) + "\n"
