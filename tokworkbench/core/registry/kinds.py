"""The model kinds this tool has, one `Kind` record each: the one place a kind's name is
compared (tests/test_architecture.py checks that no other module does).

A record gathers what its package provides (learner, model, model file) with what the
formats provide for it (foreign exports) and how a session's `Settings` become its training
config. A kind that is not trained (a fixed vocabulary) has no config, learner or history.
The other kinds than BPE are imported when one of their models is read, written or trained:
their model files and the formats they export to took 25 ms of every command's start, a
fortieth of a 10 MB training.
"""

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from tokworkbench.core.bpe import modelfile as bpe_file
from tokworkbench.core.bpe.trainer import TrainConfig, Trainer
from tokworkbench.core.errors import ModelFileError, TrainingError
from tokworkbench.core.files.historycsv import write_history_csv, write_rounds_csv
from tokworkbench.core.files.limits import short
from tokworkbench.core.fixed import modelfile as fixed_file
from tokworkbench.core.formats.bpe_export import FORMATS as BPE_FORMATS
from tokworkbench.core.formats.bpe_export import check_bpe, write_bpe
from tokworkbench.core.models.kind import Kind
from tokworkbench.core.models.protocol import Learner, Model

if TYPE_CHECKING:
    from tokworkbench.core.session.settings import Settings
    from tokworkbench.core.spbpe.learner import SpBpeConfig
    from tokworkbench.core.unigram.config import UnigramConfig


# -- BPE ---------------------------------------------------------------------------------------
def _bpe_config(s: "Settings") -> TrainConfig:
    return TrainConfig(s.units, s.normalizer, s.pre_tokenizer(), s.tie_break, s.special_tokens)


def _bpe_history_csv(learner: Learner, path: Path) -> Path:
    return write_history_csv(path, list(learner.history), learner.token_bytes, learner.initial_tokens)


def _bpe_replay(learner: Learner, model: Model, s: "Settings") -> Learner:
    """Undo everything; the next steps make `model`'s merges on this corpus."""
    if kind_of(model) is not BPE:
        raise TrainingError(f"replay pairs like with like: a {kind_of(model).noun} cannot replay on a BPE "
                            "session (a BPE model's merges can)")
    if not (model.units.is_bytes and s.units.is_bytes):
        raise TrainingError("replay works with byte-level tokenizers on byte units")
    while learner.undo() is not None:
        pass
    learner.replay(list(model.merges))
    return learner


# -- Unigram -----------------------------------------------------------------------------------
_SP_COVERAGE = 0.9995  # spm_train's default, the setting's: em's; course keeps every character


def _unigram_config(s: "Settings") -> "UnigramConfig":
    from tokworkbench.core.unigram.config import UnigramConfig

    if s.special_tokens:
        raise TrainingError(f"a Unigram model's one special token is <unk> (id 0): special tokens such as "
                            f"{s.special_tokens[0]!r} need BPE")
    return UnigramConfig(s.normalizer, s.pre_tokenizer(), s.algorithm, s.seed_size, s.prune_fraction,
                         s.shrinking_factor, s.sub_iterations, s.max_piece_length, s.split_digits,
                         s.user_defined_symbols, s.control_symbols, s.required_chars,
                         s.character_coverage if s.algorithm == "em" or s.character_coverage != _SP_COVERAGE else 1.0,
                         s.byte_fallback, s.num_threads)


def unigram_sizes(chars: int, ahead: int = 1) -> tuple[int, int]:
    """A seed size and a target that a Unigram can train to on a corpus of `chars` distinct
    characters: it keeps every character, so the seed holds about twice as many pieces (room for
    substrings beside them) and the target half as many again beside the `ahead` pieces before
    them (<unk>; em's <s> </s>, symbols and byte pieces), each rounded up to hundreds."""
    def hundreds(n: int) -> int:
        return -(-n // 100) * 100

    return hundreds(2 * chars), hundreds(3 * chars // 2 + ahead)


def _unigram_learner(*args, **kwargs) -> Learner:
    """The learner, imported when a session trains one: a start that reads or shows a model
    does not pay for EM's modules."""
    from tokworkbench.core.unigram.learner import UnigramLearner

    return UnigramLearner(*args, **kwargs)


def _unigram_fit(s: "Settings", chars: int, names: Iterable[str]) -> dict:
    """Each of `names` too small for a corpus of `chars` distinct characters, raised; the target
    counts the pieces ahead of the trained ones, as the learner's vocabulary does."""
    from tokworkbench.core.unigram.config import meta_pieces_of

    ahead = len(meta_pieces_of(s.algorithm, s.control_symbols, s.user_defined_symbols, s.byte_fallback))
    seed, target = unigram_sizes(chars, ahead)
    changes = {}
    if "seed_size" in names and s.algorithm == "course" and s.seed_size < chars:
        changes["seed_size"] = seed
    if "target" in names and s.target < chars + ahead:
        changes["target"] = target
    return changes


def _unigram_history_csv(learner: Learner, path: Path) -> Path:
    return write_rounds_csv(path, learner.history_rows(len(learner.history) + 1), learner.initial_tokens)


def _unigram_replay(learner: Learner, model: Model, s: "Settings") -> Learner:
    """A learner whose seed is `model`'s vocabulary: round 0 is that model on this corpus."""
    if kind_of(model) is not UNIGRAM:
        raise TrainingError(f"replay pairs like with like: a {kind_of(model).noun} cannot replay on a Unigram "
                            "session (a Unigram model's vocabulary can)")
    config = _unigram_config(s)
    own = model.text_normalizer
    if own is not None:  # SentencePiece's/HF's, which no session setting reproduces
        raise TrainingError(f"this Unigram model has its own normalizer ({own.label}); a session normalizes "
                            "with none, nfc or nfkc, so the replay would segment other text")
    if (model.normalizer, model.pre_tokenizer) != (config.normalizer, config.pre_tokenizer):
        raise TrainingError(f"this Unigram model normalizes with {model.normalizer} and splits with "
                            f"{model.pre_tokenizer.name}; set the session to the same to replay it")
    metas = _replayed_metas(model, config)
    ahead = set(metas)  # a user-defined piece is one of them: not a trained piece as well
    replayed = _unigram_learner([], config, keep_layout=True, counted=learner.chunk_table, metas=metas,
                              vocabulary=[model.pieces[i] for i in model.matched_ids() if model.pieces[i][0] not in ahead])
    replayed.steps_for_vocab(max(s.target, replayed.base_size))
    return replayed


def _replayed_metas(model: Model, config: "UnigramConfig") -> list[str]:
    """The replayed model's own pieces ahead of its trained ones where they are a layout our
    learner makes (the course's <unk>, em's <unk> <s> </s>), so its ids stay; with the session's
    symbols or byte fallback, spm_train's layout of them; else <unk> alone."""
    from tokworkbench.core.unigram.config import SP_META, UNK, meta_pieces

    if config.control_symbols or config.user_defined_symbols or config.byte_fallback:
        return meta_pieces(config)
    own = [model.pieces[i][0] for i in model.specials]
    layouts = ([UNK], list(SP_META))
    return own if own in layouts and list(model.specials) == list(range(len(own))) else [UNK]


def _unigram_check_export(model: Model, fmt: str) -> list[str]:
    from tokworkbench.core.formats import hf_unigram, sentencepiece_write

    if fmt == "sentencepiece":
        sentencepiece_write.unigram_spec(model)
        return sentencepiece_write.unigram_notes(model)
    hf_unigram.check_hf(model)
    return []


def _unigram_write_export(model: Model, fmt: str, out: Path) -> list[str]:
    from tokworkbench.core.formats import hf_unigram, sentencepiece_write

    if fmt == "sentencepiece":
        return sentencepiece_write.write_spec(sentencepiece_write.unigram_spec(model), out,
                                              sentencepiece_write.unigram_notes(model))
    return hf_unigram.write_hf(model, out)


# -- SentencePiece BPE --------------------------------------------------------------------------
def _spbpe_check_export(model: Model, fmt: str) -> list[str]:
    from tokworkbench.core.formats import spbpe_hf_export

    return spbpe_hf_export.check_hf(model) if fmt == "hf" else []


def _spbpe_write_export(model: Model, fmt: str, out: Path) -> list[str]:
    from tokworkbench.core.formats import sentencepiece_write, spbpe_hf_export

    if fmt == "sentencepiece":
        return sentencepiece_write.write_spec(sentencepiece_write.spbpe_spec(model), out)
    return spbpe_hf_export.write_hf(model, out)


def _spbpe_config(s: "Settings") -> "SpBpeConfig":
    from tokworkbench.core.spbpe.learner import SpBpeConfig

    if s.special_tokens:
        raise TrainingError(f"a SentencePiece BPE model's special tokens are <unk>, <s> and </s>: special tokens "
                            f"such as {s.special_tokens[0]!r} need BPE")
    return SpBpeConfig(s.character_coverage, s.byte_fallback, s.max_piece_length, s.sp_normalization,
                       s.split_digits, s.user_defined_symbols, s.control_symbols, s.required_chars)


def _spbpe_learner(*args, **kwargs) -> Learner:
    from tokworkbench.core.spbpe.learner import SpBpeLearner  # as _unigram_learner

    return SpBpeLearner(*args, **kwargs)


def _spbpe_fit(s: "Settings", chars: int, names: Iterable[str]) -> dict:
    """A target above what every model holds (<unk> <s> </s>, the byte pieces, a corpus of
    `chars` distinct characters), with room for merges, when the target was left to the corpus."""
    base = 3 + len(s.control_symbols) + len(s.user_defined_symbols) + (256 if s.byte_fallback else 0) + chars
    if "target" in names and s.target <= base:
        return {"target": -(-(base + base // 2) // 100) * 100}
    return {}


def _spbpe_replay(learner: Learner, model: Model, s: "Settings") -> Learner:
    """Not made yet: spm_train's loop picks its own pairs, and forcing another model's on it
    is a replay mode of its own still to write; said plainly rather than half done."""
    raise TrainingError(f"a SentencePiece BPE session cannot replay a {kind_of(model).noun} yet; train it "
                        "from the corpus instead")


def _spbpe_describe(model: Model) -> list[str]:
    return [f"normalizer: {model.normalizer_label}",
            f"byte fallback: {'yes' if model.byte_fallback else 'no (unknown characters become unk)'}",
            f"dummy prefix: {'yes' if model.add_dummy_prefix else 'no'}"]


# -- WordPiece ---------------------------------------------------------------------------------
def _wordpiece_check_export(model: Model, fmt: str) -> list[str]:
    from tokworkbench.core.formats import hf_wordpiece, wordpiece_export

    return wordpiece_export.check_vocab_txt(model) if fmt == "vocab.txt" else hf_wordpiece.check_hf(model)


def _wordpiece_write_export(model: Model, fmt: str, out: Path) -> list[str]:
    from tokworkbench.core.formats import hf_wordpiece, wordpiece_export

    if fmt == "vocab.txt":
        return wordpiece_export.write_vocab_txt(model, out)
    return hf_wordpiece.write_hf(model, out)


def _wordpiece_describe(model: Model) -> list[str]:
    continuing = sum(model.is_continuation(i) for i in range(model.vocab_size))
    return [f"normalizer: {model.normalizer_label}; words split by {model.pre_tokenizer.name}",
            f"{continuing:,} of {model.vocab_size:,} tokens continue a word ({model.continuing_subword_prefix}); "
            f"a word over {model.max_input_chars_per_word:,} characters is {model.unk_token}"]


SP_OPTIONS = ("split_digits", "user_defined_symbols", "control_symbols", "required_chars")  # spm_train's


# -- the other kinds' model files, imported when one is read or written -----------------------
def _unigram_to_json(model: Model, meta: dict | None) -> dict:
    from tokworkbench.core.unigram import modelfile

    return modelfile.to_json(model, meta)


def _unigram_from_json(data: dict, max_token_bytes: int) -> Model:
    from tokworkbench.core.unigram import modelfile

    return modelfile.from_json(data, max_token_bytes)


def _spbpe_to_json(model: Model, meta: dict | None) -> dict:
    from tokworkbench.core.spbpe import modelfile

    return modelfile.to_json(model, meta)


def _spbpe_from_json(data: dict, max_token_bytes: int) -> Model:
    from tokworkbench.core.spbpe import modelfile

    return modelfile.from_json(data, max_token_bytes)


def _wordpiece_to_json(model: Model, meta: dict | None) -> dict:
    from tokworkbench.core.wordpiece import modelfile

    return modelfile.to_json(model, meta)


def _wordpiece_from_json(data: dict, max_token_bytes: int) -> Model:
    from tokworkbench.core.wordpiece import modelfile

    return modelfile.from_json(data, max_token_bytes)


# -- the registry ------------------------------------------------------------------------------
BPE = Kind("bpe", "BPE", "BPE model", "merge", bpe_file.to_json, bpe_file.from_json,
           exports=BPE_FORMATS, check_export=check_bpe, write_export=write_bpe,
           config=_bpe_config, learner=Trainer, options=("units", "tie_break"),
           history_csv=_bpe_history_csv, replay=_bpe_replay)
UNIGRAM = Kind("unigram", "Unigram", "Unigram model", "round", _unigram_to_json, _unigram_from_json,
               exports=("hf", "sentencepiece"), export_refusal="a Unigram model has scored pieces and no merges",
               check_export=_unigram_check_export, write_export=_unigram_write_export,
               config=_unigram_config, learner=_unigram_learner,
               options=("algorithm", "seed_size", "prune_fraction", "shrinking_factor", "sub_iterations",
                        "num_threads", "max_piece_length", "character_coverage", "byte_fallback", *SP_OPTIONS),
               own_tokens=("<unk>",), takes_special_tokens=False, stops_at_target=True, fit=_unigram_fit,
               trains_on_lines=lambda s: s.algorithm == "em",  # spm_train's: em.py
               history_csv=_unigram_history_csv, replay=_unigram_replay,
               default_units="char", default_split="metaspace")
FIXED = Kind("fixed", "fixed vocabulary", "fixed vocabulary", "", fixed_file.to_json, fixed_file.from_json,
             export_refusal="no other format segments a fixed vocabulary the same way")
SPBPE = Kind("spbpe", "SentencePiece BPE", "SentencePiece BPE model", "merge", _spbpe_to_json,
             _spbpe_from_json, exports=("hf", "sentencepiece"),
             export_refusal="its pieces merge by score (SentencePiece's rule), not by a merge list in rank order",
             check_export=_spbpe_check_export, write_export=_spbpe_write_export,
             config=_spbpe_config, learner=_spbpe_learner,
             options=("character_coverage", "byte_fallback", "max_piece_length", "sp_normalization", *SP_OPTIONS),
             own_tokens=("<unk>", "<s>", "</s>"), takes_special_tokens=False, trains_on_lines=lambda s: True,
             default_roles=(("unk", "<unk>"), ("bos", "<s>"), ("eos", "</s>")),
             fit=_spbpe_fit, history_csv=_bpe_history_csv, replay=_spbpe_replay, default_units="char",
             default_split="metaspace", describe=_spbpe_describe)

WORDPIECE = Kind("wordpiece", "WordPiece", "WordPiece model", "", _wordpiece_to_json, _wordpiece_from_json,
                 exports=("hf", "vocab.txt"),
                 export_refusal="a WordPiece model matches words longest first and has no merges",
                 check_export=_wordpiece_check_export, write_export=_wordpiece_write_export,
                 default_units="char", describe=_wordpiece_describe)

KINDS: dict[str, Kind] = {kind.name: kind for kind in (BPE, UNIGRAM, FIXED, SPBPE, WORDPIECE)}
TRAINABLE: tuple[str, ...] = tuple(name for name, kind in KINDS.items() if kind.trainable)


def kind_named(name: object, error: type = TrainingError) -> Kind:
    """The kind called `name`; `error` (a TokWorkbenchError class) naming the choices if none is."""
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise error(f"unknown model kind {short(name)}; this tool has {', '.join(KINDS)}")
    return kind


def trainable_kind(name: object) -> Kind:
    kind = kind_named(name)
    if not kind.trainable:
        raise TrainingError(f"a {kind.noun} is not trained; choose {' or '.join(TRAINABLE)}")
    return kind


def kind_of(thing: Model | Learner) -> Kind:
    """The record of a model's or learner's kind."""
    return kind_named(thing.kind, ModelFileError)
