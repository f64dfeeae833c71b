"""Hugging Face `tokenizer.json` with a Unigram model, both ways.

A `Unigram` model with any `unk_id`, the Metaspace pre-tokenizer and decoder (or a Split pattern
and Fuse); its added special tokens are the special pieces. Roles come from where HF keeps them
(hf_common.py), PAD also from the names `<pad>`/`[PAD]` when exactly one special piece has one;
UNK is the unk piece.
"""

import json

from tokworkbench.core.errors import ExportError, ForeignModelError, TokWorkbenchError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, describe_json, is_count, is_text, short
from tokworkbench.core.formats.hf_common import check_hf_pattern, hf_pattern, padding_of, post_processor_of, read_roles
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.text import spnormalize
from tokworkbench.core.text.patterns import METASPACE
from tokworkbench.core.text.pretokenize import PreTokenizer, from_pattern, pre_tokenizer
from tokworkbench.core.text.spnormalize import META
from tokworkbench.core.unigram.model import UnigramModel
from tokworkbench.core.unigram.modelfile import check_pieces

# -- Hugging Face tokenizer.json -------------------------------------------------------------
METASPACE_HF = {"type": "Metaspace", "replacement": META, "prepend_scheme": "always", "split": True}


def to_hf(model: UnigramModel) -> dict:
    """Every piece keeps its id: the special ones are added special tokens at their own ids,
    BOS/EOS a TemplateProcessing and PAD the padding, as for BPE."""
    pre = model.pre_tokenizer
    if pre.rewrites:
        pre_tok, decoder = dict(METASPACE_HF), dict(METASPACE_HF)
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
        "normalizer": (model.text_normalizer.to_hf() if model.text_normalizer is not None
                       else {"type": model.normalizer.upper()} if model.normalizer != "none" else None),
        "pre_tokenizer": pre_tok,
        "post_processor": post_processor_of(model),
        "decoder": decoder,
        "model": {"type": "Unigram", "unk_id": model.unk_id, "vocab": [[t, s] for t, s in model.pieces],
                  "byte_fallback": False},
    }


def check_hf(model: UnigramModel) -> None:
    """What HF cannot carry: a custom pattern Oniguruma reads otherwise (as for BPE), and
    SentencePiece's USER_DEFINED pieces (HF has no Viterbi bonus; its converter makes them added
    tokens, matched before Viterbi, which gives other ids on some text)."""
    if model.user_defined:
        i = model.user_defined[0]
        raise ExportError(f"piece {i} ({short(model.pieces[i][0])}) is a SentencePiece user-defined piece; "
                          "HF has no such piece (its added tokens match otherwise), so its ids would differ")
    if model.sp_conventions is not None and not model.sp_conventions.dummy_prefix:
        raise ExportError("this SentencePiece model adds no dummy prefix; HF's Metaspace always adds one, "
                          "so its ids would differ")
    if not model.pre_tokenizer.rewrites:
        check_hf_pattern(model.pre_tokenizer)
    if isinstance(model.text_normalizer, spnormalize.SpNormalizer):
        why = model.text_normalizer.hf_difference()
        if why is not None:
            raise ExportError(f"{why}; HF's ids would differ (keep it as a .model or a tokworkbench model file)")


def write_hf(model: UnigramModel, out) -> list[str]:
    check_hf(model)
    write_atomic(out, json.dumps(to_hf(model), ensure_ascii=False, indent=1).encode("utf-8"))
    notes = ["note: HF sums path scores in float64 and SentencePiece in float32: where two segmentations tie "
             "exactly, HF may pick the other one"] if model.float32 else []
    if model.sp_conventions is not None and not model.sp_conventions.collapse:
        notes.append("note: this SentencePiece model keeps whitespace, and SentencePiece puts its ▁ before a leading "
                     "space where HF's Metaspace does not: a text that starts with a space gets other ids in HF")
    return notes + [f"wrote {out}"]


PAD_NAMES = ("<pad>", "[PAD]")  # what a pad piece is called when no padding section names it


def from_hf(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> UnigramModel:
    """A tokenizer.json Unigram model; what this tool cannot reproduce exactly is refused."""
    model = doc["model"]
    if model.get("byte_fallback"):
        raise ForeignModelError("Unigram with byte_fallback is not supported (unknown characters would become bytes)")
    pieces = check_pieces(model.get("vocab"), max_token_bytes, ForeignModelError)
    unk_id = model.get("unk_id")
    if not (is_count(unk_id) and unk_id < len(pieces)):
        raise ForeignModelError(f"'unk_id' is {short(unk_id)}; this tool reads Unigram models with an unknown "
                                f"piece (an id in 0..{len(pieces) - 1})")
    specials = _hf_added(doc.get("added_tokens", []), pieces) | {unk_id}
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
    split = _whitespace_split(pre_spec)
    if split:  # Sequence[WhitespaceSplit, Metaspace]: the split becomes the last normalizer step
        pre_spec = pre_spec["pretokenizers"][1]
    normalizer, own = _hf_normalizer(doc.get("normalizer"), split)
    pre = _hf_pre_tokenizer(pre_spec, doc.get("decoder"))
    return UnigramModel(tuple(pieces), normalizer, pre, roles=roles, specials=tuple(sorted(specials)),
                        unk_id=unk_id, text_normalizer=own, hf_floats=True)


def _hf_added(added, pieces: list[tuple[str, float]]) -> set[int]:
    """The ids of HF's added special tokens, each a piece of the model's own vocabulary. A
    non-special added token is refused: HF cuts it out of the text before the model, which no
    piece of ours does."""
    if not isinstance(added, list):
        raise ForeignModelError(f"'added_tokens' must be a list, not {describe_json(added)}")
    out = set()
    for k, t in enumerate(added):
        if not (isinstance(t, dict) and is_text(t.get("content")) and is_count(t.get("id"))):
            raise ForeignModelError(f"added token {k} must have a text 'content' and a whole-number 'id'")
        tid, content = t["id"], t["content"]
        if tid >= len(pieces) or pieces[tid][0] != content:
            raise ForeignModelError(f"added token {short(content)} (id {tid}) is not the model's piece {tid}; this "
                                    "tool reads added tokens that are pieces of the Unigram vocabulary")
        if not t.get("special", False):
            raise ForeignModelError(f"added token {short(content)} (id {tid}) is not special; HF matches such a "
                                    "token before the model, which this tool does not reproduce")
        out.add(tid)
    return out


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
            return pre_tokenizer(METASPACE)
        if step.get("type") == "Split" and step.get("behavior") == "Isolated" and not step.get("invert"):
            pat = step.get("pattern")
            if isinstance(pat, dict) and is_text(pat.get("Regex")):
                return from_pattern(pat["Regex"], also_matches=hf_pattern)
    raise ForeignModelError(f"pre-tokenizer {short(spec.get('type'))} is not supported for Unigram "
                            "(Metaspace or one Split pattern is)")


