"""mibz2: bzip2 files read in place with random access, decoded in parallel.

The engine of mibz2fs and the ``mibz2`` program, without a mount: each file gets a block index
(built once in parallel, then stored and shared with ``mibz2`` and ``mibz2fs``), reads decode
only the blocks they need on a pool of decoder threads, with a block cache and read-ahead for
sequential readers, and release the GIL while they wait.

    >>> import mibz2
    >>> with mibz2.open("/srv/dumps/latest-all.json.bz2", "rt") as f:
    ...     f.seek(0)
    ...     line = f.readline()
    >>> mibz2.info("/srv/dumps/latest-all.json.bz2")["decompressed_size"]

Lines, from the index without reading the file: ``f.line_count`` (as ``sed -n '$='`` counts
them), and ``f.seek_line(n)`` moves to the start of line n, decoding only the block that holds it:

    >>> with mibz2.open("/srv/dumps/latest-all.json.bz2") as f:
    ...     f.seek_line(f.line_count // 2)
    ...     middle = f.readline()

The fsspec protocol ``mibz2://`` (mibz2._fsspec) shows a directory as the mount would
(``X.bz2`` as ``X``), so that Dask and pandas read one dump in many partitions.

Settings. ``threads`` (decoder threads, 1 to 1024) and ``cache_size`` (block cache: bytes, or a
SIZE string such as "512M", read as ``mibz2fs -o cache_size`` reads it: :func:`parse_size`) default
to what this process may use (mibz2._defaults: CPU affinity, cgroup CPU quota and memory limit, a
Dask worker's nthreads and memory_limit). Every open with the same settings in a process shares
one engine (threads and cache). ``index_dir`` is where indexes are stored; by default the
directory that mibz2 and mibz2fs use, by one rule (:func:`default_index_dir`; FILES in
``man mibz2fs``). ``s3`` gives S3 settings for ``s3://`` URLs in fsspec's names (``key``,
``secret``, ``endpoint_url``, ``anon``, ...: :func:`open`), before the environment's.
An index directory that is a symlink, is not a directory, or that someone else could write
into is not used, as by mibz2 and mibz2fs: a RuntimeWarning names it and says why, and indexes
are kept in this process's memory only.

Errors. A file that is not bzip2 raises OSError(errno.EILSEQ, ...) when opened. Damage reads as
through the mount: every byte of the sound blocks before it reads (``read(n)`` returns short at
the damage, ``readline`` every whole line), then OSError(errno.EIO, "<file>: damaged at
decompressed byte N (block ...): ..."); ``read()`` of the whole rest raises at once.
"""

from __future__ import annotations

import atexit
import errno
import io
import operator
import os
import threading
import warnings
from typing import Any, Callable, Dict, Optional, Union

from . import _core
from ._defaults import default_cache_bytes, default_threads
from ._s3_options import s3_fields

__all__ = ["open", "index", "info", "RawFile", "BufferedReader", "TextIOWrapper", "parse_size",
           "engine_settings", "default_index_dir", "__version__"]
__version__ = _core.__version__

Progress = Callable[[int, int], Any]
PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


def parse_size(size: Union[int, str]) -> int:
    """Bytes from an int or a SIZE string, read as mibz2 and mibz2fs read one (SIZES in ``man
    mibz2``): a whole number of bytes, or a number with K, M, G or T, powers of 1024, optionally
    followed by "i" and "B" ("64K", "64KiB" and "64KB" are all 65536; "64MB" is 67,108,864), with a
    fraction allowed before a unit ("1.5G"). ValueError otherwise ("64 MB", "-1", "lots")."""
    return _core.parse_size(size)


def default_index_dir() -> Optional[str]:
    """The directory where indexes are stored when no ``index_dir`` is given, by the rule mibz2 and
    mibz2fs follow (FILES in ``man mibz2fs``): ``$XDG_CACHE_HOME/mibz2fs`` when XDG_CACHE_HOME is an
    absolute path; else, as root, ``/var/cache/mibz2fs``; else ``$HOME/.cache/mibz2fs``; None when
    there is none (indexes then live in memory only)."""
    d = _core.default_index_dir()
    return None if d is None else os.fsdecode(d)


_engines_lock = threading.Lock()
_engines: Dict[tuple, Any] = {}
_pid = os.getpid()
# Objects of the engines of a parent process (after a fork): never freed (their threads are not
# in this process: freeing them would wait for them forever).
_inherited: list = []


def _forget_parent_engines() -> None:
    global _pid
    _inherited.extend(_engines.values())
    _engines.clear()
    _pid = os.getpid()


def _after_fork_in_child() -> None:
    # A thread of the parent may have held the lock at the fork: it would never be let go here.
    global _engines_lock
    _engines_lock = threading.Lock()
    _forget_parent_engines()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

try:  # so that fsspec can take mibz2::https://... and mibz2::s3://... apart (mibz2._chain_targets)
    from . import _chain_targets
except ImportError:  # no fsspec: nothing to chain
    pass
else:
    _chain_targets.register_missing()


def engine_settings(threads: Optional[int] = None, cache_size: Union[int, str, None] = None) -> tuple:
    """The (threads, cache bytes) an open with these arguments gets: None means the default.
    ValueError for a thread count outside 1 to 1024 or a cache_size that is not a SIZE of at least
    1M (RuntimeWarning above physical memory), as mibz2 and mibz2fs say it."""
    t = default_threads() if threads is None else _core.thread_count(threads)
    c = default_cache_bytes(t) if cache_size is None else _core.cache_size(cache_size)
    return t, c


def _engine(threads, cache_size, index_dir, s3=None):
    t, c = engine_settings(threads, cache_size)
    d = os.fsencode(os.path.abspath(os.fspath(index_dir))) if index_dir is not None else b""
    fields = s3_fields(s3)
    key = (t, c, d, fields)  # held in this process only: the fields may hold a secret
    with _engines_lock:
        if os.getpid() != _pid:  # forked by a way that runs no fork handlers
            _forget_parent_engines()
        e = _engines.get(key)
        if e is None:
            e = _engines[key] = _core.Engine(t, c, d, dict(fields) if fields else None)
            _warn_if_refused(e)
        return e


def _warn_if_refused(engine) -> None:
    # Said once per engine, as mibz2fs says it once at mount and mibz2 once per command: the
    # directory (named, or the default) is not used, and indexes live in this process only.
    problem = engine.index_dir_problem
    if problem:
        warnings.warn(f"{os.fsdecode(problem)}: indexes are kept in memory only, so every process "
                      "indexes every file again", RuntimeWarning, stacklevel=4)


@atexit.register
def _release() -> None:
    with _engines_lock:
        _engines.clear()
    _core.release_sessions()


def _names(path: PathLike) -> tuple:
    p = os.fspath(path)
    return os.fsencode(p), os.fsdecode(p)


def _is_url(shown: str) -> bool:
    # A remote object (read by range requests, as mibz2 reads one); anything else is a path.
    return shown[:8].lower().startswith(("http://", "https://", "s3://"))


def _check_file(raw: bytes, shown: str) -> None:
    # Only regular files have an index: a fifo or a device is refused before anything waits on it
    # (mibz2 cat reads those; read them with bz2.open), a directory as open() refuses one. A URL
    # is the engine's to reach: it says what the server answered.
    import stat

    if _is_url(shown):
        return
    st = os.stat(raw)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", shown)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, f"{shown}: not a regular file (only regular files are indexed; "
                      "read streams with bz2.open or 'mibz2 cat')")


class RawFile(io.RawIOBase):
    """The decompressed content of one .bz2 file as a seekable raw binary stream.

    Reads go to the shared engine with the GIL released. ``pread(size, offset)`` reads at a
    position without moving the stream's (several threads may use it at once). ``size`` is the
    decompressed size; ``line_count``, ``line_offset(n)`` and ``seek_line(n)`` answer from the
    index's line counts (checked as ``man mibz2`` LINES says: their sum when the index is read,
    each block's count when a read decodes it). Made by :func:`mibz2.open`; use that.
    """

    def __init__(self, path: PathLike, *, threads=None, cache_size=None, index_dir=None, s3=None,
                 progress: Optional[Progress] = None):
        super().__init__()
        self._raw_path, self.name = _names(path)
        self._settings = (threads, cache_size, index_dir, s3)
        self._pos = 0
        self._file = None
        self._open(progress)

    def _open(self, progress=None):
        _check_file(self._raw_path, self.name)
        self._pid = os.getpid()
        # Messages name the path as given (bytes: any name the filesystem holds).
        self._file = _engine(*self._settings).open(self._raw_path, self._raw_path, progress)

    def _f(self):
        if self.closed:
            raise ValueError("I/O operation on closed file")
        if os.getpid() != self._pid:  # forked: the parent's engine has no threads here
            _inherited.append(self._file)
            self._open()
        return self._file

    @property
    def size(self) -> int:
        return self._f().size

    @property
    def mode(self) -> str:
        return "rb"

    def readable(self) -> bool:
        self._f()
        return True

    def seekable(self) -> bool:
        self._f()
        return True

    def readinto(self, buffer) -> int:
        """Reads into `buffer` (writable and C-contiguous, as io's readinto takes: TypeError for a
        strided or reversed memoryview) at the stream's position; returns the byte count."""
        n = self._f().readinto(buffer, self._pos)
        self._pos += n
        return n

    def readall(self) -> bytes:
        f = self._f()
        parts = []
        while True:
            # Up to the end in one call (the size is known); a short result means damage ahead
            # (the next call raises it) or the end.
            chunk = f.pread(max(f.size - self._pos, 0) or 1, self._pos)
            if not chunk:
                break
            self._pos += len(chunk)
            parts.append(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def pread(self, size: int, offset: int) -> bytes:
        """Up to `size` bytes at decompressed `offset` (the stream's position is not used), as
        os.pread: ValueError for a negative one, OverflowError for an offset past 2**63 - 1."""
        return self._f().pread(size, offset)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        f = self._f()
        offset = operator.index(offset)
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = f.size + offset
        else:
            raise ValueError(f"invalid whence ({whence}, should be 0, 1 or 2)")
        if pos < 0:
            raise OSError(errno.EINVAL, f"negative seek position {pos}")
        # Past 2**63 - 1 (an off_t, as io's): OverflowError here, not at the next read.
        self._pos = _core.check_offset(pos)
        return pos

    def tell(self) -> int:
        self._f()
        return self._pos

    # ---- lines (the index's newline counts) ----

    @property
    def line_count(self) -> Optional[int]:
        """Lines as ``sed -n '$='`` counts them: the b"\\n" bytes, plus one when the file does not
        end with one (``wc -l`` counts one fewer then). From the index, at once. None when the
        index cannot tell: after a damaged block, or an index made before line counts
        (:attr:`line_count_unknown` says why; ``mibz2.index(path, force=True)`` makes a new one)."""
        return self._f().line_count()[0]

    @property
    def line_count_unknown(self) -> Optional[str]:
        """Why :attr:`line_count` is None ("<file>: block 7 (...) is damaged ..."); None when it
        is known."""
        count, why = self._f().line_count()
        return None if count is not None else why

    def line_offset(self, n: int) -> int:
        """The decompressed offset where line `n` (1-based, as ``sed -n 'Np'``) starts, without
        moving the stream; the size of the file when n is past the last line. Decodes at most
        the block that holds it (GIL released). Raises ValueError for n < 1, OSError(errno.ENODATA,
        why) when the index cannot tell (the line lies after a damaged block, or the index has no
        line counts: lines before the damage are found)."""
        return self._f().line_offset(n)

    def seek_line(self, n: int) -> int:
        """Moves to the start of line `n` (see :meth:`line_offset`), so that the next
        ``readline()`` returns line n (b"" past the last line); returns the new position."""
        self._pos = self.line_offset(n)
        return self._pos

    def close(self) -> None:
        if not self.closed:
            if self._file is not None and os.getpid() != self._pid:
                _inherited.append(self._file)
            self._file = None
        super().close()

    def __repr__(self) -> str:
        return f"<mibz2.RawFile name={self.name!r}{' closed' if self.closed else ''}>"


class _LinesOfWrapped:
    """The line methods of a file that wraps another (``_wrapped``: a buffered reader's raw file, a
    text wrapper's buffer): the count and the offsets are the wrapped file's (in the end
    :class:`RawFile`'s), and ``seek_line`` seeks this file, so that its buffer (and a text
    wrapper's decoder) follows. A byte offset at a line start is also a text wrapper's seek cookie
    with a fresh decoder: no character of a multibyte sequence straddles a b"\\n"."""

    @property
    def _wrapped(self):
        raise NotImplementedError

    @property
    def line_count(self) -> Optional[int]:
        return self._wrapped.line_count

    @property
    def line_count_unknown(self) -> Optional[str]:
        return self._wrapped.line_count_unknown

    def line_offset(self, n: int) -> int:
        return self._wrapped.line_offset(n)

    def seek_line(self, n: int) -> int:
        """Moves to the start of line `n` (1-based): the next ``readline()`` returns line n."""
        return self.seek(self._wrapped.line_offset(n))


class BufferedReader(_LinesOfWrapped, io.BufferedReader):
    """io.BufferedReader that keeps the bytes before damage.

    io.BufferedReader.read(n) drops what it has gathered when a later raw read fails, so n bytes
    before a damaged block would be lost. Here read(n) and readinto(b) stop at the damage and
    return the good bytes (a short read); the next read raises OSError(EIO), as os.read does on
    the mount. read() with no size raises at once (it cannot return the rest of the file).
    readline and iteration return every whole line before the damage, then raise.

    ``line_count``, ``line_count_unknown``, ``line_offset(n)`` and ``seek_line(n)`` are the raw
    file's (:class:`RawFile`); ``seek_line`` seeks this reader, so its buffer follows.
    """

    @property
    def _wrapped(self):
        return self.raw

    def read(self, size: Optional[int] = -1) -> bytes:
        if size is None or size < 0:
            return super().read()
        parts = []
        got = 0
        while got < size:
            try:
                chunk = self.read1(size - got)
            except OSError:
                if got:
                    break  # the next read starts at the damage and raises
                raise
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def readinto(self, buffer) -> int:
        view = memoryview(buffer).cast("B")
        got = 0
        while got < len(view):
            try:
                n = self.readinto1(view[got:])
            except OSError:
                if got:
                    break
                raise
            if not n:
                break
            got += n
        return got


class TextIOWrapper(_LinesOfWrapped, io.TextIOWrapper):
    """io.TextIOWrapper with the lines of :class:`BufferedReader`: ``line_count``,
    ``line_count_unknown``, ``line_offset(n)`` (a byte offset, also a valid ``seek`` position
    here) and ``seek_line(n)``. Lines are counted in b"\\n" bytes, so they are the text's lines
    in UTF-8 and other ASCII-compatible encodings."""

    @property
    def _wrapped(self):
        return self.buffer


# Large enough that a sequential reader crosses into C++ rarely; small enough that a seek and a
# readline read little more than the line.
BUFFER_SIZE = 64 * 1024


def open(path: PathLike, mode: str = "rb", *, threads: Optional[int] = None,
         cache_size: Union[int, str, None] = None, index_dir: Optional[PathLike] = None,
         encoding: Optional[str] = None, errors: Optional[str] = None, newline: Optional[str] = None,
         progress: Optional[Progress] = None, buffer_size: int = BUFFER_SIZE,
         s3: Optional[Dict[str, Any]] = None):
    """Opens the decompressed content of the bzip2 file at `path` for reading, like ``bz2.open``.

    `path` may also be an ``http://``, ``https://`` or ``s3://BUCKET/KEY`` URL: the object is read
    by range requests, only the blocks reads need, with S3 configured from the environment as the
    AWS tools are (README, "Remote dumps"). An object replaced on its server while it is open fails
    the next read that must fetch from it with OSError(errno.ESTALE); a missing one raises
    FileNotFoundError naming the URL and the HTTP status (PermissionError for 403, as for a wrong
    key or secret).

    s3: settings for ``s3://`` URLs, used before the environment's (AWS_*) and the AWS settings
    files, in the names of fsspec's s3 storage options: ``key``, ``secret``, ``token``, ``anon``
    (True: unsigned requests, for a public bucket), ``endpoint_url`` (an S3-compatible store),
    ``region``, ``profile``, and ``client_kwargs``' ``endpoint_url`` and ``region_name``;
    ValueError for any other (see mibz2._s3_options). A secret given here never appears in a
    message, a log line or a repr. Opens with other s3 settings use another engine (its own
    threads and cache).

    mode: "rb" (or "r"): an ``io.BufferedReader`` (:class:`mibz2.BufferedReader`) over a
    :class:`mibz2.RawFile` (read, readinto, readline, iteration, seek/tell, ``with``); "rt": an
    ``io.TextIOWrapper`` (:class:`mibz2.TextIOWrapper`) over it, with `encoding`, `errors` and
    `newline` as for :func:`open`. Both have ``line_count`` and ``seek_line(n)`` (see
    :class:`RawFile`).

    The first open of a file without a current index builds it in parallel and stores it; later
    opens, and ``mibz2``/``mibz2fs``, load it at once. ``progress(done, total)`` (compressed bytes,
    total > 0) is called about five times a second while the build runs, with `done` never
    decreasing, and always once more when the build this call waited for has finished, with
    ``done == total ==`` the compressed size (so even a build shorter than the first tick reports
    its end). Not called when a stored index is loaded. Ctrl-C, or an exception raised by
    `progress`, stops the wait (the build goes on in the background).

    threads, cache_size: the shared engine's decoder threads (1 to 1024) and block cache (bytes,
    or a SIZE string like "256M": see :func:`parse_size`); None sizes them from what this process
    may use (see mibz2._defaults). Opens with the same settings share one engine. index_dir: where
    indexes are stored (None: :func:`default_index_dir`, as mibz2 and mibz2fs).

    Raises OSError: the file cannot be opened (FileNotFoundError, ...), is not bzip2
    (errno.EILSEQ), or, when read, is damaged (errno.EIO, after every byte before the damage), or
    was rewritten in place since it was opened (errno.ESTALE, "the file changed while it was
    read": never the new content's bytes after the old ones; open it again for the new content).
    """
    if mode in ("r", "rb"):
        text = False
    elif mode == "rt":
        text = True
    else:
        raise ValueError(f"invalid mode: {mode!r} (mibz2 files are read-only: 'rb' or 'rt')")
    if not text and (encoding is not None or errors is not None or newline is not None):
        raise ValueError("encoding, errors and newline are for text mode ('rt')")
    raw = RawFile(path, threads=threads, cache_size=cache_size, index_dir=index_dir, s3=s3, progress=progress)
    buffered = BufferedReader(raw, buffer_size=buffer_size)
    if text:
        return TextIOWrapper(buffered, encoding=encoding or "utf-8", errors=errors, newline=newline)
    return buffered


def index(path: PathLike, *, force: bool = False, threads: Optional[int] = None,
          cache_size: Union[int, str, None] = None, index_dir: Optional[PathLike] = None,
          progress: Optional[Progress] = None, s3: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Loads or builds (`force`: always builds) and stores the index of `path`, like ``mibz2
    index``; returns :func:`info`'s dict. `progress` is called as by :func:`open` (last with
    ``done == total`` when a build finished). `s3` as for :func:`open`. Raises OSError as
    :func:`open` does."""
    raw, shown = _names(path)
    _check_file(raw, shown)
    return _engine(threads, cache_size, index_dir, s3).index(raw, raw, force, progress)


def info(path: PathLike, *, threads: Optional[int] = None, cache_size: Union[int, str, None] = None,
         index_dir: Optional[PathLike] = None, progress: Optional[Progress] = None,
         s3: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """What the index of `path` says, as ``mibz2 info --json`` prints it: file,
    compressed_size, decompressed_size, streams, blocks, damaged_blocks (block, start_bit,
    end_bit, offset, size, kind), offsets_shifted, stream_crc_mismatch, truncated_at_bit,
    trailing_bytes, index (path, state: "current", "built now", ...), and lines (as
    :attr:`RawFile.line_count`: None when the index cannot tell). Indexes the file first if
    needed. `s3` as for :func:`open`."""
    return index(path, force=False, threads=threads, cache_size=cache_size, index_dir=index_dir,
                 progress=progress, s3=s3)
