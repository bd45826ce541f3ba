# CPack runs this on the staged tree before it makes the .deb (CPACK_PRE_BUILD_SCRIPTS):
# what Debian policy asks of a binary package beyond `cmake --install`. The binary is
# stripped as dh_strip strips (symbols, .comment and .note); man pages and the
# changelog are gzipped (gzip -9n: no name or time stamp, so the bytes are reproducible),
# and the licence text stays out of the doc directory, whose copyright file names it
# (/usr/share/common-licenses/Apache-2.0).
set(root "${CPACK_TEMPORARY_INSTALL_DIRECTORY}${CPACK_PACKAGING_INSTALL_PREFIX}")
set(docdir "${root}/${CPACK_HPFREEZE_DOCDIR}")
execute_process(COMMAND "${CPACK_HPFREEZE_STRIP}" --remove-section=.comment
                        --remove-section=.note --strip-unneeded "${root}/bin/hpfreeze"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "prebuild.cmake: ${CPACK_HPFREEZE_STRIP} ${root}/bin/hpfreeze failed (${rc})")
endif()
find_program(gzip gzip REQUIRED)
file(GLOB pages "${root}/${CPACK_HPFREEZE_MANDIR}/man1/*.1")
foreach(file IN LISTS pages ITEMS "${docdir}/changelog")
  execute_process(COMMAND "${gzip}" -9nf "${file}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "prebuild.cmake: gzip ${file} failed (${rc})")
  endif()
endforeach()
file(REMOVE "${docdir}/LICENSE")
