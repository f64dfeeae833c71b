"""What a model's base tokens are: the 256 byte values, or the corpus's characters.

Everything that differs between the two lives here, so the trainer, the models and the formats
ask the units instead of comparing strings. `Units` is a str enum: model files and settings
keep writing "byte" and "char", and `Units("byte")` reads them back.
"""

from enum import Enum

from tokworkbench.core.errors import TrainingError

BYTE_BASE = 256


class Units(str, Enum):
    BYTE = "byte"
    CHAR = "char"

    @classmethod
    def named(cls, name: "str | Units") -> "Units":
        try:
            return cls(name)
        except ValueError:
            raise TrainingError(f"unknown units {name!r}; choose byte or char") from None

    @property
    def is_bytes(self) -> bool:
        return self is Units.BYTE

    @property
    def plural(self) -> str:
        """How the views count base units: '2.3 bytes/token'."""
        return "bytes" if self.is_bytes else "chars"

    def base_tokens(self, alphabet: tuple[str, ...] | None) -> list:
        """The base vocabulary in id order: bytes 0..255, or the alphabet's characters."""
        return [bytes([i]) for i in range(BYTE_BASE)] if self.is_bytes else list(alphabet or ())

    def base_size(self, alphabet: tuple[str, ...] | None) -> int:
        return BYTE_BASE if self.is_bytes else len(alphabet or ())

    def describe_base(self, size: int) -> str:
        return "256 bytes" if self.is_bytes else f"{size} distinct characters"

    def token(self, text: str):
        """A string (a special token's) as a vocabulary entry of these units."""
        return text.encode("utf-8") if self.is_bytes else text

    @staticmethod
    def to_bytes(token) -> bytes:
        """A vocabulary entry's UTF-8 bytes, whatever the units."""
        return token if isinstance(token, bytes) else token.encode("utf-8")

    def __str__(self) -> str:
        return self.value
