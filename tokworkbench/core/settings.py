"""What a session is set to: the training settings a user picks, as one value."""

from dataclasses import dataclass, field, replace

from tokworkbench.core.bpe.trainer import TrainConfig, Trainer
from tokworkbench.core.models.roles import NO_ROLES, Roles
from tokworkbench.core.errors import TrainingError
from tokworkbench.core.models.protocol import Learner
from tokworkbench.core.unigram.learner import ALGORITHMS, UnigramConfig, UnigramLearner
from tokworkbench.core.text.pretokenize import pre_tokenizer
from tokworkbench.core.units import Units

DEFAULT_TARGET = 1000
CUSTOM = "custom"
MODELS = ("bpe", "unigram")
FIT = ("seed_size", "target")  # what `Settings.fitted` may raise to fit a corpus


def unigram_sizes(chars: int) -> tuple[int, int]:
    """A seed size and a target that a Unigram can train to on a corpus of `chars` distinct
    characters: it keeps every character, so the seed holds about twice as many pieces (room for
    substrings beside them) and the target half as many again, each rounded up to hundreds."""
    def hundreds(n: int) -> int:
        return -(-n // 100) * 100

    return hundreds(2 * chars), hundreds(3 * chars // 2)


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
    model: str = "bpe"  # "bpe" | "unigram"
    # Unigram only (units are characters, <unk> is the one special token)
    algorithm: str = "course"  # "course" | "em"
    seed_size: int = 300
    prune_fraction: float = 0.1  # course: the share one round removes
    shrinking_factor: float = 0.75  # em: the share one round keeps
    sub_iterations: int = 2  # em: EM iterations per round
    max_piece_length: int = 16  # the longest seed piece
    fit: tuple[str, ...] = field(default=(), compare=False)  # of FIT: left to the corpus (`fitted`): the command line's unset flags

    def __post_init__(self):
        object.__setattr__(self, "units", Units.named(self.units))
        object.__setattr__(self, "roles", Roles.of(self.roles))

    def config(self) -> TrainConfig | UnigramConfig:
        """Validated training config for the chosen model; raises PatternError/TrainingError on
        a bad choice."""
        if self.model not in MODELS:
            raise TrainingError(f"unknown model {self.model!r}; choose bpe or unigram")
        if self.algorithm not in ALGORITHMS:
            raise TrainingError(f"unknown Unigram algorithm {self.algorithm!r}; choose course or em")
        if self.model == "unigram" and self.special_tokens:
            raise TrainingError(f"a Unigram model's one special token is <unk> (id 0): special tokens such as "
                                f"{self.special_tokens[0]!r} need BPE")
        self.roles.check(self.role_tokens)
        pre = pre_tokenizer(CUSTOM, self.pattern or "") if self.split == CUSTOM else pre_tokenizer(self.split)
        if self.model == "unigram":
            return UnigramConfig(self.normalizer, pre, self.algorithm, self.seed_size, self.prune_fraction,
                                 self.shrinking_factor, self.sub_iterations, self.max_piece_length)
        return TrainConfig(self.units, self.normalizer, pre, self.tie_break, self.special_tokens)

    @property
    def role_tokens(self) -> tuple[str, ...]:
        """The tokens a role may name: the special tokens, and Unigram's own <unk>."""
        return self.special_tokens + (("<unk>",) if self.model == "unigram" else ())

    def learner(self, texts, keep_layout: bool = False, progress=None, counted=None) -> Learner:
        """The learner these settings train: a BPE `Trainer` or a `UnigramLearner`."""
        config = self.config()
        kind = UnigramLearner if isinstance(config, UnigramConfig) else Trainer
        return kind(texts, config, keep_layout=keep_layout, progress=progress, counted=counted)

    def fitted(self, chars: int, names: tuple[str, ...] | None = None) -> "Settings":
        """These settings with each of `names` (default: `fit`) that is too small for a Unigram on
        a corpus of `chars` distinct characters raised to `unigram_sizes`; the settings dialog
        and the command line both pick their defaults here. BPE needs nothing of the kind."""
        names = self.fit if names is None else names
        if self.model != "unigram":
            return replace(self, fit=())
        seed, target = unigram_sizes(chars)
        changes = {}
        if "seed_size" in names and self.algorithm == "course" and self.seed_size < chars:
            changes["seed_size"] = seed
        if "target" in names and self.target < chars:
            changes["target"] = max(target, chars)
        return replace(self, fit=(), **changes)

    def with_(self, **changes) -> "Settings":
        return replace(self, **changes)

    def needs_retrain(self, other: "Settings") -> bool:
        """Everything but the target and the roles changes what the learner is."""
        return replace(self, target=other.target, roles=other.roles) != other
