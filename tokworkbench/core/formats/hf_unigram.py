"""Hugging Face `tokenizer.json` with a Unigram model, both ways.

A `Unigram` model with any `unk_id`, the Metaspace pre-tokenizer and decoder (or a Split pattern
and Fuse); its added special tokens are the special pieces. A model that keeps SentencePiece's
whitespace (`SpConventions(collapse=False)`: what `--algorithm em` trains, a `.model` with
remove_extra_whitespaces false) is written as transformers' converters write SentencePiece's
dummy prefix: the normalizer prepends ▁ to any non-empty text and turns every space into ▁
(`Prepend`, `Replace`), so `" ABC"` is `▁▁ABC` as in SentencePiece (HF's Metaspace adds no ▁
before one already there), and a Metaspace that prepends nothing cuts the words before each ▁.
Roles come from where HF keeps them (hf_common.py), PAD also from the names `<pad>`/`[PAD]` when
exactly one special piece has one; UNK is the unk piece. A model with SentencePiece's
byte_fallback is HF's Unigram `byte_fallback` (tokenizers >= 0.14: an unknown run becomes the
`<0xNN>` pieces of its bytes, the same bytes SentencePiece spells character by character) with a
ByteFallback decoder; its byte pieces stay in the vocabulary, as transformers' converter leaves them.
Read, such a file is HF's byte fallback (`UnigramModel.hf_byte_fallback`): HF's trie holds the
byte pieces, so they match their own text, which SentencePiece's never do.
"""

import json

import regex

from tokworkbench.core.errors import ExportError, ForeignModelError, TokWorkbenchError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, describe_json, is_count, is_id, is_text, short
from tokworkbench.core.formats.hf_common import check_hf_pattern, hf_pattern, padding_of, post_processor_of, read_roles
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.text import spnormalize
from tokworkbench.core.text.bytepieces import BYTE_PIECES, BYTE_TEXT_NOTE
from tokworkbench.core.text.patterns import METASPACE
from tokworkbench.core.text.pretokenize import PreTokenizer, from_pattern, pre_tokenizer
from tokworkbench.core.text.spnormalize import META
from tokworkbench.core.unigram.hffloat import hf_score
from tokworkbench.core.unigram.model import UnigramModel
from tokworkbench.core.unigram.modelfile import check_pieces
from tokworkbench.core.unigram.spconventions import SpConventions

# -- Hugging Face tokenizer.json -------------------------------------------------------------
METASPACE_HF = {"type": "Metaspace", "replacement": META, "prepend_scheme": "always", "split": True}
CUT_AT_META = {"type": "Metaspace", "replacement": META, "prepend_scheme": "never", "split": True}
PREPEND_META = {"type": "Prepend", "prepend": META}
SPACE_TO_META = {"type": "Replace", "pattern": {"String": " "}, "content": META}


def _keeps_sp_whitespace(model: UnigramModel) -> bool:
    return model.sp_conventions is not None and not model.sp_conventions.collapse and model.pre_tokenizer.rewrites


def _normalizer_spec(model: UnigramModel) -> dict | None:
    return (model.text_normalizer.to_hf() if model.text_normalizer is not None
            else {"type": model.normalizer.upper()} if model.normalizer != "none" else None)


def _normalizer_steps(model: UnigramModel) -> list[dict]:
    spec = _normalizer_spec(model)
    if spec is None:
        return []
    return list(spec.get("normalizers") or []) if spec.get("type") == "Sequence" else [spec]


def _unk_pattern(unk: str) -> str:
    """The unknown piece's whole text, for the decoder's Replace (HF applies it to each token)."""
    return r"\A" + regex.escape(unk) + r"\z"


def _sp_whitespace_hf(model: UnigramModel) -> tuple[dict, dict, dict]:
    """(normalizer, pre-tokenizer, decoder) for SentencePiece's rule with whitespace kept. Every
    word HF's Metaspace cuts starts at a ▁ where our chunks start (`chunks_of`), so HF's words are
    our chunks. The decoder: the unknown piece shows as `unk_surface` (sp.decode's ` ⁇ `), and
    Metaspace's drops the ▁ of the first token, the one SentencePiece's decode drops (a piece of
    ours has ▁ only at its start)."""
    conv = model.sp_conventions
    steps = _normalizer_steps(model) + ([PREPEND_META] if conv.dummy_prefix else []) + [SPACE_TO_META]
    decoder = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"Regex": _unk_pattern(model.pieces[model.unk_id][0])},
         "content": conv.unk_surface}, *_byte_decoder(model),
        dict(METASPACE_HF, prepend_scheme="always" if conv.dummy_prefix else "never")]}
    return {"type": "Sequence", "normalizers": steps}, dict(CUT_AT_META), decoder


def to_hf(model: UnigramModel) -> dict:
    """Every piece keeps its id: the special ones are added special tokens at their own ids,
    BOS/EOS a TemplateProcessing and PAD the padding, as for BPE."""
    pre, normalizer = model.pre_tokenizer, None
    if _keeps_sp_whitespace(model):
        normalizer, pre_tok, decoder = _sp_whitespace_hf(model)
    elif pre.rewrites:
        pre_tok, decoder = dict(METASPACE_HF), dict(METASPACE_HF)
        if model.byte_fallback:
            decoder = {"type": "Sequence", "decoders": [*_byte_decoder(model), decoder]}
        if isinstance(model.text_normalizer, spnormalize.HfNormalizer) and model.text_normalizer.whitespace_split:
            pre_tok = {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"}, pre_tok]}
    elif pre.pattern is not None:
        pre_tok = {"type": "Split", "pattern": {"Regex": hf_pattern(pre.pattern)}, "behavior": "Isolated",
                   "invert": False}
        decoder = {"type": "Fuse"}
    else:
        pre_tok, decoder = None, {"type": "Fuse"}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": padding_of(model),
        "added_tokens": [{"id": i, "content": model.pieces[i][0], "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True} for i in model.specials],
        "normalizer": normalizer or _normalizer_spec(model),
        "pre_tokenizer": pre_tok,
        "post_processor": post_processor_of(model),
        "decoder": decoder,
        "model": {"type": "Unigram", "unk_id": model.unk_id, "vocab": [[t, s] for t, s in model.pieces],
                  "byte_fallback": model.byte_fallback},
    }


def _byte_decoder(model: UnigramModel) -> list[dict]:
    """HF's ByteFallback joins a run of byte tokens as sp.decode does when it is valid UTF-8 (all
    that encoding makes); an invalid run is U+FFFD per byte, where sp.decode keeps its valid characters."""
    return [{"type": "ByteFallback"}] if model.byte_fallback else []


def check_hf(model: UnigramModel) -> None:
    """What HF cannot carry: a custom pattern Oniguruma reads otherwise (as for BPE), and
    SentencePiece's USER_DEFINED pieces (HF has no Viterbi bonus; its converter makes them added
    tokens, matched before Viterbi, which gives other ids on some text)."""
    if model.user_defined:
        i = model.user_defined[0]
        raise ExportError(f"piece {i} ({short(model.pieces[i][0])}) is a SentencePiece user-defined piece; "
                          "HF has no such piece (its added tokens match otherwise), so its ids would differ")
    if model.sp_conventions is not None and not model.sp_conventions.dummy_prefix and not _keeps_sp_whitespace(model):
        raise ExportError("this SentencePiece model adds no dummy prefix; HF's Metaspace always adds one, "
                          "so its ids would differ")
    if not model.pre_tokenizer.rewrites:
        check_hf_pattern(model.pre_tokenizer)
    if model.byte_fallback and not model.pre_tokenizer.rewrites:
        raise ExportError("HF's ByteFallback decoder is exported only before Metaspace; this byte-fallback model "
                          f"splits with {model.pre_tokenizer.name}")
    if isinstance(model.text_normalizer, spnormalize.SpNormalizer):
        why = model.text_normalizer.hf_difference()
        if why is not None:
            raise ExportError(f"{why}; HF's ids would differ (keep it as a .model or a tokworkbench model file)")
        if _keeps_sp_whitespace(model) and model.sp_conventions.dummy_prefix and _may_erase(model.text_normalizer.charsmap):
            raise ExportError("this model's SentencePiece map turns some text into nothing; SentencePiece still puts "
                              "its dummy ▁ in front of such a text, HF's Prepend does not, so HF's ids would differ")


def _may_erase(charsmap) -> bool:
    """Whether some key of the map has the empty replacement: SentencePiece's builder stores each
    replacement once, NUL-terminated, so an empty one is a NUL at the start or after another."""
    return charsmap is not None and (charsmap.strings[:1] == b"\0" or b"\0\0" in charsmap.strings)


def write_hf(model: UnigramModel, out) -> list[str]:
    check_hf(model)
    write_atomic(out, json.dumps(to_hf(model), ensure_ascii=False, indent=1).encode("utf-8"))
    notes = [("note: HF sums each word's path scores in float64, SentencePiece the whole text's in float32: where "
              "two segmentations tie, or nearly tie in a long text (where SentencePiece's running sum is large), HF "
              "may pick the other one")] if model.float32 else []
    if _keeps_sp_whitespace(model):  # HF's decoder sees special tokens all or none, sp.decode the unknown one only
        control = [model.pieces[i][0] for i in model.specials if i != model.unk_id]
        notes.append(f"note: HF's decode drops the unknown piece, which sp.decode shows as "
                     f"{model.sp_conventions.unk_surface!r}, unless skip_special_tokens=False"
                     + (f"; with that it shows the control pieces ({', '.join(map(short, control[:3]))}), "
                        "which sp.decode drops" if control else ""))
    if model.byte_fallback and not model.hf_byte_fallback:
        notes.append(BYTE_TEXT_NOTE)
    off = sum(hf_score(score) != score for _, score in model.pieces)
    if off:  # serde_json is not correctly rounded, and some doubles no decimal makes it read
        notes.append(f"note: HF reads {off:,} of the {len(model.pieces):,} scores an ulp off (its JSON reader rounds "
                     "twice, and cannot read some values at all); where two segmentations of a word tie to the ulp "
                     "('1,000': ▁1 , 00 0 or ▁1 , 0 00), HF's ids may differ from this model's")
    return notes + [f"wrote {out}"]


PAD_NAMES = ("<pad>", "[PAD]")  # what a pad piece is called when no padding section names it


def from_hf(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> UnigramModel:
    """A tokenizer.json Unigram model; what this tool cannot reproduce exactly is refused."""
    model = doc["model"]
    pieces = check_pieces(model.get("vocab"), max_token_bytes, ForeignModelError)
    unk_id = model.get("unk_id")
    if not (is_count(unk_id) and unk_id < len(pieces)):
        raise ForeignModelError(f"'unk_id' is {short(unk_id)}; this tool reads Unigram models with an unknown "
                                f"piece (an id in 0..{len(pieces) - 1})")
    specials = _hf_added(doc.get("added_tokens", []), pieces) | {unk_id}
    byte_fallback = model.get("byte_fallback", False)
    if not isinstance(byte_fallback, bool):
        raise ForeignModelError(f"'byte_fallback' must be true or false, not {short(byte_fallback)}")
    byte_ids = _hf_byte_pieces(pieces, specials) if byte_fallback else ()
    decoder = _without_byte_decoder(doc.get("decoder"), byte_fallback)
    names = {pieces[i][0] for i in specials}
    found = read_roles(doc, model, names).to_dict()
    found["unk"] = pieces[unk_id][0]
    if "pad" not in found:
        pads = [t for t in PAD_NAMES if t in names]
        if len(pads) == 1:
            found["pad"] = pads[0]
    try:
        roles = Roles.of(found)
    except TokWorkbenchError:  # two roles on one token: keep only the unknown piece's
        roles = Roles(unk=pieces[unk_id][0])
    pre_spec = doc.get("pre_tokenizer")
    kept = _sp_whitespace_of(doc, pieces[unk_id][0], decoder)
    if kept is not None:
        base, conventions = kept
        normalizer, own = _hf_normalizer(base)
        return UnigramModel(tuple(pieces), normalizer, pre_tokenizer(METASPACE), roles=roles,
                            specials=tuple(sorted(specials)), unk_id=unk_id, text_normalizer=own, hf_floats=True,
                            sp_conventions=conventions, byte_pieces=byte_ids, hf_byte_fallback=byte_fallback)
    split = _whitespace_split(pre_spec)
    if split:  # Sequence[WhitespaceSplit, Metaspace]: the split becomes the last normalizer step
        pre_spec = pre_spec["pretokenizers"][1]
    normalizer, own = _hf_normalizer(doc.get("normalizer"), split)
    pre = _hf_pre_tokenizer(pre_spec, decoder)
    return UnigramModel(tuple(pieces), normalizer, pre, roles=roles, specials=tuple(sorted(specials)),
                        unk_id=unk_id, text_normalizer=own, hf_floats=True, byte_pieces=byte_ids,
                        hf_byte_fallback=byte_fallback)


def _hf_byte_pieces(pieces: list[tuple[str, float]], specials: set[int]) -> tuple[int, ...]:
    """The ids of `<0x00>` ... `<0xFF>`. HF spells an unknown run in them where each of its
    bytes has one (and as <unk> where one is missing, which this tool does not reproduce)."""
    index = {text: i for i, (text, _) in enumerate(pieces)}
    ids = [index.get(piece) for piece in BYTE_PIECES]
    missing = [piece for piece, i in zip(BYTE_PIECES, ids) if i is None]
    if missing:
        raise ForeignModelError(f"byte_fallback with {len(missing)} of the 256 byte pieces missing ({missing[0]} "
                                "first): HF then spells some unknown text as <unk> and some in bytes, which this "
                                "tool reads only with all 256")
    special = next((i for i in ids if i in specials), None)
    if special is not None:
        raise ForeignModelError(f"byte piece {pieces[special][0]} (id {special}) is a special token; HF cuts it "
                                "out of the text before the model, so it spells no unknown byte")
    return tuple(ids)


def _without_byte_decoder(decoder, byte_fallback: bool):
    """The decoder without its ByteFallback step, which a byte-fallback model must have (after
    a Replace of the unknown piece at most: a Metaspace before it would leave the ▁ of byte runs
    as it is, a Fuse no byte token to turn back into text) and no other may."""
    steps = decoder.get("decoders") if isinstance(decoder, dict) and decoder.get("type") == "Sequence" else None
    names = [s.get("type") if isinstance(s, dict) else None for s in steps] if isinstance(steps, list) else []
    if not byte_fallback:
        if "ByteFallback" in names or (isinstance(decoder, dict) and decoder.get("type") == "ByteFallback"):
            raise ForeignModelError("a ByteFallback decoder on a model without byte_fallback is not supported "
                                    "(it would turn <0xNN> pieces into bytes that encoding never makes)")
        return decoder
    if names.count("ByteFallback") != 1 or set(names[: names.index("ByteFallback")]) - {"Replace"}:
        raise ForeignModelError("a byte_fallback Unigram model needs one ByteFallback step in its decoder "
                                "Sequence, before its Metaspace or Fuse; without it HF shows byte pieces as "
                                "their <0xNN> text")
    rest = [s for s in steps if s.get("type") != "ByteFallback"]
    return rest[0] if len(rest) == 1 else {"type": "Sequence", "decoders": rest}


def _hf_added(added, pieces: list[tuple[str, float]]) -> set[int]:
    """The ids of HF's added special tokens, each a piece of the model's own vocabulary. A
    non-special added token is refused: HF cuts it out of the text before the model, which no
    piece of ours does."""
    if not isinstance(added, list):
        raise ForeignModelError(f"'added_tokens' must be a list, not {describe_json(added)}")
    out = set()
    index = {text: i for i, (text, _) in enumerate(pieces)}
    for k, t in enumerate(added):
        if not (isinstance(t, dict) and is_text(t.get("content")) and is_id(t.get("id"))):
            raise ForeignModelError(f"added token {k} must have a text 'content' and a whole-number 'id'")
        content = t["content"]
        tid = index.get(content)  # HF takes a piece's own id, whatever the file says (hf_added_ids)
        if tid is None:
            raise ForeignModelError(f"added token {short(content)} is not a piece of the model; this tool reads "
                                    "added tokens that are pieces of the Unigram vocabulary")
        if not t.get("special", False):
            raise ForeignModelError(f"added token {short(content)} (id {tid}) is not special; HF matches such a "
                                    "token before the model, which this tool does not reproduce")
        out.add(tid)
    return out


def _sp_whitespace_of(doc: dict, unk: str, decoder) -> tuple[object, SpConventions] | None:
    """SentencePiece's rule with whitespace kept, as `to_hf` writes it: the normalizer ends with
    Replace(" " → ▁), after Prepend(▁) where there is a dummy prefix, and a Metaspace that
    prepends nothing cuts the words. Returns the normalizer before those steps (an HF spec) and
    the conventions, or None for any other layout. `decoder`: without its ByteFallback step."""
    pre, spec = doc.get("pre_tokenizer"), doc.get("normalizer")
    if not (isinstance(pre, dict) and pre.get("type") == "Metaspace" and pre.get("replacement") == META
            and pre.get("prepend_scheme") == "never" and pre.get("split", True)):
        return None
    steps = spec.get("normalizers") if isinstance(spec, dict) and spec.get("type") == "Sequence" else None
    if not (isinstance(steps, list) and steps and steps[-1] == SPACE_TO_META):
        return None
    steps = steps[:-1]
    prefix = bool(steps) and steps[-1] == PREPEND_META
    if prefix:
        steps = steps[:-1]
    surface = unk  # HF's decode (skip_special_tokens=False) shows the unknown piece as its text
    parts = decoder.get("decoders") if isinstance(decoder, dict) and decoder.get("type") == "Sequence" else [decoder]
    if isinstance(parts, list) and len(parts) == 2 and isinstance(parts[0], dict) and parts[0].get("type") == "Replace":
        if parts[0].get("pattern") != {"Regex": _unk_pattern(unk)} or not is_text(parts[0].get("content")):
            raise ForeignModelError("a decoder Replace is supported only as the one that shows the unknown piece")
        surface, parts = parts[0]["content"], parts[1:]
    meta = parts[0] if isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], dict) else {}
    if not (meta.get("type") == "Metaspace" and meta.get("replacement") == META
            and (meta.get("prepend_scheme") != "never") == prefix):
        raise ForeignModelError("a normalizer that writes ▁ for spaces needs the Metaspace decoder "
                                f"(prepend_scheme {'always' if prefix else 'never'}), optionally after a Replace "
                                "of the unknown piece")
    base = None if not steps else steps[0] if len(steps) == 1 else {"type": "Sequence", "normalizers": steps}
    if prefix:  # HF prepends to a non-empty normalized text, SentencePiece (our conventions) to a non-empty input
        for step in steps:
            kind = step.get("type") if isinstance(step, dict) else None
            if kind not in _KEEPS_TEXT or (kind == "Precompiled" and _may_erase(_charsmap_of(step))):
                raise ForeignModelError(f"normalizer {short(kind)} before Prepend(▁) may turn a text into nothing, "
                                        "which HF then prepends nothing to; this tool reads Prepend after "
                                        f"{', '.join(_KEEPS_TEXT)} (a map that erases nothing)")
    return base, SpConventions(surface, collapse=False, dummy_prefix=prefix)


_KEEPS_TEXT = ("Precompiled", "NFC", "NFD", "NFKC", "NFKD", "Lowercase")  # never empty a non-empty text


def _charsmap_of(step: dict):
    own = spnormalize.hf_normalizer(step, ForeignModelError)
    return next((s[1] for s in own.steps if s[0] == "Precompiled"), None)


def _whitespace_split(spec) -> bool:
    steps = spec.get("pretokenizers") if isinstance(spec, dict) and spec.get("type") == "Sequence" else None
    return (isinstance(steps, list) and len(steps) == 2 and all(isinstance(s, dict) for s in steps)
            and steps[0].get("type") == "WhitespaceSplit" and steps[1].get("type") == "Metaspace")


def _hf_normalizer(spec, whitespace_split: bool = False) -> tuple[str, object]:
    """A named normalizer of ours where HF's is one, else the model's own (spnormalize.py):
    T5/ALBERT/XLNet's Precompiled map with Replace, Strip, Lowercase..."""
    if whitespace_split:
        return "none", spnormalize.hf_normalizer(spec, ForeignModelError, True)
    if spec is None:
        return "none", None
    if not isinstance(spec, dict):
        raise ForeignModelError(f"'normalizer' must be an object or null, not {describe_json(spec)}")
    kind = spec.get("type")
    if kind in ("NFC", "NFKC"):
        return kind.lower(), None
    if kind == "Sequence" and not spec.get("normalizers"):
        return "none", None
    return "none", spnormalize.hf_normalizer(spec, ForeignModelError)


def _hf_pre_tokenizer(spec, decoder) -> PreTokenizer:
    if spec is None:
        return pre_tokenizer("none")
    if not isinstance(spec, dict):
        raise ForeignModelError(f"'pre_tokenizer' must be an object or null, not {describe_json(spec)}")
    steps = spec.get("pretokenizers") if spec.get("type") == "Sequence" else [spec]
    if isinstance(steps, list) and len(steps) == 1 and isinstance(steps[0], dict):
        step = steps[0]
        if step.get("type") == "Metaspace":
            scheme = step.get("prepend_scheme", "always" if step.get("add_prefix_space", True) else "never")
            if step.get("replacement") != META or scheme != "always" or not step.get("split", True):
                raise ForeignModelError("only Metaspace with replacement ▁, prepend_scheme always and split is supported")
            if not (isinstance(decoder, dict) and decoder.get("type") == "Metaspace"):
                raise ForeignModelError("a Metaspace pre-tokenizer needs the Metaspace decoder")
            decoded = decoder.get("prepend_scheme", "always" if decoder.get("add_prefix_space", True) else "never")
            if decoded == "never" or decoder.get("replacement", META) != META:
                # a decoder that keeps the first ▁ as a space: ours drops it, as the encoding put it there
                raise ForeignModelError(f"a Metaspace decoder with prepend_scheme {short(decoded)} and replacement "
                                        f"{short(decoder.get('replacement'))} under a pre-tokenizer that prepends ▁ is "
                                        "not supported (HF's decode would keep the prepended space)")
            return pre_tokenizer(METASPACE)
        if step.get("type") == "Split" and step.get("behavior") == "Isolated" and not step.get("invert"):
            pat = step.get("pattern")
            if isinstance(pat, dict) and is_text(pat.get("Regex")):
                return from_pattern(pat["Regex"], also_matches=hf_pattern)
    raise ForeignModelError(f"pre-tokenizer {short(spec.get('type'))} is not supported for Unigram "
                            "(Metaspace or one Split pattern is)")


