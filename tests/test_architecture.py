"""The layout keeps its promises: a core without UI imports, modules that keep out of each
other's underscore names, kinds that implement the protocols, a kind's name compared only in its
registry, no model probed with getattr, and no import cycle."""

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import tokworkbench
from tokworkbench.core.models.protocol import Learner, Model

PACKAGE = Path(tokworkbench.__file__).parent
# The forked child must leave without running the parent's cleanup; the command line runs the
# exit handlers itself, then leaves without the interpreter's teardown (cli.entry).
ALLOWED_PRIVATE = {("os", "_exit"), ("atexit", "_run_exitfuncs")}


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
    from tokworkbench.core.models.roles import Roles
    from tokworkbench.core.session.frozen import FrozenLearner
    from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

    unigram = UnigramLearner(["low lower lowest"], UnigramConfig(seed_size=30))
    assert isinstance(unigram, Learner) and isinstance(unigram.model(), Model)
    fixed = FixedVocab(("<unk>", "low", "er", "l", "o", "w"), Roles(unk="<unk>"))
    assert isinstance(fixed, Model)
    from tokworkbench.core.spbpe.model import NORMAL, UNKNOWN, SpBpeModel
    from tokworkbench.core.text.spnormalize import SpNormalizer
    spbpe = SpBpeModel(("<unk>", "l", "o", "lo"), (0.0, -2.0, -2.0, -1.0), (UNKNOWN, NORMAL, NORMAL, NORMAL),
                       SpNormalizer(None, "identity", False), add_dummy_prefix=False)
    assert isinstance(spbpe, Model) and spbpe.encode_ordinary("lol") == [3, 1]

    from tokworkbench.core.wordpiece.model import WordPieceModel

    assert isinstance(WordPieceModel(("[UNK]", "low", "##er")), Model)
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


# -- kinds are found through their registry --------------------------------------------------
KIND_TABLES = {"core/registry/kinds.py", "app/kind_views.py"}  # the registry, the app's presentation table


def kind_names() -> set[str]:
    from tokworkbench.core.registry.kinds import KINDS

    return set(KINDS)


def _names_a_kind(node: ast.AST, names: set[str]) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in names
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_kind(e, names) for e in node.elts)
    return False


def kind_comparisons(tree: ast.AST, names: set[str]) -> list[int]:
    """Lines that compare something with a kind's name (`== "unigram"`, `in ("bpe", …)`), or build
    a set of kind names to compare with later (`frozenset({"bpe"})`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(_names_a_kind(x, names) for x in [node.left, *node.comparators]):
            found.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set")
              and node.args and _names_a_kind(node.args[0], names)):
            found.append(node.lineno)
    return found


def test_a_kind_name_is_compared_only_in_the_registry_and_the_presentation_table():
    names = kind_names()
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where in KIND_TABLES:
            continue
        for line in kind_comparisons(ast.parse(path.read_text(encoding="utf-8")), names):
            offences.append(f"{where}:{line}")
    assert offences == []


def test_the_kind_comparison_check_finds_what_it_looks_for():
    names = {"bpe", "unigram"}
    code = ('a == "unigram"\nif kind != "bpe": pass\nb = x in ("bpe", "z")\nK = frozenset({"bpe"})\n'
            'ok = kind == "other"\nname = "bpe"\n')
    assert kind_comparisons(ast.parse(code), names) == [1, 2, 3, 4]


# -- no probing of models and learners --------------------------------------------------------
# getattr/hasattr with a literal name where the object is not ours to type: the os module's flags,
# an exception's optional fields, Textual's objects.
ALLOWED_PROBES = {
    ("core/text/corpus.py", "O_CLOEXEC"),  # not on every platform
    ("core/text/pretokenize.py", "pos"),  # regex.error has it only for some errors
    ("core/files/atomic.py", "restored"),  # set on the exception where a rollback ran
    ("app/dialogs/base.py", "handed_on"),  # a Textual key event we re-posted carries it
    ("app/widgets/steady_input.py", "HOLDS_KEYS_AFTER_ENTER"),  # any Textual screen may hold it
}


def probes(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                and (node.func.id == "hasattr" or len(node.args) == 3)):
            found.append((node.lineno, node.args[1].value))
    return found


def test_no_model_or_learner_is_probed_with_getattr():
    """What only some kinds can do is a capability protocol (models/protocol.py) checked with
    isinstance: a probe with a default hides a missing member until a view draws nothing."""
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for line, name in probes(ast.parse(path.read_text(encoding="utf-8"))):
            if (where, name) not in ALLOWED_PROBES:
                offences.append(f"{where}:{line} {name}")
    assert offences == []


# -- no import cycles -------------------------------------------------------------------------
def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking(node: ast.If) -> bool:
    return ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def imported_modules(tree: ast.AST, modules: set[str]) -> set[str]:
    """Every module of ours this one imports, at its top or inside a function (a lazy import is
    still a dependency), except under `if TYPE_CHECKING:` (annotations only)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                for alias in child.names:
                    full = f"{child.module}.{alias.name}"
                    found.add(full if full in modules else child.module)
            elif isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            visit(child)

    visit(tree)
    return found & modules


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {m: imported_modules(ast.parse(p.read_text(encoding="utf-8")), set(paths)) - {m}
            for m, p in paths.items()}


def test_no_import_cycle():
    assert import_cycles(import_graph()) == []


def test_the_cycle_check_finds_a_cycle():
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The layers, top to bottom: a module may import from its own layer and those below, never above.
LAYERS = [
    ("tokworkbench.app", "tokworkbench.cli", "tokworkbench.serve", "tokworkbench.serve_guard",
     "tokworkbench.__main__", "tokworkbench.engines"),
    ("tokworkbench.core.session", "tokworkbench.core.batching"),
    ("tokworkbench.core.registry",),
    ("tokworkbench.core.formats",),
    ("tokworkbench.core.bpe", "tokworkbench.core.unigram", "tokworkbench.core.fixed", "tokworkbench.core.spbpe",
     "tokworkbench.core.wordpiece"),
    ("tokworkbench.core.files", "tokworkbench.core.models", "tokworkbench.core.inspection", "tokworkbench.core.text",
     "tokworkbench.core.compat", "tokworkbench.core.transfer", "tokworkbench.core.curve", "tokworkbench.core.heap", "tokworkbench.core.gcpause",
     "tokworkbench.core.bytelevel", "tokworkbench.core.units", "tokworkbench.core.orphans",
     "tokworkbench.core.errors", "tokworkbench.core.jit", "tokworkbench.core.slots",
     "tokworkbench.core.slotkernel"),
]
KIND_PACKAGES = LAYERS[4]


def layer_of(module: str) -> int | None:
    for depth, names in enumerate(LAYERS):
        if any(module == n or module.startswith(n + ".") for n in names):
            return depth
    return None


def test_each_module_imports_only_from_its_layer_and_below():
    """app/cli → session → registry → foreign formats → the kinds → contracts, text, files."""
    graph = import_graph()
    unplaced = sorted(m for m in graph if layer_of(m) is None and m not in ("tokworkbench", "tokworkbench.core"))
    assert unplaced == []
    upward = [f"{m} -> {d}" for m, deps in sorted(graph.items()) for d in sorted(deps)
              if layer_of(m) is not None and layer_of(d) is not None and layer_of(d) < layer_of(m)]
    assert upward == []


def test_the_kind_packages_are_independent_of_each_other():
    graph = import_graph()

    def package(module: str) -> str | None:
        return next((p for p in KIND_PACKAGES if module == p or module.startswith(p + ".")), None)

    crossing = [f"{m} -> {d}" for m, deps in sorted(graph.items()) for d in sorted(deps)
                if package(m) and package(d) and package(m) != package(d)]
    assert crossing == []
