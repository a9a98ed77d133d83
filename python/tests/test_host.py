# Importing mibz2 and reading with it changes nothing in the host process: glibc's allocation
# policy stays the interpreter's (numpy's and pandas's memory is not the module's to tune).
import os
import subprocess
import sys
import textwrap

# In a fresh interpreter: whether a 1 MiB malloc, after one was freed, is served by a mapping of its
# own (mallinfo2's hblkhd grows by it) or from the heap. glibc's default raises its mmap threshold
# when a mapped chunk is freed, so a second one comes from the heap; a fixed M_MMAP_THRESHOLD below
# 1 MiB (what the module once set at import) maps every one.
PROBE = textwrap.dedent("""
    import ctypes, sys

    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                     "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.mallinfo2.restype = MallInfo2

    def mapped_by_malloc():
        libc.free(libc.malloc(1 << 20))
        before = libc.mallinfo2().hblkhd
        p = libc.malloc(1 << 20)
        grew = libc.mallinfo2().hblkhd - before
        libc.free(p)
        return grew >= 1 << 20

    print("before", mapped_by_malloc())
    import mibz2
    with mibz2.open(sys.argv[1], threads=2, cache_size="8MiB") as f:
        f.read()
    print("after", mapped_by_malloc())
""")


def test_importing_and_reading_leaves_the_malloc_policy_alone(corpus):
    path = corpus["files"]["text"]["bzip2"]
    # glibc's settings from the environment left out: any of them (Dask sets MALLOC_TRIM_THRESHOLD_
    # in its process for the workers it starts) fixes the threshold as mallopt does.
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    out = subprocess.run([sys.executable, "-c", PROBE, path], check=True, stdout=subprocess.PIPE,
                         env=env).stdout.decode().split("\n")
    assert out[:2] == ["before False", "after False"], out
