"""One exception family, so the CLI and the app can show any core failure as one clear line."""


class TokWorkbenchError(Exception):
    """Base of every error the core raises on bad input; its message is meant for the user."""


class CorpusError(TokWorkbenchError):
    """A corpus could not be read: missing, unreadable, not UTF-8, binary or empty."""


class PatternError(TokWorkbenchError):
    """A pre-tokenizer regex does not compile or is not usable."""


class TrainingError(TokWorkbenchError):
    """A training request makes no sense (vocabulary size, settings)."""


class SettingError(TrainingError):
    """One setting's value makes no sense. The message names the setting in words ("seed size 5
    is below …"); `setting` is its Settings field and `value` what was given, so the CLI can say
    its own flag (`--seed-size 5 is below …`) and the settings dialog can show it under its field."""

    def __init__(self, setting: str, value, problem: str):
        self.setting, self.value, self.problem = setting, value, problem
        super().__init__(f"{setting.replace('_', ' ')} {value!r} {problem}")

    def worded(self, name: str) -> str:
        """The message with the setting called `name` (a flag, a field's label)."""
        return f"{name} {self.value!r} {self.problem}"


class EncodeError(TokWorkbenchError):
    """Text cannot be encoded: unseen character without <unk>, or a disallowed special token."""


class LoneSurrogateError(EncodeError):
    """Text holding a lone surrogate, which is not valid Unicode: a ranks model reads it again as
    tiktoken does (through UTF-16), every other model refuses it."""


def check_unicode(text: str | list[str]) -> None:
    """Raise `lone_surrogate`'s error if `text` (or a text of the list) holds a lone surrogate.
    A byte-level model meets it making UTF-8; a model of characters checks here, since
    SentencePiece and HF refuse such text and, left in, it became <unk> without a word."""
    for one in [text] if isinstance(text, str) else text:
        if not one.isascii():
            try:
                one.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise lone_surrogate(text, exc) from None


def lone_surrogate(text: str | list[str], error: UnicodeEncodeError) -> Exception:
    """What to raise for `error`, met encoding `text` (or a list of texts): Python's names a
    place in an internal piece ("position 0"); this names the first lone surrogate in what the
    caller gave. SentencePiece refuses such text as well."""
    texts = [text] if isinstance(text, str) else text
    for k, one in enumerate(texts):
        at = next((i for i, ch in enumerate(one) if "\ud800" <= ch <= "\udfff"), None)
        if at is not None:
            where = f"offset {at}" if isinstance(text, str) else f"offset {at} of text {k}"
            return LoneSurrogateError(f"cannot encode lone surrogate (U+{ord(one[at]):04X}) at {where}: "
                               "the text is not valid Unicode")
    return error


class SpecialTokenInTextError(EncodeError):
    """A special token's string in text that did not allow it. `offset` is where in the text it
    starts; a caller that encoded a slice of the user's text raises it again `shifted` so that
    the offset names a place in what the user gave."""

    def __init__(self, token: str, offset: int):
        super().__init__(f"text contains the special token {token!r} at offset {offset}; allow it to encode it "
                         "as a special token, or encode it as ordinary text")
        self.token, self.offset = token, offset

    def shifted(self, by: int) -> "SpecialTokenInTextError":
        return SpecialTokenInTextError(self.token, self.offset + by)

    def __reduce__(self):
        return type(self), (self.token, self.offset)


class DecodeError(TokWorkbenchError):
    """Ids cannot be decoded: out of range, or bytes that are not UTF-8 under errors=strict."""


class TokenNotFoundError(DecodeError):
    """A token asked for by its text (the merge tree's TOKEN) that no vocabulary entry is."""


class InvalidUtf8DecodeError(DecodeError):
    """Ids decode to bytes that are not UTF-8. The message names the setting that shows them
    as U+FFFD (errors 'replace'); a caller with its own word for it (the CLI's --errors replace)
    asks for the message in that word (`worded`)."""

    SETTING = "errors 'replace'"

    def __init__(self, where: str, setting: str = SETTING):
        self.where = where
        super().__init__(f"{where}; decode with {setting} to see U+FFFD there")

    def worded(self, setting: str) -> str:
        return str(type(self)(self.where, setting))

    def __reduce__(self):
        return type(self), (self.where,)


class ModelFileError(TokWorkbenchError):
    """A model file is unreadable, corrupt, foreign or of an unknown version."""


class ForeignModelError(ModelFileError):
    """A tokenizer file from another library that we cannot represent exactly."""


class ExportError(TokWorkbenchError):
    """The target format cannot carry this model exactly, or the file cannot be written."""


class BinaryFileError(CorpusError):
    """A corpus file holds a NUL byte near its start: binary, or text in UTF-16 or UTF-32.
    Inside a folder such a file is passed over; named, it is this error."""


class InvalidUtf8Error(CorpusError):
    """A file is not valid UTF-8. The message says where; a caller that offers a way to replace
    bad bytes (the CLI's --replace-invalid) adds that advice itself, since not every one can."""


class PatternTimeoutError(PatternError):
    """A custom pattern found no match for too long: catastrophic backtracking, most likely.
    `offset` is where in the text the search was stuck; a caller that knows which document
    that text is raises it again with `document`."""

    def __init__(self, offset: int, seconds: float, document: int | None = None):
        where = f" on document {document}" if document is not None else ""
        super().__init__(f"the pattern takes too long{where} at offset {offset}: no match in {seconds:g} s "
                         "(a nested quantifier such as (a|aa)+ can backtrack without end)")
        self.offset, self.seconds, self.document = offset, seconds, document

    def __reduce__(self):
        return type(self), (self.offset, self.seconds, self.document)


class NeedsPatternError(ForeignModelError):
    """A tiktoken ranks file carries no pattern; the caller must name one (the CLI's --split)."""


class OutputError(TokWorkbenchError):
    """An output path is refused (a device, a FIFO, a folder, one of the inputs, a hard-linked
    file) or cannot be written (missing folder, full disk, name too long)."""


class WorkerError(TokWorkbenchError):
    """A worker process of a parallel encode or count died without reporting a result."""


class StoppedShare(WorkerError):
    """A share of parallel work given up because another failed or the run was interrupted
    (text/parallel.py `thread_map`); never the error a caller sees."""


class TokenLimitError(ModelFileError):
    """A token (or the whole vocabulary) is longer than the loader allows; the limit can be
    raised by whoever calls the loader (the CLI: --max-token-bytes)."""


class CountFileError(TokWorkbenchError):
    """A chunk-count file is unreadable, corrupt, foreign, of an unknown version, or at odds with
    the settings asked for (a --split or --normalize that differs from the one it was counted with)."""


class ClusterError(TokWorkbenchError):
    """A cluster engine cannot do its work: the scheduler is not there, or its workers keep dying."""


class RoleError(TokWorkbenchError):
    """A special-token role makes no sense: it names a token the vocabulary lacks, two roles
    share one token, or a task needs a role the model has none for (padding without PAD)."""


class VocabFileError(TokWorkbenchError):
    """A TOKENS.txt file for a fixed vocabulary is empty, repeats a token, or has a bad escape."""


class BatchError(TokWorkbenchError):
    """A batch cannot be cut: T or B not positive, starts out of range, a stream too short."""


class QueryError(TokWorkbenchError):
    """A vocabulary query or health flag that names nothing (`is:bogus`)."""


class LockFileError(TokWorkbenchError):
    """A regression lock file is unreadable, damaged (a field missing, of the wrong type or out
    of range), of an unknown version, or names a text that cannot be read as it was locked."""


class ReportError(TokWorkbenchError):
    """A report cannot be made: an unknown format, an arena with no tokenizer or no text, a
    reference text that is not one of the texts."""


class Terminated(BaseException):
    """SIGTERM, raised by the CLI's handler so that the work in hand unwinds as for ctrl+c:
    forked workers are stopped and joined, a half-written temp file is removed, and the exit
    status is 143. Not a TokWorkbenchError: nothing may catch it as bad input."""
