# Writes the man pages of hpfreeze into OUTPUT_DIR: hpfreeze.1 and one hpfreeze-COMMAND.1
# per subcommand. Their text is the binary's own --help output (so pages cannot drift from
# the flags) plus the extra sections of INCLUDE_DIR/<page>.h2m when that file exists.
#
#   cmake -DBINARY=path/to/hpfreeze -DOUTPUT_DIR=dir -DINCLUDE_DIR=docs/man
#         [-DHELP2MAN=path/to/help2man] -P manpages.cmake
#
# With help2man (Debian package help2man) the options become proper man-page lists; without
# it a plain page keeps the --help text verbatim. help2man dates the page from
# SOURCE_DATE_EPOCH when that is set (reproducible builds).

foreach(var BINARY OUTPUT_DIR INCLUDE_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "manpages.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run_binary out)
  execute_process(COMMAND ${BINARY} ${ARGN} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "manpages.cmake: '${BINARY} ${ARGN}' failed (${rc})")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

run_binary(main_help --help)
run_binary(version_text --version)
string(REGEX REPLACE "^[^ ]+ ([^\n]*).*$" "\\1" version "${version_text}")

# Subcommand names and descriptions, in --help order. The text is searched as a whole
# string: help text holds ';' and '[', which CMake lists would mangle.
string(FIND "${main_help}" "\nSubcommands:\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "manpages.cmake: no 'Subcommands:' section in '${BINARY} --help'")
endif()
string(SUBSTRING "${main_help}" ${at} -1 subcommand_text)
string(REGEX MATCHALL "\n  [a-z][a-z0-9_-]*  " subcommands "${subcommand_text}")
list(TRANSFORM subcommands STRIP)
string(REGEX REPLACE "^[^:]*: ([^\n]*).*$" "\\1" main_description "${main_help}")

file(REMOVE_RECURSE ${OUTPUT_DIR})
file(MAKE_DIRECTORY ${OUTPUT_DIR})

# Roff-escapes text shown verbatim: backslashes, and control characters at line starts.
function(roff_verbatim out text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Writes OUTPUT_DIR/<page>.1. `include` is help2man include text; `help_option` is what
# follows the binary to print this page's --help.
function(write_page page description include help_option)
  set(include_file ${OUTPUT_DIR}/${page}.h2m)
  file(WRITE ${include_file} "${include}")
  if(HELP2MAN)
    execute_process(
      COMMAND ${HELP2MAN} --no-info "--name=${description}" "--help-option=${help_option}"
              "--version-string=${page} ${version}" --include=${include_file}
              --output=${OUTPUT_DIR}/${page}.1 ${BINARY}
      RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "manpages.cmake: help2man failed for ${page} (${rc})")
    endif()
  else()
    separate_arguments(help_args UNIX_COMMAND "${help_option}")
    run_binary(help ${help_args})
    roff_verbatim(help "${help}")
    string(TOUPPER "${page}" title)
    # Include text: drop the preamble, turn each [section] heading into .SH.
    string(FIND "${include}" "\n[" first)
    if(first EQUAL -1)
      set(sections "")
    else()
      string(SUBSTRING "${include}" ${first} -1 sections)
      string(REGEX REPLACE "\n\\[[<>=]?([^]\n]+)\\][^\n]*" "\n.SH \\1" sections "${sections}")
      # The --help text above already opened DESCRIPTION.
      string(REPLACE "\n.SH DESCRIPTION\n" "\n" sections "${sections}")
    endif()
    string(REPLACE "-" "\\-" name_page "${page}")
    file(WRITE ${OUTPUT_DIR}/${page}.1
         ".TH ${title} 1 \"\" \"${page} ${version}\" \"User Commands\"\n"
         ".SH NAME\n${name_page} \\- ${description}\n"
         ".SH DESCRIPTION\n.nf\n${help}.fi\n${sections}\n")
  endif()
  file(REMOVE ${include_file})
endfunction()

function(read_include out page)
  set(text "")
  if(EXISTS ${INCLUDE_DIR}/${page}.h2m)
    file(READ ${INCLUDE_DIR}/${page}.h2m text)
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# hpfreeze.1: every subcommand page under SEE ALSO.
set(see_also "")
foreach(name IN LISTS subcommands)
  string(APPEND see_also ".BR hpfreeze\\-${name} (1),\n")
endforeach()
read_include(include hpfreeze)
write_page(hpfreeze "${main_description}"
           "${include}\n[SEE ALSO]\n${see_also}.BR make (1),\n.BR ninja (1)\n" --help)

foreach(name IN LISTS subcommands)
  string(REGEX MATCH "\n  ${name}  +([^\n]*)" line "${subcommand_text}")
  set(description "${CMAKE_MATCH_1}")
  # A NAME line starts in lower case ("freeze a plan ...").
  string(SUBSTRING "${description}" 0 1 first)
  string(SUBSTRING "${description}" 1 -1 rest)
  string(TOLOWER "${first}" first)
  read_include(include hpfreeze-${name})
  write_page(hpfreeze-${name} "${first}${rest}" "${include}\n[SEE ALSO]\n.BR hpfreeze (1)\n"
             "${name} --help")
endforeach()
