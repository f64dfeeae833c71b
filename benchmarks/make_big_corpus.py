#!/usr/bin/env python3
"""Build a 1 GB corpus for the scale check (issue 26): big-1G.txt beside the four corpora.

    python benchmarks/make_big_corpus.py [OUTDIR] [--cache DIR] [--no-download]

Debian has no gigabyte of freely licensed English prose, and repeating en-100M ten times would
say nothing: its distinct chunks would not grow, and their growth (Heaps' law) is what the
estimate in docs/scale.md rests on. So the gigabyte is en-100M.txt and multi-10M.txt (built by
make_corpus.py first) interleaved with the text files of the Linux 6.1 source tree (C, headers,
assembly, Kconfig, Makefiles, device trees, scripts and its documentation), from the pinned
`linux-source-6.1` package (139 MB, apt-get download as make_corpus.py does). Source code
brings a long tail of identifiers and numbers, so its distinct chunks grow faster than prose's:
a hard case for the count file and for training from it, which is what the check wants.

Deterministic as make_corpus.py is: members in tar order filtered by fixed suffixes, each file
tidied, a fixed byte budget cut at a line end, the same interleaving; the tree is streamed out of
its .tar.xz, so the 1.3 GB tar is never held whole.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import lzma
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_corpus as mc  # noqa: E402

PACKAGE, VERSION = "linux-source-6.1", "6.1.192-3"
NAME = "big-1G.txt"
TOTAL = 1_000_000_000
SUFFIXES = (".c", ".h", ".S", ".rst", ".txt", ".dts", ".dtsi", ".py", ".sh", ".pl", ".awk",
            ".yaml", ".json", ".rs", ".lds", ".cocci", ".tc", ".bpf")
NAMES = ("Kconfig", "Makefile", "Kbuild", "README", "MAINTAINERS", "CREDITS")


def wanted(path: str) -> bool:
    base = path.rsplit("/", 1)[-1]
    return base.endswith(SUFFIXES) or base.startswith(NAMES)


def kernel_text(deb: Path, budget: int) -> bytes:
    """The tree's text files, tidied and joined, up to `budget` bytes (cut at a line end)."""
    members = mc.deb_members(deb, ["usr/src/linux-source-6.1.tar.xz"])
    (tarball,) = members.values()
    out, size = [], 0
    with tarfile.open(fileobj=lzma.LZMAFile(io.BytesIO(tarball)), mode="r|") as tar:
        for member in tar:
            if not (member.isfile() and wanted(member.name)):
                continue
            text = mc.decode(tar.extractfile(member).read(), member.name)
            if text is None:
                continue
            data = mc.tidy(text)
            out.append(data)
            size += len(data)
            if size >= budget:
                break
    joined = b"".join(out)
    if len(joined) < budget:
        print(f"make_big_corpus: WARNING: the tree holds {len(joined):,} bytes of text, "
              f"{budget:,} were wanted", file=sys.stderr)
    return mc.head(joined, budget)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path, default=mc.DEFAULT_OUT)
    ap.add_argument("--cache", type=Path, help="folder of the .deb files (default OUT/.debs)")
    ap.add_argument("--no-download", action="store_true")
    args = ap.parse_args(argv)
    out: Path = args.out.resolve()
    target = out / NAME
    if target.is_file() and target.stat().st_size > TOTAL * 0.99:
        print(f"make_big_corpus: {target} exists")
        return 0
    if mc.main([str(out)] + (["--no-download"] if args.no_download else [])):
        return 1
    cache = (args.cache or out / ".debs").resolve()
    debs = sorted(cache.glob(f"{PACKAGE}_{VERSION}_*.deb"))
    if not debs:
        if args.no_download or not mc.apt_download(cache, f"{PACKAGE}={VERSION}"):
            raise SystemExit(f"make_big_corpus: no {PACKAGE} {VERSION} .deb in {cache}")
        debs = sorted(cache.glob(f"{PACKAGE}_{VERSION}_*.deb"))
    prose = {"en-100M": (out / "en-100M.txt").read_bytes(), "multi-10M": (out / "multi-10M.txt").read_bytes()}
    room = TOTAL - sum(len(v) for v in prose.values())
    parts = {**prose, "linux-6.1": kernel_text(debs[-1], room)}
    data = mc.interleave(parts)
    _write(target, data)
    print(f"make_big_corpus: {NAME}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()}; "
          + ", ".join(f"{k} {len(v):,}" for k, v in parts.items()))
    return 0


def _write(path: Path, data: bytes) -> None:
    """Whole or not at all, as make_corpus.py writes."""
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


if __name__ == "__main__":
    raise SystemExit(main())
