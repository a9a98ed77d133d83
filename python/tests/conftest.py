# Fixtures of the mibz2 module's tests: the programs of the build (MIBZ2_BINARY, MIBZ2_CORPUS_GEN,
# set by ctest), and a corpus made once per run: a real text (Debian's license texts) and generated
# JSON, each compressed by bzip2, lbzip2 and pbzip2 with 100k blocks (so that a few MB are many
# blocks), with what `bzip2 -dc` makes of each.
import glob
import os
import shutil
import subprocess

import pytest

MAKERS = {
    "bzip2": ["bzip2", "-1", "-c"],
    "lbzip2": ["lbzip2", "-1", "-c", "-n", "2"],
    "pbzip2": ["pbzip2", "-1", "-c", "-p2"],
}


def program(env, name):
    path = os.environ.get(env)
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"{env} must name the {name} program of the build (ctest sets it)")
    return path


@pytest.fixture(scope="session")
def mibz2_bin():
    return program("MIBZ2_BINARY", "mibz2")


def bzip2_dc(path):
    return subprocess.run(["bzip2", "-dc", path], check=True, stdout=subprocess.PIPE).stdout


def compress(maker, src, dst):
    with open(src, "rb") as i, open(dst, "wb") as o:
        subprocess.run(MAKERS[maker], stdin=i, stdout=o, check=True)


def real_text():
    """About 1.5 MB of real English text: Debian's license texts, in order, repeated."""
    parts = []
    for p in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(p):
            with open(p, "rb") as f:
                parts.append(f.read())
    text = b"".join(parts)
    if not text:
        pytest.fail("no text in /usr/share/common-licenses")
    return text * max(1, (1_500_000 // len(text)) + 1)


def json_lines(wikidata: bytes) -> bytes:
    """The entities of a Wikidata-like dump, one JSON object a line (JSON Lines)."""
    out = []
    for line in wikidata.split(b"\n"):
        line = line.rstrip(b",")
        if line.startswith(b"{"):
            out.append(line)
    return b"\n".join(out) + b"\n"


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """{'text': {maker: path}, 'jsonl': {...}, 'wikidata': {...}} and the plain bytes of each."""
    d = tmp_path_factory.mktemp("corpus")
    gen = program("MIBZ2_CORPUS_GEN", "mibz2-corpus-gen")
    wikidata = d / "wikidata.json"
    subprocess.run([gen, "--kind", "wikidata", "--size", "3M", "--seed", "25", "--out", str(wikidata)], check=True)
    plain = {"text": real_text(), "wikidata": wikidata.read_bytes()}
    plain["jsonl"] = json_lines(plain["wikidata"])
    files = {}
    for kind, data in plain.items():
        src = d / f"{kind}.plain"
        src.write_bytes(data)
        files[kind] = {}
        for maker in MAKERS:
            dst = d / maker / f"{kind}.bz2"
            dst.parent.mkdir(exist_ok=True)
            compress(maker, src, dst)
            files[kind][maker] = str(dst)
    return {"dir": str(d), "files": files, "plain": plain}


@pytest.fixture
def index_dir(tmp_path):
    d = tmp_path / "indexes"
    d.mkdir()
    return str(d)


def have(name):
    return shutil.which(name) is not None
