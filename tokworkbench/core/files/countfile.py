"""Chunk-count files: what counting a corpus found, so training can start from it elsewhere.

A count file holds the distinct chunks in order of first appearance with their counts (exactly
a `ChunkCounts` without layouts), the settings that produced them (normalizer, pre-tokenizer
name and pattern) and the corpus summary (documents, chars, bytes). Training from it gives the
same merges as training from the text, for every tie-break and both units.

The format is a numpy `.npz` archive (a zip of `.npy` arrays). It is read member by member, never
with pickle: each member's declared size and each .npy header's dtype and shape are checked
before anything is inflated (at most `MAX_INFLATION` times the file, where real files inflate
2-7 times) or allocated:
- `header`: UTF-8 JSON as uint8, `{"format": "tokworkbench-counts", "version": 1, "normalizer",
  "split", "pattern", "documents", "chars", "bytes", "chunks"}`;
- `chunk_bytes`: every chunk's UTF-8 bytes, end to end (uint8);
- `chunk_ends`: where each chunk's bytes end in `chunk_bytes` (int64, increasing);
- `counts`: each chunk's count (int64, positive), with Σ count × chunk bytes at most 2⁶³ − 1 (the
  most that training's int64 totals and pair counts hold; `chunks.MAX_TOTAL`).
Why npz and not Parquet: the core depends on numpy and regex only, and `train --from-counts`
must work on a plain install; numpy writes and reads this with no new dependency, deflates the
chunk bytes, and any numpy (or a zip tool plus the documented .npy header) can read it.
What a file is comes from its content, never its name; writes go through `files/atomic.py`.
"""

import io
import json
import zipfile
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format

from tokworkbench.core.errors import CountFileError, PatternError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.text.chunks import MAX_TOTAL, ChunkCounts, units_total
from tokworkbench.core.text.corpus import describe_size, read_regular
from tokworkbench.core.text.normalize import NORMALIZERS
from tokworkbench.core.text.patterns import PRESETS
from tokworkbench.core.text.pretokenize import PreTokenizer, from_pattern

FORMAT = "tokworkbench-counts"
VERSION = 1
MAX_COUNT_FILE_BYTES = 16 << 30
_ARRAYS = ("header", "chunk_bytes", "chunk_ends", "counts")


def to_bytes(counts: ChunkCounts, normalizer: str, pre: PreTokenizer) -> bytes:
    """The file's bytes for `counts`, counted with `normalizer` and `pre`."""
    encoded = [c.encode("utf-8") for c in counts.chunks]
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    header = {"format": FORMAT, "version": VERSION, "normalizer": normalizer, "split": pre.name,
              "pattern": pre.pattern, "documents": int(counts.documents), "chars": int(counts.chars),
              "bytes": int(counts.bytes), "chunks": len(encoded)}
    out = io.BytesIO()
    np.savez_compressed(
        out,
        header=np.frombuffer(json.dumps(header, ensure_ascii=False).encode("utf-8"), dtype=np.uint8),
        chunk_bytes=np.frombuffer(b"".join(encoded), dtype=np.uint8),
        chunk_ends=np.cumsum(lengths, dtype=np.int64),
        counts=np.asarray(counts.counts, dtype=np.int64),
    )
    return out.getvalue()


def write_counts(path: str | Path, counts: ChunkCounts, normalizer: str, pre: PreTokenizer) -> Path:
    return write_atomic(path, to_bytes(counts, normalizer, pre))


def is_count_file(data: bytes) -> bool:
    """Whether `data` looks like a count file (a zip holding our header), by content alone."""
    if not data.startswith(b"PK\x03\x04"):
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            return "header.npy" in z.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def looks_like_count_file(path: str | Path) -> bool:
    """Whether the file at `path` is a count file, by content (a zip holding our header); reads
    only its first bytes and the zip directory, so a large text file costs nothing."""
    try:
        path = Path(path)
        if not path.is_file():
            return False
        with open(path, "rb") as f:
            if f.read(4) != b"PK\x03\x04":
                return False
        with zipfile.ZipFile(path) as z:
            return "header.npy" in z.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False


def read_counts(path: str | Path) -> tuple[ChunkCounts, str, PreTokenizer]:
    """The counts, normalizer and pre-tokenizer a count file holds; CountFileError when the file
    is missing, not a count file, damaged, or of a version this reader does not know."""
    return from_bytes(read_regular(path, MAX_COUNT_FILE_BYTES, "count file", CountFileError), str(path))


def from_bytes(data: bytes, name: str = "count file") -> tuple[ChunkCounts, str, PreTokenizer]:
    if not data.startswith(b"PK\x03\x04"):
        raise CountFileError(f"{name} is not a tokworkbench count file (it is not an .npz archive); "
                             "write one with `tokworkbench count`")
    arrays = _read_arrays(data, name)
    header = _header(arrays["header"], name)
    normalizer, pre = _settings(header, name)
    chunks, counts = _chunks(arrays, header, name)
    summary = [header.get(k) for k in ("documents", "chars", "bytes")]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in summary):
        raise CountFileError(f"{name} is damaged: its corpus summary (documents, chars, bytes) is not three counts")
    return ChunkCounts(chunks, counts, *summary), normalizer, pre


_DTYPES = {"header": np.dtype(np.uint8), "chunk_bytes": np.dtype(np.uint8), "chunk_ends": np.dtype(np.int64),
           "counts": np.dtype(np.int64)}
MAX_HEADER_BYTES = 1 << 20  # the JSON header: a few hundred bytes, a long custom pattern at most
MAX_INFLATION = 64  # declared size / file size: real count files inflate 2-7 times (counts of 1 compress best)
INFLATE_FREELY = 64 << 20  # below this, any ratio: a small file cannot cost much memory


def _read_arrays(data: bytes, name: str) -> dict[str, np.ndarray]:
    """The four arrays, read by hand from the zip rather than with `np.load`: every member's
    declared size, and every .npy header's dtype and shape, is checked against the file
    before anything is inflated or allocated (a few MB of zeros can declare gigabytes)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            infos = {info.filename: info for info in z.infolist()}
            missing = [a for a in _ARRAYS if a + ".npy" not in infos]
            if missing:
                raise CountFileError(f"{name} is an .npz archive but not a tokworkbench count file "
                                     f"(no {', '.join(missing)})")
            members = {a: infos[a + ".npy"] for a in _ARRAYS}
            declared = sum(info.file_size for info in members.values())
            if declared > max(INFLATE_FREELY, MAX_INFLATION * len(data)):
                raise CountFileError(
                    f"{name} is damaged or hostile: its {describe_size(len(data))} would inflate to "
                    f"{describe_size(declared)} ({declared // len(data):,} times; a count file inflates 2-7 times)")
            if members["header"].file_size > MAX_HEADER_BYTES:
                raise CountFileError(f"{name} is damaged: its header holds {describe_size(members['header'].file_size)}; "
                                     f"a count file's is under {describe_size(MAX_HEADER_BYTES)}")
            return {a: _read_member(z, info, _DTYPES[a], name) for a, info in members.items()}
    except CountFileError:
        raise
    except Exception as exc:  # zipfile, zlib, numpy's header parser: a damaged file, whichever fails
        raise CountFileError(f"{name} is damaged and cannot be read ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0][:200] if str(exc) else ''})") from None


def _read_member(z: zipfile.ZipFile, info: zipfile.ZipInfo, dtype: np.dtype, name: str) -> np.ndarray:
    """One .npy member: its header says a one-dimensional array of `dtype` whose bytes are
    exactly what the member declares, or it is refused before the array is allocated."""
    what = info.filename.removesuffix(".npy")
    with z.open(info) as f:
        version = npy_format.read_magic(f)
        if version == (1, 0):
            shape, fortran, found = npy_format.read_array_header_1_0(f)
        elif version == (2, 0):
            shape, fortran, found = npy_format.read_array_header_2_0(f)
        else:
            raise CountFileError(f"{name} is damaged: its {what} array is .npy version {version}")
        if found != dtype or len(shape) != 1:
            raise CountFileError(f"{name} is damaged: its arrays have the wrong types ({what} is {found}, "
                                 f"shape {shape})")
        size = shape[0] * dtype.itemsize
        if f.tell() + size != info.file_size:
            raise CountFileError(f"{name} is damaged: its {what} array declares {shape[0]:,} items, which its "
                                 f"{info.file_size:,} bytes do not hold")
        out = np.empty(shape[0], dtype=dtype)
        view = memoryview(out).cast("B")
        done = 0
        while done < size:
            got = f.readinto(view[done:])
            if not got:
                raise CountFileError(f"{name} is damaged: its {what} array ends early")
            done += got
    return out


def _header(raw: np.ndarray, name: str) -> dict:
    try:
        header = json.loads(raw.astype(np.uint8, copy=False).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError):
        raise CountFileError(f"{name} is damaged: its header is not JSON") from None
    except RecursionError:
        raise CountFileError(f"{name} is damaged: its header's JSON nests too deeply to read") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CountFileError(f"{name} is an .npz archive but not a tokworkbench count file")
    if header.get("version") != VERSION:
        raise CountFileError(f"{name} is count-file version {header.get('version')!r}; this tokworkbench "
                             f"reads version {VERSION} (a newer tokworkbench may read it)")
    return header


def _settings(header: dict, name: str) -> tuple[str, PreTokenizer]:
    normalizer, split, pattern = header.get("normalizer"), header.get("split"), header.get("pattern")
    if normalizer not in NORMALIZERS:
        raise CountFileError(f"{name} is damaged: unknown normalizer {normalizer!r}")
    if not isinstance(split, str) or not (pattern is None or isinstance(pattern, str)):
        raise CountFileError(f"{name} is damaged: its pre-tokenizer is not a name and a pattern")
    try:
        pre = from_pattern(pattern)
    except PatternError as exc:
        raise CountFileError(f"{name} holds a pre-tokenizer pattern that cannot be used: {exc}") from None
    if split in PRESETS and pre.name != split:
        raise CountFileError(f"{name} is damaged: pre-tokenizer {split!r} with a pattern that is not that preset's")
    return normalizer, pre


def _chunks(arrays: dict, header: dict, name: str) -> tuple[list[str], np.ndarray]:
    blob, ends, counts = arrays["chunk_bytes"], arrays["chunk_ends"], arrays["counts"]
    if blob.dtype != np.uint8 or ends.dtype != np.int64 or counts.dtype != np.int64 or \
            blob.ndim != 1 or ends.ndim != 1 or counts.ndim != 1:
        raise CountFileError(f"{name} is damaged: its arrays have the wrong types")
    n = len(counts)
    if len(ends) != n or header.get("chunks") != n:
        raise CountFileError(f"{name} is damaged: {len(ends)} chunk ends for {n} counts "
                             f"(the header says {header.get('chunks')!r} chunks)")
    if n and (ends[0] <= 0 or np.any(np.diff(ends) <= 0) or ends[-1] != len(blob)):
        raise CountFileError(f"{name} is damaged: its chunk ends are not increasing to the end of the chunk bytes")
    if n == 0 and len(blob):
        raise CountFileError(f"{name} is damaged: chunk bytes without chunks")
    if np.any(counts <= 0):
        raise CountFileError(f"{name} is damaged: a chunk count is not positive")
    if n and units_total(counts, np.diff(ends, prepend=0)) is None:
        raise CountFileError(f"{name} is damaged: its counts add up to more than {MAX_TOTAL:,} bytes of text "
                             "(count × length over the chunks), more than training's 64-bit counts hold")
    data = blob.tobytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CountFileError(f"{name} is damaged: its chunk bytes are not UTF-8 at byte {exc.start}") from None
    if text.isascii():
        bounds = ends.tolist()
        chunks = [text[a:b] for a, b in zip([0, *bounds[:-1]], bounds)]
    else:
        starts = [0, *ends[:-1].tolist()]
        try:
            chunks = [data[a:b].decode("utf-8") for a, b in zip(starts, ends.tolist())]
        except UnicodeDecodeError:
            raise CountFileError(f"{name} is damaged: a chunk end cuts a character") from None
    if len(set(chunks)) != n:
        raise CountFileError(f"{name} is damaged: a chunk is listed twice")
    return chunks, counts
