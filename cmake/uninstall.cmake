# Removes what `cmake --install` installed, by its list of installed files:
#   cmake --build build --target uninstall        (the build's install_manifest.txt)
#   cmake -DMANIFEST=FILE -P cmake/uninstall.cmake
# With DESTDIR set in the environment, as for the install, the files are removed under it.
# Files only: directories are left, since others' files may share them (/usr/share/man/man1).
if(NOT MANIFEST)
  message(FATAL_ERROR "uninstall: MANIFEST is not set")
endif()
if(NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "uninstall: ${MANIFEST} not found: nothing was installed from this build (cmake --install)")
endif()
file(STRINGS "${MANIFEST}" installed)
foreach(listed IN LISTS installed)
  set(file "$ENV{DESTDIR}${listed}")
  if(IS_SYMLINK "${file}" OR EXISTS "${file}")
    message(STATUS "uninstall: removing ${file}")
    file(REMOVE "${file}")
    if(IS_SYMLINK "${file}" OR EXISTS "${file}")
      message(FATAL_ERROR "uninstall: could not remove ${file}")
    endif()
  else()
    message(STATUS "uninstall: already gone: ${file}")
  endif()
endforeach()
