"""What kind of token an id is, as the vocabulary browser labels and filters it.

A model says it through its capabilities (models/protocol.py): merge-ranked models tell base
units from merged and whole-chunk-only tokens, WordPiece tells continuations, SentencePiece's
typed pieces tell byte, control and user-defined pieces; the roles and special ids tell the
rest. inspection/vocab.py works the kind out once per token; nothing compares a model kind.
"""

from enum import Enum


class TokenKind(Enum):
    BASE = "base"  # a base unit (a byte, a character) no merge made
    MERGED = "merged"  # made by a merge
    WHOLE_ONLY = "whole-only"  # no merge makes it: a chunk reaches it only by being it whole
    CONTINUATION = "continuation"  # continues a word (WordPiece's ##ing)
    BYTE = "byte"  # a byte-fallback piece (SentencePiece's <0x0A>)
    USER_DEFINED = "user-defined"  # matched in text as it is, never merged (SentencePiece's USER_DEFINED)
    PIECE = "piece"  # any other ordinary token (a Unigram piece, a word-initial WordPiece token)
    SPECIAL = "special"  # a special token: matched only where the caller allows it
    CONTROL = "control"  # a special piece no text becomes (SentencePiece's <s>, </s>)
    UNKNOWN = "unk"  # what text the model has no token for becomes

    @property
    def label(self) -> str:
        return self.value


KIND_WORDS = {k.value: k for k in TokenKind}
SPECIAL_KINDS = frozenset({TokenKind.SPECIAL, TokenKind.CONTROL, TokenKind.UNKNOWN})


def token_kind_named(word: str) -> TokenKind | None:
    """The kind a query word names ("byte", "whole-only", "unk"…), or None."""
    return KIND_WORDS.get(word.strip().lower())
