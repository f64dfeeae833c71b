"""What the command modules share: role flags, model flags, loading a model, writing a line."""

import argparse

from tokworkbench.core.files.limits import MAX_TOKEN_BYTES
from tokworkbench.core.registry.load import open_model
from tokworkbench.core.models.roles import ROLES, Roles

SPLIT_CHOICES = "{none,gpt2,gpt4,o200k,regex:PATTERN}"


def add_role_options(parser: argparse.ArgumentParser) -> None:
    """--bos/--eos/--pad/--unk TOKEN (`train`, `vocab`)."""
    what = {"bos": "opens each document", "eos": "closes each document",
            "pad": "fills short rows of a padded batch", "unk": "stands for text the vocabulary cannot spell"}
    for role in ROLES:
        parser.add_argument(f"--{role}", metavar="TOKEN", help=f"the special token that {what[role]}")


def roles_from(args) -> Roles:
    return Roles.of({r: getattr(args, r) for r in ROLES})


def add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--split", metavar=SPLIT_CHOICES,
                        help="pattern for a bare .tiktoken file (one without its OUT.json companion)")
    parser.add_argument("--max-token-bytes", type=int, default=MAX_TOKEN_BYTES, metavar="N",
                        help=f"refuse a model with a token longer than N bytes (default: {MAX_TOKEN_BYTES})")


def load(args, name: str):
    """A model file, or a preset by name."""
    return open_model(name, args.split, args.max_token_bytes)


def emit(text: str) -> None:
    """A line on standard output, failures reported as cli.py reports them."""
    from tokworkbench import cli

    cli.emit(text)


def emit_json(text: str) -> None:
    """JSON on standard output, escaped for a terminal in JSON's own escapes."""
    from tokworkbench import cli

    cli.emit_json(text)
