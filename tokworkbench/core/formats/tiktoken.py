"""tiktoken ranks: one `BASE64 RANK` line per token, plus our companion JSON for the pattern and
the special tokens (tiktoken keeps those in code, not in the ranks file).

tiktoken encodes a chunk by joining, again and again, the adjacent pair whose bytes have the
lowest rank. A ranks file therefore defines its merges: each token is the join of the two
lower-ranked parts that this rule reaches, and that is how a model is recovered from it.

The pair is two files, and no file system replaces two files at once. So the companion records
the SHA-256 of the ranks file it belongs to, and loading checks it: a companion beside ranks of
another export (one killed between its two writes, or files copied from two exports) is an
error naming both files. The export writes the companion first: if it dies before the ranks are
replaced, the new companion's hash does not match the old ranks, and the mix is caught. A
companion written before the hash existed (no `ranks_sha256`) is read as before: nothing can
tell whether it belongs, and refusing every older export would break working pairs.
"""

import base64
import binascii
import hashlib
import json
import os
from pathlib import Path

from ..bpe.encode import lowest_rank_parts as tiktoken_parts
from ..errors import ExportError, ForeignModelError, ModelFileError, NeedsPatternError
from ..models.tokenizer import Tokenizer
from ..text.pretokenize import PreTokenizer, from_pattern, parse_split
from .atomic import resolve_output, write_atomic
from .limits import MAX_TOKEN_BYTES, check_token_length, describe_json, is_count, is_text, parse_json, read_model_file

COMPANION_FORMAT = "tokworkbench-tiktoken"
NOT_A_MODEL = ("not a model file this tool reads (tokworkbench JSON, HF tokenizer.json, "
               ".tiktoken ranks, minbpe .model)")


def companion_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def ranks_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def parse_ranks(raw: bytes, max_token_bytes: int = MAX_TOKEN_BYTES) -> list[bytes]:
    """The tokens of a ranks file in rank order; ranks must run 0, 1, 2, …"""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ForeignModelError(NOT_A_MODEL) from None
    tokens: list[bytes] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = _rank_line(n, line, len(tokens))
        except ForeignModelError as exc:
            if tokens:
                raise
            raise ForeignModelError(f"{exc}; {NOT_A_MODEL}") from None
        check_token_length(len(tokens), len(data), max_token_bytes)
        tokens.append(data)
    return tokens


def _rank_line(n: int, line: str, due: int) -> bytes:
    """The token of line `n`, which must be 'BASE64 RANK' with the rank `due`."""
    fields = line.split()
    if len(fields) != 2:
        raise ForeignModelError(f"line {n} is not 'BASE64 RANK'")
    b64, rank = fields
    if not (rank.isascii() and rank.isdigit()):
        raise ForeignModelError(f"line {n}: the rank {rank[:20]!r} is not a number")
    try:
        data = base64.b64decode(b64, validate=True)
    except (ValueError, binascii.Error):
        raise ForeignModelError(f"line {n}: {b64[:20]!r} is not base64") from None
    if int(rank) != due:
        raise ForeignModelError(f"line {n}: ranks must run 0, 1, 2, … (found {rank} where {due} was due)")
    return data


def merges_from_ranks(tokens: list[bytes], what: str) -> list[tuple[int, int]]:
    """Recover merges from tokens in rank order: each must be two lower-ranked tokens joined."""
    if len(tokens) < 256:
        raise ForeignModelError(f"{what}: the file has {len(tokens)} rank{'' if len(tokens) == 1 else 's'}; "
                                "a byte-level ranks file starts with the 256 single bytes (ranks 0..255)")
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


# -- the companion -----------------------------------------------------------------------------
def read_companion(path: Path, raw: bytes) -> dict | None:
    """The checked companion of the ranks file `path` (whose bytes are `raw`), or None if there
    is none. A companion that is not ours, or that belongs to other ranks, is an error."""
    side = companion_path(path)
    if not os.path.lexists(side):
        return None
    try:
        meta = parse_json(read_model_file(side))
    except ModelFileError as exc:
        raise ForeignModelError(f"the companion {side}: {exc}") from None
    return check_companion(meta, raw, path, side)


def check_companion(meta, raw: bytes, path: Path, side: Path) -> dict:
    if not isinstance(meta, dict):
        raise ForeignModelError(f"the companion {side} holds {describe_json(meta)}; it must be a JSON object "
                                "with pat_str and special_tokens")
    if meta.get("format", COMPANION_FORMAT) != COMPANION_FORMAT:
        raise ForeignModelError(f"the companion {side} is not a tokworkbench tiktoken companion "
                                f"(format {str(meta.get('format'))[:40]!r})")
    pattern = meta.get("pat_str")
    if pattern is not None and not is_text(pattern):
        raise ForeignModelError(f"the companion {side}: 'pat_str' must be a string, not {describe_json(pattern)}")
    specials = meta.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(is_text(s) and s and is_count(i) for s, i in specials.items()):
        raise ForeignModelError(f"the companion {side}: 'special_tokens' must map strings to ids, "
                                f"not {describe_json(specials)}")
    digest = meta.get("ranks_sha256")
    if digest is not None and digest != ranks_digest(raw):
        raise ForeignModelError(
            f"the companion {side} does not belong to {path}: it records the SHA-256 of other ranks "
            "(an export interrupted between the two files, or files of two exports); export again")
    return {"pat_str": pattern, "special_tokens": specials, "explicit_n_vocab": meta.get("explicit_n_vocab")}


# -- import ------------------------------------------------------------------------------------
def from_tiktoken(raw: bytes, split: "str | PreTokenizer | None", meta: dict | None,
                  max_token_bytes: int = MAX_TOKEN_BYTES, side_name: str = "OUT.json") -> Tokenizer:
    """A model from ranks and a checked companion (`read_companion`), or ranks and `split`: a
    preset name, `regex:PATTERN`, or a PreTokenizer. `split` wins over the companion's pattern."""
    tokens = parse_ranks(raw, max_token_bytes)
    if split is not None:
        pre = split if isinstance(split, PreTokenizer) else parse_split(split)
        specials = meta["special_tokens"] if meta is not None else {}
    elif meta is not None:
        pre, specials = from_pattern(meta["pat_str"]), meta["special_tokens"]
    else:
        raise NeedsPatternError(f"a tiktoken ranks file with no companion {side_name} beside it carries no "
                                "pattern; name one (gpt2, gpt4, o200k, or regex:PATTERN)")
    merges = merges_from_ranks(tokens, "tiktoken ranks")
    order = sorted(specials, key=specials.get)
    if [specials[s] for s in order] != list(range(len(tokens), len(tokens) + len(order))):
        raise ForeignModelError("special tokens must take the ids right after the ranks")
    return Tokenizer("byte", "none", pre, "first", None, tuple(merges), tuple(order))


# -- export ------------------------------------------------------------------------------------
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
    """The ranks file and its companion: what `tiktoken.Encoding` needs besides the ranks, and
    the SHA-256 of the ranks that ties the two together."""
    lines = [f"{base64.b64encode(t).decode('ascii')} {i}" for i, t in enumerate(tok.ranked_tokens)]
    ranks = "\n".join(lines) + "\n"
    meta = {
        "format": COMPANION_FORMAT,
        "pat_str": tok.pre_tokenizer.pattern,
        "special_tokens": tok.special_ids,
        "explicit_n_vocab": tok.vocab_size,
        "ranks_sha256": ranks_digest(ranks.encode("ascii")),
    }
    return ranks, meta


def write_tiktoken(tok: Tokenizer, out: Path) -> list[str]:
    """Both files, companion first (see the module docstring); both paths are checked before
    either is written, so a refused companion leaves the ranks untouched too."""
    ranks, meta = to_tiktoken(tok)
    side = companion_path(out)
    resolve_output(out)
    resolve_output(side)
    write_atomic(side, json.dumps(meta, ensure_ascii=False, indent=1).encode("utf-8"))
    write_atomic(out, ranks.encode("ascii"))
    return [f"wrote {out} and {side}"]


def tiktoken_encoding(path: str | Path, name: str | None = None):
    """Build a `tiktoken.Encoding` from our tiktoken export (OUT and OUT.json), checking that the
    two belong together.

    Reads the ranks itself: tiktoken's own `load_tiktoken_bpe` caches files by path, so a
    re-exported file at the same path would be read stale.
    """
    import tiktoken  # only needed by whoever calls this

    path = Path(path)
    raw = read_model_file(path)
    meta = read_companion(path, raw)
    if meta is None:
        raise NeedsPatternError(f"{path} has no companion {companion_path(path).name}; tiktoken needs its pattern")
    ranks = {t: r for r, t in enumerate(parse_ranks(raw))}
    return tiktoken.Encoding(
        name=name or path.stem, pat_str=meta["pat_str"], mergeable_ranks=ranks,
        special_tokens=meta["special_tokens"], explicit_n_vocab=meta["explicit_n_vocab"],
    )
