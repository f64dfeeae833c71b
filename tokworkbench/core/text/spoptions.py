"""spm_train's options that change which pieces a SentencePiece-style trainer may keep
(`--split_digits`, `--user_defined_symbols`, `--control_symbols`, `--required_chars`), checked
once for both trainers that follow it (Unigram em, SentencePiece BPE) as trainer_interface.cc
checks them, so a setting it would stop on is refused here in one line.

The meta pieces come in spm_train's order (`InitMetaPieces`): <unk> <s> </s>, the control
symbols, the user-defined ones, then (BPE with byte fallback) the byte pieces.
"""

from tokworkbench.core.errors import SettingError
from tokworkbench.core.text.spcoverage import UNK_CHAR  # the trainer's kUNKChar: no piece may hold it

MAX_SENTENCE_BYTES = 4192  # spm_train's max_sentence_length default: a longer line is skipped


def is_digit(c: str) -> bool:
    """`is_unicode_decimal_number`: ASCII and full-width digits only, not every Nd character."""
    return "0" <= c <= "9" or "\uff10" <= c <= "\uff19"


def check_symbols(field: str, symbols, reserved: tuple[str, ...], others: tuple[str, ...] = ()) -> None:
    """A tuple of distinct non-empty texts, none a meta piece spm_train already has (it would
    retype that piece, or stop: `<unk>`) nor one of the other list's."""
    if not isinstance(symbols, tuple) or not all(isinstance(s, str) for s in symbols):
        raise SettingError(field, symbols, "must be a list of texts")
    seen: set[str] = set()
    for s in symbols:
        if not s:
            raise SettingError(field, symbols, "holds an empty symbol")
        if any(c.isspace() for c in s):
            raise SettingError(field, s, "holds whitespace, which SentencePiece's normalizer turns into ▁ first")
        if UNK_CHAR in s or "\0" in s:
            raise SettingError(field, s, "holds U+2585 or NUL, which SentencePiece's trainer reserves")
        if s in reserved:
            raise SettingError(field, s, f"is already one of the model's own pieces ({', '.join(reserved)})")
        if s in seen or s in others:
            raise SettingError(field, s, "is given twice; SentencePiece refuses duplicated symbols")
        seen.add(s)


def check_required_chars(value) -> None:
    if not isinstance(value, str):
        raise SettingError("required_chars", value, "must be text")
    for c in value:
        if c.isspace():
            raise SettingError("required_chars", value, "holds whitespace; SentencePiece's pieces spell spaces as ▁")
        if c == UNK_CHAR or 0xD800 <= ord(c) < 0xE000:
            raise SettingError("required_chars", value, f"holds U+{ord(c):04X}, which no piece may be")
