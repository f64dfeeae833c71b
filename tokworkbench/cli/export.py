"""`tokworkbench export -m MODEL --format F -o OUT`: a model in a foreign format."""

import argparse

from tokworkbench.cli.options import MODEL_FLAGS, emit, load, model_options, stdout
from tokworkbench.core.registry.export import FORMATS, check_export_outputs, export
from tokworkbench.core.registry.load import model_inputs

FLAGS = MODEL_FLAGS


def add_parser(sub) -> argparse.ArgumentParser:
    exp = sub.add_parser("export", help="write a model as HF tokenizer.json, tiktoken ranks, minbpe .model, "
                                           "SentencePiece .model or BERT vocab.txt")
    exp.add_argument("-m", "--model", required=True)
    exp.add_argument("--format", choices=FORMATS, required=True)
    exp.add_argument("-o", "--output", required=True)
    model_options(exp)
    return exp


def run(args) -> int:
    check_export_outputs(args.format, args.output, model_inputs(args.model))  # before any work
    stdout()
    tok = load(args, args.model)
    for line in export(tok, args.format, args.output):
        emit(line)
    return 0
