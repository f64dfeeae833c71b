"""The layout keeps its promises: a core without UI imports, modules that keep out of each
other's underscore names, and a protocol the BPE kind really implements."""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import tokworkbench
from tokworkbench.core.models.protocol import Learner, Model

PACKAGE = Path(tokworkbench.__file__).parent
ALLOWED_PRIVATE = {("os", "_exit")}  # the forked child must leave without running the parent's cleanup


def core_modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages([str(PACKAGE / "core")], "tokworkbench.core.")]


def test_core_imports_no_textual_or_rich():
    names = ["tokworkbench.core", "tokworkbench.cli", *core_modules()]
    code = (
        f"import importlib, sys; [importlib.import_module(m) for m in {names!r}];"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'));"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
    assert len(names) > 20  # the walk found the subpackages


def test_no_module_reaches_into_another_objects_underscore_names():
    offences = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Attribute):
                continue
            name = node.attr
            if not name.startswith("_") or name.startswith("__"):
                continue
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "super":
                continue  # a subclass extending its own base's hook
            if owner in ("self", "cls") or (owner, name) in ALLOWED_PRIVATE:
                continue
            offences.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {ast.unparse(node)}")
    assert offences == []


def test_the_bpe_kind_implements_the_model_kind_protocols():
    from tokworkbench.core import TrainConfig, Trainer

    trainer = Trainer(["low lower lowest"], TrainConfig())
    assert isinstance(trainer, Learner)
    assert isinstance(trainer.model(), Model)


def test_every_other_kind_implements_the_protocols_too():
    """Unigram, fixed vocabularies and a loaded model shown frozen: each view and format works
    through these protocols, so a kind that lacks a member breaks somewhere far away."""
    from tokworkbench.core.fixed.model import FixedVocab
    from tokworkbench.core.session.frozen import FrozenLearner
    from tokworkbench.core.models.roles import Roles
    from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

    unigram = UnigramLearner(["low lower lowest"], UnigramConfig(seed_size=30))
    assert isinstance(unigram, Learner) and isinstance(unigram.model(), Model)
    fixed = FixedVocab(("<unk>", "low", "er", "l", "o", "w"), Roles(unk="<unk>"))
    assert isinstance(fixed, Model)
    frozen = FrozenLearner(unigram.model(), ["low lower"], "u.json")
    assert isinstance(frozen, Learner) and isinstance(frozen.model(), Model)


def test_every_exception_class_lives_in_errors_py():
    """One place to find what can go wrong (private control-flow signals excepted)."""
    elsewhere = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                bases = [ast.unparse(b) for b in node.bases]
                if any(b.endswith(("Error", "Exception")) for b in bases):
                    elsewhere.append(f"{path.relative_to(PACKAGE)}: {node.name}")
    assert elsewhere == []
