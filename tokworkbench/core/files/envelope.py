"""The envelope every tokworkbench model file shares, whatever its kind.

`"format": "tokworkbench"`, `"version"` and `"model"` (which kind reads the rest; a file
without it is BPE, as the first files were) are checked here once; each kind's own
`modelfile.py` reads and writes what is inside. Every kind is written the same way: compact
JSON with one line break at the end, through `atomic.write_atomic`.
"""

import json

from tokworkbench.core.errors import ModelFileError

FORMAT = "tokworkbench"
VERSION = 1
FIRST_KIND = "bpe"  # what a file without a "model" field holds


def is_our_model(doc) -> bool:
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def header(kind: str) -> dict:
    """The fields every file starts with."""
    return {"format": FORMAT, "version": VERSION, "model": kind}


def kind_of(doc: dict) -> object:
    """The kind a file of ours names (not yet checked against the kinds this tool has)."""
    return doc.get("model", FIRST_KIND)


def check_version(doc: dict) -> None:
    version = doc.get("version")
    if not (type(version) is int and version == VERSION):
        raise ModelFileError(f"model file version {version!r} is not supported (this tool reads {VERSION})")


def dumps(doc: dict) -> bytes:
    """The file's bytes. The C encoder (no `indent=`): the pure-Python one takes twice the
    memory and time on a large model at the end of a run."""
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError as exc:  # only through the API: the CLI and the loaders refuse these
        raise ModelFileError(f"cannot save the model: it holds a lone surrogate (U+{ord(text[exc.start]):04X}), "
                             "most likely in a special token; it has no UTF-8 form") from None
