"""SentencePiece's byte pieces (`<0x41>`), shared by the kinds that read models with byte_fallback.

With byte_fallback an unknown piece is spelled as the `<0xNN>` pieces of its UTF-8 bytes, and
decoding joins a run of byte pieces back into text (sentencepiece_processor.cc `Decode`).
"""

import regex

_BYTE_PIECE = regex.compile(r"<0x([0-9A-F]{2})>")
BYTE_TEXT_NOTE = ("note: HF's Unigram matches a byte piece's own text (\"<0x41>\") as that piece, SentencePiece "
                  "never does: a text that holds one gets other ids in HF than in SentencePiece")
"""Said by a Unigram export from one library's byte fallback to the other's."""


def byte_piece(b: int) -> str:
    """SentencePiece's `ByteToPiece`."""
    return f"<0x{b:02X}>"


BYTE_PIECES = tuple(byte_piece(b) for b in range(256))  # <0x00> ... <0xFF>, in byte order


def piece_byte(piece: str) -> int | None:
    """SentencePiece's `PieceToByte`: the byte a `<0xNN>` piece stands for, else None."""
    found = _BYTE_PIECE.fullmatch(piece)
    return int(found.group(1), 16) if found else None


def hf_bytes_text(raw: bytes) -> str:
    """A run of byte tokens as HF's ByteFallback decoder shows it: the run's text when it is
    valid UTF-8, else U+FFFD for each of its bytes (where SentencePiece keeps the valid
    characters, `bytes_text`)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "\ufffd" * len(raw)


def bytes_text(raw: bytes) -> str:
    """A run of byte pieces as SentencePiece shows it: each valid UTF-8 character, and U+FFFD
    for each byte that starts none."""
    out: list[str] = []
    pos, n = 0, len(raw)
    while pos < n:
        lead = raw[pos]
        size = 1 if lead < 0x80 else 2 if 0xC2 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else \
            4 if 0xF0 <= lead < 0xF5 else 0
        if size:
            try:
                out.append(raw[pos:pos + size].decode("utf-8"))
                pos += size
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        pos += 1
    return "".join(out)
