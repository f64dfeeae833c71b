"""`tokworkbench encode -m MODEL (TEXT | -f FILE)`: ids, tokens or JSON; a scored kind (Unigram)
also gives its K best segmentations (--nbest) or a sampled one (--sample)."""

import argparse
import json
import math
import sys

from tokworkbench.cli.options import MODEL_FLAGS, PROG, emit, emit_json, input_text, load, model_options, text_options
from tokworkbench.core.errors import TrainingError
from tokworkbench.core.models.roles import encode_document, with_boundaries
from tokworkbench.core.registry.kinds import UNIGRAM, kind_of
from tokworkbench.core.unigram.sampling import unigram_nbest, unigram_sample

FLAGS = MODEL_FLAGS | {"ordinary"}
SCORED = (UNIGRAM,)  # the kinds whose models score their pieces, so a text has other segmentations


def add_parser(sub) -> argparse.ArgumentParser:
    enc = sub.add_parser("encode", help="encode text with a model")
    enc.add_argument("-m", "--model", required=True)
    text_options(enc)
    enc.add_argument("--format", choices=("ids", "tokens", "json"), default="ids")
    specials = enc.add_mutually_exclusive_group()
    specials.add_argument("--allow-special", action="store_true", help="encode special-token strings as special ids")
    specials.add_argument("--ordinary", action="store_true",
                          help="encode special-token strings as ordinary text (what sp.encode and tiktoken's "
                               "encode_ordinary do); without either flag such a string is an error")
    enc.add_argument("--add-special", action="store_true",
                     help="encode as a document: BOS + text + EOS (each once) where the model has those roles")
    enc.add_argument("--nbest", type=int, metavar="K", help="Unigram: the K best segmentations, best first")
    enc.add_argument("--sample", action="store_true",
                     help="Unigram: draw a segmentation (subword regularization), p(path)^ALPHA")
    enc.add_argument("--alpha", type=float, default=0.1, help="Unigram --sample smoothing (default: 0.1)")
    enc.add_argument("--seed", type=int, help="Unigram --sample: random seed, for a repeatable draw")
    model_options(enc)
    return enc


def run(args) -> int:
    tok = load(args, args.model)
    text = input_text(args)
    allowed = "all" if args.allow_special else ()
    if args.nbest is not None or args.sample:
        return _segmentations(args, tok, text)
    _note_no_boundaries(args, tok)
    if args.ordinary:
        ids = encode_document(tok, text) if args.add_special else tok.encode_ordinary(text)
    elif args.add_special:
        ids = encode_document(tok, text, allowed, strict=True)
    else:
        ids = tok.encode(text, allowed_special=allowed)
    if args.format == "json" and kind_of(tok) in SCORED:
        scores = [tok.score(i) for i in ids]
        emit_json(json.dumps({"ids": ids, "tokens": [tok.token_text(i) for i in ids], "score": math.fsum(scores),
                              "scores": scores}, ensure_ascii=False))
        return 0
    if args.format == "ids":
        emit(" ".join(map(str, ids)))
    elif args.format == "tokens":
        emit_json(" ".join(json.dumps(tok.token_text(i), ensure_ascii=False) for i in ids))
    else:
        emit_json(json.dumps({"ids": ids, "tokens": [tok.token_text(i) for i in ids]}, ensure_ascii=False))
    return 0


def _note_no_boundaries(args, tok) -> None:
    if args.add_special and not (tok.roles.bos or tok.roles.eos):
        print(f"{PROG}: note: {args.model} gives no token the bos or eos role; --add-special adds nothing",
              file=sys.stderr)


def _segmentations(args, tok, text: str) -> int:
    """--nbest K and --sample: a scored kind's other segmentations of ordinary text. A special
    token's text in it is refused as encode refuses it (encode is run for that: the same check,
    the same message); --add-special frames each segmentation with BOS and EOS as encode does."""
    if kind_of(tok) not in SCORED:
        raise TrainingError(f"--nbest and --sample are for {' and '.join(k.title for k in SCORED)} models; "
                            f"this {tok.kind} model has one segmentation")
    if args.nbest is not None and args.sample:
        raise TrainingError("give --nbest or --sample, not both")
    if args.allow_special:
        raise TrainingError("--nbest and --sample segment ordinary text; --allow-special does not apply to them")
    _note_no_boundaries(args, tok)
    if args.add_special:
        encode_document(tok, text, (), strict=True)
        roles = tok.roles  # the boundaries the text spells already are not segmented (encode_document's rule)
        if roles.bos is not None and text.startswith(roles.bos):
            text = text[len(roles.bos):]
        if roles.eos is not None and text.endswith(roles.eos):
            text = text[: len(text) - len(roles.eos)]
    else:
        tok.encode(text)
    if args.nbest is not None:
        if not 1 <= args.nbest <= 1000:
            raise TrainingError(f"--nbest {args.nbest} must be between 1 and 1000")
        found = unigram_nbest(tok, text, args.nbest)
    else:
        if not (math.isfinite(args.alpha) and args.alpha > 0):
            raise TrainingError(f"--alpha {args.alpha} must be a positive number")
        found = [(unigram_sample(tok, text, args.alpha, args.seed), None)]
    if args.add_special:
        found = [(with_boundaries(tok, ids), score) for ids, score in found]
    for ids, score in found:
        if args.format == "ids":
            emit(" ".join(map(str, ids)))
        elif args.format == "tokens":
            emit_json(" ".join(json.dumps(tok.token_text(i), ensure_ascii=False) for i in ids))
        else:
            total = math.fsum(tok.score(i) for i in ids) if score is None else score
            emit_json(json.dumps({"ids": ids, "tokens": [tok.token_text(i) for i in ids], "score": total},
                                 ensure_ascii=False))
    return 0
