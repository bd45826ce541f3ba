# The .debs: `cmake --build build --target package` (scripts/package.sh) writes, from what
# `cmake --install` installs under /usr, one package per install component:
#   build/hpfreeze_<version>_<arch>.deb                 the binary, its man pages and
#       completions, the CMake package, the docs and the example; Depends from
#       dpkg-shlibdeps (dpkg-dev) only, so it pulls in no Python;
#   build/python3-hpfreeze-export_<version>_all.deb     the exporter (module, dist-info,
#       hpfreeze-export and its man page), for Debian's python3.
# cmake/debian/prebuild.cmake makes the staged trees what Debian policy and lintian want
# (man pages and changelog gzipped, the licence only in the copyright file, a doc directory
# per package). The binary is built with Debian's hardened flags (HPFREEZE_DEB_BUILDFLAGS in
# CMakeLists.txt): a tree without them has no package target.

# A parent project that adds hpfreeze as a subdirectory keeps its own CPack settings.
if(NOT PROJECT_IS_TOP_LEVEL)
  return()
endif()
# CPack computes Depends with dpkg-shlibdeps (dpkg-dev) on the files `file` says are ELF;
# without either there is no package target, nor in a tree without the hardened flags. The
# CPack configuration an earlier configure wrote goes too, so `cpack` cannot make a package
# of this tree either.
find_program(HPFREEZE_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(HPFREEZE_FILE file)
set(hpfreeze_no_package "")
if(NOT HPFREEZE_DPKG_SHLIBDEPS OR NOT HPFREEZE_FILE)
  set(hpfreeze_no_package "needs dpkg-shlibdeps and file: Debian packages dpkg-dev and file")
elseif(NOT hpfreeze_deb_buildflags)
  set(hpfreeze_no_package "the .deb's binary is built with Debian's hardened flags, and "
                          "HPFREEZE_DEB_BUILDFLAGS is off in this tree: scripts/package.sh")
endif()
if(hpfreeze_no_package)
  file(REMOVE ${PROJECT_BINARY_DIR}/CPackConfig.cmake ${PROJECT_BINARY_DIR}/CPackSourceConfig.cmake)
  string(CONCAT hpfreeze_no_package ${hpfreeze_no_package})
  message(STATUS "hpfreeze: no package target (${hpfreeze_no_package})")
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
set(CPACK_PACKAGE_CONTACT "hpfreeze maintainers <maintainers@users.noreply.a-seed-6f08893d.example>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# One .deb per component (cmake/hpfreezeInstall.cmake), named as Debian names them.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL hpfreeze exporter)
set(CPACK_COMPONENTS_GROUPING IGNORE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Both come from one source, hpfreeze, whose changelog both carry.
set(CPACK_DEBIAN_PACKAGE_SOURCE hpfreeze)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
# Each description's first line is the package's summary (CPack adds no summary of its own
# while CPACK_PACKAGE_DESCRIPTION_SUMMARY keeps its default).

set(CPACK_DEBIAN_HPFREEZE_PACKAGE_NAME hpfreeze)
set(CPACK_DEBIAN_HPFREEZE_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_HPFREEZE_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps sees only the libraries the binary links; libcrypto (check --bundle's
# SHA-256) is loaded when first needed (lib/src/io/libcrypto.h), so its package is named here:
# Debian 12's libssl3 holds libcrypto.so.3. CPack adds shlibdeps' list to this one.
set(CPACK_DEBIAN_HPFREEZE_PACKAGE_DEPENDS "libssl3 (>= 3.0.0)")
set(CPACK_DEBIAN_HPFREEZE_PACKAGE_SUGGESTS python3-hpfreeze-export)
set(CPACK_DEBIAN_HPFREEZE_DESCRIPTION
    "freeze a HyperParallel sharding plan into a byte-stable codegen_meta.json\n\
hpfreeze reads a HyperParallel planner's plan dump and model tree dump\n\
and writes the codegen_meta.json that generated modeling code and the\n\
training runtime consume, byte for byte as upstream's Python writer would,\n\
fast enough for a build step. It also checks, compares, inverts and sizes\n\
such metas (check, diff, thaw, report).\n\
.\n\
The package holds the hpfreeze command with its man pages and bash, zsh\n\
and fish completion, a CMake package whose hpfreeze_freeze() adds the\n\
freeze as a build step, and the documentation with a bundled example.\n\
The Python exporter that writes the dumps from live planner objects is\n\
in python3-hpfreeze-export.")

set(CPACK_DEBIAN_EXPORTER_PACKAGE_NAME python3-hpfreeze-export)
set(CPACK_DEBIAN_EXPORTER_PACKAGE_SECTION python)
set(CPACK_DEBIAN_EXPORTER_PACKAGE_ARCHITECTURE all)
# Python 3 (>= 3.9; Debian 12 has 3.11) for the module and its command; hpfreeze for
# freeze(), which runs the binary, and for the docs its man page names.
set(CPACK_DEBIAN_EXPORTER_PACKAGE_DEPENDS "python3:any, hpfreeze (>= ${PROJECT_VERSION})")
# hpfreeze before 0.2.0 was one package that held the exporter's files too: Breaks and
# Replaces let apt take them over on upgrade (Debian policy 7.6.1) instead of refusing to
# overwrite them.
set(CPACK_DEBIAN_EXPORTER_PACKAGE_BREAKS "hpfreeze (<< 0.2.0)")
set(CPACK_DEBIAN_EXPORTER_PACKAGE_REPLACES "hpfreeze (<< 0.2.0)")
set(CPACK_DEBIAN_EXPORTER_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/postinst
                                                ${PROJECT_SOURCE_DIR}/cmake/debian/prerm)
set(CPACK_DEBIAN_EXPORTER_DESCRIPTION
    "export a live HyperParallel sharding plan for hpfreeze\n\
The Python module hpfreeze_export and its command hpfreeze-export write\n\
a HyperParallel planner's live ShardingPlan and a torch model as the plan\n\
and model dumps that hpfreeze reads, by duck typing (no import of torch),\n\
and freeze() runs hpfreeze freeze on them through pipes.")

set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/debian/prebuild.cmake)
# Stripped by cmake/debian/prebuild.cmake, as dh_strip does.
set(CPACK_HPFREEZE_STRIP ${CMAKE_STRIP})
set(CPACK_HPFREEZE_DOCDIR ${CMAKE_INSTALL_DOCDIR})
set(CPACK_HPFREEZE_DATADIR ${CMAKE_INSTALL_DATADIR})
set(CPACK_HPFREEZE_MANDIR ${CMAKE_INSTALL_MANDIR})
set(CPACK_HPFREEZE_COPYRIGHT ${PROJECT_SOURCE_DIR}/cmake/debian/copyright)
set(CPACK_HPFREEZE_CHANGELOG ${PROJECT_SOURCE_DIR}/cmake/debian/changelog)
include(CPack)
