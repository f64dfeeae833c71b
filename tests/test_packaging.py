"""A wheel of the project is complete: installed from it into a fresh venv, `tokworkbench train`
with no PATH trains on the sample texts shipped inside the wheel.

The build and the install are offline: the wheel is built without build isolation by the test
environment's hatchling (the `test` extra asks for it), installed
with `--no-deps --no-index`, and the fresh venv gets the wheel's declared dependencies (textual,
regex, numpy) by a .pth line naming the folder where the test environment has them. That folder
holds no importable tokworkbench (the editable install is a .pth file, which a folder added by a
.pth line does not run), and the child checks that it imports tokworkbench and its corpus from the fresh venv and that no path of
this checkout is on its sys.path.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from tokworkbench.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[1]
BACKEND, MIN_BACKEND = "hatchling", (1, 27)  # as pyproject.toml's [build-system] asks
IGNORED = (".git", ".venv", "venv", "build", "dist", "bench-data", "__pycache__", "*.egg-info",
           ".pytest_cache", ".hypothesis", "*.pyc")


def _skip(reason: str):
    """Skip where building is impossible; in CI that is a failure, since CI must run this test."""
    if os.environ.get("CI"):
        pytest.fail(f"cannot run the packaging test in CI: {reason}")
    pytest.skip(reason)


def _run(cmd, **kw):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, **kw)
    assert out.returncode == 0, f"{' '.join(map(str, cmd))} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}"
    return out


def _copy_source(dst: Path) -> None:
    """The files of this checkout a clone would have (tracked, or new and not ignored), else the
    tree without build products and environments: the build then leaves nothing in the checkout."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True, timeout=60).stdout.decode().split("\0")
    except (OSError, subprocess.SubprocessError):
        shutil.copytree(ROOT, dst, ignore=shutil.ignore_patterns(*IGNORED), dirs_exist_ok=True)
        return
    for name in filter(None, listed):
        src = ROOT / name
        if src.is_file():  # a tracked file deleted in the work tree is not in a clone of it either
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / name)


def _build_wheel(src: Path, out: Path) -> Path:
    try:
        version = tuple(int(p) for p in metadata.version(BACKEND).split(".")[:2])
    except metadata.PackageNotFoundError:
        version = ()
    if version < MIN_BACKEND:
        _skip(f"building the wheel offline needs {BACKEND}>={'.'.join(map(str, MIN_BACKEND))} in the "
              f"test environment (found {version or 'none'}); pip install -e '.[test]' brings it")
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-index",
          "--no-build-isolation", "--wheel-dir", out, src])
    wheels = sorted(out.glob("tokworkbench-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _check_contents(wheel: Path, src: Path) -> None:
    """Every file of the package folder and of sample_texts/ (its README, the licences, too) is
    in the wheel, byte for byte."""
    with zipfile.ZipFile(wheel) as zf:
        inside = {name: zf.read(name) for name in zf.namelist()}
    wanted = {f"tokworkbench/{p.relative_to(src / 'tokworkbench').as_posix()}": p
              for p in (src / "tokworkbench").rglob("*") if p.is_file()}
    wanted.update({f"tokworkbench/sample_texts/{p.name}": p
                   for p in (src / "sample_texts").iterdir() if p.is_file()})
    missing = sorted(name for name in wanted if name not in inside)
    assert not missing, f"the wheel lacks {missing}"
    changed = sorted(name for name, p in wanted.items() if inside[name] != p.read_bytes())
    assert not changed, f"files that differ in the wheel: {changed}"
    assert "tokworkbench/sample_texts/README.md" in inside


def _fresh_venv(where: Path) -> Path:
    """A venv of the same Python with no site-packages of the system or of the test venv."""
    _run([sys.executable, "-m", "venv", "--without-pip", where])
    python = where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    assert python.exists()
    return python


def _dependency_folders(wheel: Path) -> list[Path]:
    """Where the test environment has the wheel's declared dependencies (none of them holds an
    importable tokworkbench: the editable install is a .pth file, run only in a site folder)."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        lines = zf.read(meta).decode().splitlines()
    requires = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Requires-Dist:")]
    names = [re.match(r"[A-Za-z0-9._-]+", r).group() for r in requires if "extra ==" not in r]
    assert {"textual", "regex", "numpy"} <= set(names), names
    folders = sorted({Path(metadata.distribution(n).locate_file("")).resolve() for n in names})
    for folder in folders:
        assert not (folder / "tokworkbench" / "__init__.py").exists(), folder
        assert not (folder / "tokworkbench.py").exists(), folder
    return folders


def _child_env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def test_wheel_installs_and_trains_on_its_own_sample_texts(tmp_path):
    started = time.perf_counter()
    src, dist, venv_dir, elsewhere = (tmp_path / d for d in ("src", "dist", "venv", "elsewhere"))
    for d in (src, dist, elsewhere):
        d.mkdir()
    _copy_source(src)
    wheel = _build_wheel(src, dist)
    _check_contents(wheel, src)
    built = time.perf_counter()

    python = _fresh_venv(venv_dir)
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps",
          "--no-index", wheel])
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     env=_child_env()).stdout.strip())
    assert venv_dir in site.parents
    dependencies = _dependency_folders(wheel)
    (site / "_test_packaging_dependencies.pth").write_text("".join(f"{d}\n" for d in dependencies))
    installed = time.perf_counter()

    env = _child_env()
    probe = _run([python, "-c", (
        "import json, sys, tokworkbench; "
        "from tokworkbench.core.text.samples import SAMPLE_TEXTS, sample_paths; "
        "print(json.dumps({'module': tokworkbench.__file__, 'corpus': str(SAMPLE_TEXTS), "
        "'files': [p.name for p in sample_paths()], 'path': sys.path}))")],
        cwd=elsewhere, env=env)
    found = json.loads(probe.stdout)
    assert venv_dir in Path(found["module"]).resolve().parents, found["module"]
    corpus = Path(found["corpus"])
    assert venv_dir in corpus.resolve().parents and corpus.name == "sample_texts", corpus
    expected = sorted(p.name for p in (ROOT / "sample_texts").iterdir() if p.is_file() and p.name != "README.md")
    assert found["files"] == expected
    assert (corpus / "README.md").is_file()  # shipped with the texts, skipped by sample_paths
    on_path = [p for p in found["path"] if p and (Path(p).resolve() == ROOT or ROOT in Path(p).resolve().parents)
               and Path(p).resolve() not in dependencies]
    assert not on_path, f"the checkout is on the child's sys.path: {on_path}"

    script = venv_dir / ("Scripts/tokworkbench.exe" if os.name == "nt" else "bin/tokworkbench")
    trained = _run([script, "train", "--vocab-size", "300", "-o", "model.json"], cwd=elsewhere, env=env)
    done = time.perf_counter()
    print(f"\nbuilt {wheel.name} in {built - started:.1f} s; fresh venv and install "
          f"{installed - built:.1f} s; train {done - installed:.1f} s")
    print(f"child imports tokworkbench from {found['module']}")
    print(f"child's corpus: {corpus} ({len(found['files'])} files + README.md)")
    print(f"$ {script} train --vocab-size 300 -o model.json   (cwd {elsewhere})")
    print(trained.stdout.rstrip())
    assert "trained 44 merges, vocabulary 300" in trained.stdout
    assert trained.stdout.rstrip().endswith("wrote model.json")
    model = elsewhere / "model.json"
    doc = json.loads(model.read_text(encoding="utf-8"))
    assert doc["corpus"]["documents"] == len(expected), doc["corpus"]

    # the same model as the checkout's own sample texts give
    reference = tmp_path / "reference.json"
    assert cli_main(["train", "--vocab-size", "300", "-o", str(reference)]) == 0
    assert model.read_bytes() == reference.read_bytes()
