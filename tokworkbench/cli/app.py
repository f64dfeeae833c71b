"""`tokworkbench [app] PATH...`: the workbench on these files and settings (the default command)."""

import argparse
from functools import partial
from pathlib import Path

from tokworkbench.cli.options import (
    DEFAULTS,
    load,
    role_options,
    roles_from,
    settings_from,
    special_ids,
    training_options,
)
from tokworkbench.core.errors import CorpusError, TrainingError
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES
from tokworkbench.core.formats.presets import is_preset, preset_named, preset_ranks
from tokworkbench.core.session.settings import DEFAULT_TARGET, FIT, Settings

FLAGS = frozenset({"split"})


def add_parser(sub) -> argparse.ArgumentParser:
    app = sub.add_parser("app", help="open the workbench (the default)")
    workbench_options(app)
    return app


def workbench_options(parser: argparse.ArgumentParser) -> None:
    """The workbench's settings (`app`, and `serve`, which passes them on to each session)."""
    training_options(parser)
    parser.add_argument("--target", type=int, default=None, metavar="N",
                        help=f"target vocabulary size for r (default: {DEFAULT_TARGET}; Unigram: one the corpus's "
                        "characters leave room for)")
    parser.add_argument("-m", "--inspect", metavar="NAME|FILE", dest="model",
                        help="inspect a tokenizer instead of training one: a preset (cl100k_base, o200k_base, "
                        "gpt2) or any model file this tool reads; --split and --special NAME=ID then apply to it "
                        "(--kind bpe|unigram is the kind a training session learns)")
    role_options(parser)  # as `train` takes them, so the settings dialog's train command reads back
    parser.set_defaults(split=None)  # gpt4 for training; with -m, a preset or companion brings its own


def run(args) -> int:
    settings = app_settings(args)  # checked here: a bad pattern is one line, not a screen
    if args.model and is_preset(args.model):
        # found and hash-checked here (a missing file is one line); parsed in the app's load
        # worker, with the screen up, since a cold parse takes seconds
        preset_ranks(preset_named(args.model))
        special_ids(args.special)
        model = partial(app_model, args)
    else:
        model = app_model(args)  # read here too: a bad model file is one line
    from tokworkbench.app import run_app  # Textual is imported only when the app is wanted

    return run_app(args.paths, settings, (model, args.model) if model is not None else None)


def app_model(args):
    """The model `-m` names, read as the model commands read it (--special is NAME=ID here)."""
    if not args.model:
        return None
    return load(argparse.Namespace(special_ids=args.special, max_token_bytes=MAX_TOKEN_BYTES, split=args.split,
                                   lowercase=True, strip_accents=None),
                args.model)


def app_settings(args) -> Settings:
    """The workbench's settings from its command line, so a session can be reproduced; a
    missing path or a bad pattern is one line before any screen or server starts."""
    for path in args.paths:
        if not Path(path).exists():
            raise CorpusError(f"{path}: no such file or folder")
    roles = roles_from(args)
    if args.model and roles:
        raise TrainingError("--bos/--eos/--pad/--unk set a trained model's roles; a model opened with -m "
                            "keeps its own")
    # what is not given is fitted to the corpus once it is read (a Unigram keeps every character)
    fit = tuple(name for name, given in zip(FIT, (args.seed_size, args.target)) if given is None)
    settings = settings_from(args, target=args.target, fit=fit, default_split=DEFAULTS["split"], roles=roles,
                             specials=() if args.model else None)  # -m: the model's own
    if settings.target < 1:
        raise TrainingError(f"--target {args.target} makes no sense; a vocabulary has at least the base units")
    return settings
