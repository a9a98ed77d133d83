# A child forked while the parent's threads read (multiprocessing's and Dask's fork start method)
# opens the file again and reads: no lock of the process (the module's engine registry, the block
# allocator's free list, the log sink) may be held for ever in the child by a thread it does not have.
import os
import random
import subprocess
import threading
import time

import pytest

import mibz2

FORKS = 150
CHILD_LIMIT_S = 60  # only ends a child that waits for ever: a healthy one takes a fraction of a second


@pytest.fixture(scope="module")
def large_blocks(corpus, tmp_path_factory):
    """The text in 900 kB blocks (bzip2 -9): buffers the block allocator keeps for reuse."""
    path = tmp_path_factory.mktemp("fork") / "text9.bz2"
    with open(path, "wb") as out:
        subprocess.run(["bzip2", "-9", "-c"], input=corpus["plain"]["text"], stdout=out, check=True)
    return str(path), corpus["plain"]["text"]


def child_reads(path, expected):
    """The child's work: an open (a new engine: the parent's has no threads here) and a read."""
    try:
        with mibz2.open(path, cache_size="4MiB") as f:
            f.seek(len(expected) // 2)
            ok = f.read(300_000) == expected[len(expected) // 2:len(expected) // 2 + 300_000]
    except BaseException:
        ok = False
    os._exit(0 if ok else 1)


def wait_child(pid):
    """0: it read right; 1: it read wrong; -1: it did not end in CHILD_LIMIT_S (killed)."""
    deadline = time.monotonic() + CHILD_LIMIT_S
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return 0 if os.waitstatus_to_exitcode(status) == 0 else 1
        time.sleep(0.002)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return -1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_child_forked_while_threads_read_opens_and_reads(large_blocks):
    path, expected = large_blocks
    stop = threading.Event()

    def reader(seed):
        # Opens again and again (the module's engine registry) and reads through a small cache
        # (blocks decoded, allocated and freed all the time).
        rng = random.Random(seed)
        while not stop.is_set():
            with mibz2.open(path, cache_size="2MiB") as f:
                for _ in range(4):
                    start = rng.randrange(0, len(expected))
                    f.raw.pread(65536, start)

    threads = [threading.Thread(target=reader, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    hung = wrong = forks = 0
    try:
        while forks < FORKS and not hung:
            pid = os.fork()
            if pid == 0:
                child_reads(path, expected)
            forks += 1
            outcome = wait_child(pid)
            hung += outcome < 0
            wrong += outcome > 0
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert hung == 0, f"a child hung (fork {forks} of {FORKS})"
    assert wrong == 0, f"of {forks} children"
