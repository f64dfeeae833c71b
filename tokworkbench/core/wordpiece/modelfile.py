"""Our WordPiece model file: the envelope (files/envelope.py) with `"model": "wordpiece"`, and
BERT's vocab.txt.

The file keeps `"vocab"` (every token in id order), `"unk_token"`, `"continuing_subword_prefix"`,
`"max_input_chars_per_word"`, `"special_tokens"` (token -> id) and `"roles"`; the normalizer and
the word split in HF's own JSON (`"model_normalizer"`, `"pre_tokenizer"`, read by text/bert.py:
what an HF file held is kept as it was) and the decoder as `{"prefix", "cleanup"}` (null: tokens
joined by spaces). Each field is checked; a damaged file is one ModelFileError naming it.

vocab.txt is one token per line in id order, as BERT ships it (no escapes: a token holds no line
end). Each line loses its trailing whitespace, as HF's WordPiece.read_file trims it. A line of
only whitespace is a token HF reads as "", which never matches: it is kept as written (it never
matches either: words hold no whitespace), so every later id stays where HF puts it. An empty
line, or two lines that trim to one token (HF keeps the later id and leaves the earlier one
without a token), is refused naming the line.
"""

from tokworkbench.core.errors import ModelFileError, TokWorkbenchError
from tokworkbench.core.files.envelope import header
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, describe_json, is_count, is_text, short
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.text.bert import (
    WHITESPACE,
    BertNormalizer,
    HfSteps,
    normalizer_from_hf,
    split_from_hf,
    split_to_hf,
    word_split,
)
from tokworkbench.core.wordpiece.model import KIND, MAX_INPUT_CHARS_PER_WORD, WordPieceDecoder, WordPieceModel

VOCAB_TXT_ROLES = {"bos": "[CLS]", "eos": "[SEP]", "pad": "[PAD]", "unk": "[UNK]"}
VOCAB_TXT_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # what BERT's tokenizer makes special



def word_fields(spec: dict, error: type) -> tuple[str, int]:
    """`continuing_subword_prefix` and `max_input_chars_per_word`, as HF names them in a
    tokenizer.json and we in our file: checked, or `error` naming the field."""
    prefix = spec.get("continuing_subword_prefix", "##")
    if not is_text(prefix):
        raise error(f"'continuing_subword_prefix' must be text, not {short(prefix)}")
    longest = spec.get("max_input_chars_per_word", MAX_INPUT_CHARS_PER_WORD)
    if not is_count(longest):
        raise error(f"'max_input_chars_per_word' must be a whole number, not {short(longest)}")
    return prefix, longest

def to_json(model: WordPieceModel, corpus: dict | None = None) -> dict:
    """A WordPiece model learns nothing here, so `corpus` is not kept."""
    decoder = model.decoder
    return {
        **header(KIND),
        "vocab": list(model.vocab),
        "unk_token": model.unk_token,
        "continuing_subword_prefix": model.continuing_subword_prefix,
        "max_input_chars_per_word": model.max_input_chars_per_word,
        "model_normalizer": model.text_normalizer.to_hf() if model.text_normalizer is not None else None,
        "pre_tokenizer": split_to_hf(model.pre_tokenizer),
        "decoder": {"prefix": decoder.prefix, "cleanup": decoder.cleanup} if decoder is not None else None,
        "special_tokens": model.special_ids,
        "roles": model.roles.to_dict(),
    }


def from_json(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> WordPieceModel:
    for key in ("vocab", "unk_token", "special_tokens"):
        if key not in doc:
            raise ModelFileError(f"corrupt WordPiece model file: no {key!r}")
    vocab = check_tokens(doc["vocab"], max_token_bytes, ModelFileError)
    specials = doc["special_tokens"]
    if not (isinstance(specials, dict) and all(is_count(i) and i < len(vocab) and vocab[i] == s
                                               for s, i in specials.items())):
        raise ModelFileError("'special_tokens' must map tokens of 'vocab' to their ids")
    if not is_text(doc["unk_token"]):
        raise ModelFileError(f"'unk_token' must be text, not {short(doc['unk_token'])}")
    prefix, longest = word_fields(doc, ModelFileError)
    decoder = read_decoder(doc.get("decoder"), ModelFileError)
    try:
        return WordPieceModel(tuple(vocab), doc["unk_token"], prefix, longest,
                              normalizer_from_hf(doc.get("model_normalizer"), ModelFileError),
                              split_from_hf(doc.get("pre_tokenizer"), ModelFileError), decoder,
                              Roles.of(doc.get("roles")), tuple(specials.values()))
    except TokWorkbenchError as exc:
        raise ModelFileError(str(exc)) from None


def read_decoder(spec, error) -> WordPieceDecoder | None:
    """`{"prefix", "cleanup"}` (HF's WordPiece decoder has both, and a "type"), or null."""
    if spec is None:
        return None
    if not (isinstance(spec, dict) and is_text(spec.get("prefix", "##"))
            and isinstance(spec.get("cleanup", True), bool)):
        raise error(f"the decoder must be {{\"prefix\": text, \"cleanup\": true or false}}, not {short(spec)}")
    return WordPieceDecoder(spec.get("prefix", "##"), spec.get("cleanup", True))


def check_tokens(tokens, max_token_bytes: int, error) -> list[str]:
    """Distinct non-empty texts of bounded length, in id order. The whole list is checked at
    once where it can be (a BERT vocabulary has 30,000 to 500,000 tokens); the slow walk only
    finds which token is wrong."""
    if not isinstance(tokens, list) or not tokens:
        raise error(f"'vocab' must be a non-empty list of tokens, not {describe_json(tokens)}")
    texts = all(type(t) is str and t for t in tokens)
    joined = "\n".join(tokens) if texts else None
    if texts and _utf8_size(joined) is not None and len(set(tokens)) == len(tokens):
        long = [i for i, t in enumerate(tokens) if len(t) * 4 > max_token_bytes]  # only these can be too long
        if all(len(tokens[i].encode("utf-8")) <= max_token_bytes for i in long):
            return list(tokens)
    seen: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if not (is_text(t) and t):
            raise error(f"token {i} is {short(t)}; a token is non-empty text")
        if len(t.encode("utf-8")) > max_token_bytes:
            raise error(f"token {i} is longer than {max_token_bytes:,} bytes (the longest a loader accepts)")
        if t in seen:
            raise error(f"tokens {seen[t]} and {i} are both {short(t)}; each token appears once")
        seen[t] = i
    return list(tokens)


def _utf8_size(text: str) -> int | None:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate somewhere
        return None


# -- BERT's vocab.txt ----------------------------------------------------------------------------
def parse_vocab_txt(raw: bytes, max_token_bytes: int = MAX_TOKEN_BYTES, error=ModelFileError) -> list[str]:
    """The tokens of a vocab.txt, in id order (a final line end is optional; CRLF reads as LF, the
    CR being trailing whitespace)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"vocab.txt is not UTF-8 (byte {exc.start})") from None
    text = text[1:] if text.startswith("\ufeff") else text
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    trim = "".join(WHITESPACE)
    tokens = [line.rstrip(trim) or line for line in lines]
    if "" in tokens or len(set(tokens)) != len(tokens):
        _refuse_lines(tokens, error)
    return check_tokens(tokens, max_token_bytes, error)


def _refuse_lines(tokens: list[str], error) -> None:
    seen: dict[str, int] = {}
    for k, token in enumerate(tokens):
        if not token:
            raise error(f"vocab.txt line {k + 1} is blank; every line is a token")
        if token in seen:
            raise error(f"vocab.txt lines {seen[token]} and {k + 1} are both {short(token)} (trailing "
                        "whitespace aside); each token appears once")
        seen[token] = k + 1


def looks_like_vocab_txt(raw: bytes) -> bool:
    """BERT's vocab.txt by content: [UNK], [CLS] and [SEP] each a line of its own, at least one
    `##` continuation line, and no tab (which no BERT token holds, and TSV files do)."""
    head = raw[:1 << 20]
    if b"[UNK]" not in head or b"\t" in head:  # a search in C first: every model read asks this
        return False
    lines = set(head.split(b"\n"))
    lines = {line[:-1] if line.endswith(b"\r") else line for line in lines}
    if not {b"[UNK]", b"[CLS]", b"[SEP]"} <= lines:
        return False
    return any(line.startswith(b"##") and len(line) > 2 for line in lines)


def from_vocab_txt(raw: bytes, lowercase: bool = True, strip_accents: bool | None = None,
                   max_token_bytes: int = MAX_TOKEN_BYTES) -> WordPieceModel:
    """A vocab.txt as BERT's tokenizer reads it (HF's BertTokenizerFast): BertNormalizer with
    `lowercase` (`do_lower_case`) and `strip_accents` (None: as lowercase), BertPreTokenizer,
    [CLS] $A [SEP], and [PAD] [UNK] [CLS] [SEP] [MASK] special where the file has them."""
    tokens = parse_vocab_txt(raw, max_token_bytes)
    index = {t: i for i, t in enumerate(tokens)}
    if "[UNK]" not in index:
        raise ModelFileError("vocab.txt has no [UNK] line; BERT's WordPiece needs it")
    roles = Roles.of({role: t for role, t in VOCAB_TXT_ROLES.items() if t in index})
    normalizer = HfSteps((BertNormalizer(True, True, strip_accents, lowercase),))
    return WordPieceModel(tuple(tokens), "[UNK]", "##", MAX_INPUT_CHARS_PER_WORD, normalizer,
                          word_split("BertPreTokenizer"), WordPieceDecoder(), roles,
                          tuple(index[t] for t in VOCAB_TXT_SPECIALS if t in index))
