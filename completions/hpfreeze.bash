# bash completion for hpfreeze.                                  -*- shell-script -*-
#
# Subcommands and flags are read from `hpfreeze --help` and `hpfreeze COMMAND --help`
# (once per shell session), so completion follows the binary it completes. Installed as
# share/bash-completion/completions/hpfreeze; or source it from ~/.bashrc.

declare -gA _hpfreeze_help_cache

# Prints the --help text of the binary ($1), for subcommand $2 when given.
_hpfreeze_help() {
    local key="$1 $2"
    if [[ -z ${_hpfreeze_help_cache[$key]+set} ]]; then
        _hpfreeze_help_cache[$key]=$(NO_COLOR=1 "$1" $2 --help 2>/dev/null)
    fi
    printf '%s\n' "${_hpfreeze_help_cache[$key]}"
}

# Prints the entries of one --help section ($3: "Subcommands", "Options", "Positionals"):
# each name of the entry, followed by " 1" when it takes a value and " 0" when not.
_hpfreeze_section() {
    local line in_section=0 spec names name rest
    while IFS= read -r line; do
        if [[ $line == "$3:" ]]; then
            in_section=1
        elif [[ $line != " "* ]]; then
            in_section=0
        elif ((in_section)) && [[ $line =~ ^\ \ ([^ ]+)(\ ([^ ]+))? ]]; then
            spec=${BASH_REMATCH[1]}
            rest=${BASH_REMATCH[3]}
            IFS=, read -ra names <<<"$spec"
            for name in "${names[@]}"; do
                # CLI11 writes a value's type in capitals after the flag: "--plan TEXT".
                if [[ $rest =~ ^[A-Z] ]]; then echo "$name 1"; else echo "$name 0"; fi
            done
        fi
    done < <(_hpfreeze_help "$1" "$2")
}

_hpfreeze_words() {
    local name takes
    while read -r name takes; do printf '%s\n' "$name"; done < <(_hpfreeze_section "$@")
}

_hpfreeze_takes_value() {  # $1 binary, $2 subcommand, $3 option
    local name takes
    while read -r name takes; do
        [[ $name == "$3" ]] && return $((1 - takes))
    done < <(_hpfreeze_section "$1" "$2" Options)
    return 1
}

_hpfreeze_files() {
    local IFS=$'\n'
    COMPREPLY=($(compgen -f -- "$1"))
    compopt -o filenames 2>/dev/null
    return 0
}

_hpfreeze() {
    local cur=${COMP_WORDS[COMP_CWORD]}
    local prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    local bin=${COMP_WORDS[0]}
    [[ $bin == */* && -x $bin ]] || bin=hpfreeze
    COMPREPLY=()

    local subcommands sub="" word i
    subcommands=$(_hpfreeze_words "$bin" "" Subcommands)
    for ((i = 1; i < COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        if [[ $'\n'$subcommands$'\n' == *$'\n'$word$'\n'* ]]; then
            sub=$word
            break
        fi
    done

    if [[ -z $sub ]]; then
        COMPREPLY=($(compgen -W "$subcommands $(_hpfreeze_words "$bin" "" Options)" -- "$cur"))
        return 0
    fi

    # "--plan FILE", "--plan=FILE" (COMP_WORDBREAKS splits at '=').
    if [[ $cur == "=" ]] && _hpfreeze_takes_value "$bin" "$sub" "$prev"; then
        _hpfreeze_files ""
        return 0
    fi
    if [[ $prev == "=" ]] && ((COMP_CWORD > 1)) &&
        _hpfreeze_takes_value "$bin" "$sub" "${COMP_WORDS[COMP_CWORD - 2]}"; then
        _hpfreeze_files "$cur"
        return 0
    fi
    if [[ $prev == -* ]] && _hpfreeze_takes_value "$bin" "$sub" "$prev"; then
        _hpfreeze_files "$cur"
        return 0
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_hpfreeze_words "$bin" "$sub" Options)" -- "$cur"))
        return 0
    fi
    # Positional arguments are files, except placement strings for `parse`.
    if [[ $sub != parse ]] && [[ -n $(_hpfreeze_words "$bin" "$sub" Positionals) ]]; then
        _hpfreeze_files "$cur"
    fi
    return 0
}

complete -F _hpfreeze hpfreeze
