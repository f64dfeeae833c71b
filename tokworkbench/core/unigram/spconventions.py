"""SentencePiece's conventions for a Unigram model read from its `.model` file.

Where SentencePiece and HF's Metaspace part ways, a model from SentencePiece keeps
SentencePiece's rule (its ids are the judge), a model from HF keeps HF's:

- the dummy prefix: SentencePiece's normalizer (normalizer.cc) puts ▁ in front of any non-empty
  input, even one that starts with a space (kept when whitespace is not collapsed), so `" ABC"`
  is `▁▁ABC`; Metaspace adds none before a ▁ that is already there. Without add_dummy_prefix
  none goes in front at all.
- decoding (sentencepiece_processor.cc `Decode`): a control piece shows nothing, the unknown
  piece shows the model's `unk_surface` (` ⁇ ` by default), and the leading ▁ is dropped from
  the first piece only, or, with whitespace collapsed, from each piece while nothing has shown;
  a run of byte pieces (byte_fallback) shows as the text of its bytes (bytepieces.py).
"""

from dataclasses import dataclass

from tokworkbench.core.text.bytepieces import bytes_text, hf_bytes_text
from tokworkbench.core.text.patterns import META

UNK_SURFACE = " \u2047 "  # SentencePiece's kDefaultUnknownSymbol


@dataclass(frozen=True)
class SpConventions:
    unk_surface: str = UNK_SURFACE
    collapse: bool = True
    """The model's remove_extra_whitespaces: decoding then drops leading ▁ while nothing shows."""
    dummy_prefix: bool = True  # add_dummy_prefix

    def surface(self, raw: str, normalized: str) -> str:
        """The sentence SentencePiece's Viterbi sees: ▁ for each space and one in front of any
        non-empty input (with whitespace collapsed: where the normalized text is not empty)."""
        if self.collapse and normalized.startswith(" "):
            normalized = normalized[1:]  # spnormalize's space before a leading ▁, for Metaspace's sake
        present = bool(normalized) if self.collapse else bool(raw)
        escaped = normalized.replace(" ", META)
        return META + escaped if present and self.dummy_prefix else escaped

    def decode(self, ids: list[int], pieces, specials: frozenset[int], unk_id: int,
               byte_of: dict[int, int] | None = None, hf_bytes: bool = False) -> str:
        """`SentencePieceProcessor.decode(ids)`: `pieces[i][0]` is piece i's text; the special
        ids other than `unk_id` are control pieces; `byte_of` maps byte pieces to their byte.
        `hf_bytes`: a run of them as HF's decoders show it (a model read from tokenizer.json):
        ByteFallback's text (`hf_bytes_text`), which Metaspace's decoder then reads as a token,
        its ▁ a space (every one dropped in the first token where there is a dummy prefix; a
        piece after it is not the first token)."""
        out: list[str] = []
        pending = bytearray()
        byte_of = byte_of or {}
        at_start, lead_seen = self.dummy_prefix or self.collapse, False
        first_run = True  # the run is HF's first token
        hf_token_seen = False  # HF's Metaspace decoder drops the ▁s of its first token only

        def flush() -> None:
            nonlocal hf_token_seen
            if hf_bytes:
                text = hf_bytes_text(bytes(pending))
                out.append(text.replace(META, "" if first_run and self.dummy_prefix else " "))
                hf_token_seen = True
            else:
                out.append(bytes_text(bytes(pending)))
            pending.clear()

        for k, tid in enumerate(ids):
            if tid in byte_of:
                if not pending:
                    first_run = k == 0
                pending.append(byte_of[tid])
                continue
            if pending:
                flush()
            if lead_seen or any(out) or hf_token_seen:
                at_start = False
            lead_seen = False
            if tid == unk_id:
                out.append(self.unk_surface)
                continue
            if tid in specials:
                continue
            piece = pieces[tid][0]
            if at_start and piece.startswith(META):
                piece = piece[1:]
                lead_seen = not self.collapse  # collapsing: keep dropping while nothing shows
            out.append(piece.replace(META, " "))
        if pending:
            flush()
        return "".join(out)
