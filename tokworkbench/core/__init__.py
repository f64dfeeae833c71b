"""The tokenizer core: corpus, normalizers, pre-tokenizers, BPE trainer, tokenizer, model files.

Pure Python + numpy + regex. It never imports Textual or Rich: the app and the CLI are views
over it, and a test keeps it that way.
"""

from tokworkbench.core.bpe.model import Tokenizer
from tokworkbench.core.bpe.trainer import MergeRecord, PairRow, TrainConfig, Trainer, train
from tokworkbench.core.errors import (
    CorpusError,
    DecodeError,
    EncodeError,
    ModelFileError,
    PatternError,
    TokWorkbenchError,
    TrainingError,
)
from tokworkbench.core.text.corpus import Corpus, Document, load_corpus
from tokworkbench.core.text.patterns import PRESETS
from tokworkbench.core.text.pretokenize import PreTokenizer, pre_tokenizer
from tokworkbench.core.text.samples import sample_paths

__all__ = [
    "Corpus", "CorpusError", "DecodeError", "Document", "EncodeError", "MergeRecord",
    "ModelFileError", "PRESETS", "PairRow", "PatternError", "PreTokenizer", "TokWorkbenchError",
    "Tokenizer", "TrainConfig", "Trainer", "TrainingError", "load_corpus", "pre_tokenizer",
    "sample_paths", "train",
]
