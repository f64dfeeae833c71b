"""The row of the live pair table, one type for every kind whose step merges a pair (our BPE,
SentencePiece-style BPE): the pairs pane draws them alike."""

from dataclasses import dataclass


@dataclass(frozen=True)
class PairRow:
    """One row of the live pair-frequency table: what the next merges would join, best first."""

    left: int
    right: int
    count: int
    left_text: str
    right_text: str
    merged_text: str
    merged_bytes: bytes
