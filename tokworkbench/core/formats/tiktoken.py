"""tiktoken ranks: one `BASE64 RANK` line per token, plus our companion JSON for the pattern and
the special tokens (tiktoken keeps those in code, not in the ranks file).

tiktoken encodes a chunk by joining, again and again, the adjacent pair whose bytes have the
lowest rank. A ranks file therefore defines its merges: each token is the join of the two
lower-ranked parts that this rule reaches, and that is how a model is recovered from it.
"""

import base64
import binascii
import json
from pathlib import Path

from ..bpe.encode import lowest_rank_parts as tiktoken_parts
from ..errors import ExportError, ForeignModelError
from ..models.tokenizer import Tokenizer
from ..text.pretokenize import from_pattern, pre_tokenizer
from .atomic import write_atomic

COMPANION_FORMAT = "tokworkbench-tiktoken"


def companion_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def parse_ranks(raw: bytes) -> list[bytes]:
    """The tokens of a ranks file in rank order; ranks must run 0, 1, 2, …"""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ForeignModelError(
            "not a model file this tool reads (tokworkbench JSON, HF tokenizer.json, "
            ".tiktoken ranks, minbpe .model)"
        ) from None
    tokens: list[bytes] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            b64, rank = line.split()
            data = base64.b64decode(b64, validate=True)
            rank = int(rank)
        except (ValueError, binascii.Error):
            raise ForeignModelError(f"line {n} is not 'BASE64 RANK'") from None
        if rank != len(tokens):
            raise ForeignModelError(f"line {n}: ranks must run 0, 1, 2, … (found {rank} where {len(tokens)} was due)")
        tokens.append(data)
    return tokens


def merges_from_ranks(tokens: list[bytes], what: str) -> list[tuple[int, int]]:
    """Recover merges from tokens in rank order: each must be two lower-ranked tokens joined."""
    index: dict[bytes, int] = {}
    for i, t in enumerate(tokens[:256]):
        if t != bytes([i]):
            raise ForeignModelError(f"{what}: ranks 0..255 must be the 256 single bytes in order (rank {i} is {t!r})")
        index[t] = i
    merges = []
    for z in range(256, len(tokens)):
        data = tokens[z]
        if data in index:
            raise ForeignModelError(f"{what}: rank {z} repeats the bytes of rank {index[data]}")
        parts = tiktoken_parts(index, data)
        if len(parts) != 2:
            raise ForeignModelError(f"{what}: rank {z} ({data!r}) is not two lower-ranked tokens joined")
        merges.append((index[parts[0]], index[parts[1]]))
        index[data] = z
    return merges


def from_tiktoken(raw: bytes, split: str | None, meta: dict | None) -> Tokenizer:
    tokens = parse_ranks(raw)
    if meta is not None and split is None:
        pre = from_pattern(meta.get("pat_str"))
        specials = meta.get("special_tokens", {})
    elif split is None:
        raise ForeignModelError("a tiktoken ranks file carries no pattern: name one (--split gpt2|gpt4|o200k|REGEX)")
    else:
        pre, specials = pre_tokenizer(split), {}
    merges = merges_from_ranks(tokens, "tiktoken ranks")
    order = sorted(specials, key=specials.get)
    if [specials[s] for s in order] != list(range(len(tokens), len(tokens) + len(order))):
        raise ForeignModelError("special tokens must take the ids right after the ranks")
    return Tokenizer("byte", "none", pre, "first", None, tuple(merges), tuple(order))


def check_tiktoken(tok: Tokenizer) -> None:
    """tiktoken re-derives each token from the ranks; refuse a model where that disagrees."""
    ranks = {t: i for i, t in enumerate(tok.ranked_tokens)}
    for r in range(len(tok.merges)):
        z = tok.base_size + r
        data = tok.ranked_tokens[z]
        if tiktoken_parts(ranks, data) != [data] or tok.apply_merges(list(data)) != [z]:
            raise ExportError(
                f"tiktoken would encode token {z} ({tok.rank_text(z)!r}) differently: it joins the "
                "lowest-ranked bytes, not the recorded merges, and here the two disagree"
            )


def to_tiktoken(tok: Tokenizer) -> tuple[str, dict]:
    """The ranks file and its companion: what `tiktoken.Encoding` needs besides the ranks."""
    lines = [f"{base64.b64encode(t).decode('ascii')} {i}" for i, t in enumerate(tok.ranked_tokens)]
    meta = {
        "format": COMPANION_FORMAT,
        "pat_str": tok.pre_tokenizer.pattern,
        "special_tokens": tok.special_ids,
        "explicit_n_vocab": tok.vocab_size,
    }
    return "\n".join(lines) + "\n", meta


def write_tiktoken(tok: Tokenizer, out: Path) -> list[str]:
    ranks, meta = to_tiktoken(tok)
    side = companion_path(out)
    write_atomic(out, ranks.encode("ascii"))
    write_atomic(side, json.dumps(meta, ensure_ascii=False, indent=1).encode("utf-8"))
    return [f"wrote {out} and {side}"]


def tiktoken_encoding(path: str | Path, name: str | None = None):
    """Build a `tiktoken.Encoding` from our tiktoken export (OUT and OUT.json).

    Reads the ranks itself: tiktoken's own `load_tiktoken_bpe` caches files by path, so a
    re-exported file at the same path would be read stale.
    """
    import tiktoken  # only needed by whoever calls this

    path = Path(path)
    meta = json.loads(companion_path(path).read_text(encoding="utf-8"))
    ranks = {t: r for r, t in enumerate(parse_ranks(path.read_bytes()))}
    return tiktoken.Encoding(
        name=name or path.stem, pat_str=meta["pat_str"], mergeable_ranks=ranks,
        special_tokens=meta["special_tokens"], explicit_n_vocab=meta["explicit_n_vocab"],
    )
