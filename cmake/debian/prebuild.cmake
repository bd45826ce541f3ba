# CPack runs this on the staged trees before it makes the .debs (CPACK_PRE_BUILD_SCRIPTS),
# one tree per component (<staging>/hpfreeze/usr, <staging>/exporter/usr): what Debian policy
# asks of a binary package beyond `cmake --install`. The binary is stripped as dh_strip strips
# (symbols, .comment and .note); man pages and the changelog are gzipped (gzip -9n: no name
# or time stamp, so the bytes are reproducible); the licence text stays out of the doc
# directory, whose copyright file names it (/usr/share/common-licenses/Apache-2.0); and every
# package gets /usr/share/doc/PACKAGE with the copyright file and the changelog.
set(staging "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
find_program(gzip gzip REQUIRED)

function(gzip_files)
  foreach(file IN LISTS ARGN)
    execute_process(COMMAND "${gzip}" -9nf "${file}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "prebuild.cmake: gzip ${file} failed (${rc})")
    endif()
  endforeach()
endfunction()

# The binary's package: the binary stripped, the licence text dropped, and no copy of the
# exporter (share/hpfreeze/hpfreeze_export.py is for a plain install under a prefix whose
# python3 does not read lib/python3/dist-packages; the exporter's package has the module).
set(root "${staging}/hpfreeze${CPACK_PACKAGING_INSTALL_PREFIX}")
set(docdir "${root}/${CPACK_HPFREEZE_DOCDIR}")
if(NOT EXISTS "${root}/bin/hpfreeze")
  message(FATAL_ERROR "prebuild.cmake: no ${root}/bin/hpfreeze in the staged hpfreeze package")
endif()
execute_process(COMMAND "${CPACK_HPFREEZE_STRIP}" --remove-section=.comment
                        --remove-section=.note --strip-unneeded "${root}/bin/hpfreeze"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "prebuild.cmake: ${CPACK_HPFREEZE_STRIP} ${root}/bin/hpfreeze failed (${rc})")
endif()
file(REMOVE "${docdir}/LICENSE")
file(REMOVE_RECURSE "${root}/${CPACK_HPFREEZE_DATADIR}/hpfreeze")
file(GLOB pages "${root}/${CPACK_HPFREEZE_MANDIR}/man1/*.1")
gzip_files(${pages} "${docdir}/changelog")

# The exporter's package: its man page gzipped, and a doc directory of its own (the package
# depends on hpfreeze, yet policy wants the copyright file in every package's own directory).
set(root "${staging}/exporter${CPACK_PACKAGING_INSTALL_PREFIX}")
set(docdir "${root}/share/doc/python3-hpfreeze-export")
file(GLOB pages "${root}/${CPACK_HPFREEZE_MANDIR}/man1/*.1")
file(MAKE_DIRECTORY "${docdir}")
file(COPY "${CPACK_HPFREEZE_COPYRIGHT}" "${CPACK_HPFREEZE_CHANGELOG}" DESTINATION "${docdir}"
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
gzip_files(${pages} "${docdir}/changelog")
