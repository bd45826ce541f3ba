# Writes the man pages of hpfreeze into OUTPUT_DIR: hpfreeze.1 and one hpfreeze-COMMAND.1
# per subcommand, each with NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, EXAMPLES and
# SEE ALSO. Their text is the binary's own --help output (so pages cannot drift from the
# flags; its "Exit status:" and "Examples:" parts become those sections) plus the extra
# sections of INCLUDE_DIR/<page>.h2m when that file exists.
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

# The part of `text` from the line `start` (excluded) to the first line of `stops` that
# follows (excluded), or to the end. Empty when `start` is absent.
function(text_block out text start)
  set(block "")
  string(FIND "${text}" "${start}" at)
  if(NOT at EQUAL -1)
    string(LENGTH "${start}" length)
    math(EXPR at "${at} + ${length}")
    string(SUBSTRING "${text}" ${at} -1 block)
    foreach(stop IN LISTS ARGN)
      string(FIND "${block}" "${stop}" end)
      if(NOT end EQUAL -1)
        string(SUBSTRING "${block}" 0 ${end} block)
      endif()
    endforeach()
  endif()
  set(${out} "${block}" PARENT_SCOPE)
endfunction()

# The roff of section `name` of help2man include text (`[name]`, `[<name]`, `[>name]` or
# `[=name]`), up to the next section.
function(include_section out include name)
  set(body "")
  foreach(mark "" "<" ">" "=")
    text_block(part "\n${include}" "\n[${mark}${name}]\n" "\n[")
    string(APPEND body "${part}")
  endforeach()
  set(${out} "${body}" PARENT_SCOPE)
endfunction()

# help2man reads "Exit status:" in --help as a sub-heading of OPTIONS and the positionals as
# one of DESCRIPTION: make the first a section of its own and move the second to OPTIONS.
function(tidy_page file)
  file(READ ${file} page)
  string(REPLACE ".SS \"Exit status:\"\n" ".SH \"EXIT STATUS\"\n" page "${page}")
  text_block(positionals "${page}" ".SS \"Positionals:\"\n" "\n.SH " "\n.PP")
  if(NOT positionals STREQUAL "")
    string(REPLACE ".SS \"Positionals:\"\n${positionals}\n" "" page "${page}")
    string(REPLACE ".SH OPTIONS\n" ".SH OPTIONS\n${positionals}\n" page "${page}")
  endif()
  file(WRITE ${file} "${page}")
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
    tidy_page(${OUTPUT_DIR}/${page}.1)
  else()
    # The same sections from the --help text, shown verbatim.
    separate_arguments(help_args UNIX_COMMAND "${help_option}")
    run_binary(help ${help_args})
    roff_verbatim(help "${help}")
    string(REGEX MATCH "\nUsage: ([^\n]*)" usage "${help}")
    set(usage "${CMAKE_MATCH_1}")
    text_block(options "${help}" "\n\n" "\nExit status:\n")
    text_block(exit_status "${help}" "\nExit status:\n" "\n\n")
    text_block(examples "${help}" "\nExamples:\n" "\n\n")
    string(REGEX REPLACE "^([^\n]*)\n.*$" "\\1" summary "${help}")
    foreach(section DESCRIPTION SYNOPSIS ENVIRONMENT FILES EXAMPLES "SEE ALSO")
      string(REPLACE " " "_" var "${section}")
      include_section(extra_${var} "${include}" "${section}")
    endforeach()
    if(NOT extra_SYNOPSIS STREQUAL "")
      set(usage "${extra_SYNOPSIS}")
    endif()
    string(TOUPPER "${page}" title)
    string(REPLACE "-" "\\-" name_page "${page}")
    set(text ".TH ${title} 1 \"\" \"${page} ${version}\" \"User Commands\"\n")
    string(APPEND text ".SH NAME\n${name_page} \\- ${description}\n"
           ".SH SYNOPSIS\n${usage}\n" ".SH DESCRIPTION\n${summary}\n${extra_DESCRIPTION}\n"
           ".SH OPTIONS\n.nf\n${options}\n.fi\n" ".SH \"EXIT STATUS\"\n.nf\n${exit_status}\n.fi\n")
    if(NOT extra_ENVIRONMENT STREQUAL "")
      string(APPEND text ".SH ENVIRONMENT\n${extra_ENVIRONMENT}\n")
    endif()
    if(NOT extra_FILES STREQUAL "")
      string(APPEND text ".SH FILES\n${extra_FILES}\n")
    endif()
    string(APPEND text ".SH EXAMPLES\n.nf\n${examples}\n.fi\n${extra_EXAMPLES}\n"
           ".SH \"SEE ALSO\"\n${extra_SEE_ALSO}\n")
    file(WRITE ${OUTPUT_DIR}/${page}.1 "${text}")
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
