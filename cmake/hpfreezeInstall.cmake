# What `cmake --install` (and so the .debs) puts beside what apps/hpfreeze installs (the
# binary, the generated man pages, the bash completion, share/hpfreeze/hpfreeze_export.py):
# the licence and the docs with the bundled example, the zsh and fish completions, the
# Python package of the exporter with its command, hpfreeze-export(1), and the CMake package.
# Paths are relative to the prefix, so CPack's /usr and a plain /usr/local install get the
# same layout. Two components, one .deb each (cmake/hpfreezeDeb.cmake): `hpfreeze` (the
# default component of every rule that names none, apps/hpfreeze's included) and `exporter`,
# the Python exporter (python3-hpfreeze-export), so the binary's package needs no Python.
include(CMakePackageConfigHelpers)

set(HPFREEZE_INSTALL_PYTHONDIR lib/python3/dist-packages CACHE STRING
    "Where the Python module hpfreeze_export goes, relative to the prefix (Debian's python3 reads lib/python3/dist-packages under /usr)")
set(HPFREEZE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_DATADIR}/cmake/hpfreeze CACHE STRING
    "Where the CMake package (hpfreezeConfig.cmake) goes, relative to the prefix")

# The docs keep the repository's layout (README.md, docs/, docs/recipes/), so every
# relative link among them still resolves.
install(FILES LICENSE README.md cmake/debian/copyright cmake/debian/changelog
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT hpfreeze)
file(GLOB hpfreeze_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${hpfreeze_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT hpfreeze)
install(DIRECTORY docs/recipes DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT hpfreeze)
# The README's example (plan, model, and the meta they freeze to), for an installed hpfreeze
# without the source tree.
install(FILES testdata/example/plan.json testdata/example/model.json
              testdata/example/expected.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT hpfreeze)
# The CMake package's consumer (docs/recipes.md, "CMake, with hpfreeze's package") as a
# project that builds where it is installed: that example's plan and model, and its meta as
# the base (last run's meta, whose frozen fields the freeze replaces: the same bytes).
install(FILES tests/cmake_consumer/CMakeLists.txt testdata/example/plan.json
              testdata/example/model.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/cmake COMPONENT hpfreeze)
install(FILES testdata/example/expected.json DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples/cmake
        RENAME base_meta.json COMPONENT hpfreeze)

install(FILES completions/_hpfreeze DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions
        COMPONENT hpfreeze)
install(FILES completions/hpfreeze.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d COMPONENT hpfreeze)

# The exporter as Python's packaging tools would install it (module, dist-info, command),
# without running them, so neither the build nor the .deb needs Python.
set(hpfreeze_python_build ${PROJECT_BINARY_DIR}/python)
set(hpfreeze_dist_info hpfreeze_export-${PROJECT_VERSION}.dist-info)
configure_file(cmake/python/METADATA.in ${hpfreeze_python_build}/${hpfreeze_dist_info}/METADATA
               @ONLY)
file(RELATIVE_PATH HPFREEZE_EXPORT_MODULE_DIR /prefix/${CMAKE_INSTALL_BINDIR}
     /prefix/${HPFREEZE_INSTALL_PYTHONDIR})
configure_file(cmake/python/hpfreeze-export.in ${hpfreeze_python_build}/hpfreeze-export @ONLY)
install(FILES python/hpfreeze_export.py DESTINATION ${HPFREEZE_INSTALL_PYTHONDIR}
        COMPONENT exporter)
install(FILES ${hpfreeze_python_build}/${hpfreeze_dist_info}/METADATA
              cmake/python/entry_points.txt cmake/python/top_level.txt
        DESTINATION ${HPFREEZE_INSTALL_PYTHONDIR}/${hpfreeze_dist_info} COMPONENT exporter)
install(PROGRAMS ${hpfreeze_python_build}/hpfreeze-export DESTINATION ${CMAKE_INSTALL_BINDIR}
        COMPONENT exporter)
configure_file(docs/man/hpfreeze-export.1.in ${PROJECT_BINARY_DIR}/man/hpfreeze-export.1 @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/man/hpfreeze-export.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        COMPONENT exporter)

# The CMake package (hpfreezeConfig.cmake) goes under share/: it holds an executable only,
# which runs on the build host whatever the consumer's target architecture.
configure_package_config_file(cmake/hpfreezeConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/cmake/hpfreezeConfig.cmake
                              INSTALL_DESTINATION ${HPFREEZE_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/hpfreezeConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/cmake/hpfreezeConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/hpfreezeConfigVersion.cmake
        DESTINATION ${HPFREEZE_INSTALL_CMAKEDIR} COMPONENT hpfreeze)

# The man pages name the installed files as the .deb has them (/usr/...); for any other
# prefix this rewrites them to say where they are.
configure_file(cmake/hpfreezeManPrefix.cmake.in ${PROJECT_BINARY_DIR}/cmake/hpfreezeManPrefix.cmake
               @ONLY)
install(SCRIPT ${PROJECT_BINARY_DIR}/cmake/hpfreezeManPrefix.cmake)
