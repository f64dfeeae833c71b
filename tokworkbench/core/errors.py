"""One exception family, so the CLI and the app can show any core failure as one clear line."""


class TokWorkbenchError(Exception):
    """Base of every error the core raises on bad input; its message is meant for the user."""


class CorpusError(TokWorkbenchError):
    """A corpus could not be read: missing, unreadable, not UTF-8, binary or empty."""


class PatternError(TokWorkbenchError):
    """A pre-tokenizer regex does not compile or is not usable."""


class TrainingError(TokWorkbenchError):
    """A training request makes no sense (vocabulary size, settings)."""


class EncodeError(TokWorkbenchError):
    """Text cannot be encoded: unseen character without <unk>, or a disallowed special token."""


class DecodeError(TokWorkbenchError):
    """Ids cannot be decoded: out of range, or bytes that are not UTF-8 under errors=strict."""


class ModelFileError(TokWorkbenchError):
    """A model file is unreadable, corrupt, foreign or of an unknown version."""


class ForeignModelError(ModelFileError):
    """A tokenizer file from another library that we cannot represent exactly."""


class ExportError(TokWorkbenchError):
    """The target format cannot carry this model exactly, or the file cannot be written."""
