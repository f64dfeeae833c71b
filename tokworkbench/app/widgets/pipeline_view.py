"""The encode tab's pipeline view: the text stage by stage (core/inspection/pipeline.py), one
stage a line, as HF's `normalize_str` / `pre_tokenize_str` would show each. Tokens are clicks
that select them (the details line, the merge tree), as in the token view."""

from rich.style import Style
from rich.text import Text

from tokworkbench.app.render import Palette
from tokworkbench.core.inspection.escape import quote, visible
from tokworkbench.core.inspection.pipeline import WHY_DIFFERS, Pipeline

SHOWN_CHUNKS = 400  # chunks drawn at most; the counts cover them all
SHOWN_CHARS = 2_000  # of the input with the normalizer's changes marked (a long paste lays out slowly)
REMOVED, INSERTED, CHANGED = "strike #ff7b7b", "bold #98c379", "bold #e5c07b"


def _select(tid: int) -> Style:
    return Style.from_meta({"@click": f"screen.select_token({tid})"})


def _head(out: Text, number: int, name: str, what: str) -> None:
    out.append(f"{number} {name:<15}", "bold")  # "post-processor" and a space
    out.append(what, "dim")
    out.append("\n")


def _normalizer(out: Text, p: Pipeline) -> None:
    if not p.edits:
        _head(out, 1, "normalizer", f"{p.normalizer}: no change")
        return
    more = "" if p.edits_complete else " in its first part (a longer changed stretch is not aligned)"
    _head(out, 1, "normalizer", f"{p.normalizer}: {len(p.edits)} change{'s' if len(p.edits) != 1 else ''}{more} — "
          "removed struck out red, inserted green, changed yellow (input → normalized)")
    out.append("  ")
    pos = 0
    for e in p.edits:
        if e.start >= SHOWN_CHARS:
            break
        out.append(visible(p.text[pos:e.start]))
        if e.op == "inserted":
            out.append(visible(e.after), INSERTED)
        elif e.op == "removed":
            out.append(visible(e.before), REMOVED)
        else:
            out.append(visible(e.before), REMOVED)
            out.append("→", "dim")
            out.append(visible(e.after), CHANGED)
        pos = e.end
    out.append(visible(p.text[pos:max(pos, SHOWN_CHARS)]))
    if len(p.text) > max(pos, SHOWN_CHARS):
        out.append(f" … {len(p.text) - max(pos, SHOWN_CHARS):,} more characters", "dim")
    out.append("\n")


def _chunks(out: Text, p: Pipeline, palette: Palette) -> None:
    where = "offsets in the normalized text" if p.offsets_in_normalized else "offsets in the chunks' own text"
    _head(out, 2, "pre-tokenizer", f"{p.pre_tokenizer}: {len(p.chunks):,} chunk{'s' if len(p.chunks) != 1 else ''}, "
          f"{where}")
    out.append("  ")
    for k, c in enumerate(p.chunks[:SHOWN_CHUNKS]):
        out.append("  " if k else "")
        out.append(visible(c.text) or "∅", palette.tokens[k % len(palette.tokens)])
        out.append(f" {c.start}–{c.end}", "dim")
    if len(p.chunks) > SHOWN_CHUNKS:
        out.append(f" … {len(p.chunks) - SHOWN_CHUNKS:,} more", "dim")
    out.append("\n")


def _model(out: Text, p: Pipeline, palette: Palette, kind: str) -> None:
    ids = p.ids
    _head(out, 3, "model", f"{kind}: {len(ids):,} token{'s' if len(ids) != 1 else ''} (id), chunks apart by │; "
          "click: details, m: tree")
    out.append("  ")
    ordinal = 0
    for k, c in enumerate(p.chunks[:SHOWN_CHUNKS]):
        out.append(" │ " if k else "", "dim")
        if not c.ids:
            out.append(f"{quote(c.text)} no token", "dim")
            continue
        for j, (tid, token) in enumerate(zip(c.ids, c.tokens)):
            out.append(" " if j else "")
            out.append(visible(token) or "∅", Style.parse(palette.tokens[ordinal % len(palette.tokens)]) + _select(tid))
            out.append(f"({tid})", Style(dim=True) + _select(tid))
            ordinal += 1
    if len(p.chunks) > SHOWN_CHUNKS:
        out.append(" …", "dim")
    out.append("\n")


def _post(out: Text, p: Pipeline, palette: Palette, names: dict[int, str]) -> None:
    post = p.post
    if not post.before and not post.after:
        why = "no token has the bos or eos role (roles are set in settings, c)" if post.template == "$A" else \
            "the ids already begin and end with them"
        _head(out, 4, "post-processor", f"{post.template}: adds nothing — {why}")
        return
    _head(out, 4, "post-processor", f"{post.template}: adds {len(post.before) + len(post.after)} id"
          f"{'s' if len(post.before) + len(post.after) != 1 else ''} (encode_document, ctrl+t)")
    out.append("  ")
    for tid in post.before:
        out.append(f"⟨{names.get(tid, tid)}⟩ {tid}", palette.special)
        out.append(" in front  ", "dim")
    for tid in post.after:
        out.append(f"⟨{names.get(tid, tid)}⟩ {tid}", palette.special)
        out.append(" behind", "dim")
    out.append("\n")


def _decode(out: Text, p: Pipeline) -> None:
    if p.lossless:
        _head(out, 5, "decode", "the ids decode to the input")
        out.append("  ✓ equal", "bold green")
        return
    at = p.difference or 0
    _head(out, 5, "decode", WHY_DIFFERS.get(p.why_differs, "the decoded text is not the input"))
    out.append(f"  ✗ differs at char {at}: ", "bold red")
    out.append(f"{quote(p.text[at:at + 12])} → {quote(p.decoded[at:at + 12])}")


def pipeline_text(p: Pipeline, palette: Palette, kind: str, names: dict[int, str]) -> Text:
    """The five stages; `names`: role names of ids (⟨bos⟩), `kind`: how the model stage is titled."""
    out = Text(no_wrap=False, overflow="fold")
    _normalizer(out, p)
    if p.error:
        out.append("✗ cannot encode: ", "bold red")
        out.append(p.error)
        return out
    _chunks(out, p, palette)
    _model(out, p, palette, kind)
    _post(out, p, palette, names)
    _decode(out, p)
    return out
