"""The embedded corpus that the workbench opens when no path is given.

The texts live in the project's top-level folder `sample_texts/`. pyproject.toml ships that folder,
README.md (the licences) included, inside the package, so the corpus is in one of two places,
both relative to the imported `tokworkbench` package:

* inside it, at `tokworkbench/sample_texts/`: an install from a wheel or an sdist
  (`pip install .`, `pipx install`);
* beside it, at `<project>/sample_texts/` next to `<project>/pyproject.toml`: a source checkout,
  which is what an editable install (`pip install -e .`, as `make` does) imports from.
"""

from importlib.resources import files
from pathlib import Path

from tokworkbench.core.errors import CorpusError

_PACKAGE = "tokworkbench"
_FOLDER = "sample_texts"
README = "README.md"  # the licences of the texts: shipped with them, not part of the corpus


def _candidates() -> list[Path]:
    package = files(_PACKAGE)
    if not isinstance(package, Path):  # e.g. a zip import: the corpus must be real files
        return []
    package = package.resolve()
    shipped, checkout = package / _FOLDER, package.parent / _FOLDER
    return [shipped, checkout] if (package.parent / "pyproject.toml").is_file() else [shipped]


def _locate() -> Path:
    candidates = _candidates()
    for folder in candidates:
        if folder.is_dir():
            return folder
    return candidates[0] if candidates else Path(_FOLDER)


SAMPLE_TEXTS: Path = _locate()


def sample_paths() -> list[Path]:
    """The embedded corpus: every file in sample_texts/ but its README, sorted by name."""
    if not SAMPLE_TEXTS.is_dir():
        places = " or ".join(str(p) for p in _candidates()) or f"a folder {_FOLDER}/ on the file system"
        raise CorpusError(f"the embedded corpus is missing: looked for {places}")
    return sorted(p for p in SAMPLE_TEXTS.iterdir() if p.is_file() and p.name != README)
