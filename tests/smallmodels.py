"""Small models the command-line tests read from a file."""

from pathlib import Path

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.registry import modelfile


def saved_bpe(path: Path, text: str, merges: int, special_tokens: tuple[str, ...] = ()) -> Path:
    """A byte-level BPE with the gpt4 split and `merges` merges of `text`, saved at `path`."""
    trainer = Trainer([text], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4"), special_tokens=special_tokens))
    list(trainer.run(merges=merges))
    modelfile.save(trainer.model(), path)
    return path
