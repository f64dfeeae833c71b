"""What the workbench is set to: the training settings a user picks, as one value."""

from dataclasses import dataclass, replace

from .text.pretokenize import PRESETS, pre_tokenizer
from .bpe.trainer import TrainConfig

DEFAULT_TARGET = 1000


@dataclass(frozen=True)
class Settings:
    units: str = "byte"
    normalizer: str = "none"
    split: str = "gpt4"  # a preset name or "custom"
    pattern: str | None = None  # the regex when split is "custom"
    tie_break: str = "first"
    target: int = DEFAULT_TARGET
    special_tokens: tuple[str, ...] = ()

    def config(self) -> TrainConfig:
        """Validated training config; raises PatternError/TrainingError on a bad choice."""
        pre = pre_tokenizer(self.pattern or "") if self.split == "custom" else pre_tokenizer(self.split)
        return TrainConfig(self.units, self.normalizer, pre, self.tie_break, self.special_tokens)

    def describe(self) -> str:
        split = self.split if self.split in PRESETS else f"/{self.pattern}/"
        return (f"{self.units} units · normalizer {self.normalizer} · split {split} · "
                f"tie-break {self.tie_break} · target {self.target}")

    def with_(self, **changes) -> "Settings":
        return replace(self, **changes)

    def needs_retrain(self, other: "Settings") -> bool:
        """Everything but the target changes what the trainer is."""
        return replace(self, target=other.target) != other
