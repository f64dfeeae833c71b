"""Corpus loading: files and folders become documents, one per file, read one at a time.

A document is the unit that no pair may span. Failures name the file and, for bad UTF-8,
the byte offset, so the user can find the problem; nothing is silently dropped except binary
files met while walking a folder, which are reported through `skipped`.
"""

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CorpusError

_BINARY_SNIFF = 8192


@dataclass(frozen=True)
class Document:
    name: str
    text: str


@dataclass(frozen=True)
class CorpusStats:
    documents: int
    chars: int
    bytes: int
    distinct_chars: int


@dataclass
class Corpus:
    """The documents in load order; `skipped` names files passed over while walking folders."""

    documents: list[Document]
    skipped: list[str] = field(default_factory=list)

    def stats(self) -> CorpusStats:
        chars = sum(len(d.text) for d in self.documents)
        nbytes = sum(len(d.text.encode("utf-8")) for d in self.documents)
        distinct: set[str] = set()
        for d in self.documents:
            distinct.update(d.text)
        return CorpusStats(len(self.documents), chars, nbytes, len(distinct))


def decode_document(name: str, data: bytes, errors: str = "strict") -> Document:
    """Decode one file's bytes; `errors="replace"` turns bad bytes into U+FFFD instead of failing."""
    nul = data.find(b"\x00", 0, _BINARY_SNIFF)
    if nul >= 0:
        raise CorpusError(f"{name}: looks like a binary file (NUL byte at offset {nul}); not a text corpus")
    try:
        return Document(name, data.decode("utf-8", errors=errors))
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise CorpusError(
            f"{name}: not valid UTF-8 at byte offset {exc.start} (byte 0x{bad}); "
            "fix the file or load it with invalid bytes replaced (--replace-invalid)"
        ) from None


def read_document(path: Path, errors: str = "strict") -> Document:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc.strerror or exc}") from None
    return decode_document(str(path), data, errors)


def _walk(folder: Path) -> list[Path]:
    files = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).parts
        if any(part.startswith(".") for part in rel):
            continue
        if p.is_file():
            files.append(p)
    return files


def list_files(paths: Iterable[str | Path]) -> list[tuple[Path, Path | None]]:
    """Every file to read, with the folder it was found in (None for a file named directly)."""
    out: list[tuple[Path, Path | None]] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = _walk(path)
            if not files:
                raise CorpusError(f"{path}: folder holds no files")
            out += [(f, path) for f in files]
        elif path.exists():
            out.append((path, None))
        else:
            raise CorpusError(f"{path}: no such file or folder")
    return out


def iter_documents(
    paths: Iterable[str | Path],
    errors: str = "strict",
    skipped: list[str] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> Iterator[Document]:
    """Stream documents. Named files must be text; binary files inside folders are skipped
    (and listed in `skipped` when given). `progress(bytes_done, bytes_total, name)` follows."""
    files = list_files(paths)
    total = sum(f.stat().st_size for f, _ in files)
    done = 0
    texts_in: dict[Path, int] = {}
    for f, folder in files:
        try:
            doc = read_document(f, errors)
        except CorpusError as exc:
            if folder is None or "binary file" not in str(exc) or skipped is None:
                raise
            skipped.append(str(f))
            doc = None
        done += f.stat().st_size
        if progress is not None:
            progress(done, total, str(f))
        if folder is not None:
            texts_in[folder] = texts_in.get(folder, 0) + (doc is not None)
        if doc is not None:
            yield doc
    for folder, n in texts_in.items():
        if n == 0:
            raise CorpusError(f"{folder}: folder holds no text files (all are binary)")


def load_corpus(
    paths: Iterable[str | Path],
    errors: str = "strict",
    progress: Callable[[int, int, str], None] | None = None,
) -> Corpus:
    paths = list(paths)
    if not paths:
        raise CorpusError("no corpus given: name at least one file or folder")
    skipped: list[str] = []
    docs = list(iter_documents(paths, errors, skipped, progress))
    require_text(sum(len(d.text) for d in docs))
    return Corpus(docs, skipped)


def require_text(chars: int) -> None:
    """Training on nothing is a mistake worth one clear sentence, wherever it is caught."""
    if chars == 0:
        raise CorpusError("the corpus is empty: its files hold no text")
