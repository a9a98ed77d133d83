"""The fsspec filesystem of protocol ``mibz2``: mibz2fs's view of a directory, without a mount.

``mibz2:///srv/dumps/latest-all.json`` is the decompressed content of
``/srv/dumps/latest-all.json.bz2``, with the mount's name rules (the same code: mibz2._core):
``X.bz2`` is shown as ``X``, ``X.tbz2`` and ``X.tbz`` as ``X.tar``, when the file starts like
bzip2 and no real file has that name (then it is shown under its own name, compressed, as is
every other file). ``ls``, ``info`` (with the decompressed size, and ``lines``: the line count
from the index, None when it cannot tell or for a file shown as it is), ``open`` (read-only),
``cat_file`` with ranges, ``glob``, ``find`` and ``walk`` work as on the local filesystem; a
decompressed file is read through :func:`mibz2.open`, so that Dask and pandas split one dump into
partitions that each decode only the blocks of their range.

Only directories, regular files and symlinks are shown, as the mount shows them: fifos, sockets
and device nodes are left out (``ls``, ``find``, ``glob``, ``exists``, ``open``), and so is a
symlink that leads to one (as a broken symlink is). Nothing here ever waits on a fifo or reads a
device: files are opened non-blocking and checked to be regular files before they are read.

``info`` and ``ls`` of a compressed file need its index (to know its size): a file not yet
indexed is indexed then, as ``ls -l`` on the mount does. ``glob`` and ``find`` without details
do not index anything.

Storage options: ``threads``, ``cache_size`` and ``index_dir``, as for :func:`mibz2.open`.

Remote dumps, chained as fsspec chains wrappers: ``mibz2::https://host/path/NAME`` and
``mibz2::s3://bucket/dir/NAME`` are the decompressed content of the object ``NAME.bz2`` there, read
by the engine itself (range requests: :func:`mibz2.open` of the URL), under the name the mount
would show, so that Dask infers no compression and splits it into partitions:
``dask.bag.read_text("mibz2::s3://bucket/dumps/latest-all.json", blocksize="256MiB")``. The path of
such a filesystem is its one object ("/"). S3 takes its settings from the inner protocol's storage
options as s3fs users write them (``fsspec.open("mibz2::s3://b/k.json", s3={"key": ..., "secret":
..., "endpoint_url": ...})``, ``storage_options={"s3": {...}}`` for Dask: :func:`mibz2.open`'s
``s3``), then from the environment (AWS_*, as ``man mibz2`` says). Options mibz2 does not take are
refused (ValueError naming them) rather than ignored; http(s) takes none. They travel with the
filesystem to Dask's workers (pickled, as s3fs's do), so that a worker with no AWS settings of its
own reads with them. Any other inner protocol (``mibz2::sftp://host/dumps/NAME``, ftp, gcs, ...)
is read through its own fsspec filesystem, with the storage options given for it, and
decompressed by Python's bz2 module: correct but slower (one core, no index: a seek backwards or
a partition far into the dump decompresses from its start again, and the size takes a whole
pass, once per content).
With ``import mibz2`` first, the chained forms work also where fsspec's own http or s3
implementation is not installed (mibz2._chain_targets).
"""

from __future__ import annotations

import errno
import os
import stat
import threading
from typing import Any, Dict, List, Optional

from fsspec.spec import AbstractFileSystem
from fsspec.utils import stringify_path

import mibz2
from . import _core
from ._s3_options import s3_fields


def _open_regular(path) -> int:
    """A descriptor of the regular file at `path`, opened as the mount opens its sources: never
    blocking (a fifo put there since it was listed), never a controlling terminal (a tty).
    IsADirectoryError for a directory, FileNotFoundError for anything else but a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", os.fsdecode(path))
        if not stat.S_ISREG(mode):
            raise FileNotFoundError(errno.ENOENT, "No such file (not a regular file: not shown)", os.fsdecode(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def _bzip2_head(path: bytes) -> bool:
    # As the mount looks: a regular file whose head says bzip2.
    try:
        fd = _open_regular(path)
    except OSError:
        return False
    try:
        return _core.starts_like_bzip2(fd)
    except OSError:
        return False
    finally:
        os.close(fd)


def _link_kind(path: str) -> Optional[str]:
    """What the symlink at `path` is shown as: what it leads to, "dir" or "file"; None when that is
    nothing the mount shows (a broken link, a link to a fifo, a socket or a device)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else None


class _Listing:
    """One source directory as the mount shows it, kept while the directory's mtime holds."""

    def __init__(self, directory: str):
        st = os.stat(directory)
        self.stamp = (st.st_ino, st.st_mtime_ns)
        raw_dir = os.fsencode(directory)
        entries = []
        with os.scandir(raw_dir) as it:
            for e in it:
                try:
                    if e.is_symlink():
                        kind = "link"
                    elif e.is_dir(follow_symlinks=False):
                        kind = "dir"
                    elif e.is_file(follow_symlinks=False):
                        kind = "file"
                    else:
                        continue  # a fifo, a socket, a device: not mirrored by the mount
                except OSError:
                    continue  # gone meanwhile
                bzip2 = (kind in ("file", "link") and _core.decompressed_name(e.name) is not None
                         and _bzip2_head(e.path))
                entries.append((e.name, kind, bzip2))
        # name shown -> (source name, kind, decompressed)
        self.shown: Dict[str, tuple] = {}
        for shown, source, kind, decompressed in _core.map_directory(entries):
            self.shown[os.fsdecode(shown)] = (os.fsdecode(source), kind, decompressed)


def _remote_source(target_protocol: str, fo: str, target_options: Optional[dict]) -> tuple:
    """(URL, S3 options) of the object a chained ``mibz2::PROTO://...NAME`` shows: NAME.bz2 there,
    with the inner protocol's storage options (s3: read by mibz2._s3_options; http: none)."""
    if target_protocol in ("http", "https"):
        if target_options:
            raise ValueError(f"mibz2::{target_protocol}:// takes no storage options of its own "
                             f"({', '.join(sorted(map(str, target_options)))})")
        url, query = (fo.split("?", 1) + [""])[:2]
        return url + ".bz2" + ("?" + query if query else ""), None
    if target_protocol in ("s3", "s3a"):
        s3_fields(target_options)  # refused here, when the filesystem is made, not at the first open
        key = fo.split("://", 1)[-1]
        return "s3://" + key + ".bz2", (dict(target_options) if target_options else None)
    raise ValueError(f"mibz2::{target_protocol}:// is not read by the engine")


# Inner protocols the engine reads itself (range requests: src/io); any other is read through its
# own fsspec filesystem (_ThroughFsspec).
_ENGINE_PROTOCOLS = ("http", "https", "s3", "s3a")


class _ThroughFsspec:
    """A chained ``mibz2::PROTO://...NAME`` whose inner protocol the engine does not speak (sftp,
    ftp, gcs, memory, ...): ``NAME.bz2`` read through that protocol's own fsspec filesystem (with
    the storage options given for it) and decompressed by Python's bz2 module (libbz2). Correct,
    and slower than the engine: one core, no index, so a seek backwards or a Dask partition far
    into the dump decompresses it from its start again; the size takes one whole pass, kept for
    this content (the inner filesystem's size, and its mtime or ETag or checksum where it has one)."""

    def __init__(self, protocol: str, fo: str, options: Optional[dict]):
        import fsspec

        self.fs = fsspec.filesystem(protocol, **(options or {}))
        self.path = self.fs._strip_protocol(fo) + ".bz2"
        self.shown = self.fs.unstrip_protocol(self.path)
        self._lock = threading.Lock()
        self._sizes: Dict[tuple, int] = {}

    def _content(self) -> tuple:
        info = self.fs.info(self.path)
        if info.get("type") != "file":
            raise FileNotFoundError(errno.ENOENT, "No such file", self.shown)
        marks = tuple(str(info.get(k)) for k in ("size", "mtime", "ETag", "etag", "checksum", "created")
                      if info.get(k) is not None)
        return marks

    def open(self):
        import bz2

        return bz2.BZ2File(self.fs.open(self.path, "rb"), "rb")

    def size(self) -> int:
        content = self._content()
        with self._lock:
            if content in self._sizes:
                return self._sizes[content]
        total = 0
        with self.open() as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                total += len(chunk)
        with self._lock:
            self._sizes[content] = total
        return total


class Mibz2FileSystem(AbstractFileSystem):
    """The decompressed view of a local directory tree, or of one remote object when chained
    (see the module's docstring)."""

    protocol = "mibz2"
    root_marker = "/"

    def __init__(self, threads: Optional[int] = None, cache_size=None, index_dir=None, fo: Optional[str] = None,
                 target_protocol: Optional[str] = None, target_options: Optional[dict] = None, **kwargs):
        super().__init__(threads=threads, cache_size=cache_size, index_dir=index_dir, fo=fo,
                         target_protocol=target_protocol, target_options=target_options, **kwargs)
        self._settings = dict(threads=threads, cache_size=cache_size, index_dir=index_dir)
        self._lock = threading.Lock()
        self._listings: Dict[str, _Listing] = {}
        # Chained: the one remote object this filesystem shows, at "/", and its S3 settings; or,
        # for an inner protocol the engine does not read, that object through its own filesystem.
        self._remote = None
        self._through: Optional[_ThroughFsspec] = None
        if target_protocol in _ENGINE_PROTOCOLS:
            self._remote, self._settings["s3"] = _remote_source(target_protocol, fo, target_options)
        elif target_protocol:
            self._through = _ThroughFsspec(target_protocol, fo, target_options)

    # ---- paths ----

    @classmethod
    def _strip_protocol(cls, path):
        path = stringify_path(path)
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        for prefix in ("mibz2://", "mibz2:"):
            if path.startswith(prefix):
                path = path[len(prefix):]
                break
        path = os.path.abspath(path) if path else "/"
        return path.rstrip("/") or cls.root_marker

    def unstrip_protocol(self, name: str) -> str:
        return "mibz2://" + self._strip_protocol(name)

    def _listing(self, directory: str) -> _Listing:
        with self._lock:
            cached = self._listings.get(directory)
        if cached is not None:
            try:
                st = os.stat(directory)
                if (st.st_ino, st.st_mtime_ns) == cached.stamp:
                    return cached
            except OSError:
                pass
        listing = _Listing(directory)
        with self._lock:
            if len(self._listings) > 1024:
                self._listings.clear()
            self._listings[directory] = listing
        return listing

    def _resolve(self, path: str) -> tuple:
        """(source path, kind, decompressed) for a shown path; FileNotFoundError if none."""
        path = self._strip_protocol(path)
        if self._remote is not None or self._through is not None:
            if path != "/":
                raise FileNotFoundError(errno.ENOENT, "No such file (a chained mibz2:: shows one object, at /)", path)
            return (self._remote if self._through is None else self._through.shown), "file", True
        if path == "/":
            return "/", "dir", False
        parent, name = os.path.split(path)
        try:
            listing = self._listing(parent)
        except NotADirectoryError:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path) from None
        entry = listing.shown.get(name)
        if entry is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        source, kind, decompressed = entry
        source_path = os.path.join(parent, source)
        if kind == "link":
            kind = _link_kind(source_path)
            if kind is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory (a link to nothing shown)", path)
        return source_path, kind, decompressed

    # ---- what is there ----

    def _entry(self, shown_path: str, source: str, kind: str, decompressed: bool, sizes: bool = True) -> Dict[str, Any]:
        if kind == "dir":
            return {"name": shown_path, "size": 0, "type": "directory", "source": source}
        if self._through is not None:
            entry = {"name": shown_path, "type": "file", "source": source, "compressed": True, "lines": None,
                     "size": self._through.size() if sizes else None}
            return entry
        if self._remote is not None:
            entry = {"name": shown_path, "type": "file", "source": source, "compressed": True}
            if sizes:
                described = mibz2.info(source, **self._settings)
                entry.update(size=described["decompressed_size"], lines=described["lines"],
                             compressed_size=described["compressed_size"])
            else:
                entry["size"] = entry["lines"] = None
            return entry
        st = os.stat(source)
        entry = {"name": shown_path, "type": "file", "source": source,
                 "mtime": st.st_mtime, "compressed": decompressed, "compressed_size": st.st_size}
        if not decompressed:
            entry["size"] = st.st_size
            entry["lines"] = None  # not counted: only an index knows lines
        elif sizes:
            described = mibz2.info(source, **self._settings)
            entry["size"] = described["decompressed_size"]
            entry["lines"] = described["lines"]
        else:
            entry["size"] = entry["lines"] = None
        return entry

    def info(self, path, **kwargs):
        path = self._strip_protocol(path)
        source, kind, decompressed = self._resolve(path)
        return self._entry(path, source, kind, decompressed, kwargs.get("_sizes", True))

    def ls(self, path, detail=True, **kwargs):
        path = self._strip_protocol(path)
        sizes = kwargs.get("_sizes", True)
        source, kind, decompressed = self._resolve(path)
        if kind != "dir":
            entry = self._entry(path, source, kind, decompressed, sizes and detail)
            return [entry] if detail else [path]
        listing = self._listing(source)
        out: List[Any] = []
        for name, (src, k, dec) in sorted(listing.shown.items()):
            shown_path = path.rstrip("/") + "/" + name
            src_path = os.path.join(source, src)
            if k == "link":
                k = _link_kind(src_path)
                if k is None:
                    continue
            if not detail:
                out.append(shown_path)
                continue
            try:
                out.append(self._entry(shown_path, src_path, k, dec, sizes))
            except FileNotFoundError:
                continue  # gone meanwhile
        return out

    def glob(self, path, **kwargs):
        # Names only: no file is indexed just to be matched.
        if not kwargs.get("detail"):
            kwargs["_sizes"] = False
        return super().glob(path, **kwargs)

    def find(self, path, maxdepth=None, withdirs=False, detail=False, **kwargs):
        if not detail:
            kwargs["_sizes"] = False
        return super().find(path, maxdepth=maxdepth, withdirs=withdirs, detail=detail, **kwargs)

    def exists(self, path, **kwargs):
        try:
            self._resolve(path)
            return True
        except OSError:
            return False

    def isdir(self, path):
        try:
            return self._resolve(path)[1] == "dir"
        except OSError:
            return False

    def isfile(self, path):
        try:
            return self._resolve(path)[1] == "file"
        except OSError:
            return False

    def size(self, path):
        return self.info(path)["size"]

    def modified(self, path):
        import datetime

        return datetime.datetime.fromtimestamp(self.info(path)["mtime"], tz=datetime.timezone.utc)

    def ukey(self, path):
        info = self.info(path)
        return f"{info['source']}:{info.get('mtime')}:{info['size']}"

    # ---- reading ----

    def _open(self, path, mode="rb", block_size=None, autocommit=True, cache_options=None, **kwargs):
        if mode != "rb":
            raise ValueError(f"mibz2:// is read-only: mode {mode!r}")
        source, kind, decompressed = self._resolve(path)
        if kind == "dir":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        if self._through is not None:
            return self._through.open()
        if decompressed:
            return mibz2.open(source, "rb", **self._settings)
        # The listing may be older than the entry: opened as it was listed, or not at all.
        return os.fdopen(_open_regular(source), "rb")

    def cat_file(self, path, start=None, end=None, **kwargs):
        source, kind, decompressed = self._resolve(path)
        if kind == "dir":
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        if self._through is not None:
            with self._open(path, "rb") as f:
                f.seek(0 if start is None else start if start >= 0 else max(self.size(path) + start, 0))
                if end is None:
                    return f.read()
                stop = end if end >= 0 else max(self.size(path) + end, 0)
                return f.read(max(stop - f.tell(), 0))
        with self._open(path, "rb") as f:
            size = f.raw.size if decompressed else os.fstat(f.fileno()).st_size
            begin = 0 if start is None else (max(size + start, 0) if start < 0 else start)
            stop = size if end is None else (max(size + end, 0) if end < 0 else min(end, size))
            if stop <= begin:
                return b""
            if not decompressed:
                f.seek(begin)
                return f.read(stop - begin)
            parts = []
            pos = begin
            while pos < stop:
                chunk = f.raw.pread(stop - pos, pos)
                if not chunk:
                    break
                parts.append(chunk)
                pos += len(chunk)
            return b"".join(parts)

    # read-only
    def _refuse(self, *args, **kwargs):
        raise PermissionError(errno.EROFS, "mibz2:// is read-only")

    mkdir = makedirs = rm_file = _rm = rm = mv = cp_file = put_file = touch = _refuse
