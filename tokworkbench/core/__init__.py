"""The tokenizer core: corpus, normalizers, pre-tokenizers, BPE trainer, tokenizer, model files.

Pure Python + numpy + regex. It never imports Textual or Rich: the app and the CLI are views
over it, and a test keeps it that way.
"""

from .text.corpus import Corpus, Document, load_corpus
from .text.samples import sample_paths
from .errors import (
    CorpusError,
    DecodeError,
    EncodeError,
    ModelFileError,
    PatternError,
    TokWorkbenchError,
    TrainingError,
)
from .text.pretokenize import PRESETS, PreTokenizer, pre_tokenizer
from .models.tokenizer import Tokenizer
from .bpe.trainer import MergeRecord, PairRow, TrainConfig, Trainer, train

__all__ = [
    "Corpus", "CorpusError", "DecodeError", "Document", "EncodeError", "MergeRecord",
    "ModelFileError", "PRESETS", "PairRow", "PatternError", "PreTokenizer", "TokWorkbenchError",
    "Tokenizer", "TrainConfig", "Trainer", "TrainingError", "load_corpus", "pre_tokenizer",
    "sample_paths", "train",
]
