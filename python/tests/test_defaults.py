# The defaults' reading of cgroups (v1 and v2), on made-up hierarchies.
import os

from mibz2 import _defaults


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def test_cgroup_v2_limits_walk_up(tmp_path):
    root = tmp_path / "cg"
    write(root / "a" / "cpu.max", "150000 100000\n")
    write(root / "a" / "b" / "cpu.max", "max 100000\n")
    write(root / "a" / "memory.max", "max\n")
    write(root / "a" / "b" / "memory.max", "536870912\n")
    proc = tmp_path / "cgroup"
    write(proc, "0::/a/b\n")
    assert _defaults.cgroup_cpu_limit(str(root), str(proc)) == 1.5
    assert _defaults.cgroup_memory_limit(str(root), str(proc)) == 512 << 20


def test_cgroup_v1_limits(tmp_path):
    root = tmp_path / "cg"
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_quota_us", "200000\n")
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_period_us", "100000\n")
    write(root / "memory" / "job" / "memory.limit_in_bytes", "1073741824\n")
    write(root / "memory" / "memory.limit_in_bytes", "9223372036854771712\n")
    proc = tmp_path / "cgroup"
    write(proc, "4:memory:/job\n3:cpu,cpuacct:/job\n0::/\n")
    assert _defaults.cgroup_cpu_limit(str(root), str(proc)) == 2.0
    assert _defaults.cgroup_memory_limit(str(root), str(proc)) == 1 << 30


def test_no_limits(tmp_path):
    proc = tmp_path / "cgroup"
    write(proc, "0::/\n")
    assert _defaults.cgroup_cpu_limit(str(tmp_path / "none"), str(proc)) is None
    assert _defaults.cgroup_memory_limit(str(tmp_path / "none"), str(proc)) is None


def test_defaults_fit_the_process():
    threads = _defaults.default_threads()
    assert 1 <= threads <= len(os.sched_getaffinity(0))
    cache = _defaults.default_cache_bytes(threads)
    assert _defaults.CACHE_MIN <= cache <= min(_defaults.CACHE_MAX, threads * _defaults.CACHE_PER_THREAD)
