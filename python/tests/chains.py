"""What the tests of chained fsspec names share: the chained form this fsspec takes, and a
corpus dump with its decompressed content."""
import bz2

import fsspec


def chained(url):
    """mibz2::URL where this fsspec takes "mibz2" for a protocol in a chain; its older releases
    (2022.11, Debian's) take a word with a digit for a path (the local file "mibz2"!), and there
    the chain must say "mibz2://::URL"."""
    if fsspec.core._un_chain("mibz2::memory://x", {})[0][1] == "mibz2":
        return "mibz2::" + url
    return "mibz2://::" + url


def plain_and_file(corpus):
    """The decompressed content and the bytes of the corpus's pbzip2-made JSON-lines dump."""
    path = corpus["files"]["jsonl"]["pbzip2"]
    with open(path, "rb") as f:
        return bz2.open(path).read(), f.read()
