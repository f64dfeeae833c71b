"""What a session is set to: the training settings a user picks, as one value."""

from dataclasses import dataclass, field, replace

from tokworkbench.core.models.protocol import Learner
from tokworkbench.core.models.roles import NO_ROLES, Roles
from tokworkbench.core.registry.kinds import trainable_kind
from tokworkbench.core.text.pretokenize import PreTokenizer, pre_tokenizer
from tokworkbench.core.units import Units

DEFAULT_TARGET = 1000
CUSTOM = "custom"
FIT = ("seed_size", "target")  # what `Settings.fitted` may raise to fit a corpus


@dataclass(frozen=True)
class Settings:
    units: Units = Units.BYTE
    normalizer: str = "none"
    split: str = "gpt4"  # a preset name or "custom"
    pattern: str | None = None  # the regex when split is "custom"
    tie_break: str = "first"
    target: int = DEFAULT_TARGET
    special_tokens: tuple[str, ...] = ()
    roles: Roles = NO_ROLES  # each names one of special_tokens; changing them needs no retraining
    kind: str = "bpe"  # a trainable kind of registry/kinds.py
    # Unigram only (units are characters, <unk> is the one special token)
    algorithm: str = "course"  # "course" | "em"
    seed_size: int = 300
    prune_fraction: float = 0.1  # course: the share one round removes
    shrinking_factor: float = 0.75  # em: the share one round keeps
    sub_iterations: int = 2  # em: EM iterations per round
    num_threads: int = 16  # em: spm_train's num_threads, which its E-step's float32 sums follow
    max_piece_length: int = 16  # the longest seed piece (SentencePiece BPE: the longest merge)
    # SentencePiece BPE only (spm_train's flags of the same names)
    character_coverage: float = 0.9995
    byte_fallback: bool = False
    sp_normalization: str = "nmt_nfkc"  # its normalization_rule_name: nmt_nfkc or identity
    # spm_train's piece options (SentencePiece BPE, and Unigram with algorithm em)
    split_digits: bool = False
    user_defined_symbols: tuple[str, ...] = ()
    control_symbols: tuple[str, ...] = ()
    required_chars: str = ""
    fit: tuple[str, ...] = field(default=(), compare=False)  # of FIT: left to the corpus (`fitted`): the command line's unset flags

    def __post_init__(self):
        object.__setattr__(self, "units", Units.named(self.units))
        object.__setattr__(self, "roles", Roles.of(self.roles))

    @staticmethod
    def split_of(pre: PreTokenizer) -> dict:
        """The `split` and `pattern` settings that name `pre`: a preset (metaspace included) by
        its name, anything else as a custom pattern."""
        custom = pre.name == CUSTOM
        return {"split": CUSTOM if custom else pre.name, "pattern": pre.pattern if custom else None}

    def pre_tokenizer(self) -> PreTokenizer:
        """The split these settings name; PatternError for a bad custom pattern."""
        return pre_tokenizer(CUSTOM, self.pattern or "") if self.split == CUSTOM else pre_tokenizer(self.split)

    def config(self):
        """Validated training config for the chosen kind; raises PatternError/TrainingError on
        a bad choice."""
        kind = trainable_kind(self.kind)
        config = kind.config(self)
        self.roles.check(self.role_tokens)
        return config

    @property
    def role_tokens(self) -> tuple[str, ...]:
        """The tokens a role may name: the special tokens, and those the kind always has."""
        return self.special_tokens + trainable_kind(self.kind).own_tokens

    def learner(self, texts, keep_layout: bool = False, progress=None, counted=None) -> Learner:
        """The learner these settings train."""
        config = self.config()
        return trainable_kind(self.kind).learner(texts, config, keep_layout=keep_layout, progress=progress,
                                                 counted=counted)

    def fitted(self, chars: int, names: tuple[str, ...] | None = None) -> "Settings":
        """These settings with each of `names` (default: `fit`) that is too small for the kind on
        a corpus of `chars` distinct characters raised to what it needs; the settings dialog and
        the command line both pick their defaults here."""
        names = self.fit if names is None else names
        fit = trainable_kind(self.kind).fit
        return replace(self, fit=(), **(fit(self, chars, names) if fit is not None else {}))

    def with_(self, **changes) -> "Settings":
        return replace(self, **changes)

    def needs_retrain(self, other: "Settings") -> bool:
        """Everything but the target and the roles changes what the learner is."""
        return replace(self, target=other.target, roles=other.roles) != other
