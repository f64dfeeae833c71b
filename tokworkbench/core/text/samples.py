"""The embedded corpus that the workbench opens when no path is given."""

from pathlib import Path

from ..errors import CorpusError

SAMPLE_TEXTS = Path(__file__).resolve().parents[3] / "sample_texts"


def sample_paths() -> list[Path]:
    """The embedded corpus: every file in sample_texts/ but its README."""
    if not SAMPLE_TEXTS.is_dir():
        raise CorpusError(f"the embedded corpus is missing: {SAMPLE_TEXTS} is not a folder")
    return sorted(p for p in SAMPLE_TEXTS.iterdir() if p.is_file() and p.name != "README.md")
