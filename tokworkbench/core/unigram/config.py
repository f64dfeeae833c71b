"""What a Unigram learner is asked to do (`UnigramConfig`), checked once, and the pieces a model
of it holds ahead of the trained ones (`meta_pieces`): apart from the learner, since the CLI, the
settings and the kinds registry read them without training anything."""

from dataclasses import dataclass, field

from tokworkbench.core.errors import SettingError, TrainingError
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.text.bytepieces import BYTE_PIECES
from tokworkbench.core.text.normalize import check_normalizer
from tokworkbench.core.text.patterns import META
from tokworkbench.core.text.pretokenize import PreTokenizer, pre_tokenizer
from tokworkbench.core.text.spcoverage import check_coverage
from tokworkbench.core.text.spoptions import check_required_chars, check_symbols
from tokworkbench.core.units import Units

ALGORITHMS = ("course", "em")
UNK = "<unk>"  # here, not in model.py: the CLI reads the choices without loading the model
SP_META = (UNK, "<s>", "</s>")  # spm_train's ids 0, 1, 2
SP_ROLES = Roles.of(dict(zip(("unk", "bos", "eos"), SP_META)))  # and its unk_id, bos_id, eos_id
EM_SEED_SIZE = 1_000_000  # SentencePiece's and HF's default seed size
SPM_THREADS = 16  # spm_train's num_threads default
MAX_THREADS = 1024  # spm_train's num_threads range is 1..1024


@dataclass(frozen=True)
class UnigramConfig:
    normalizer: str = "none"
    pre_tokenizer: PreTokenizer = field(default_factory=lambda: pre_tokenizer("metaspace"))
    algorithm: str = "course"
    seed_size: int = 300
    prune_fraction: float = 0.1  # course: the share of the vocabulary one round removes
    shrinking_factor: float = 0.75  # em: the share of the vocabulary one round keeps
    sub_iterations: int = 2  # em: EM iterations per round
    max_piece_length: int = 16  # the longest seed piece (both algorithms)
    # em: spm_train's options of the same names (core/text/spoptions.py)
    split_digits: bool = False
    user_defined_symbols: tuple[str, ...] = ()
    control_symbols: tuple[str, ...] = ()
    required_chars: str = ""
    # spm_train's default is 0.9995 (the CLI's and the app's for em); 1 keeps every character
    character_coverage: float = 1.0
    # em: spm_train's byte_fallback: 256 byte pieces after the symbols; a character outside the
    # coverage is then spelled in its UTF-8 bytes instead of <unk>
    byte_fallback: bool = False
    # em: spm_train's num_threads: its E-step sums float32 counts thread by thread, so which
    # pieces it keeps depends on it
    num_threads: int = SPM_THREADS

    units = Units.CHAR

    def __post_init__(self):
        check_normalizer(self.normalizer)
        if self.algorithm not in ALGORITHMS:
            raise TrainingError(f"unknown Unigram algorithm {self.algorithm!r}; choose course or em")
        if not (isinstance(self.seed_size, int) and self.seed_size >= 1):
            raise SettingError("seed_size", self.seed_size, "makes no sense; give a positive number")
        if not 0 < self.prune_fraction < 1:
            raise SettingError("prune_fraction", self.prune_fraction, "must be between 0 and 1")
        if not 0 < self.shrinking_factor < 1:
            raise SettingError("shrinking_factor", self.shrinking_factor, "must be between 0 and 1")
        if not (isinstance(self.sub_iterations, int) and self.sub_iterations >= 1):
            raise SettingError("sub_iterations", self.sub_iterations, "must be at least 1")
        if not (isinstance(self.max_piece_length, int) and self.max_piece_length >= 1):
            raise SettingError("max_piece_length", self.max_piece_length, "must be at least 1")
        if not isinstance(self.split_digits, bool):
            raise SettingError("split_digits", self.split_digits, "must be true or false")
        check_symbols("control_symbols", self.control_symbols, SP_META)
        check_symbols("user_defined_symbols", self.user_defined_symbols, SP_META, self.control_symbols)
        if not isinstance(self.byte_fallback, bool):
            raise SettingError("byte_fallback", self.byte_fallback, "must be true or false")
        if self.byte_fallback and not (self.algorithm == "em" and self.pre_tokenizer.rewrites):
            raise SettingError("byte_fallback", self.byte_fallback, "is spm_train's: it needs algorithm em and the "
                               "metaspace split")
        clash = next((p for p in self.control_symbols + self.user_defined_symbols if p in BYTE_PIECES), None)
        if self.byte_fallback and clash is not None:
            raise SettingError("byte_fallback", clash, "is a symbol and also one of the 256 byte pieces")
        if not (isinstance(self.num_threads, int) and 1 <= self.num_threads <= MAX_THREADS):
            raise SettingError("num_threads", self.num_threads, f"must be 1 to {MAX_THREADS}, as spm_train's")
        check_required_chars(self.required_chars)
        check_coverage(self.character_coverage)
        symbols = (("user_defined_symbols", self.user_defined_symbols), ("control_symbols", self.control_symbols))
        if self.algorithm != "em":
            for name, value in (("split_digits", self.split_digits), *symbols, ("required_chars", self.required_chars)):
                if value:
                    raise SettingError(name, value, "is spm_train's: it needs algorithm em")
            if self.character_coverage != 1.0:
                raise SettingError("character_coverage", self.character_coverage,
                                   "is spm_train's: it needs algorithm em (course keeps every character)")
        for name, value in symbols:
            clash = next((s for s in value if META in s), None)
            if clash is not None:  # our chunks are cut before each ▁, SentencePiece's lattice is not
                raise SettingError(name, clash, "holds ▁, which our Unigram chunks cut before")


def meta_pieces(config: UnigramConfig) -> list[str]:
    """The pieces before the trained ones (`meta_pieces_of`)."""
    return meta_pieces_of(config.algorithm, config.control_symbols, config.user_defined_symbols, config.byte_fallback)


def meta_pieces_of(algorithm: str, control_symbols: tuple[str, ...], user_defined_symbols: tuple[str, ...],
                   byte_fallback: bool) -> list[str]:
    """The pieces before the trained ones: the course's <unk> alone; em's as spm_train lays
    them out, <unk> <s> </s>, the control symbols, the user-defined ones, the byte pieces, so
    that a piece has spm_train's id and --vocab-size counts as its vocab_size."""
    if algorithm != "em":
        return [UNK]
    return (list(SP_META) + list(control_symbols) + list(user_defined_symbols)
            + list(BYTE_PIECES if byte_fallback else ()))
