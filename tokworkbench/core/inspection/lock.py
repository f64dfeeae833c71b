"""A regression lock: the ids a tokenizer gives on a set of texts, pinned in a file.

A tokenizer that changes one merge changes the ids of every text that merge touches, and a
language model trained on the old ids reads the new ones as other tokens without a word. The
lock records, for each text (a file, or a line of one), its SHA-256 and its ids, with the
model's fingerprint (compat.py) and description; `lockcheck.check_lock` encodes the same texts
again and names the first place where the ids part.

The ids are the text's content ids (`encode_content`: a special token's string is plain text),
so a lock means the same for every kind. The token strings of the ids the lock holds are kept
once each, so a report can show what the ids meant when they were locked without the old model.

The file is JSON, one text to a line (so a version-control diff names the texts that changed):

    {"format": "tokworkbench-lock", "version": 1, "lines": false,
     "model": {"kind": ..., "vocab_size": ..., "source": ..., "fingerprint": ...},
     "tokens": {"<id>": "<token text>", ...},
     "texts": [{"name": ..., "line": null, "sha256": ..., "ids": [...]}, ...]}

A lock file is data: every field is checked on reading (`parse_lock`) and anything else is one
LockFileError naming the field.
"""

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tokworkbench.core.compat import fingerprint
from tokworkbench.core.errors import LockFileError
from tokworkbench.core.files.limits import is_count, short
from tokworkbench.core.models.roles import encode_content
from tokworkbench.core.text.corpus import iter_documents, read_regular

LOCK_FORMAT = "tokworkbench-lock"
LOCK_VERSION = 1
MAX_LOCK_FILE_BYTES = 1 << 30
MAX_ID = (1 << 31) - 1  # larger than any vocabulary this tool reads
MAX_NAME_CHARS = 4096
MAX_TOKEN_CHARS = 1 << 20
_HEX64 = re.compile(r"[0-9a-f]{64}")
_DIGITS = re.compile(r"0|[1-9][0-9]{0,9}")
_TOP_FIELDS = ("format", "version", "lines", "model", "tokens", "texts")
_MODEL_FIELDS = ("kind", "vocab_size", "source", "fingerprint")
_TEXT_FIELDS = ("name", "line", "sha256", "ids")


@dataclass(frozen=True)
class ModelDescription:
    kind: str
    vocab_size: int
    source: str  # the name the model was given by: a path or a preset
    fingerprint: str


@dataclass(frozen=True)
class LockedText:
    name: str  # the file, as the lock command listed it
    line: int | None  # 1-based, in --lines locks
    sha256: str
    ids: tuple[int, ...]

    @property
    def where(self) -> str:
        return self.name if self.line is None else f"{self.name} line {self.line}"


@dataclass(frozen=True)
class Lock:
    model: ModelDescription
    lines: bool
    texts: tuple[LockedText, ...]
    tokens: dict[int, str]  # the token text of every id the texts hold

    @property
    def id_count(self) -> int:
        return sum(len(t.ids) for t in self.texts)


@dataclass(frozen=True)
class Text:
    name: str
    line: int | None
    text: str


def sha256_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def describe_model(model, source: str) -> ModelDescription:
    return ModelDescription(model.kind, model.vocab_size, source, fingerprint(model))


def split_lines(name: str, text: str) -> list[Text]:
    """A file's non-empty lines, each without its line end ('\\n'; a '\\r' before it stays)."""
    return [Text(name, k, line) for k, line in enumerate(text.split("\n"), 1) if line]


def gather_texts(paths: Iterable[str | Path], lines: bool, skipped: list[str] | None = None) -> list[Text]:
    """Each file (binary files inside folders are passed over, into `skipped`), or each line."""
    out: list[Text] = []
    for doc in iter_documents(paths, skipped=skipped if skipped is not None else []):
        out += split_lines(doc.name, doc.text) if lines else [Text(doc.name, None, doc.text)]
    return out


def make_lock(model, source: str, texts: Iterable[Text], lines: bool) -> Lock:
    locked, tokens = [], {}
    for t in texts:
        ids = tuple(encode_content(model, t.text))
        for i in set(ids) - tokens.keys():
            tokens[i] = model.token_text(i)
        locked.append(LockedText(t.name, t.line, sha256_of(t.text), ids))
    return Lock(describe_model(model, source), lines, tuple(locked), dict(sorted(tokens.items())))


def lock_json(lock: Lock) -> bytes:
    """The file's bytes: the header fields, then one line per text."""
    m = lock.model
    head = {"format": LOCK_FORMAT, "version": LOCK_VERSION, "lines": lock.lines,
            "model": {"kind": m.kind, "vocab_size": m.vocab_size, "source": m.source, "fingerprint": m.fingerprint}}
    parts = [json.dumps(head)[:-1],
             ', "tokens": ' + json.dumps({str(i): s for i, s in lock.tokens.items()}),
             ', "texts": [']
    rows = [json.dumps({"name": t.name, "line": t.line, "sha256": t.sha256, "ids": list(t.ids)},
                       separators=(",", ":")) for t in lock.texts]
    parts.append("\n" + ",\n".join(rows) + "\n" if rows else "")
    parts.append("]}\n")
    return "".join(parts).encode("ascii")  # JSON's escapes keep any name or token, even a lone surrogate


# -- reading ----------------------------------------------------------------------------------
def read_lock(path: str | Path) -> Lock:
    raw = read_regular(path, MAX_LOCK_FILE_BYTES, "lock file", LockFileError)
    try:
        return parse_lock(raw)
    except LockFileError as exc:
        raise LockFileError(f"{path}: {exc}") from None


def parse_lock(raw: bytes) -> Lock:
    """The lock in `raw`, every field checked; a LockFileError naming the first bad one."""
    doc = _parse_json(raw)
    _fields(doc, _TOP_FIELDS, "the lock")
    if doc["format"] != LOCK_FORMAT:
        raise LockFileError(f"not a lock file: 'format' is {short(doc['format'])}, not {LOCK_FORMAT!r}")
    if doc["version"] != LOCK_VERSION or not is_count(doc["version"]):
        raise LockFileError(f"lock file version {short(doc['version'])} is not one this tool reads ({LOCK_VERSION})")
    if not isinstance(doc["lines"], bool):
        raise LockFileError(f"'lines' must be true or false, not {short(doc['lines'])}")
    model = _model(doc["model"])
    tokens = _tokens(doc["tokens"], model.vocab_size)
    if not isinstance(doc["texts"], list):
        raise LockFileError(f"'texts' must be a list, not {short(doc['texts'])}")
    texts = tuple(_text(k, t, doc["lines"], tokens) for k, t in enumerate(doc["texts"], 1))
    seen: set[tuple[str, int | None]] = set()
    for t in texts:
        if (t.name, t.line) in seen:
            raise LockFileError(f"text {t.where!r} is locked twice")
        seen.add((t.name, t.line))
    return Lock(model, doc["lines"], texts, tokens)


def _parse_json(raw: bytes):
    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise LockFileError(f"a JSON object repeats the key {short(next(k for k in keys if keys.count(k) > 1))}")
        return dict(pairs)

    def no_constant(name):
        raise LockFileError(f"not valid JSON: {name} is not a number a lock holds")

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LockFileError(f"not a lock file: not UTF-8 at byte offset {exc.start}") from None
    try:
        return json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant)
    except json.JSONDecodeError as exc:
        raise LockFileError(f"not a lock file: not valid JSON ({exc})") from None
    except RecursionError:
        raise LockFileError("not a lock file: its JSON nests too deeply to read") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise LockFileError(f"not a lock file: {str(exc).split(';')[0]}") from None


def _fields(doc, names: tuple[str, ...], what: str) -> None:
    if not isinstance(doc, dict):
        raise LockFileError(f"{what} must be a JSON object, not {short(doc)}")
    missing = [n for n in names if n not in doc]
    if missing:
        raise LockFileError(f"{what} lacks the field {missing[0]!r}")
    extra = [n for n in doc if n not in names]
    if extra:
        raise LockFileError(f"{what} has a field this version does not know: {short(extra[0])}")


def _string(value, what: str, limit: int = MAX_NAME_CHARS, empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not empty):
        raise LockFileError(f"{what} must be {'a' if empty else 'a non-empty'} string, not {short(value)}")
    if len(value) > limit:
        raise LockFileError(f"{what} is {len(value):,} characters long; a lock holds at most {limit:,}")
    return value


def _model(doc) -> ModelDescription:
    _fields(doc, _MODEL_FIELDS, "'model'")
    size = doc["vocab_size"]
    if not is_count(size) or size > MAX_ID:
        raise LockFileError(f"'model' 'vocab_size' must be a whole number from 0 to {MAX_ID:,}, not {short(size)}")
    fp = doc["fingerprint"]
    if not isinstance(fp, str) or not _HEX64.fullmatch(fp):
        raise LockFileError(f"'model' 'fingerprint' must be 64 lowercase hex digits, not {short(fp)}")
    return ModelDescription(_string(doc["kind"], "'model' 'kind'", 64), size,
                            _string(doc["source"], "'model' 'source'"), fp)


def _tokens(doc, vocab_size: int) -> dict[int, str]:
    if not isinstance(doc, dict):
        raise LockFileError(f"'tokens' must be a JSON object, not {short(doc)}")
    out: dict[int, str] = {}
    for key, value in doc.items():
        if not _DIGITS.fullmatch(key) or int(key) > MAX_ID:
            raise LockFileError(f"'tokens' key {short(key)} is not an id (a whole number from 0 to {MAX_ID:,})")
        out[int(key)] = _string(value, f"token {key}", MAX_TOKEN_CHARS, empty=True)
    if len(out) > max(vocab_size, 0) and out:
        raise LockFileError(f"'tokens' holds {len(out):,} ids, more than the model's {vocab_size:,}")
    return out


def _text(k: int, doc, lines: bool, tokens: dict[int, str]) -> LockedText:
    _fields(doc, _TEXT_FIELDS, f"text {k}")
    name = _string(doc["name"], f"text {k}'s 'name'")
    if "\0" in name:
        raise LockFileError(f"text {k}'s 'name' holds a NUL character")
    line = doc["line"]
    if lines and not (is_count(line, 1) and line <= MAX_ID):
        raise LockFileError(f"text {k}'s 'line' must be a line number from 1 in a --lines lock, not {short(line)}")
    if not lines and line is not None:
        raise LockFileError(f"text {k}'s 'line' must be null in a lock of whole files, not {short(line)}")
    sha = doc["sha256"]
    if not isinstance(sha, str) or not _HEX64.fullmatch(sha):
        raise LockFileError(f"text {k}'s 'sha256' must be 64 lowercase hex digits, not {short(sha)}")
    ids = doc["ids"]
    if not isinstance(ids, list):
        raise LockFileError(f"text {k}'s 'ids' must be a list of ids, not {short(ids)}")
    for n, i in enumerate(ids):
        if type(i) is not int or i not in tokens:
            what = "an id the lock's 'tokens' names" if type(i) is int else "a whole number"
            raise LockFileError(f"text {k}'s id {n} is {short(i)}, not {what}")
    return LockedText(name, line, sha, tuple(ids))
