"""Builds the extension mibz2._core for `pip install ./python` (pyproject.toml has the rest).

The extension is built by the repository's own CMake, not by setuptools' compiler driver: CMake
already says which sources make which library and with which flags (the decoder's alignment, PIC
for a shared object, pybind11's settings), so the wheel is the module `cmake -DMIBZ2_PYTHON=ON`
builds, with no second list of sources to keep in step; and CMake compiles in parallel, where
setuptools compiles one extension's sources one after another. The build type is Release unless
the environment's CMAKE_BUILD_TYPE names another (CMake's own variable; the test of this install
builds Debug, which compiles faster). MIBZ2_PROGRAMS=OFF leaves out the
FUSE adapter and the programs (and their libfuse3-dev, libcli11-dev): only the libraries the
module links are compiled. CMAKE_BUILD_PARALLEL_LEVEL and CMAKE_CXX_COMPILER_LAUNCHER (ccache) are
CMake's own variables and work here as for any CMake build.

The C++ sources are the repository's (../src), so the package is built from a checkout: an sdist
of python/ alone could not hold them, and is refused.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

REPOSITORY = Path(__file__).resolve().parent.parent


def project_version() -> str:
    """The version of the project (CMakeLists.txt), the programs' and the module's."""
    try:
        text = (REPOSITORY / "CMakeLists.txt").read_text()
    except OSError:
        raise SystemExit("mibz2 is built from the repository: python/ with ../CMakeLists.txt and ../src") from None
    return re.search(r"^project\(mibz2fs VERSION ([0-9][0-9.]*)", text, re.M).group(1)


class BuildWithCMake(build_ext):
    def build_extension(self, ext):
        import pybind11

        build = Path(self.build_temp).resolve() / "cmake"
        configure = [
            "cmake", "-S", str(REPOSITORY), "-B", str(build),
            "-DCMAKE_BUILD_TYPE=" + (os.environ.get("CMAKE_BUILD_TYPE") or "Release"), "-DMIBZ2_PYTHON=ON", "-DMIBZ2_PROGRAMS=OFF", "-DMIBZ2_BUILD_TESTS=OFF",
            # The interpreter running this build (a venv's): its ABI, its headers.
            f"-DPython_EXECUTABLE={sys.executable}",
            # The pybind11 this build requires (pyproject.toml), Debian's python3-pybind11.
            f"-Dpybind11_DIR={pybind11.get_cmake_dir()}",
        ]
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(self.parallel or os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build), "--target", "mibz2_python_core", "--parallel", jobs],
                       check=True)
        built = sorted((build / "python-package" / "mibz2").glob("_core.*.so"))
        if len(built) != 1:
            raise RuntimeError(f"the CMake build made {len(built)} mibz2/_core.*.so in {build}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


class NoSdist(sdist):
    def run(self):
        raise SystemExit("mibz2 has no sdist: its extension is built from the repository's C++ sources (../src). "
                         "Build a wheel from a checkout: pip install ./python, or python3 -m build --wheel python")


setup(
    version=project_version(),
    ext_modules=[Extension("mibz2._core", sources=[])],
    cmdclass={"build_ext": BuildWithCMake, "sdist": NoSdist},
)
