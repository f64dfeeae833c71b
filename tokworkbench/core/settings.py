"""What a session is set to: the training settings a user picks, as one value."""

from dataclasses import dataclass, replace

from .bpe.trainer import TrainConfig
from .models.roles import NO_ROLES, Roles
from .text.pretokenize import pre_tokenizer
from .units import Units

DEFAULT_TARGET = 1000
CUSTOM = "custom"


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

    def __post_init__(self):
        object.__setattr__(self, "units", Units.named(self.units))
        object.__setattr__(self, "roles", Roles.of(self.roles))

    def config(self) -> TrainConfig:
        """Validated training config; raises PatternError/TrainingError on a bad choice, and
        RoleError for a role naming a token that is not one of the special tokens."""
        self.roles.check(self.special_tokens)
        pre = pre_tokenizer(CUSTOM, self.pattern or "") if self.split == CUSTOM else pre_tokenizer(self.split)
        return TrainConfig(self.units, self.normalizer, pre, self.tie_break, self.special_tokens)

    def with_(self, **changes) -> "Settings":
        return replace(self, **changes)

    def needs_retrain(self, other: "Settings") -> bool:
        """Everything but the target and the roles changes what the learner is."""
        return replace(self, target=other.target, roles=other.roles) != other
