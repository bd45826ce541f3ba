# The .deb: `cmake --build build --target package` writes
# build/hpfreeze_<version>_<arch>.deb from what `cmake --install` installs, under /usr.
# Depends comes from dpkg-shlibdeps (dpkg-dev), plus python3 for hpfreeze-export.
# cmake/debian/prebuild.cmake makes the staged tree what Debian policy and lintian want
# (man pages and changelog gzipped, the licence only in the copyright file).

# A parent project that adds hpfreeze as a subdirectory keeps its own CPack settings.
if(NOT PROJECT_IS_TOP_LEVEL)
  return()
endif()
# CPack computes Depends with dpkg-shlibdeps (dpkg-dev) on the files `file` says are ELF;
# without either there is no package target.
find_program(HPFREEZE_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(HPFREEZE_FILE file)
if(NOT HPFREEZE_DPKG_SHLIBDEPS OR NOT HPFREEZE_FILE)
  message(STATUS "hpfreeze: no package target (needs dpkg-shlibdeps and file: Debian packages dpkg-dev and file)")
  return()
endif()

# The changelog's newest entry is the package's version: say so at configure time.
file(STRINGS ${PROJECT_SOURCE_DIR}/cmake/debian/changelog hpfreeze_changelog_top LIMIT_COUNT 1)
if(NOT hpfreeze_changelog_top MATCHES "^hpfreeze \\(${PROJECT_VERSION}\\) ")
  message(FATAL_ERROR "cmake/debian/changelog starts with '${hpfreeze_changelog_top}', "
                      "not an entry for hpfreeze ${PROJECT_VERSION}: add one")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hpfreeze)
set(CPACK_PACKAGE_VENDOR "The hpfreeze authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "freeze a HyperParallel sharding plan into a byte-stable codegen_meta.json")
set(CPACK_PACKAGE_DESCRIPTION
    "hpfreeze reads a HyperParallel planner's plan dump and model tree dump\n\
and writes the codegen_meta.json that generated modeling code and the\n\
training runtime consume, byte for byte as upstream's Python writer would,\n\
fast enough for a build step. It also checks, compares, inverts and sizes\n\
such metas (check, diff, thaw, report).\n\
.\n\
The package holds the hpfreeze command with its man pages and bash, zsh\n\
and fish completion, the Python exporter (module hpfreeze_export, command\n\
hpfreeze-export) that writes the dumps from live planner objects, and a\n\
CMake package whose hpfreeze_freeze() adds the freeze as a build step.")
set(CPACK_PACKAGE_CONTACT "hpfreeze maintainers <maintainers@users.noreply.a-seed-6f08893d.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Stripped by cmake/debian/prebuild.cmake, as dh_strip does.
set(CPACK_HPFREEZE_STRIP ${CMAKE_STRIP})

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# hpfreeze-export and the module are Python 3 (>= 3.9); Debian 12 has 3.11.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3:any")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/postinst
                                       ${PROJECT_SOURCE_DIR}/cmake/debian/prerm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/debian/prebuild.cmake)
set(CPACK_HPFREEZE_DOCDIR ${CMAKE_INSTALL_DOCDIR})
set(CPACK_HPFREEZE_MANDIR ${CMAKE_INSTALL_MANDIR})
include(CPack)
