"""A WordPiece model as BERT's `vocab.txt`: one token a line, in id order.

The file holds the tokens only; everything else is what BERT's tokenizer assumes of one (HF's
BertTokenizerFast, `tokenizers.BertWordPieceTokenizer`, our reader `from_vocab_txt`): the
BertNormalizer with `lowercase` and `strip_accents` given when it is loaded, BertPreTokenizer,
[UNK], "##", 100 characters a word, [CLS] $A [SEP], and [PAD] [UNK] [CLS] [SEP] [MASK] special by
name. So the export reads its own file back as BERT's tokenizer would and refuses, naming the
setting, where that model is not this one.
"""

from pathlib import Path

from tokworkbench.core.errors import ExportError, ModelFileError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.files.limits import short
from tokworkbench.core.text.bert import BertNormalizer
from tokworkbench.core.wordpiece.model import WordPieceModel
from tokworkbench.core.wordpiece.modelfile import WHITESPACE, from_vocab_txt

_FIELDS = (("unk_token", "the unknown token is [UNK]"), ("continuing_subword_prefix", "continuations start ##"),
           ("max_input_chars_per_word", "a word of over 100 characters is [UNK]"),
           ("text_normalizer", "the normalizer is BertNormalizer (clean_text and handle_chinese_chars on)"),
           ("pre_tokenizer", "words are split by BertPreTokenizer"),
           ("decoder", "the decoder is WordPiece's with ## and cleanup"),
           ("specials", "[PAD] [UNK] [CLS] [SEP] [MASK] are the special tokens"),
           ("roles", "[CLS] and [SEP] go around the text, [PAD] pads"))


def to_vocab_txt(model: WordPieceModel) -> bytes:
    """The lines; a token the file cannot hold (a line break, trailing whitespace, a leading BOM)
    is refused, naming it."""
    trim = "".join(WHITESPACE)
    for i, token in enumerate(model.vocab):
        if "\n" in token or token.rstrip(trim) != token or (i == 0 and token.startswith("\ufeff")):
            raise ExportError(f"token {i} ({short(token)}) cannot be a vocab.txt line: a line ends at a line break "
                              "and loses its trailing whitespace (export it to hf)")
    return "".join(token + "\n" for token in model.vocab).encode("utf-8")


def _load_flags(model: WordPieceModel) -> tuple[bool, bool | None]:
    """`lowercase` and `strip_accents` to load the file with: the model's BertNormalizer's."""
    steps = model.text_normalizer.steps if model.text_normalizer is not None else ()
    if len(steps) == 1 and isinstance(steps[0], BertNormalizer):
        return steps[0].lowercase, steps[0].strip_accents
    return True, None


def check_vocab_txt(model: WordPieceModel) -> list[str]:
    raw = to_vocab_txt(model)
    lowercase, strip_accents = _load_flags(model)
    try:
        again = from_vocab_txt(raw, lowercase, strip_accents)
    except ModelFileError as exc:
        raise ExportError(f"BERT's tokenizer would not read it: {exc}") from None
    for name, rule in _FIELDS:
        if getattr(again, name) != getattr(model, name):
            raise ExportError(f"a vocab.txt holds only tokens and BERT's tokenizer assumes the rest: {rule}, and "
                              f"this model's {name} differs (export it to hf)")
    return [(f"vocab.txt holds the tokens only: load it with lowercase={lowercase}, strip_accents={strip_accents} "
             "(BERT's do_lower_case and strip_accents)")]


def write_vocab_txt(model: WordPieceModel, out: Path) -> list[str]:
    notes = check_vocab_txt(model)
    write_atomic(out, to_vocab_txt(model))
    return notes + [f"wrote {out}"]
