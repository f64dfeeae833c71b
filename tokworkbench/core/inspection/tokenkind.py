"""What kind of token an id is, in words for the details line. The kind itself is the
vocabulary's `TokenKind` (models/tokenkinds.py, worked out in inspection/vocab.py from the
model's capabilities): the browser's column and filter and this line say the same thing."""

from tokworkbench.core.inspection.vocab import TokenInfo
from tokworkbench.core.models.protocol import Continuations, HasUnknown, MergeRanked, Model, Scored
from tokworkbench.core.models.tokenkinds import TokenKind

WORDS = {TokenKind.BYTE: "byte piece (byte fallback)", TokenKind.CONTROL: "control piece: no text becomes it",
         TokenKind.UNKNOWN: "unknown piece: stands for what the vocabulary lacks",
         TokenKind.USER_DEFINED: "user-defined piece: always one token",
         TokenKind.WHOLE_ONLY: "whole chunk only: no merge makes it"}


def token_kind(model: Model, info: TokenInfo) -> str:
    """A few words on what `info`'s token is."""
    tid, kind = info.id, info.kind
    if kind in WORDS:
        return WORDS[kind]
    if info.special:
        role = model.roles.role_of(info.text)
        if isinstance(model, HasUnknown) and model.unk_id == tid:
            return WORDS[TokenKind.UNKNOWN]
        if role:
            return f"special token ({role})"
        return "special token"
    if kind is TokenKind.CONTINUATION and isinstance(model, Continuations):
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
