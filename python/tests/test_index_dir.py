# The index directory when none is named: one rule for mibz2fs, mibz2 and the module (FILES in
# man mibz2fs), which mibz2.default_index_dir() tells, and no other variable read.
import json
import os
import shutil
import subprocess
import sys

import mibz2

WHERE = r"""
import os, sys, mibz2
print(mibz2.default_index_dir())
print(os.path.dirname(mibz2.info(sys.argv[1])["index"]["path"]))
"""


def environment(**names):
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "HOME", "MIBZ2_INDEX_DIR")}
    env.update(names)
    return env


def test_the_module_stores_indexes_where_mibz2_does(corpus, mibz2_bin, tmp_path):
    path = tmp_path / "text.bz2"
    shutil.copy(corpus["files"]["text"]["bzip2"], path)
    home, xdg, named = tmp_path / "home", tmp_path / "xdg", tmp_path / "named"
    for d in (home, xdg, named):
        d.mkdir()
    # MIBZ2_INDEX_DIR is no setting: its directory stays empty.
    cases = [(environment(XDG_CACHE_HOME=str(xdg), HOME=str(home), MIBZ2_INDEX_DIR=str(named)), f"{xdg}/mibz2fs")]
    if os.geteuid() != 0:  # root's directory is /var/cache/mibz2fs: not written by a test
        cases.append((environment(HOME=str(home), MIBZ2_INDEX_DIR=str(named)), f"{home}/.cache/mibz2fs"))
        cases.append((environment(XDG_CACHE_HOME="relative", HOME=str(home)), f"{home}/.cache/mibz2fs"))
    for env, expected in cases:
        told, used = subprocess.run([sys.executable, "-c", WHERE, str(path)], env=env, check=True,
                                    stdout=subprocess.PIPE, text=True).stdout.split("\n")[:2]
        info = subprocess.run([mibz2_bin, "info", "--json", str(path)], env=env, check=True,
                              stdout=subprocess.PIPE, text=True).stdout
        assert told == used == os.path.dirname(json.loads(info)["index"]["path"]) == expected
        assert os.listdir(named) == []


def test_without_xdg_cache_home_root_has_the_system_directory_and_others_home(monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", "/home/someone")
    expected = "/var/cache/mibz2fs" if os.geteuid() == 0 else "/home/someone/.cache/mibz2fs"
    assert mibz2.default_index_dir() == expected
    monkeypatch.delenv("HOME")
    assert mibz2.default_index_dir() == ("/var/cache/mibz2fs" if os.geteuid() == 0 else None)
