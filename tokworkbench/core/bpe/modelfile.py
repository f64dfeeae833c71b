"""Our BPE model file: the envelope (files/envelope.py) with the merges inside.

Merges are stored as [left_id, right_id] in rank order; the vocabulary is always rebuilt from
them (as minbpe does), so a file cannot disagree with itself about what a token is. Loading
checks every field and the length of every token (files/limits.py) before any token is built.
Special-token roles are recorded as {"bos": "<s>", …}, each naming a special token. A file
without a `"model"` field is BPE (the first files had none).

A model read from tiktoken ranks or an HF file that its merges alone do not reproduce (see
bpe/model.py: `join`, `whole_chunk`, `whole_tokens`, `pairs`) records those fields too; each
is left out at its default, so other files read as before. Its merges may then name tokens
made later: their lengths are added up in passes, and a cycle is an error.
"""

from tokworkbench.core.bpe.model import JOINS, Tokenizer
from tokworkbench.core.bpe.tiebreak import TIE_BREAKS
from tokworkbench.core.bpe.trainer import MergeRecord
from tokworkbench.core.errors import ModelFileError, TokWorkbenchError
from tokworkbench.core.files.envelope import header
from tokworkbench.core.files.limits import (
    MAX_TOKEN_BYTES,
    check_token_lengths,
    describe_json,
    is_count,
    is_text,
    pre_tokenizer_json,
    read_pre_tokenizer,
    short,
)
from tokworkbench.core.models.added import read_added
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.text.normalize import NORMALIZERS
from tokworkbench.core.units import Units

KIND = "bpe"


def to_json(tok: Tokenizer, corpus: dict | None = None) -> dict:
    return {
        **header(KIND),
        "units": tok.units.value,
        "normalizer": tok.normalizer,
        "pre_tokenizer": pre_tokenizer_json(tok.pre_tokenizer),
        "tie_break": tok.tie_break,
        "base": list(tok.base) if tok.base is not None else None,
        "merges": [list(p) for p in tok.merges],
        "special_tokens": tok.special_ids,
        "roles": tok.roles.to_dict(),
        "ids": list(tok.ids) if tok.ids is not None else None,
        "history": [
            {"step": r.step, "pair": list(r.pair), "id": r.new_id, "count": r.count,
             "replacements": r.replacements, "length": r.length}
            for r in tok.history
        ],
        "corpus": corpus or {},
        **_exact_fields(tok),
    }


def _exact_fields(tok: Tokenizer) -> dict:
    out: dict = {}
    if tok.whole_tokens:
        out["whole_tokens"] = [t.hex() if isinstance(t, bytes) else t for t in tok.whole_tokens]
    if tok.whole_chunk:
        out["whole_chunk"] = True
    if tok.join != "merges":
        out["join"] = tok.join
    if tok.tiktoken_text:
        out["tiktoken_text"] = True
    if tok.pairs:
        out["pairs"] = [list(p) for p in tok.pairs]
    if tok.added is not None:
        out["added_tokens"] = [t.to_json() for t in tok.added.tokens]
    return out


def from_json(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> Tokenizer:
    """A model from its parsed JSON (the envelope already checked); every field is checked, so a
    damaged or hostile file is a ModelFileError naming the field, never another exception."""
    for key in ("units", "normalizer", "tie_break", "pre_tokenizer", "merges", "special_tokens"):
        if key not in doc:
            raise ModelFileError(f"corrupt model file: no {key!r}")
    units = Units(_one_of(doc["units"], [u.value for u in Units], "units"))
    normalizer = _one_of(doc["normalizer"], NORMALIZERS, "normalizer")
    tie_break = _one_of(doc["tie_break"], TIE_BREAKS, "tie_break")
    pretok = read_pre_tokenizer(doc["pre_tokenizer"])
    base = _base(doc.get("base"), units)
    base_size = units.base_size(base)
    join = _one_of(doc.get("join", "merges"), JOINS, "join")
    whole = _whole_tokens(doc.get("whole_tokens", []), units, max_token_bytes)
    whole_chunk = doc.get("whole_chunk", False)
    if not isinstance(whole_chunk, bool):
        raise ModelFileError(f"'whole_chunk' must be true or false, not {short(whole_chunk)}")
    tiktoken_text = doc.get("tiktoken_text", False)
    if not isinstance(tiktoken_text, bool):
        raise ModelFileError(f"'tiktoken_text' must be true or false, not {short(tiktoken_text)}")
    base_lengths = [1] * base_size if units.is_bytes else [len(c.encode("utf-8")) for c in base]
    if join == "merges":
        merges = _merges(doc["merges"], base_size)
        check_token_lengths(base_lengths, merges, max_token_bytes)
    else:
        merges = _merges(doc["merges"], base_size, base_size + len(doc["merges"]) + len(whole))
        _check_lengths_any_order(base_lengths, merges, [len(Units.to_bytes(t)) for t in whole], max_token_bytes)
    pairs = _pairs(doc.get("pairs", []), base_size + len(merges) + len(whole)) if join == "pairs" else ()
    first = base_size + len(merges) + len(whole)
    specials = doc["special_tokens"]
    if not isinstance(specials, dict) or not all(is_text(s) and s for s in specials):
        raise ModelFileError("'special_tokens' must map non-empty strings to ids")
    ids = _ids(doc.get("ids"), first + len(specials))
    expected = {s: (ids[first + i] if ids else first + i) for i, s in enumerate(specials)}
    if specials != expected or not all(is_count(i) for i in specials.values()):
        raise ModelFileError("special token ids must follow the merges in order")
    history = _history(doc.get("history", []), base_size, len(merges))
    try:
        roles = Roles.of(doc.get("roles")).check(specials)
    except TokWorkbenchError as exc:
        raise ModelFileError(f"'roles': {exc}") from None
    added = read_added(doc["added_tokens"], ModelFileError) if "added_tokens" in doc else None
    tok = Tokenizer(units, normalizer, pretok, tie_break, base, tuple(merges), tuple(specials), history, ids, roles,
                    whole, whole_chunk, join, pairs, added, tiktoken_text)
    if added is not None:
        _check_added(tok, added)
    if pairs:
        tokens = tok.ranked_tokens
        for k, (a, b, z) in enumerate(pairs):
            if tokens[a] + tokens[b] != tokens[z]:
                raise ModelFileError(f"pair {k} joins {short(tokens[a])} and {short(tokens[b])} into "
                                     f"{short(tokens[z])}, which is not their join")
    return tok


def _check_added(tok: Tokenizer, added) -> None:
    """Each added token names an id of the model: its special token, or an ordinary token."""
    specials = tok.special_ids
    for t in added.tokens:
        try:
            inside = tok.to_inside([t.id])[0]
        except TokWorkbenchError:
            raise ModelFileError(f"added token {short(t.content)} has the id {t.id}, which this model lacks") from None
        if inside >= tok.ordinary_size and specials.get(t.content) != t.id:
            raise ModelFileError(f"added token {short(t.content)} has the id {t.id} of another special token")


def _whole_tokens(whole, units: Units, max_token_bytes: int) -> tuple:
    """Tokens no merge makes: hex bytes, or text for char units."""
    if not isinstance(whole, list):
        raise ModelFileError(f"'whole_tokens' must be a list, not {describe_json(whole)}")
    out = []
    for k, t in enumerate(whole):
        try:
            token = bytes.fromhex(t) if units.is_bytes else t
        except (TypeError, ValueError):
            token = None
        if token is None or not (isinstance(token, bytes) or is_text(token)):
            raise ModelFileError(f"whole-only token {k} is {short(t)}; it must be hex bytes (text for char units)")
        if len(Units.to_bytes(token)) > max_token_bytes:
            raise ModelFileError(f"whole-only token {k} is longer than {max_token_bytes} bytes")
        out.append(token)
    return tuple(out)


def _check_lengths_any_order(base_lengths: list[int], merges, whole_lengths: list[int], max_token_bytes: int) -> None:
    """`check_token_lengths` for merges whose parts may come later: lengths in passes."""
    first = len(base_lengths)
    lengths: list = base_lengths + [None] * len(merges) + whole_lengths
    pending = range(len(merges))
    while pending:
        still = []
        for k in pending:
            a, b = merges[k]
            if lengths[a] is None or lengths[b] is None:
                still.append(k)
                continue
            n = lengths[first + k] = lengths[a] + lengths[b]
            if n > max_token_bytes:
                raise ModelFileError(f"merge {k} makes a token of {n:,} bytes; the limit is {max_token_bytes:,}")
        if len(still) == len(pending):
            raise ModelFileError(f"merge {still[0]} is made of itself (its parts' merges lead back to it)")
        pending = still


def _pairs(pairs, size: int) -> tuple[tuple[int, int, int], ...]:
    if not isinstance(pairs, list):
        raise ModelFileError(f"'pairs' must be a list of [left, right, made], not {describe_json(pairs)}")
    out = []
    for k, p in enumerate(pairs):
        if not (isinstance(p, list) and len(p) == 3 and all(is_count(x) and x < size for x in p)):
            raise ModelFileError(f"pair {k} is {short(p)}; it must be three ids below {size}")
        out.append((p[0], p[1], p[2]))
    return tuple(out)


def _base(base, units: Units) -> tuple[str, ...] | None:
    if units.is_bytes:
        return None
    if not isinstance(base, list) or not all(isinstance(c, str) and len(c) == 1 for c in base):
        raise ModelFileError("char-unit model needs 'base' as a list of single characters")
    for i, c in enumerate(base):
        if not is_text(c):
            raise ModelFileError(f"'base' character {i} is a lone surrogate (U+{ord(c):04X}), not a character")
    if len(set(base)) != len(base):
        raise ModelFileError("'base' repeats a character")
    return tuple(base)


def _merges(merges, base_size: int, any_below: int | None = None) -> list[tuple[int, int]]:
    """Merges in rank order, each of ids made before it, or (`any_below`) of any ordinary id."""
    if not isinstance(merges, list):
        raise ModelFileError(f"'merges' must be a list of [left_id, right_id], not {describe_json(merges)}")
    out = []
    for rank, m in enumerate(merges):
        limit = any_below if any_below is not None else base_size + rank
        if not (isinstance(m, list) and len(m) == 2 and all(is_count(x) and x < limit for x in m)):
            raise ModelFileError(f"merge {rank} is {short(m)}; it must be two ids below {limit}")
        out.append((m[0], m[1]))
    return out


def _ids(ids, size: int) -> tuple[int, ...] | None:
    if ids is None:
        return None
    if not (isinstance(ids, list) and len(ids) == size and all(is_count(i) for i in ids) and len(set(ids)) == size):
        raise ModelFileError(f"'ids' must list {size} distinct outside ids, one per token")
    return tuple(ids)


_HISTORY_FIELDS = ("step", "id", "count", "replacements", "length")


def _history(history, base_size: int, n_merges: int) -> tuple[MergeRecord, ...]:
    """Training records: whole numbers where the views divide and format them."""
    if not isinstance(history, list) or len(history) > n_merges:
        raise ModelFileError(f"'history' must be a list of at most {n_merges} training records")
    out = []
    for k, h in enumerate(history):
        if not isinstance(h, dict) or not all(is_count(h.get(f)) for f in _HISTORY_FIELDS):
            raise ModelFileError(f"history record {k} must have whole numbers for {', '.join(_HISTORY_FIELDS)}")
        pair = h.get("pair")
        if not (isinstance(pair, list) and len(pair) == 2 and all(is_count(x) for x in pair)):
            raise ModelFileError(f"history record {k}: 'pair' must be two ids")
        if h["length"] < 1:
            raise ModelFileError(f"history record {k}: 'length' (tokens after the step) must be at least 1")
        out.append(MergeRecord(h["step"], tuple(pair), h["id"], h["count"], h["replacements"], h["length"]))
    return tuple(out)



def _one_of(value, allowed, what):
    if not isinstance(value, str) or value not in allowed:
        raise ModelFileError(f"{what} {short(value)} is not one of {', '.join(allowed)}")
    return value
