"""Corpus loading: files and folders become documents, one per file, read one at a time.

A document is the unit that no pair may span. Failures name the file and, for bad UTF-8,
the byte offset, so the user can find the problem. Only regular files are read, and only up to
a size limit: a device (/dev/zero), a FIFO or a runaway file must fail at once with a sentence,
not hang or eat the memory. Walking a folder passes over hidden entries, binary files, special
files, unreadable subfolders, dangling links and linked folders, and says so through `Skipped`.
"""

import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tokworkbench.core.errors import BinaryFileError, CorpusError, InvalidUtf8Error, TokWorkbenchError

_BINARY_SNIFF = 8192
MAX_CORPUS_FILE_BYTES = 4 << 30  # one corpus file; more is almost surely a mistake (or /dev/zero)
_KINDS = (
    (stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
)


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
class Skipped:
    """What walking folders passed over, by kind, so a caller can say so in one line per kind."""

    binary: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    special: list[str] = field(default_factory=list)  # FIFOs, devices, sockets
    unreadable: list[str] = field(default_factory=list)  # subfolders that could not be listed
    broken_links: list[str] = field(default_factory=list)  # dangling or looping symlinks
    linked_folders: list[str] = field(default_factory=list)  # symlinks to folders: not followed

    def lines(self) -> list[str]:
        """One sentence per kind that occurred, naming the first few."""
        kinds = (
            (self.binary, "binary file", "binary files"),
            (self.hidden, "hidden file or folder", "hidden files or folders"),
            (self.special, "special file (FIFO, device or socket)", "special files (FIFOs, devices or sockets)"),
            (self.unreadable, "unreadable folder", "unreadable folders"),
            (self.broken_links, "broken symlink", "broken symlinks"),
            (self.linked_folders, "symlinked folder (not followed)", "symlinked folders (not followed)"),
        )
        return [f"skipped {len(names)} {one if len(names) == 1 else many}: {_some(names)}"
                for names, one, many in kinds if names]


def _some(names: list[str], show: int = 3) -> str:
    more = f", … ({len(names) - show} more)" if len(names) > show else ""
    return ", ".join(names[:show]) + more


@dataclass
class Corpus:
    """The documents in load order; `skipped` names binary files passed over while walking
    folders, and `passed_over` every kind of entry passed over (binary files included)."""

    documents: list[Document]
    skipped: list[str] = field(default_factory=list)
    passed_over: Skipped = field(default_factory=Skipped)

    def stats(self) -> CorpusStats:
        chars = sum(len(d.text) for d in self.documents)
        nbytes = sum(len(d.text.encode("utf-8")) for d in self.documents)
        distinct: set[str] = set()
        for d in self.documents:
            distinct.update(d.text)
        return CorpusStats(len(self.documents), chars, nbytes, len(distinct))


# -- reading one file --------------------------------------------------------------------------
def describe_size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


def kind_of(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def os_reason(exc: OSError) -> str:
    """An OSError as a short phrase; a symlink loop says so."""
    if exc.errno == errno.ELOOP:
        return "a symlink loop (too many levels of symbolic links)"
    return exc.strerror or str(exc)


@contextmanager
def opened_regular(path: str | Path, limit: int, what: str = "file",
                   error: type[TokWorkbenchError] = CorpusError) -> Iterator[tuple[int, int]]:
    """(fd, size) of a regular file of at most `limit` bytes, else `error` with one sentence;
    an OSError inside becomes that error too. Opened non-blocking, so a FIFO is refused
    instead of waiting for a writer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise error(f"cannot read {path}: {os_reason(exc)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"cannot read {path}: it is {kind_of(st.st_mode)}; a {what} must be a regular file")
        if st.st_size > limit:
            raise error(too_big(path, what, limit, st.st_size))
        yield fd, st.st_size
    except OSError as exc:
        raise error(f"cannot read {path}: {os_reason(exc)}") from None
    finally:
        os.close(fd)


def read_regular(path: str | Path, limit: int, what: str = "file",
                 error: type[TokWorkbenchError] = CorpusError) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, else `error` with one sentence.

    The size is checked before reading and the read stops one byte past the limit, so neither
    a device nor a growing file can exhaust the memory."""
    with opened_regular(path, limit, what, error) as (fd, size):
        os.set_blocking(fd, True)
        with os.fdopen(os.dup(fd), "rb") as f:
            data = read_capped(f, limit, size)
    if len(data) > limit:
        raise error(too_big(path, what, limit, None))
    return data


def read_capped(stream, limit: int, expected: int = 0) -> bytes:
    """At most `limit` + 1 bytes of a binary stream, read in blocks (`read(n)` would allocate n
    bytes at once); `expected` is the size to ask for first, when known."""
    chunks: list[bytes] = []
    total = 0
    want = min(limit, expected) + 1
    while total <= limit:
        block = stream.read(want)
        if not block:
            break
        chunks.append(block)
        total += len(block)
        want = min(limit + 1 - total, 1 << 20)
    return b"".join(chunks)


def too_big(path, what: str, limit: int, size: int | None) -> str:
    found = f" is {describe_size(size)}" if size is not None else " grew while it was read"
    return f"{path}{found}; a {what} may be at most {describe_size(limit)}"


_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32LE"), (b"\x00\x00\xfe\xff", "UTF-32BE"), (b"\xff\xfe", "UTF-16LE"),
              (b"\xfe\xff", "UTF-16BE"))


def binary_file(name, head: bytes, nul: int) -> BinaryFileError:
    """The error for a file whose `head` holds a NUL at `nul`: UTF-16 or UTF-32 text, by its
    byte-order mark or its NULs every other byte (ASCII as UTF-16), is named with the way to
    convert it; anything else is a binary file."""
    wide = next((codec for bom, codec in _WIDE_BOMS if head.startswith(bom)), None)
    source = wide.rstrip("LBE") if wide is not None else None  # iconv reads the mark; without one, name the order
    if wide is None and len(head) >= 8:
        even, odd = head[0:64:2], head[1:64:2]
        if odd.count(0) == len(odd) and 0 not in even:
            wide = "UTF-16LE"
        elif even.count(0) == len(even) and 0 not in odd:
            wide = "UTF-16BE"
    if wide is not None:
        return BinaryFileError(f"{name}: looks like {wide} text, not UTF-8; convert it first "
                               f"(iconv -f {source or wide} -t UTF-8 FILE > FILE.utf8)")
    return BinaryFileError(f"{name}: looks like a binary file (NUL byte at offset {nul}); not a text corpus")


def decode_document(name: str, data: bytes, errors: str = "strict") -> Document:
    """Decode one file's bytes; `errors="replace"` turns bad bytes into U+FFFD instead of failing."""
    nul = data.find(b"\x00", 0, _BINARY_SNIFF)
    if nul >= 0:
        raise binary_file(name, data[:_BINARY_SNIFF], nul)
    try:
        return Document(name, data.decode("utf-8", errors=errors))
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise InvalidUtf8Error(
            f"{name}: not valid UTF-8 at byte offset {exc.start} (byte 0x{bad}); convert the file to UTF-8"
        ) from None


def read_document(path: Path, errors: str = "strict", limit: int = MAX_CORPUS_FILE_BYTES) -> Document:
    return decode_document(str(path), read_regular(path, limit, "corpus file"), errors)


# -- finding the files -------------------------------------------------------------------------
def _walk(folder: Path, report: Skipped) -> list[Path]:
    """Regular files under `folder`, sorted as paths; everything else is noted in `report`."""
    files: list[Path] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError as exc:
            if current == folder:
                raise CorpusError(f"cannot read folder {folder}: {os_reason(exc)}") from None
            report.unreadable.append(str(current))
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith("."):
                report.hidden.append(str(path))
            elif entry.is_symlink() and _is_dir(entry):
                report.linked_folders.append(str(path))
            elif _is_dir(entry):
                pending.append(path)
            else:
                _note_file(path, files, report)
    return sorted(files)


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _note_file(path: Path, files: list[Path], report: Skipped) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        report.broken_links.append(str(path))
        return
    if stat.S_ISREG(mode):
        files.append(path)
    else:
        report.special.append(str(path))


def _named(path: Path) -> os.stat_result:
    """The stat of a path named by the user, or a CorpusError that says what is wrong with it."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise CorpusError(f"{path}: a symlink to {os.readlink(path)}, which does not exist") from None
        raise CorpusError(f"{path}: no such file or folder") from None
    except OSError as exc:
        raise CorpusError(f"{path}: {os_reason(exc)}") from None


def list_files(paths: Iterable[str | Path], report: Skipped | None = None) -> list[tuple[Path, Path | None]]:
    """Every file to read, with the folder it was found in (None for a file named directly).
    A named path must be a regular file or a folder; `report` collects what folders held besides."""
    report = report if report is not None else Skipped()
    out: list[tuple[Path, Path | None]] = []
    for raw in paths:
        path = Path(raw)
        mode = _named(path).st_mode
        if stat.S_ISDIR(mode):
            files = _walk(path, report)
            if not files:
                raise CorpusError(f"{path}: folder holds no files" + _besides(report))
            out += [(f, path) for f in files]
        elif stat.S_ISREG(mode):
            out.append((path, None))
        else:
            raise CorpusError(f"cannot read {path}: it is {kind_of(mode)}; a corpus file must be a regular file")
    return out


def _besides(report: Skipped) -> str:
    lines = report.lines()
    return f" ({'; '.join(lines)})" if lines else ""


def iter_documents(
    paths: Iterable[str | Path],
    errors: str = "strict",
    skipped: list[str] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    report: Skipped | None = None,
) -> Iterator[Document]:
    """Stream documents. Named files must be text; binary files inside folders are skipped
    (and listed in `skipped` when given). `report` collects every kind of entry passed over.
    `progress(bytes_done, bytes_total, name)` follows."""
    report = report if report is not None else Skipped()
    files = list_files(paths, report)
    sizes = [_size(f) for f, _ in files]
    total = sum(sizes)
    done = 0
    texts_in: dict[Path, int] = {}
    for (f, folder), size in zip(files, sizes):
        try:
            doc = read_document(f, errors)
        except CorpusError as exc:
            if folder is None or not isinstance(exc, BinaryFileError) or skipped is None:
                raise
            skipped.append(str(f))
            report.binary.append(str(f))
            doc = None
        done += size
        if progress is not None:
            progress(done, total, str(f))
        if folder is not None:
            texts_in[folder] = texts_in.get(folder, 0) + (doc is not None)
        if doc is not None:
            yield doc
    for folder, n in texts_in.items():
        if n == 0:
            raise CorpusError(f"{folder}: folder holds no text files (all are binary)")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {os_reason(exc)}") from None


def load_corpus(
    paths: Iterable[str | Path],
    errors: str = "strict",
    progress: Callable[[int, int, str], None] | None = None,
) -> Corpus:
    paths = list(paths)
    if not paths:
        raise CorpusError("no corpus given: name at least one file or folder")
    skipped: list[str] = []
    report = Skipped()
    docs = list(iter_documents(paths, errors, skipped, progress, report))
    require_text(sum(len(d.text) for d in docs))
    return Corpus(docs, skipped, report)


def require_text(chars: int) -> None:
    """Training on nothing is a mistake worth one clear sentence, wherever it is caught."""
    if chars == 0:
        raise CorpusError("the corpus is empty: its files hold no text")
