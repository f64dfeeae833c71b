"""Our model file, whatever the kind: the envelope is checked here (files/envelope.py), and the
kind it names reads and writes the rest (`Kind.from_json`, `Kind.to_json`)."""

from pathlib import Path

from tokworkbench.core.errors import ModelFileError
from tokworkbench.core.files.atomic import write_atomic
from tokworkbench.core.files.envelope import FORMAT, check_version, dumps, is_our_model
from tokworkbench.core.files.envelope import kind_of as named_kind
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, describe_json, parse_json, read_model_file
from tokworkbench.core.models.protocol import Model
from tokworkbench.core.registry.kinds import kind_named, kind_of


def to_json(model: Model, corpus: dict | None = None) -> dict:
    return kind_of(model).to_json(model, corpus)


def save(model: Model, path: str | Path, corpus: dict | None = None) -> Path:
    """Write the model atomically (see files/atomic.py for what `path` may be); OutputError if not."""
    return write_atomic(path, dumps(to_json(model, corpus)))


def load(path: str | Path, max_token_bytes: int = MAX_TOKEN_BYTES) -> Model:
    raw = read_model_file(path)
    try:
        doc = parse_json(raw)
        if not is_our_model(doc):
            raise ModelFileError(f'not a tokworkbench model (expected "format": "{FORMAT}", found {describe_json(doc)})'
                                 if not isinstance(doc, dict) else
                                 f'not a tokworkbench model (expected "format": "{FORMAT}")')
        return from_json(doc, max_token_bytes)
    except ModelFileError as exc:
        raise type(exc)(f"{path}: {exc}") from None


def from_json(doc, max_token_bytes: int = MAX_TOKEN_BYTES) -> Model:
    """A model from its parsed JSON; every field is checked, so a damaged or hostile file is a
    ModelFileError naming the field, never another exception."""
    if not is_our_model(doc):
        raise ModelFileError(f'not a tokworkbench model (expected "format": "{FORMAT}")')
    check_version(doc)
    return kind_named(named_kind(doc), ModelFileError).from_json(doc, max_token_bytes)
