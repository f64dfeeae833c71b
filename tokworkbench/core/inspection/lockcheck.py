"""Checking a regression lock (lock.py): the same texts encoded again, and the first change.

The texts are read again from their files and must be the ones locked (the same SHA-256):
a lock checks a tokenizer on fixed texts, so a text that changed is an error, not an answer.
The first text whose ids differ is the answer; its report names the id where the runs part and
the character where the new encoding's token at that id starts (an offset in the text as the
model's normalizer gives it, which is the file's own offset for a model that does not
normalize), with the ids either side and what each meant. A fingerprint that changed while
every id stayed the same is a change too: the ids now stand for other tokens.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from tokworkbench.core.errors import CorpusError, LockFileError, TokWorkbenchError
from tokworkbench.core.inspection.escape import quote
from tokworkbench.core.inspection.lock import Lock, LockedText, ModelDescription, describe_model, sha256_of, split_lines
from tokworkbench.core.inspection.segments import text_spans
from tokworkbench.core.models.roles import encode_content
from tokworkbench.core.text.corpus import read_document

AROUND = 3  # ids shown either side of the first differing one
CONTEXT = 20  # characters of text shown either side of the offset
SHORT_FP = 16


@dataclass(frozen=True)
class Change:
    where: str  # "corpus/a.txt" or "corpus/a.txt line 3"
    text_number: int  # 1-based, in the lock's order
    index: int  # the first id that differs
    offset: int | None  # the character where it starts; None when the text no longer encodes
    context: str  # the text around the offset
    context_at: int  # where in `context` the offset falls
    locked: tuple[tuple[int, int, str], ...]  # (position, id, token) around `index`
    now: tuple[tuple[int, int, str], ...]
    locked_count: int
    now_count: int
    error: str | None = None  # why the text no longer encodes


@dataclass(frozen=True)
class CheckResult:
    texts: int
    ids: int
    change: Change | None
    locked_model: ModelDescription
    now_model: ModelDescription

    @property
    def locked_fingerprint(self) -> str:
        return self.locked_model.fingerprint

    @property
    def now_fingerprint(self) -> str:
        return self.now_model.fingerprint

    @property
    def fingerprint_changed(self) -> bool:
        return self.locked_fingerprint != self.now_fingerprint

    def model_lines(self) -> list[str]:
        """The fingerprint, and the kind and vocabulary size where they changed."""
        was, now = self.locked_model, self.now_model
        out = [f"  fingerprint changed: {was.fingerprint[:SHORT_FP]}… locked, {now.fingerprint[:SHORT_FP]}… now"
               if self.fingerprint_changed else f"  fingerprint unchanged ({now.fingerprint[:SHORT_FP]}…)"]
        if (was.kind, was.vocab_size) != (now.kind, now.vocab_size):
            out.append(f"  model    locked: {was.kind}, vocabulary {was.vocab_size:,} ({was.source}); "
                       f"now: {now.kind}, vocabulary {now.vocab_size:,} ({now.source})")
        return out

    @property
    def identical(self) -> bool:
        return self.change is None and not self.fingerprint_changed

    def lines(self) -> list[str]:
        if self.identical:
            return [f"{counted(self.texts, 'text')}, {counted(self.ids, 'id')}: identical"]
        model = self.model_lines()
        c = self.change
        if c is None:
            return [f"CHANGED: {counted(self.texts, 'text')}, {counted(self.ids, 'id')} are identical, but the ids now stand for other "
                    + "tokens", *model]
        head = f"CHANGED: {c.where} (text {c.text_number:,} of {self.texts:,}): "
        if c.error is not None:
            return [head + "it no longer encodes", f"  error    {c.error}", *model]
        return [head + f"the ids part at character {c.offset:,}, id {c.index:,} "
                f"({c.locked_count:,} ids locked, {c.now_count:,} now)",
                "  text     " + quote(c.context[:c.context_at]) + " | " + quote(c.context[c.context_at:]),
                "  locked   " + _run(c.locked), "  now      " + _run(c.now), *model]


def _run(items: Sequence[tuple[int, int, str]]) -> str:
    return "  ".join(f"[{k}] {i} {quote(token)}" for k, i, token in items) or "(no ids)"


def locked_texts(lock: Lock, root: str | Path | None = None) -> Iterator[tuple[LockedText, str]]:
    """Each locked text with its text read again (each file once), checked against its SHA-256.
    Names are resolved against `root` when given, and then must stay inside it."""
    name, lines, doc_text = None, {}, ""
    for t in lock.texts:
        if t.name != name:
            name = t.name
            doc_text = read_document(_path(t.name, root)).text
            lines = {x.line: x.text for x in split_lines(t.name, doc_text)} if lock.lines else {}
        text = lines.get(t.line) if lock.lines else doc_text
        if text is None:
            raise CorpusError(f"{t.where}: the file has no such non-empty line now; the lock pins fixed texts, "
                              "so lock again after changing them")
        if sha256_of(text) != t.sha256:
            raise CorpusError(f"{t.where}: the text is not the one locked (its SHA-256 differs); the lock pins "
                              "fixed texts, so lock again after changing them")
        yield t, text


def _path(name: str, root: str | Path | None) -> Path:
    if root is None:
        return Path(name)
    pure = PurePath(name)
    if pure.is_absolute() or ".." in pure.parts:
        raise LockFileError(f"text {name!r} is not a path inside a folder, so --texts cannot find it there")
    return Path(root) / pure


def check_lock(lock: Lock, model, root: str | Path | None = None, source: str = "") -> CheckResult:
    """Every text encoded again; stops at the first whose ids differ. `source` names the model."""
    texts = ids = 0
    now_model = describe_model(model, source or lock.model.source)
    for number, (t, text) in enumerate(locked_texts(lock, root), 1):
        try:
            now = encode_content(model, text)
        except TokWorkbenchError as exc:
            change = Change(t.where, number, 0, None, "", 0, (), (), len(t.ids), 0, str(exc))
            return CheckResult(len(lock.texts), lock.id_count, change, lock.model, now_model)
        if tuple(now) != t.ids:
            change = first_change(t, number, text, now, lock.tokens, model)
            return CheckResult(len(lock.texts), lock.id_count, change, lock.model, now_model)
        texts += 1
        ids += len(now)
    return CheckResult(texts, ids, None, lock.model, now_model)


def first_index(a: Sequence[int], b: Sequence[int]) -> int:
    """Where two id runs part (the shorter one's length when one starts the other)."""
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return k
    return min(len(a), len(b))


def first_change(t: LockedText, number: int, text: str, now: list[int], tokens: dict[int, str], model) -> Change:
    k = first_index(t.ids, now)
    shown, offset = char_offset(model, text, now, k)
    lo, at = max(0, offset - CONTEXT), offset
    window = range(max(0, k - AROUND), k + AROUND + 1)
    locked = tuple((p, t.ids[p], tokens[t.ids[p]]) for p in window if p < len(t.ids))
    current = tuple((p, now[p], model.token_text(now[p])) for p in window if p < len(now))
    return Change(t.where, number, k, offset, shown[lo:offset + CONTEXT], at - lo, locked, current,
                  len(t.ids), len(now))


def char_offset(model, text: str, ids: list[int], k: int) -> tuple[str, int]:
    """The text as the model sees it, and the character where id `k` of `ids` starts there
    (its end, past the last id). Where the ids spell the text's own bytes (byte-level BPE with
    no normalizer) that is counted from the bytes of the first `k`; otherwise from the token
    spans, or, where the spans do not give these ids, from the decoded bytes alone."""
    data = text.encode("utf-8", "surrogatepass")
    try:
        if model.decode_bytes(ids) == data:
            return text, len(data[:len(model.decode_bytes(ids[:k]))].decode("utf-8", "ignore"))
        normalized, spans = text_spans(model, text)
    except TokWorkbenchError:
        spans, normalized = [], text
    if [s.token for s in spans] == ids:
        if k < len(spans):
            return normalized, spans[k].start
        return normalized, spans[-1].end if spans else 0
    return text, len(model.decode_bytes(ids[:k]).decode("utf-8", "ignore"))


def counted(n: int, noun: str) -> str:
    """"1 text", "2 texts": what the reports count."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
