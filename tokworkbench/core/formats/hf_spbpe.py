"""The Hub's tokenizer.json form of a SentencePiece BPE (transformers' LlamaConverter: Llama 2,
Mistral), read as the SentencePiece-BPE kind (core/spbpe/).

That form is a BPE model with `byte_fallback` (and `fuse_unk`) over pieces whose spaces are ▁:
the normalizer `Sequence[Prepend("▁"), Replace(" ", "▁")]` with no pre-tokenizer (legacy), or
`Replace` alone, or no normalizer and a `Metaspace` pre-tokenizer (transformers' non-legacy:
prepend_scheme first, split false; any scheme and split are read); the decoder
`Sequence[Replace("▁", " "), ByteFallback, Fuse]`, with `Strip(" ", 1, 0)` where a ▁ is put
in front. HF joins by its merges list, not by score, so the
model keeps the list (`SpBpeModel.merges`). Added tokens must be special pieces of the
vocabulary (`<unk>`, `<s>`, `</s>`) or special tokens numbered right after it; they are cut out
by the shared special-token rule, which is HF's for tokens without lstrip, rstrip or
normalized. Anything else is refused in one line naming it.
"""

import json

from tokworkbench.core.errors import ForeignModelError, PatternError
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, describe_json, short
from tokworkbench.core.formats.hf_bpe import read_merge_pairs, read_vocab
from tokworkbench.core.formats.hf_common import read_roles
from tokworkbench.core.spbpe.model import BYTE, CONTROL, NORMAL, UNKNOWN, SpBpeModel, byte_piece
from tokworkbench.core.spbpe.modelfile import checked_model
from tokworkbench.core.text.hfpretok import MetaspaceStep, hf_pre_tokenizer
from tokworkbench.core.text.patterns import META
from tokworkbench.core.text.spnormalize import SpNormalizer

_PREPEND = {"type": "Prepend", "prepend": META}
_REPLACE = {"type": "Replace", "pattern": {"String": " "}, "content": META}


def is_sentencepiece_bpe(doc: dict) -> bool:
    """A BPE tokenizer.json in SentencePiece's form: byte fallback, or ▁ put in by the normalizer
    (what the byte-level and char-level BPE reader does not read)."""
    model = doc["model"]
    if model.get("byte_fallback") is True:
        return True
    norm = doc.get("normalizer")
    steps = norm.get("normalizers") if isinstance(norm, dict) and norm.get("type") == "Sequence" else [norm]
    return isinstance(steps, list) and any(isinstance(s, dict) and s.get("type") == "Prepend" for s in steps)


def from_hf(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> SpBpeModel:
    model = doc["model"]
    for key in ("continuing_subword_prefix", "end_of_word_suffix", "dropout"):
        if model.get(key):
            raise ForeignModelError(f"a SentencePiece-style BPE with {key} is not supported")
    if model.get("ignore_merges"):
        raise ForeignModelError("a SentencePiece-style BPE with ignore_merges is not supported")
    byte_fallback = model.get("byte_fallback") is True
    vocab = read_vocab(model.get("vocab"))
    merges = read_merge_pairs(model.get("merges"))
    add_dummy_prefix, metaspace = _layout(doc)
    pieces = sorted(vocab, key=vocab.get)
    if [vocab[p] for p in pieces] != list(range(len(pieces))):
        raise ForeignModelError("the vocabulary's ids are not 0, 1, 2, ... without a gap; "
                                "a SentencePiece model numbers its pieces so")
    unk = model.get("unk_token")
    if unk not in vocab:
        raise ForeignModelError(f"the unk_token {short(unk)} is not in the vocabulary; "
                                "a SentencePiece-style BPE needs one")
    if not byte_fallback and model.get("fuse_unk") is not True:
        raise ForeignModelError("a SentencePiece-style BPE without byte_fallback must fuse unknowns (fuse_unk); "
                                "SentencePiece always does")
    types = {p: NORMAL for p in pieces}
    types[unk] = UNKNOWN
    if byte_fallback:
        for b in range(256):
            if byte_piece(b) in types:
                types[byte_piece(b)] = BYTE
    pieces += _added(doc.get("added_tokens", []), vocab, types, unk)
    kinds = [types[p] for p in pieces]
    roles = read_roles(doc, model, {p for p in pieces if types[p] in (CONTROL, UNKNOWN)})
    made = _first_merge(merges)
    scores = [-float(made[p]) if p in made else 0.0 for p in pieces]
    norm = SpNormalizer(None, "identity", False, ())
    return checked_model(pieces, scores, kinds, norm, add_dummy_prefix, byte_fallback, roles, unk,
                         max_token_bytes, ForeignModelError, merges, metaspace)


def _first_merge(merges: list[tuple[str, str]]) -> dict[str, int]:
    """Each merged piece and the position of the first merge that makes it: its score here is
    minus that (what the views show; encoding follows the list)."""
    made: dict[str, int] = {}
    for r, (a, b) in enumerate(merges):
        made.setdefault(a + b, r)
    return made


def _layout(doc: dict) -> tuple[bool, tuple[str, bool] | None]:
    """(add_dummy_prefix, metaspace) of the normalizer, pre-tokenizer and decoder, which must be
    one of LlamaConverter's layouts: Prepend + Replace (a ▁ in front of every piece, as
    SentencePiece's dummy prefix), Replace alone, or no normalizer and a Metaspace. The
    decoder's Strip says whether decoding drops the leading space (our add_dummy_prefix)."""
    norm, pre, dec = doc.get("normalizer"), doc.get("pre_tokenizer"), doc.get("decoder")
    strip = _decoder_strips(dec)
    if norm is not None:
        steps = norm.get("normalizers") if isinstance(norm, dict) and norm.get("type") == "Sequence" else [norm]
        shape = sorted(map(_canonical, steps)) if isinstance(steps, list) else None
        if pre is not None:
            raise ForeignModelError("a SentencePiece-style BPE with a normalizer has no pre-tokenizer; "
                                    f"this one has {short(_canonical(pre))}")
        if shape == sorted(map(_canonical, (_PREPEND, _REPLACE))):
            if not strip:
                raise ForeignModelError("a SentencePiece-style BPE that prepends ▁ strips it when decoding "
                                        "(Strip(\" \", 1, 0)); this decoder does not")
            return True, None
        if shape == [_canonical(_REPLACE)]:
            return strip, ("never", False)
        raise ForeignModelError("a SentencePiece-style BPE's normalizer must be Sequence[Prepend(\"▁\"), "
                                f"Replace(\" \", \"▁\")] or Replace(\" \", \"▁\"), not {short(_canonical(norm))}")
    if not isinstance(pre, dict):
        raise ForeignModelError("a SentencePiece-style BPE needs the Prepend/Replace normalizer or a Metaspace "
                                f"pre-tokenizer; this one has neither (pre_tokenizer {describe_json(pre)})")
    try:
        steps = hf_pre_tokenizer(pre).steps
    except PatternError as exc:
        raise ForeignModelError(str(exc)) from None
    meta = steps[0] if len(steps) == 1 and isinstance(steps[0], MetaspaceStep) else None
    if meta is None or meta.replacement != META:
        raise ForeignModelError("a SentencePiece-style BPE's pre-tokenizer must be Metaspace(\"▁\"), "
                                f"not {short(_canonical(pre))}")
    return strip, (meta.prepend_scheme, meta.split)


def _decoder_strips(dec) -> bool:
    """Check the decoder is Sequence[Replace("▁", " "), ByteFallback, Fuse] with or without a
    last Strip(" ", 1, 0); whether it has the Strip."""
    steps = dec.get("decoders") if isinstance(dec, dict) and dec.get("type") == "Sequence" else None
    names = [s.get("type") if isinstance(s, dict) else None for s in steps] if isinstance(steps, list) else None
    if names in (["Replace", "ByteFallback", "Fuse", "Strip"], ["Replace", "ByteFallback", "Fuse"],
                 ["Replace", "Fuse", "Strip"], ["Replace", "Fuse"]):
        replace, strip = steps[0], steps[-1] if names[-1] == "Strip" else None
        if replace.get("pattern") == {"String": META} and replace.get("content") == " ":
            if strip is None:
                return False
            if strip.get("content") == " " and strip.get("start") == 1 and strip.get("stop") == 0:
                return True
    raise ForeignModelError("a SentencePiece-style BPE's decoder must be Sequence[Replace(\"▁\", \" \"), "
                            f"ByteFallback, Fuse, Strip(\" \", 1, 0)], not {short(_canonical(dec))}")


def _added(added, vocab: dict[str, int], types: dict[str, int], unk: str) -> list[str]:
    """Mark the added tokens in the vocabulary as control pieces (the unk_token stays unknown);
    return those numbered after it, in id order."""
    if not isinstance(added, list):
        raise ForeignModelError(f"'added_tokens' must be a list, not {describe_json(added)}")
    extra: dict[int, str] = {}
    for k, t in enumerate(added):
        if not isinstance(t, dict) or not isinstance(t.get("content"), str) or type(t.get("id")) is not int:
            raise ForeignModelError(f"added token {k} must have a 'content' and a whole-number 'id'")
        content, tid = t["content"], t["id"]
        if t.get("special") is not True:
            raise ForeignModelError(f"added token {short(content)} is not special; a SentencePiece-style BPE "
                                    "with added tokens that are not special is not supported")
        flags = [f for f in ("lstrip", "rstrip", "single_word", "normalized") if t.get(f)]
        if flags:
            raise ForeignModelError(f"added token {short(content)} has {flags[0]}; a SentencePiece-style BPE "
                                    "takes special tokens without it")
        if content in vocab:
            if vocab[content] != tid:
                raise ForeignModelError(f"added token {short(content)} has id {tid} but the vocabulary gives it "
                                        f"{vocab[content]}")
            if content != unk:
                types[content] = CONTROL
        else:
            extra[tid] = content
            types[content] = CONTROL
    if sorted(extra) != list(range(len(vocab), len(vocab) + len(extra))):
        raise ForeignModelError("added tokens outside the vocabulary must be numbered right after it, without a gap")
    return [extra[i] for i in sorted(extra)]


def _canonical(spec) -> str:
    return json.dumps(spec, sort_keys=True, ensure_ascii=False)
