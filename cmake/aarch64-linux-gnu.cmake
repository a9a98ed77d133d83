# Cross build for aarch64 (arm64) Linux with Debian's cross compiler (g++-aarch64-linux-gnu), run
# under qemu-user (qemu-aarch64):
#
#   scripts/setup arm64
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#
# The libraries' arm64 packages are looked for under MIBZ2_ARM64_SYSROOT (a cache variable or an
# environment variable), default /opt/mibz2-arm64-sysroot: the directory where scripts/setup arm64
# unpacks them (why unpacked and not installed: see that script). A machine with the arm64 -dev
# packages installed by apt (multiarch) passes -DMIBZ2_ARM64_SYSROOT=/. The C library and libstdc++
# are the cross compiler's own (/usr/aarch64-linux-gnu, Debian's libc6-dev-arm64-cross).
#
# ctest runs the test executables through CMAKE_CROSSCOMPILING_EMULATOR, qemu-aarch64 with both
# library directories: gtest_discover_tests lists their tests the same way.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# The toolchain file is read again for every try_compile: the sysroot passes on through the
# environment there.
if(NOT DEFINED MIBZ2_ARM64_SYSROOT)
  if(DEFINED ENV{MIBZ2_ARM64_SYSROOT})
    set(MIBZ2_ARM64_SYSROOT "$ENV{MIBZ2_ARM64_SYSROOT}")
  else()
    set(MIBZ2_ARM64_SYSROOT /opt/mibz2-arm64-sysroot)
  endif()
endif()
set(MIBZ2_ARM64_SYSROOT "${MIBZ2_ARM64_SYSROOT}" CACHE PATH "Where the arm64 libraries are (scripts/setup arm64)")
set(ENV{MIBZ2_ARM64_SYSROOT} "${MIBZ2_ARM64_SYSROOT}")
set(_cross_libc /usr/aarch64-linux-gnu)
set(_arm64_lib_dirs "${MIBZ2_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu" "${MIBZ2_ARM64_SYSROOT}/lib/aarch64-linux-gnu")
if(NOT EXISTS "${MIBZ2_ARM64_SYSROOT}/usr/include/bzlib.h")
  message(FATAL_ERROR "no arm64 libraries in MIBZ2_ARM64_SYSROOT=${MIBZ2_ARM64_SYSROOT} (run scripts/setup arm64)")
endif()

# Headers, libraries and CMake packages only from the arm64 trees; programs (pkg-config, the
# Python interpreter) from the build machine.
set(CMAKE_FIND_ROOT_PATH "${MIBZ2_ARM64_SYSROOT}" "${_cross_libc}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads the arm64 .pc files only, and puts the sysroot before the paths they name.
set(ENV{PKG_CONFIG_LIBDIR} "${MIBZ2_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${MIBZ2_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${MIBZ2_ARM64_SYSROOT}")
set(ENV{PKG_CONFIG_PATH} "")

# The libraries' own dependencies (libspdlog.so needs libfmt.so.9) are found by the linker there too.
list(JOIN _arm64_lib_dirs ":" _arm64_lib_path)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_arm64_lib_path}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_arm64_lib_path}")

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${_cross_libc} -E LD_LIBRARY_PATH=${_arm64_lib_path})
