"""What kind of token an id is, in words for the details line: a byte piece, a `##`
continuation, a whole-chunk-only token, a special or control token, a base unit, or a merge
with its number. Asked of the model's capabilities, never of its kind's name."""

from tokworkbench.core.inspection.vocab import TokenInfo
from tokworkbench.core.models.protocol import Continuations, HasUnknown, MergeRanked, Model, PieceTypes, Scored

PIECE_TYPES = {"byte": "byte piece (byte fallback)", "control": "control piece: no text becomes it",
               "unknown": "unknown piece: stands for what the vocabulary lacks",
               "user_defined": "user-defined piece: always one token", "unused": "unused piece"}


def token_kind(model: Model, info: TokenInfo) -> str:
    """A few words on what `info`'s token is (TokenInfo already knows merges and specials)."""
    tid = info.id
    if isinstance(model, PieceTypes):
        kind = model.piece_type(tid)
        if kind in PIECE_TYPES:
            return PIECE_TYPES[kind]
    if info.special:
        role = model.roles.role_of(info.text)
        if isinstance(model, HasUnknown) and model.unk_id == tid:
            return PIECE_TYPES["unknown"]
        if role:
            return f"special token ({role})"
        return "control piece: no text becomes it" if isinstance(model, Scored) else "special token"
    if info.whole_only:
        return "whole chunk only: no merge makes it"
    if isinstance(model, Continuations) and model.is_continuation(tid):
        return f"{model.continuing_subword_prefix} continuation: only after another token of the word"
    if info.step is not None:
        return f"merge {info.step:,}"
    if isinstance(model, Scored):
        return f"piece, score {model.pieces[tid][1]:.4f}"
    if isinstance(model, Continuations):
        return "word start"
    if isinstance(model, MergeRanked):
        return f"base {'byte' if model.units.is_bytes else 'character'}"
    return "vocabulary entry, matched whole"
