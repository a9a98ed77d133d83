"""How many decoder threads and how much block cache a process gets when it does not say.

Many processes on one machine each open the same dump (Dask workers, multiprocessing, Spark):
sized from the machine, every one of them would start a thread per core and a cache of up to
1 GiB, and together oversubscribe the cores and the memory as many times as there are processes.
So the defaults are sized from what *this process* may use:

threads
    the CPUs it may run on (``os.sched_getaffinity``), no more than its cgroup's CPU quota
    (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``/``cpu.cfs_period_us``, rounded up), and inside
    a Dask worker no more than the worker's ``nthreads`` (one decoder per task slot: the worker
    processes of a ``LocalCluster`` share the machine's cores between them).
cache
    a quarter of the memory it may use (physical memory, or its cgroup's ``memory.max`` /
    ``memory.limit_in_bytes`` if lower, or a Dask worker's ``memory_limit`` if lower still), at
    most 64 MiB per decoder thread and 1 GiB, and at least 32 MiB.

A process's memory for mibz2 stays within its cache, plus one block buffer per decoder thread
(up to 46 MB for a block that is mostly runs, about 1 MB for text) and the decoders' work
memory (about 8 MB each), and the indexes of files closed recently, kept for a later open of the
same file within 4 MiB: at most ``cache + threads * 55 MB + 4 MiB`` (:func:`memory_bound`). The
indexes of the files it has open come on top (about 36 bytes a block: 55 MB for a dump of 1.5
million blocks); nothing grows with the number of files opened over its life. With the
defaults, N Dask worker processes of T threads each (a ``LocalCluster``) use together at most
``N * memory_bound(T, default_cache_bytes(T))``: ``N * (68 MiB + 55 MB)`` for one thread each.
"""

from __future__ import annotations

import math
import os
from typing import Optional

_MiB = 1 << 20
_GiB = 1 << 30
CACHE_PER_THREAD = 64 * _MiB
CACHE_MIN = 32 * _MiB
CACHE_MAX = _GiB
# Per decoder thread, besides the cache: a block buffer (at most 46 MB) and work memory (8 MB).
THREAD_MEMORY = 55_000_000
# The indexes of files closed recently, kept for a later open (catalog/front_door.h).
IDLE_FILES_MEMORY = 4 * _MiB


def _read(path: str) -> Optional[str]:
    try:
        with open(path, "r", encoding="ascii") as f:
            return f.read().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _cgroup_dirs(controller: str, root: str = "/sys/fs/cgroup", proc: str = "/proc/self/cgroup") -> list:
    """The directories of this process's cgroup and of its ancestors, innermost first, for
    `controller` ("" for cgroup v2's unified hierarchy)."""
    text = _read(proc) or ""
    dirs = []
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controller == "":
            if parts[0] != "0" or controllers != "":
                continue
            base = root
        else:
            if controller not in controllers.split(","):
                continue
            base = os.path.join(root, controllers)
            if not os.path.isdir(base):
                base = os.path.join(root, controller)
        path = path.strip("/")
        # Walk up: a limit set on an ancestor bounds this cgroup too. In a cgroup namespace the
        # path may not exist under the mount: then the mount's root is this cgroup.
        while True:
            d = os.path.join(base, path) if path else base
            if os.path.isdir(d):
                dirs.append(d)
            if not path:
                break
            path = os.path.dirname(path)
    return dirs


def cgroup_cpu_limit(root: str = "/sys/fs/cgroup", proc: str = "/proc/self/cgroup") -> Optional[float]:
    """The CPUs the cgroup quota allows (a fraction), or None when there is no quota."""
    best = None
    for d in _cgroup_dirs("", root, proc):
        v = _read(os.path.join(d, "cpu.max"))
        if v:
            quota, _, period = v.partition(" ")
            if quota != "max" and period:
                try:
                    cpus = int(quota) / int(period)
                except (ValueError, ZeroDivisionError):
                    continue
                best = cpus if best is None else min(best, cpus)
    for d in _cgroup_dirs("cpu", root, proc):
        q, p = _read(os.path.join(d, "cpu.cfs_quota_us")), _read(os.path.join(d, "cpu.cfs_period_us"))
        try:
            quota, period = int(q or "-1"), int(p or "0")
        except ValueError:
            continue
        if quota > 0 and period > 0:
            best = quota / period if best is None else min(best, quota / period)
    return best


def cgroup_memory_limit(root: str = "/sys/fs/cgroup", proc: str = "/proc/self/cgroup") -> Optional[int]:
    """The cgroup's memory limit in bytes, or None when there is none."""
    best = None
    for d in _cgroup_dirs("", root, proc):
        v = _read(os.path.join(d, "memory.max"))
        if v and v != "max" and v.isdigit():
            best = int(v) if best is None else min(best, int(v))
    for d in _cgroup_dirs("memory", root, proc):
        v = _read(os.path.join(d, "memory.limit_in_bytes"))
        # cgroup v1 says "no limit" with a huge number (PAGE_COUNTER_MAX pages).
        if v and v.isdigit() and int(v) < (1 << 62):
            best = int(v) if best is None else min(best, int(v))
    return best


def _physical_memory() -> Optional[int]:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


def _dask_worker():
    """The Dask worker this code runs in, or None (no distributed, or not in a worker)."""
    import sys

    if "distributed" not in sys.modules:  # never import Dask just to find out
        return None
    try:
        from distributed import get_worker

        return get_worker()
    except (ImportError, ValueError, AttributeError):
        return None


def _worker_nthreads(worker) -> Optional[int]:
    for get in (lambda w: w.state.nthreads, lambda w: w.nthreads):
        try:
            n = int(get(worker))
            if n > 0:
                return n
        except (AttributeError, TypeError, ValueError):
            pass
    return None


def _worker_memory_limit(worker) -> Optional[int]:
    for get in (lambda w: w.memory_manager.memory_limit, lambda w: w.memory_limit):
        try:
            v = get(worker)
            if v:
                return int(v)
        except (AttributeError, TypeError, ValueError):
            pass
    return None


def default_threads() -> int:
    """Decoder threads for this process (see the module's docstring)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = cgroup_cpu_limit()
    if quota is not None:
        n = min(n, max(1, math.ceil(quota)))
    worker = _dask_worker()
    if worker is not None:
        nthreads = _worker_nthreads(worker)
        if nthreads:
            n = min(n, nthreads)
    return max(1, min(n, 256))


def default_cache_bytes(threads: int) -> int:
    """Block cache for this process with `threads` decoder threads (see the module's docstring)."""
    limits = [m for m in (_physical_memory(), cgroup_memory_limit()) if m]
    worker = _dask_worker()
    if worker is not None:
        wl = _worker_memory_limit(worker)
        if wl:
            limits.append(wl)
    cache = min(CACHE_MAX, CACHE_PER_THREAD * max(1, threads))
    if limits:
        cache = min(cache, min(limits) // 4)
    return max(CACHE_MIN, cache)


def memory_bound(threads: int, cache_bytes: int) -> int:
    """The most resident memory an engine of `threads` decoder threads and a cache of
    `cache_bytes` adds to a process (see the module's docstring)."""
    return cache_bytes + threads * THREAD_MEMORY + IDLE_FILES_MEMORY
