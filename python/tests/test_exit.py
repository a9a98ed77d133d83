# The interpreter exits cleanly while daemon threads are inside mibz2: reading (the GIL released
# around a read) and waiting for an index build that reports progress (the GIL taken again for each
# call of progress). A thread that takes the GIL back while the interpreter finalizes is ended by
# CPython with pthread_exit; done from a destructor, that was std::terminate and SIGABRT at exit.
import os
import subprocess
import sys

RUNS = 20

PROGRAM = r"""
import sys, threading, time
import mibz2

path = sys.argv[1]
f = mibz2.open(path)
size = f.raw.size

def read():
    i = 0
    while True:
        f.raw.pread(1 << 20, (i * 7919 * 4096) % size)
        i += 1

def index():
    while True:
        mibz2.index(path, force=True, threads=1, progress=lambda done, total: None)

for target in (read, read, index):
    threading.Thread(target=target, daemon=True).start()
time.sleep(float(sys.argv[2]))
"""


def test_exit_with_daemon_threads_in_reads_and_builds(corpus, tmp_path):
    # Long enough to build that progress is called (every 200 ms) while the interpreter finalizes.
    one = open(corpus["files"]["text"]["bzip2"], "rb").read()
    path = tmp_path / "long.txt.bz2"
    path.write_bytes(one * 20)
    program = tmp_path / "daemons.py"
    program.write_text(PROGRAM)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    failures = []
    for run in range(RUNS):
        # Main threads that end at different points of the readers' and the build's work.
        pause = f"{0.05 + 0.03 * run:.2f}"
        done = subprocess.run([sys.executable, str(program), str(path), pause], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
        if done.returncode != 0 or done.stderr:
            failures.append((run, done.returncode, done.stderr[-300:]))
    assert failures == [], f"{len(failures)} of {RUNS} exits were not clean"
