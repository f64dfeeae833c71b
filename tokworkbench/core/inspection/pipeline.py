"""A text through a model's pipeline, one stage at a time, as HF's inspectors show it.

HF lets you ask each stage on its own (`normalizer.normalize_str`, `pre_tokenizer.pre_tokenize_str`),
which is how one finds *which* stage turned "ﬁ" into "fi" or dropped a space. This is the same
for any model kind: the normalizer's output with a character diff against the input, the
pre-tokenizer's chunks with their offsets in the normalized text (HF's offsets), the model's ids
and token text for each chunk, what the post-processor adds (BOS/EOS by the model's roles, as
HF's `[CLS] $A [SEP]`), and the decode with where it first differs from the input.

The chunks and ids are the model's own `encode_chunks`, so the view cannot disagree with what the
model encodes; the normalized text is the model's own normalizer (`NormalizesText` where the
model has one of its own, else the named one of `Model.normalizer`).
"""

import difflib
from dataclasses import dataclass

from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.models.protocol import HasUnknown, Model, NormalizesText, OwnDisplay
from tokworkbench.core.models.roles import role_id, with_boundaries
from tokworkbench.core.text.normalize import normalize
from tokworkbench.core.text.patterns import META

DIFF_LIMIT = 4000  # characters of changed middle the diff aligns (difflib is quadratic at worst)
WHY_DIFFERS = {"normalizer": "the normalizer changed the text; decoding does not undo it",
               "unknown": "characters the vocabulary lacks became the unknown token"}


@dataclass(frozen=True)
class Edit:
    """One stretch the normalizer changed: input[start:end] became normalized[out_start:out_end]."""

    start: int
    end: int
    out_start: int
    out_end: int
    before: str
    after: str

    @property
    def op(self) -> str:
        if not self.before:
            return "inserted"
        return "removed" if not self.after else "changed"


@dataclass(frozen=True)
class Chunk:
    """One pre-tokenizer chunk: its text as the model sees it (metaspace's ▁ in it), its
    character offsets in the normalized text (HF's `pre_tokenize_str` offsets), its ids."""

    text: str
    start: int
    end: int
    ids: tuple[int, ...]
    tokens: tuple[str, ...]  # each id's token text (\\xNN where it holds part of a character)


@dataclass(frozen=True)
class PostStage:
    """What the post-processor puts around the content ids (the model's bos/eos roles)."""

    template: str  # "[CLS] $A [SEP]", "$A" when it adds nothing
    before: tuple[int, ...]
    after: tuple[int, ...]
    ids: tuple[int, ...]  # the document: before + content + after


@dataclass(frozen=True)
class Pipeline:
    text: str
    normalizer: str  # its name, as the model labels it
    normalized: str
    edits: tuple[Edit, ...]
    edits_complete: bool  # False when the changed part was too long to align in full
    pre_tokenizer: str
    chunks: tuple[Chunk, ...]
    offsets_in_normalized: bool  # False: the chunks' offsets count in their own joined text
    post: PostStage
    decoded: str
    difference: int | None  # first char where the decode differs from the input; None: equal, or no decode
    why_differs: str  # the stage that explains a difference ("" when equal or unexplained)
    error: str | None = None  # encoding failed: the stages after the normalizer are empty

    @property
    def ids(self) -> list[int]:
        return [t for c in self.chunks for t in c.ids]

    @property
    def lossless(self) -> bool:
        return self.error is None and self.difference is None


def normalized_text(model: Model, text: str) -> str:
    """What the model's normalizer makes of `text`: the text its pre-tokenizer sees."""
    if isinstance(model, NormalizesText):
        return model.normalize_text(text)
    return normalize(text, model.normalizer)


def normalizer_label(model: Model) -> str:
    return model.normalizer_label if isinstance(model, OwnDisplay) else model.normalizer


def char_edits(before: str, after: str, limit: int = DIFF_LIMIT) -> tuple[tuple[Edit, ...], bool]:
    """The stretches where `after` differs from `before`, aligned by characters; and whether the
    alignment is complete (the common prefix and suffix are taken off first, so a change or two
    in a long text costs nothing; a changed middle longer than `limit` is aligned up to it)."""
    if before == after:
        return (), True
    lead = 0
    while lead < min(len(before), len(after)) and before[lead] == after[lead]:
        lead += 1
    tail = 0
    while tail < min(len(before), len(after)) - lead and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    a, b = before[lead:len(before) - tail], after[lead:len(after) - tail]
    complete = len(a) <= limit and len(b) <= limit
    a, b = a[:limit], b[:limit]
    edits = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            edits.append(Edit(lead + i1, lead + i2, lead + j1, lead + j2, a[i1:i2], b[j1:j2]))
    return tuple(edits), complete


def post_stage(model: Model, ids: list[int]) -> PostStage:
    document = with_boundaries(model, ids)
    bos, eos = role_id(model, "bos"), role_id(model, "eos")
    before = tuple(document[:1]) if bos is not None and document[:1] == [bos] and ids[:1] != [bos] else ()
    after = tuple(document[-1:]) if eos is not None and document[-1:] == [eos] and ids[-1:] != [eos] else ()
    roles = model.roles
    template = " ".join(filter(None, (roles.bos, "$A", roles.eos)))
    return PostStage(template, before, after, tuple(document))


def _offsets(model: Model, normalized: str, parts: list[str]) -> tuple[list[tuple[int, int]], bool]:
    """Each chunk's offsets in the normalized text. Chunks join to it, or to the pre-tokenizer's
    rewrite of it (metaspace: ▁ for each space, one ▁ in front, which covers no character, as in
    HF's offsets); anything else keeps offsets in the chunks' own joined text."""
    joined = "".join(parts)
    shift = 0
    ok = joined == normalized
    if not ok and joined == model.pre_tokenizer.surface(normalized):
        shift, ok = len(joined) - len(normalized), True
    out, pos = [], 0
    for part in parts:
        start, end = pos, pos + len(part)
        out.append((max(0, start - shift), max(0, end - shift)) if ok else (start, end))
        pos = end
    return out, ok


def first_difference(a: str, b: str) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def _space_mark(edit: Edit) -> bool:
    """Metaspace's ▁ for a space, or in front: a change the decoder undoes."""
    return edit.before.strip(" ") == "" and set(edit.after) <= {META} and len(edit.before) <= len(edit.after)


def pipeline(model: Model, text: str) -> Pipeline:
    """`text` through each stage of `model` (ordinary encoding: special strings are text)."""
    normalized = normalized_text(model, text)
    edits, complete = char_edits(text, normalized)
    label, pre = normalizer_label(model), model.pre_tokenizer.name
    try:
        pieces = model.encode_chunks(text)
        chunks_at, in_normalized = _offsets(model, normalized, [c for c, _ in pieces])
        chunks = tuple(Chunk(c, a, b, tuple(ids), tuple(model.token_text(t) for t in ids))
                       for (c, ids), (a, b) in zip(pieces, chunks_at))
        ids = [t for c in chunks for t in c.ids]
        decoded = model.decode(ids, errors="replace")
    except TokWorkbenchError as exc:
        empty = PostStage("$A", (), (), ())
        return Pipeline(text, label, normalized, edits, complete, pre, (), True, empty, "", None, "", str(exc))
    at = first_difference(text, decoded)
    why = ""
    if at is not None:
        unk = model.unk_id if isinstance(model, HasUnknown) else None
        changed = [e for e in edits if not _space_mark(e)]
        if changed and changed[0].start <= at:
            why = "normalizer"
        elif unk is not None and unk in ids:
            why = "unknown"
    return Pipeline(text, label, normalized, edits, complete, pre, chunks, in_normalized, post_stage(model, ids),
                    decoded, at, why)
