"""Write a model in another library's format, or refuse and say why.

Which formats a kind can go to, and how, is its registry entry's (`Kind.exports`); this module
checks the request against it and the outputs against the inputs before anything is written.
"""

from pathlib import Path

from tokworkbench.core.errors import ExportError
from tokworkbench.core.files.atomic import check_output
from tokworkbench.core.formats.tiktoken import companion_path
from tokworkbench.core.models.protocol import Model
from tokworkbench.core.registry.kinds import KINDS, kind_of

FORMATS = tuple(dict.fromkeys(fmt for kind in KINDS.values() for fmt in kind.exports))
LABELS = {"hf": "Hugging Face tokenizer.json", "tiktoken": "tiktoken ranks (+ .json)", "minbpe": "minbpe .model",
          "sentencepiece": "SentencePiece .model", "vocab.txt": "BERT vocab.txt"}
DEFAULT_NAMES = {"hf": "tokenizer.json", "tiktoken": "model.tiktoken", "minbpe": "model.model",
                 "sentencepiece": "tokenizer.model", "vocab.txt": "vocab.txt"}


def check(model: Model, fmt: str) -> list[str]:
    """Raise ExportError for what `fmt` cannot express; return notes for what it changes harmlessly."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    kind = kind_of(model)
    if fmt not in kind.exports:
        where = (f"export it to {', '.join(kind.exports)}" if kind.exports
                 else "keep it as a tokworkbench model file")
        raise ExportError(f"{fmt} cannot hold this {kind.noun}: {kind.export_refusal} ({where})")
    return kind.check_export(model, fmt)


def output_paths(fmt: str, out: str | Path) -> list[Path]:
    """Every file an export writes: tiktoken writes OUT and its companion OUT.json."""
    out = Path(out)
    return [out, companion_path(out)] if fmt == "tiktoken" else [out]


def check_export_outputs(fmt: str | None, out: str | Path, inputs: list[str | Path]) -> None:
    """Before any work: refuse outputs that cannot be written or that are one of `inputs`."""
    for path in output_paths(fmt, out) if fmt else [Path(out)]:
        check_output(path, inputs)


def export(model: Model, fmt: str, out: str | Path) -> list[str]:
    """Write `model` as `fmt` to `out`; returns notes and the files written. Raises ExportError
    for what the format cannot carry, OutputError for where it cannot go."""
    check(model, fmt)
    return kind_of(model).write_export(model, fmt, Path(out))
