#!/usr/bin/env python3
"""Build the benchmark corpora from pinned Debian 12 ("bookworm") packages of freely licensed text.

    python benchmarks/make_corpus.py [OUTDIR] [--cache DIR] [--no-download]

OUTDIR (default bench-data/corpus) receives:

    en-100M.txt    English prose, reference text and documentation, 100,000,000 bytes at most
    en-10M.txt     the first tenth of every part of en-100M.txt
    multi-10M.txt  CJK, Hangul, Cyrillic, Arabic script, Greek, accented Latin, emoji and code,
                   10,000,000 bytes at most
    mixed-10M.txt  the first 8 % of every part of en-100M.txt and the first 20 % of every part of
                   multi-10M.txt
    parts.tsv      the bytes of every part in every file
    packages.txt   the packages read: name, version, SHA-256 of the .deb
    SHA256SUMS     of the four corpora

The .deb files are fetched by name and pinned version with `apt-get download` (no install, no
root) into the cache (default OUTDIR/.debs); a package whose pinned version is gone is fetched at
its current version, with a warning, and the output then differs from the reference checksums
below. With --no-download, or where there is no apt-get, the cache must already hold the .debs
(any Debian mirror serves them; `packages.txt` and benchmarks/README.md name them). Everything
else is the standard library: the .deb archives are read in place (ar, then tar), so neither
dpkg nor root is needed.

Deterministic: files are taken in sorted order, budgets are fixed byte counts, cuts fall at line
ends, and nothing depends on clocks, randomness or the locale. The reference checksums were taken
with Python 3.11; another version's html.parser could change the HTML parts. A run whose outputs
exist and match their SHA256SUMS does nothing. Sources and licences: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import fnmatch
import gzip
import hashlib
import html
import io
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "bench-data" / "corpus"

PACKAGES = {  # name: pinned version (Debian 12 "bookworm")
    "sword-text-kjv": "14.3-1",
    "sword-text-web": "426.0-1",
    "sword-comm-mhcc": "2.0-1",
    "sword-comm-tdavid": "2.1-1",
    "sword-comm-scofield": "2.1-1",
    "dict-gcide": "0.48.5+nmu2",
    "dict-foldoc": "20230119-1",
    "dict-jargon": "4.4.7-3.1",
    "dict-devil": "1.0-13.1",
    "python3.11-doc": "3.11.2-6+deb12u9",
    "perl-doc": "5.36.0-7+deb12u4",
    "linux-doc-6.1": "6.1.192-3",
    "debian-reference-en": "2.100",
    "debian-reference-ja": "2.100",
    "debian-reference-zh-cn": "2.100",
    "developers-reference": "12.18",
    "debian-faq-ko": "11.1",
    "debian-policy": "4.6.2.0",
    "installation-guide-amd64": "20230508+deb12u1",
    "debian-handbook": "11.20220922",
    "fortunes-zh": "2.98",
    "fortunes-ru": "1.52-3.1",
    "unicode-data": "15.0.0-1",
    "libpython3.11-stdlib": "3.11.2-6+deb12u9",
    "golang-1.19-src": "1.19.8-2",
}

# The four corpora as built from the pinned versions above (with Python 3.11).
REFERENCE = {
    "en-100M.txt": "9f1dbc6f0ccdcc2b5d78c85418bfb954ab94c93ac4e1e0bd2bd14125a3f3c53f",
    "en-10M.txt": "ce82047902aeb764eb24a70ea58beb28aa271cb5bececf57356fbd2dc9518f69",
    "multi-10M.txt": "4c8a9249f85c21d9eb9415b0b4186b559e7f887b07d0f619ca28d6415ad26846",
    "mixed-10M.txt": "ec1ffd5167df1f1f23eb76140454934002a8e7c5c1cec0e6b68a6c6f2ae8679c",
}

CORPORA = tuple(REFERENCE)
PIECE = 1 << 16  # parts are interleaved in pieces of about 64 KiB, cut at line ends
ALL = None  # budget: the whole source
FILL = -1  # budget: whatever is left of the file's total once the other parts are in


# -- reading .deb archives -------------------------------------------------------------------------

def deb_members(deb: Path, patterns: list[str]) -> dict[str, bytes]:
    """Regular files of a .deb's data archive whose path (without the leading './') matches one
    of the fnmatch patterns ('*' crosses '/')."""
    raw = deb.read_bytes()
    if not raw.startswith(b"!<arch>\n"):
        raise SystemExit(f"make_corpus: {deb} is not a .deb (ar) archive")
    pos, data, kind = 8, None, None
    while pos + 60 <= len(raw):
        name = raw[pos:pos + 16].decode("ascii").strip().rstrip("/")
        size = int(raw[pos + 48:pos + 58].decode("ascii"))
        if name.startswith("data.tar"):
            data, kind = raw[pos + 60:pos + 60 + size], name[len("data.tar"):]
            break
        pos += 60 + size + (size & 1)
    if data is None:
        raise SystemExit(f"make_corpus: {deb} has no data.tar member")
    if kind == ".zst":  # not used by bookworm's packages; dpkg-deb can still unpack it
        data = subprocess.run(["dpkg-deb", "--fsys-tarfile", str(deb)], check=True,
                              capture_output=True).stdout
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        for member in tar:
            path = member.name.removeprefix("./")
            if member.isfile() and any(fnmatch.fnmatchcase(path, p) for p in patterns):
                out[path] = tar.extractfile(member).read()
    return out


def fetch(cache: Path, download: bool) -> dict[str, Path]:
    """The .deb of every package, from the cache or fetched into it with `apt-get download`."""
    cache.mkdir(parents=True, exist_ok=True)
    found: dict[str, Path] = {}
    missing = []
    for name, version in PACKAGES.items():
        pinned = sorted(cache.glob(f"{name}_{version.replace(':', '%3a')}_*.deb"))
        if pinned:
            found[name] = pinned[-1]
        else:
            missing.append(name)
    if missing and not download:
        raise SystemExit(f"make_corpus: no .deb in {cache} for {', '.join(missing)}")
    if missing and not shutil.which("apt-get"):
        raise SystemExit(
            "make_corpus: apt-get is needed to fetch the Debian packages "
            f"({', '.join(missing)}); put their .deb files in {cache} and use --no-download, or "
            "run the benchmarks on a corpus of your own (make bench CORPUS=DIR)")
    updated = False
    for name in missing:
        version = PACKAGES[name]
        got = apt_download(cache, f"{name}={version}")
        if not got and not updated and os.geteuid() == 0:
            print("make_corpus: apt-get update", file=sys.stderr)
            subprocess.run(["apt-get", "update", "-qq"], check=False)
            updated = True
            got = apt_download(cache, f"{name}={version}")
        if not got:
            print(f"make_corpus: WARNING: {name} {version} cannot be downloaded; taking the current "
                  "version (the corpora will not match the reference checksums)", file=sys.stderr)
            if not apt_download(cache, name):
                raise SystemExit(f"make_corpus: cannot download {name} (run 'apt-get update' as root?)")
        found[name] = sorted(cache.glob(f"{name}_*.deb"), key=lambda p: p.stat().st_mtime)[-1]
    return found


def apt_download(cache: Path, spec: str) -> bool:
    print(f"make_corpus: apt-get download {spec}", file=sys.stderr)
    return subprocess.run(["apt-get", "download", "-q", spec], cwd=cache,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


# -- turning files into text -----------------------------------------------------------------------

def decode(data: bytes, path: str, encoding: str = "utf-8") -> str | None:
    if path.endswith((".gz", ".dz")):  # dictzip is gzip with an index in the header
        data = gzip.decompress(data)
    text = data.decode(encoding, errors="replace")
    if text.count("\ufffd") * 1000 > len(text):
        return None  # a file in a legacy encoding is left out (reported by count)
    return text  # a stray byte or three (gcide has 3 in 40 MB) become U+FFFD


class _Text(HTMLParser):
    """Visible text of an HTML page: block elements start lines, <pre> keeps its layout."""

    BREAKS = {"address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt",
              "figcaption", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li",
              "ol", "p", "pre", "section", "table", "td", "th", "title", "tr", "ul"}
    HIDDEN = {"head", "script", "style", "noscript"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self.hidden = 0
        self.verbatim = 0

    def handle_starttag(self, tag, attrs):
        self._tag(tag, +1)

    def handle_endtag(self, tag):
        self._tag(tag, -1)

    def _tag(self, tag, step):
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden + step)
        if tag == "pre":
            self.verbatim = max(0, self.verbatim + step)
        if tag in self.BREAKS:
            self.chunks.append("\n")

    def handle_data(self, data):
        if not self.hidden:
            self.chunks.append(data if self.verbatim else re.sub(r"\s+", " ", data))


def html_text(page: str) -> str:
    parser = _Text()
    parser.feed(page)
    parser.close()
    lines = (line.strip() for line in "".join(parser.chunks).split("\n"))
    return "\n".join(lines)


_NOTE = re.compile(r"<note\b[^>]*/>|<note\b.*?</note>", re.S)
_OSIS_BREAK = re.compile(r"</?(?:p|l|lg|lb|br|div|title|item|list|chapter)\b[^>]*>")
_TAG = re.compile(r"<[^>]*>")


def osis_text(entry: bytes) -> str:
    """OSIS markup of one SWORD entry as plain text: notes dropped, block tags as line breaks."""
    text = _NOTE.sub("", entry.decode("utf-8", errors="replace"))
    text = _TAG.sub("", _OSIS_BREAK.sub("\n", text))
    return "\n".join(" ".join(line.split()) for line in html.unescape(text).split("\n"))


def sword_module(files: dict[str, bytes], conf: str) -> list[bytes]:
    """The entries of a compressed SWORD module (zText, zCom and their '4' forms), in canonical
    order; an entry that several verses share is taken once."""
    settings = dict(line.split("=", 1) for line in files[conf].decode("utf-8", "replace").splitlines()
                    if "=" in line and not line.startswith("#"))
    folder = settings["DataPath"].strip().lstrip("./").rstrip("/")
    letter = {"BOOK": "b", "CHAPTER": "c", "VERSE": "v"}[settings.get("BlockType", "CHAPTER").strip()]
    wide = settings["ModDrv"].strip().endswith("4")
    entries, seen = [], set()
    for testament in ("ot", "nt"):
        base = f"usr/share/sword/{folder}/{testament}.{letter}z"
        blocks = files.get(base + "s", b"")
        if not blocks:
            continue
        cache: dict[int, bytes] = {}
        for block, start, size in _verse_index(files[base + "v"], len(blocks) // 12, wide, base):
            if size == 0 or (testament, block, start) in seen:
                continue
            seen.add((testament, block, start))
            if block not in cache:
                offset, length, _ = struct.unpack_from("<III", blocks, 12 * block)
                cache[block] = zlib.decompress(files[base + "z"][offset:offset + length])
            if start + size > len(cache[block]):
                raise SystemExit(f"make_corpus: {base}v points past the end of block {block}")
            entries.append(cache[block][start:start + size])
    return entries


def _verse_index(index: bytes, blocks: int, wide: bool, name: str) -> list[tuple[int, int, int]]:
    """(block, start, size) per verse slot. The size takes 2 bytes (zText, zCom) or 4 (zText4,
    zCom4); a module's .conf can name the wrong one (sword-comm-mhcc says zCom4 but has 2-byte
    sizes), so the layout taken is the one under which every entry points at a block."""
    for layout in map(struct.Struct, ("<III", "<IIH") if wide else ("<IIH", "<III")):
        if len(index) % layout.size:
            continue
        rows = [layout.unpack_from(index, at) for at in range(0, len(index), layout.size)]
        if all(size == 0 or block < blocks for block, _, size in rows):
            return rows
    raise SystemExit(f"make_corpus: cannot read the verse index {name}v")


def emoji_names(test_file: str) -> str:
    """`emoji-test.txt` as lines 'EMOJI name' for every fully-qualified emoji, under its group."""
    out = []
    for line in test_file.splitlines():
        if line.startswith(("# group:", "# subgroup:")):
            out.append(("\n" if line.startswith("# group:") else "") + line[2:])
        elif "; fully-qualified" in line and "#" in line:
            emoji, _version, name = line.split("#", 1)[1].strip().split(" ", 2)
            out.append(f"{emoji} {name}")
    return "\n".join(out)


_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufeff]")


def tidy(text: str) -> bytes:
    """LF line ends, no control characters but TAB, no trailing blanks, at most one blank line
    in a row; UTF-8 ending with one newline."""
    text = _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    lines, blank = [], True
    for line in text.split("\n"):
        line = line.rstrip()
        if line or not blank:
            lines.append(line)
        blank = not line
    while lines and not lines[-1]:
        lines.pop()
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""


# -- the sources -----------------------------------------------------------------------------------

@dataclass
class Source:
    name: str
    package: str
    patterns: list[str]
    kind: str = "text"  # text | html | sword | fortune | emoji
    skip: tuple[str, ...] = ()  # fnmatch patterns of paths to leave out
    encoding: str = "utf-8"


SW = "usr/share/sword/mods.d"
IG = "usr/share/doc/installation-guide-amd64"
HB = "usr/share/doc/debian-handbook/html"
KD = "usr/share/doc/linux-doc-6.1/Documentation"
DR = "usr/share/debian-reference"


def _sources() -> list[Source]:
    S = Source
    english = [
        S("kjv", "sword-text-kjv", [f"{SW}/engKJV2006eb.conf", "usr/share/sword/modules/*"], "sword"),
        S("web", "sword-text-web", [f"{SW}/engWEB2015eb.conf", "usr/share/sword/modules/*"], "sword"),
        S("mhcc", "sword-comm-mhcc", [f"{SW}/mhcc.conf", "usr/share/sword/modules/*"], "sword"),
        S("tdavid", "sword-comm-tdavid", [f"{SW}/tdavid.conf", "usr/share/sword/modules/*"], "sword"),
        S("scofield", "sword-comm-scofield", [f"{SW}/scofield.conf", "usr/share/sword/modules/*"], "sword"),
        S("gcide", "dict-gcide", ["usr/share/dictd/gcide.dict.dz"]),
        S("foldoc", "dict-foldoc", ["usr/share/dictd/foldoc.dict.dz"]),
        S("jargon", "dict-jargon", ["usr/share/dictd/jargon.dict.dz"]),
        S("devil", "dict-devil", ["usr/share/dictd/devil.dict.dz"]),
        S("python-docs", "python3.11-doc", ["usr/share/doc/python3.11/html/_sources/*.rst.txt"]),
        S("perl-pod", "perl-doc", ["usr/share/perl/*/pod/*.pod"]),
        S("kernel-docs", "linux-doc-6.1", [f"{KD}/*.rst.gz", f"{KD}/*.txt.gz"], skip=(f"{KD}/translations/*",)),
        S("debian-reference", "debian-reference-en", [f"{DR}/debian-reference.en.txt.gz"]),
        S("developers-reference", "developers-reference", ["usr/share/developers-reference/_sources/*.rst.txt"]),
        S("debian-policy", "debian-policy", ["usr/share/doc/debian-policy/policy.html/_sources/*.rst.txt"]),
        S("install-guide-en", "installation-guide-amd64", [f"{IG}/en/install.en.txt.gz"]),
        S("handbook-en", "debian-handbook", [f"{HB}/en-US/*.html"], "html"),
    ]
    multi = [
        S("zh", "installation-guide-amd64", [f"{IG}/zh_CN/install.zh_CN.txt.gz"]),
        S("zh-reference", "debian-reference-zh-cn", [f"{DR}/debian-reference.zh-cn.txt.gz"]),
        S("zh-handbook", "debian-handbook", [f"{HB}/zh-CN/*.html"], "html"),
        S("zh-fortunes", "fortunes-zh", ["usr/share/games/fortunes/*"], "fortune", skip=("*.dat",)),
        S("zh-tw-kernel", "linux-doc-6.1", [f"{KD}/translations/zh_TW/*.rst.gz"]),
        S("ja", "installation-guide-amd64", [f"{IG}/ja/install.ja.txt.gz"]),
        S("ja-reference", "debian-reference-ja", [f"{DR}/debian-reference.ja.txt.gz"]),
        S("ja-handbook", "debian-handbook", [f"{HB}/ja-JP/*.html"], "html"),
        S("ko", "installation-guide-amd64", [f"{IG}/ko/install.ko.txt.gz"]),
        S("ko-faq", "debian-faq-ko", ["usr/share/doc/debian/FAQ/ko/*.html"], "html"),
        S("ko-kernel", "linux-doc-6.1", [f"{KD}/translations/ko_KR/*.rst.gz"]),
        S("ru", "installation-guide-amd64", [f"{IG}/ru/install.ru.txt.gz"], encoding="koi8-r"),
        S("ru-handbook", "debian-handbook", [f"{HB}/ru-RU/*.html"], "html"),
        S("ru-fortunes", "fortunes-ru", ["usr/share/games/fortunes/ru/*"], "fortune", skip=("*.dat",)),
        S("ar-handbook", "debian-handbook", [f"{HB}/ar-MA/*.html"], "html"),
        S("fa-handbook", "debian-handbook", [f"{HB}/fa-IR/*.html"], "html"),
        S("el", "installation-guide-amd64", [f"{IG}/el/install.el.txt.gz"]),
        S("fr", "installation-guide-amd64", [f"{IG}/fr/install.fr.txt.gz"]),
        S("de", "installation-guide-amd64", [f"{IG}/de/install.de.txt.gz"]),
        S("es", "installation-guide-amd64", [f"{IG}/es/install.es.txt.gz"]),
        S("pt-handbook", "debian-handbook", [f"{HB}/pt-BR/*.html"], "html"),
        S("it-kernel", "linux-doc-6.1", [f"{KD}/translations/it_IT/*.rst.gz"]),
        S("vi", "installation-guide-amd64", [f"{IG}/vi/install.vi.txt.gz"]),
        S("cs", "installation-guide-amd64", [f"{IG}/cs/install.cs.txt.gz"]),
        S("ro", "installation-guide-amd64", [f"{IG}/ro/install.ro.txt.gz"]),
        S("emoji", "unicode-data", ["usr/share/unicode/emoji/emoji-test.txt"], "emoji"),
        S("code-python", "libpython3.11-stdlib", ["usr/lib/python3.11/*.py"], skip=("usr/lib/python3.11/*/*",)),
        S("code-go", "golang-1.19-src", ["usr/share/go-1.19/src/net/http/*.go", "usr/share/go-1.19/src/strings/*.go"],
          skip=("*_test.go", "*/testdata/*", "usr/share/go-1.19/src/net/http/*/*")),
    ]
    return english + multi


EN_TOTAL = 100_000_000
EN_PLAN = {  # part: budget in en-100M.txt
    "kjv": ALL, "web": ALL, "mhcc": ALL, "tdavid": ALL, "scofield": ALL,
    "gcide": FILL, "foldoc": ALL, "jargon": ALL, "devil": ALL,
    "python-docs": ALL, "perl-pod": ALL, "kernel-docs": 15_000_000,
    "debian-reference": ALL, "developers-reference": ALL, "debian-policy": ALL,
    "install-guide-en": ALL, "handbook-en": ALL,
}
MULTI_TOTAL = 10_000_000
MULTI_PLAN = {  # part: budget in multi-10M.txt (the CJK part fills up)
    "zh": ALL, "zh-reference": ALL, "zh-handbook": FILL, "zh-fortunes": 350_000, "zh-tw-kernel": 250_000,
    "ja": ALL, "ja-reference": 700_000, "ja-handbook": 300_000,
    "ko": ALL, "ko-faq": ALL, "ko-kernel": ALL,
    "ru": ALL, "ru-handbook": 300_000, "ru-fortunes": 300_000,
    "ar-handbook": 900_000, "fa-handbook": 300_000,
    "el": 300_000, "fr": 250_000, "de": 250_000, "es": 250_000, "pt-handbook": 200_000,
    "it-kernel": 200_000, "vi": 300_000, "cs": 200_000, "ro": 200_000,
    "emoji": ALL, "code-python": 450_000, "code-go": 450_000,
}


def source_text(source: Source, files: dict[str, bytes], dropped: list[str]) -> bytes:
    chosen = sorted(p for p in files
                    if any(fnmatch.fnmatchcase(p, pat) for pat in source.patterns)
                    and not any(fnmatch.fnmatchcase(p, pat) for pat in source.skip))
    if source.kind == "sword":
        conf = next(p for p in chosen if p.endswith(".conf"))
        entries = [osis_text(e) for e in sword_module(files, conf)]
        bible = source.package.startswith("sword-text-")
        return tidy(("\n" if bible else "\n\n").join(e.strip() for e in entries if e.strip()))
    texts = []
    for path in chosen:
        text = decode(files[path], path, source.encoding)
        if text is None:
            dropped.append(path)
            continue
        if source.kind == "html":
            text = html_text(text)
        elif source.kind == "fortune":  # '%' lines end the fortunes
            text = re.sub(r"(?m)^%$", "", text)
        elif source.kind == "emoji":
            text = emoji_names(text)
        texts.append(tidy(text))
    if not texts:
        raise SystemExit(f"make_corpus: no text for {source.name} in {source.package}")
    return b"\n".join(texts)


# -- budgets and mixing ----------------------------------------------------------------------------

def head(data: bytes, limit: int) -> bytes:
    """The longest prefix of at most `limit` bytes that ends at a line end."""
    if len(data) <= limit:
        return data
    return data[:data.rfind(b"\n", 0, limit) + 1]


def allot(plan: dict, texts: dict[str, bytes], total: int) -> dict[str, bytes]:
    parts = {name: texts[name] if budget is ALL else head(texts[name], budget)
             for name, budget in plan.items() if budget != FILL}
    for name, budget in plan.items():
        if budget == FILL:
            room = total - sum(len(p) for p in parts.values())
            if room < 0:
                raise SystemExit(f"make_corpus: the parts exceed {total:,} bytes before {name}")
            if len(texts[name]) < room:
                print(f"make_corpus: WARNING: {name} has {len(texts[name]):,} bytes; "
                      f"{room:,} were wanted", file=sys.stderr)
            parts[name] = head(texts[name], room)
    return {name: parts[name] for name in plan}


def pieces(data: bytes) -> list[bytes]:
    out, at = [], 0
    while at < len(data):
        end = data.find(b"\n", min(at + PIECE, len(data)) - 1)
        end = len(data) if end < 0 else end + 1
        out.append(data[at:end])
        at = end
    return out


def interleave(parts: dict[str, bytes]) -> bytes:
    """Pieces of all parts, each next piece from the part that is least far through its bytes
    (ties go to the earlier part), so that every prefix has about the mix of the whole."""
    queues = {name: pieces(data) for name, data in parts.items() if data}
    sizes = {name: len(parts[name]) for name in queues}
    done = dict.fromkeys(queues, 0)
    taken = dict.fromkeys(queues, 0)
    out = []
    while queues:
        name = min(queues, key=lambda n: (done[n] / sizes[n], list(sizes).index(n)))
        piece = queues[name][taken[name]]
        out.append(piece)
        done[name] += len(piece)
        taken[name] += 1
        if taken[name] == len(queues[name]):
            del queues[name]
    return b"".join(out)


def share(parts: dict[str, bytes], fraction: float) -> dict[str, bytes]:
    return {name: head(data, int(len(data) * fraction)) for name, data in parts.items()}


# -- main ------------------------------------------------------------------------------------------

def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def up_to_date(out: Path) -> bool:
    sums = out / "SHA256SUMS"
    if not sums.is_file():
        return False
    listed = dict(reversed(line.split(maxsplit=1)) for line in sums.read_text().splitlines() if line.strip())
    return set(CORPORA) <= set(listed) and all(
        (out / name).is_file() and _file_sha256(out / name) == listed[name] for name in CORPORA)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT, help=f"default {DEFAULT_OUT}")
    ap.add_argument("--cache", type=Path, help="folder of the .deb files (default OUT/.debs)")
    ap.add_argument("--no-download", action="store_true", help="use only the .debs in the cache")
    ap.add_argument("--force", action="store_true", help="build even if the outputs are up to date")
    ap.add_argument("--sizes", action="store_true", help="print the bytes of every source and stop")
    args = ap.parse_args(argv)
    out: Path = args.out.resolve()
    if not (args.force or args.sizes) and up_to_date(out):
        print(f"make_corpus: {out} is up to date")
        return 0
    debs = fetch((args.cache or out / ".debs").resolve(), download=not args.no_download)

    sources = _sources()
    wanted: dict[str, list[str]] = {}
    for s in sources:
        wanted.setdefault(s.package, []).extend(s.patterns)
    texts: dict[str, bytes] = {}
    dropped: list[str] = []
    for package in sorted(wanted):
        files = deb_members(debs[package], wanted[package])
        for s in sources:
            if s.package == package:
                texts[s.name] = source_text(s, files, dropped)
        print(f"make_corpus: read {debs[package].name}", file=sys.stderr)
    if dropped:
        print(f"make_corpus: left out {len(dropped)} files that are not UTF-8 "
              f"(e.g. {dropped[0]})", file=sys.stderr)

    if args.sizes:
        for name, text in texts.items():
            print(f"{name}\t{len(text)}")
        return 0
    en = allot(EN_PLAN, texts, EN_TOTAL)
    multi = allot(MULTI_PLAN, texts, MULTI_TOTAL)
    files = {
        "en-100M.txt": en,
        "en-10M.txt": share(en, 0.10),
        "multi-10M.txt": multi,
        "mixed-10M.txt": {**share(en, 0.08), **share(multi, 0.20)},
    }
    out.mkdir(parents=True, exist_ok=True)
    sums, rows = [], ["file\tpart\tbytes"]
    for name, parts in files.items():
        data = interleave(parts)
        tmp = out / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(out / name)
        sums.append(f"{sha256(data)}  {name}")
        rows += [f"{name}\t{part}\t{len(chunk)}" for part, chunk in parts.items()]
        print(f"make_corpus: {name}: {len(data):,} bytes")
    (out / "parts.tsv").write_text("\n".join(rows) + "\n")
    (out / "packages.txt").write_text("".join(
        f"{deb.name.split('_')[0]} {deb.name.split('_')[1].replace('%3a', ':')} {_file_sha256(deb)}\n"
        for _, deb in sorted(debs.items())))
    (out / "SHA256SUMS").write_text("\n".join(sums) + "\n")

    differ = [line.split()[1] for line in sums if REFERENCE.get(line.split()[1]) not in ("", line.split()[0])]
    if differ:
        print(f"make_corpus: WARNING: {', '.join(differ)} differ from the reference checksums "
              "(other package versions?)", file=sys.stderr)
    elif all(REFERENCE.values()):
        print("make_corpus: the corpora match the reference checksums")
    return 0


if __name__ == "__main__":
    sys.exit(main())
