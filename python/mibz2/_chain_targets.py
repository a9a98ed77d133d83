"""Stand-ins for fsspec's http(s) and s3 implementations, so that the chained forms
``mibz2::https://host/path/NAME`` and ``mibz2::s3://bucket/key/NAME`` work where those
implementations cannot be imported (fsspec's HTTPFileSystem needs requests and aiohttp, s3://
needs s3fs).

fsspec takes a chained URL apart before it makes any filesystem, and to do so it looks up the
class of every protocol in the chain, the inner one first: without an importable class for
``https`` or ``s3`` it fails before ``mibz2`` is reached, although mibz2 reads those objects
itself (by range requests, in the engine) and never uses the inner filesystem. These stand-ins
are what the lookup finds then: they take paths apart as fsspec's own classes do, and refuse to be
used on their own (ImportError naming what to install). They are registered only for a protocol
whose own implementation is missing (register_missing), never in its place.
"""

from __future__ import annotations

import importlib.util

import fsspec
from fsspec.spec import AbstractFileSystem


class _EngineTarget(AbstractFileSystem):
    needs = ""

    def __init__(self, *args, **kwargs):
        proto = self.protocol[0] if isinstance(self.protocol, tuple) else self.protocol
        raise ImportError(f"{proto}:// on its own needs fsspec's implementation ({self.needs}); "
                          f"mibz2 reads it only as mibz2::{proto}://...")


class HttpTarget(_EngineTarget):
    protocol = ("http", "https")
    needs = "pip install requests aiohttp"

    @classmethod
    def _strip_protocol(cls, path):
        return path  # as fsspec's HTTPFileSystem: the URL is the path


class S3Target(_EngineTarget):
    protocol = ("s3", "s3a")
    needs = "pip install s3fs"


def _importable(*modules) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def register_missing() -> None:
    """Registers a stand-in for each of http, https, s3 and s3a that fsspec cannot import."""
    for protocols, cls, modules in ((("http", "https"), HttpTarget, ("requests", "aiohttp")),
                                    (("s3", "s3a"), S3Target, ("s3fs",))):
        if _importable(*modules):
            continue
        for p in protocols:
            if p not in fsspec.registry:
                fsspec.register_implementation(p, cls, clobber=False)
