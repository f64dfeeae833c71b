"""Shards named by URL (`s3://bucket/part-*.txt`, `gs://…`, `file:///data/`, `memory://…`): listed
and read through fsspec, which every Dask install carries, so a cluster counts shards it reads
where they live instead of the client shipping them.

A URL is a file, a folder (every file under it, in name order, hidden names passed over as the
local walk does) or a glob. Credentials and options come from fsspec's own configuration and
environment (e.g. AWS_PROFILE for s3fs), the way users of those filesystems already set them.
"""

import posixpath
import re

from tokworkbench.core.errors import CorpusError

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
_GLOB = re.compile(r"[*?\[]")


def is_url(path: str) -> bool:
    """A path with a scheme (`s3://`); a Windows drive (`C:\\`) has one letter and no `//`."""
    return bool(_SCHEME.match(str(path)))


def filesystem(url: str):
    """The fsspec filesystem for `url` and the path inside it; a clear error for a scheme that
    fsspec does not know or whose package is not installed."""
    import fsspec  # a Dask dependency: only the dask engine reads URLs

    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as exc:  # e.g. "Install s3fs to access S3"
        raise CorpusError(f"{url}: {exc}") from None
    except ValueError as exc:  # "Protocol not known: foo"
        raise CorpusError(f"{url}: {exc}; fsspec reads file://, memory://, and s3://, gs://, az://… "
                          "with their packages") from None


def list_urls(urls: list[str]) -> list[tuple[str, str | None]]:
    """Every file to count as (url, folder or glob it was found under, or None when named).
    A named file or folder that is not there, a glob that matches nothing and an empty folder
    are errors: a shard that silently went missing would change the counts."""
    out: list[tuple[str, str | None]] = []
    for url in urls:
        fs, root = filesystem(url)
        try:
            if _GLOB.search(root):
                found = [p for p in sorted(fs.glob(root)) if fs.isfile(p)]
                if not found:
                    raise CorpusError(f"{url}: no file matches this pattern")
                out += [(fs.unstrip_protocol(p), url) for p in found]
            elif fs.isdir(root):
                found = [p for p in sorted(fs.find(root)) if not _hidden(posixpath.relpath(p, root))]
                if not found:
                    raise CorpusError(f"{url}: folder holds no files")
                out += [(fs.unstrip_protocol(p), url) for p in found]
            elif fs.isfile(root):
                out.append((url, None))
            else:
                raise CorpusError(f"cannot read {url}: no such file or folder")
        except OSError as exc:
            raise CorpusError(f"cannot read {url}: {exc.strerror or exc}") from None
    return out


def _hidden(relative: str) -> bool:
    return any(part.startswith(".") for part in relative.split("/") if part not in ("", "."))


def open_url(url: str):
    """A binary file object for `url` (seekable: ranges are read with seek)."""
    fs, path = filesystem(url)
    return fs.open(path, "rb")


def size_of(url: str) -> int:
    fs, path = filesystem(url)
    return int(fs.size(path))
