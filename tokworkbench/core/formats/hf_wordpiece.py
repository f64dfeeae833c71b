"""Hugging Face `tokenizer.json` with a WordPiece model (BERT and what is built on it), both ways.

Read: the `WordPiece` model (its vocab must number its tokens 0..n-1, added tokens may follow
it), the normalizer (BertNormalizer, NFD, Lowercase, StripAccents, or a Sequence of them), the
word split (BertPreTokenizer or WhitespaceSplit) and the WordPiece decoder, all reproduced exactly
(text/bert.py); anything else is refused naming it. Roles come from where HF keeps them
(hf_common.py: bos/eos from `[CLS] $A [SEP]`, or from an older file's BertProcessing), PAD also
from the name [PAD]. Truncation and padding lengths are not ids of the text and are not kept.

Written (export): the same parts back, so HF loads our file with identical ids.
"""

import json
from pathlib import Path

from tokworkbench.core.errors import ForeignModelError, TokWorkbenchError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.files.limits import MAX_ID, MAX_TOKEN_BYTES, describe_json, is_id, is_text, short
from tokworkbench.core.formats.hf_common import hf_added_ids, padding_of, post_processor_of, read_roles
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.text.bert import normalizer_from_hf, split_from_hf, split_to_hf
from tokworkbench.core.wordpiece.model import WordPieceModel
from tokworkbench.core.wordpiece.modelfile import check_tokens, read_decoder, word_fields

PAD_NAME = "[PAD]"  # what BERT's pad token is called when no padding section names it


def from_hf(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> WordPieceModel:
    model = doc["model"]
    vocab, specials = _vocab(model.get("vocab"), doc.get("added_tokens", []), max_token_bytes)
    unk = model.get("unk_token", "[UNK]")
    if not (is_text(unk) and unk in vocab):
        raise ForeignModelError(f"the unk_token {short(unk)} is not in the vocabulary; WordPiece needs it "
                                "for a word it cannot spell")
    prefix, longest = word_fields(model, ForeignModelError)
    normalizer = normalizer_from_hf(doc.get("normalizer"), ForeignModelError)
    split = split_from_hf(doc.get("pre_tokenizer"), ForeignModelError)
    decoder = _decoder(doc.get("decoder"))
    names = {vocab[i] for i in specials} | {unk}
    roles = _roles(doc, model, names)
    try:
        return WordPieceModel(tuple(vocab), unk, prefix, longest, normalizer, split, decoder, roles, tuple(specials))
    except TokWorkbenchError as exc:
        raise ForeignModelError(str(exc)) from None


def _vocab(vocab, added, max_token_bytes: int) -> tuple[list[str], list[int]]:
    """Tokens in id order, and the ids of the special ones. An added token is a vocabulary
    token at its own id, or a new one right after the vocabulary; a non-special one is refused
    (HF cuts it out of the text before the model, which no token of ours does)."""
    if not (isinstance(vocab, dict) and vocab):
        raise ForeignModelError(f"a WordPiece model's 'vocab' must map tokens to ids, not {describe_json(vocab)}")
    by_id: dict[int, str] = {}
    for token, tid in vocab.items():
        if not is_id(tid):
            raise ForeignModelError(f"token {short(token)} has the id {short(tid)}; ids are whole numbers from 0 to "
                                    f"{MAX_ID:,} (HF reads them as u32)")
        if tid in by_id:
            raise ForeignModelError(f"tokens {short(by_id[tid])} and {short(token)} share the id {tid}")
        by_id[tid] = token
    if not isinstance(added, list):
        raise ForeignModelError(f"'added_tokens' must be a list, not {describe_json(added)}")
    specials = []
    for k, t in enumerate(added):
        if not (isinstance(t, dict) and is_text(t.get("content")) and is_id(t.get("id"))):
            raise ForeignModelError(f"added token {k} must have a text 'content' and a whole-number 'id'")
    for t, tid in zip(added, hf_added_ids([t["content"] for t in added], vocab)):  # HF's ids, not the file's
        content = t["content"]
        if not t.get("special", False):
            raise ForeignModelError(f"added token {short(content)} (id {tid}) is not special; HF matches such a "
                                    "token before the model, which this tool does not reproduce")
        if by_id.get(tid, content) != content or (tid not in by_id and content in vocab):
            raise ForeignModelError(f"added token {short(content)} has the id {tid}, which the vocabulary gives "
                                    "another token")
        by_id[tid] = content
        specials.append(tid)
    if sorted(by_id) != list(range(len(by_id))):
        gap = next(i for i in range(len(by_id) + 1) if i not in by_id)
        raise ForeignModelError(f"the vocabulary has no token with id {gap}; this tool reads WordPiece "
                                f"vocabularies numbered 0..n-1")
    tokens = check_tokens([by_id[i] for i in range(len(by_id))], max_token_bytes, ForeignModelError)
    return tokens, sorted(set(specials))


def _decoder(spec):
    if spec is None:
        return None
    if not (isinstance(spec, dict) and spec.get("type") == "WordPiece"):
        kind = spec.get("type") if isinstance(spec, dict) else spec
        raise ForeignModelError(f"decoder {short(kind)} is not supported for WordPiece (WordPiece or none is)")
    return read_decoder(spec, ForeignModelError)


def _roles(doc: dict, model: dict, names: set[str]) -> Roles:
    found = read_roles(doc, model, names).to_dict()
    post = doc.get("post_processor")
    if isinstance(post, dict) and post.get("type") == "BertProcessing":  # the older form of [CLS] $A [SEP]
        for role, key in (("bos", "cls"), ("eos", "sep")):
            pair = post.get(key)
            if isinstance(pair, list) and pair and is_text(pair[0]) and pair[0] in names:
                found[role] = pair[0]
    if "pad" not in found and PAD_NAME in names:
        found["pad"] = PAD_NAME
    try:
        return Roles.of(found)
    except TokWorkbenchError:  # two roles on one token: keep only the unk token's
        return Roles(unk=found["unk"])


# -- export ------------------------------------------------------------------------------------
def to_hf(model: WordPieceModel) -> dict:
    decoder = model.decoder
    return {
        "version": "1.0",
        "truncation": None,
        "padding": padding_of(model),
        "added_tokens": [{"id": i, "content": model.vocab[i], "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for i in model.specials],
        "normalizer": model.text_normalizer.to_hf() if model.text_normalizer is not None else None,
        "pre_tokenizer": split_to_hf(model.pre_tokenizer),
        "post_processor": post_processor_of(model),
        "decoder": ({"type": "WordPiece", "prefix": decoder.prefix, "cleanup": decoder.cleanup}
                    if decoder is not None else None),
        "model": {"type": "WordPiece", "unk_token": model.unk_token,
                  "continuing_subword_prefix": model.continuing_subword_prefix,
                  "max_input_chars_per_word": model.max_input_chars_per_word,
                  "vocab": {t: i for i, t in enumerate(model.vocab)}},
    }


def check_hf(model: WordPieceModel) -> list[str]:
    """Everything a WordPiece model of ours holds, tokenizer.json holds: nothing is refused."""
    return []


def write_hf(model: WordPieceModel, out: Path) -> list[str]:
    write_atomic(out, json.dumps(to_hf(model), ensure_ascii=False, indent=1).encode("utf-8"))
    notes = []
    if model.roles.bos or model.roles.eos:
        notes.append("encode(add_special_tokens=True) adds " +
                     " and ".join(f"{r.upper()} {t}" for r, t in model.roles.items() if r in ("bos", "eos")))
    return notes + [f"wrote {out}"]
