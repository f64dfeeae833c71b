"""`tokworkbench pipeline -m MODEL (TEXT | -f FILE)`: a text through each stage of a model, as
HF's `normalize_str` / `pre_tokenize_str` inspectors show it, for any kind and any file: what the
normalizer changed, the pre-tokenizer's chunks with their offsets, the model's tokens per chunk,
what the post-processor adds, and where the decode first differs. The same core view as the app's
encode tab (ctrl+l); JSON gives every stage in full for scripts."""

import argparse
import dataclasses
import json

from tokworkbench.cli.options import MODEL_FLAGS, emit, emit_json, input_text, load, model_options, text_options
from tokworkbench.core.inspection.escape import quote
from tokworkbench.core.inspection.lockcheck import counted
from tokworkbench.core.inspection.pipeline import WHY_DIFFERS, Pipeline, pipeline
from tokworkbench.core.models.roles import role_ids
from tokworkbench.core.registry.kinds import kind_of

FLAGS = MODEL_FLAGS
FORMATS = ("text", "json")


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("pipeline", help="a text through each stage: normalizer, pre-tokenizer, model, "
                       "post-processor, decode",
                       description="Show what each stage of a model does to a text: the normalizer's changes "
                       "(input → normalized), the pre-tokenizer's chunks with their offsets in the normalized "
                       "text, the model's tokens for each chunk, the ids the post-processor adds (BOS/EOS by the "
                       "model's roles) and whether the ids decode back to the input.")
    p.add_argument("-m", "--model", required=True, help="a model file or a preset (cl100k_base, o200k_base, gpt2)")
    text_options(p)
    p.add_argument("--format", choices=FORMATS, default="text")
    model_options(p)
    return p


def run(args) -> int:
    tok = load(args, args.model)
    stages = pipeline(tok, input_text(args))
    if args.format == "json":
        emit_json(json.dumps(as_json(stages), ensure_ascii=False))
    else:
        names = {tid: role for role, tid in role_ids(tok).items()}
        emit("\n".join(describe(stages, kind_of(tok).title, names)))
    return 1 if stages.error else 0  # the stages up to where it failed are shown; scripts see the failure


def as_json(p: Pipeline) -> dict:
    out = dataclasses.asdict(p)
    out["ids"], out["lossless"] = p.ids, p.lossless
    return out


def describe(p: Pipeline, kind: str, names: dict[int, str]) -> list[str]:
    """The five stages, a heading line each and what the stage made under it."""
    lines = [_head(1, "normalizer", f"{p.normalizer}: " + (counted(len(p.edits), "change")
                                                            if p.edits else "no change"))]
    for e in p.edits:
        lines.append(f"  {e.start}–{e.end} {e.op}: {quote(e.before)} → {quote(e.after)}")
    if not p.edits_complete:
        lines.append("  … the changed stretch is longer than is aligned; the rest is not listed")
    if p.error:
        return lines + [f"✗ cannot encode: {p.error}"]
    where = "offsets in the normalized text" if p.offsets_in_normalized else "offsets in the chunks' own text"
    lines.append(_head(2, "pre-tokenizer", f"{p.pre_tokenizer}: {counted(len(p.chunks), 'chunk')}, {where}"))
    lines.append(_head(3, "model", f"{kind}: {counted(len(p.ids), 'token')}, id 'token' for each chunk"))
    for c in p.chunks:
        tokens = "  ".join(f"{tid} {quote(t)}" for tid, t in zip(c.ids, c.tokens)) or "no token"
        lines.append(f"  {c.start}–{c.end} {quote(c.text)}: {tokens}")
    post = p.post
    added = len(post.before) + len(post.after)
    lines.append(_head(4, "post-processor", f"{post.template}: " + (f"adds {counted(added, 'id')}" if added else
                                                                    "adds nothing")))
    if added:
        lines.append("  " + "  ".join([f"⟨{names.get(t, t)}⟩ {t} in front" for t in post.before]
                                      + [f"⟨{names.get(t, t)}⟩ {t} behind" for t in post.after]))
    if p.lossless:
        lines.append(_head(5, "decode", "✓ the ids decode to the input"))
    else:
        at = p.difference or 0
        why = WHY_DIFFERS.get(p.why_differs, "the decoded text is not the input")
        lines.append(_head(5, "decode", f"✗ differs at char {at}: {why}"))
        lines.append(f"  {quote(p.text[at:at + 12])} → {quote(p.decoded[at:at + 12])}")
    return lines


def _head(number: int, name: str, what: str) -> str:
    return f"{number} {name:<15}{what}"
