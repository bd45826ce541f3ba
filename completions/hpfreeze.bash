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
# each name of the entry, followed by the placeholder of its value ("FILE", "N", ...) or
# "-" when it takes none.
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
                # A value's placeholder follows the flag in capitals: "--plan FILE",
                # "--mesh AXIS=N[,AXIS=N...]", "--top N".
                if [[ $rest =~ ^[A-Z] && $rest != REQUIRED ]]; then
                    echo "$name $rest"
                else
                    echo "$name -"
                fi
            done
        fi
    done < <(_hpfreeze_help "$1" "$2")
}

_hpfreeze_words() {
    local name value
    while read -r name value; do printf '%s\n' "$name"; done < <(_hpfreeze_section "$@")
}

# Prints the placeholder of option $3 of subcommand $2 ("-" when it takes no value); fails
# when there is no such option.
_hpfreeze_value_of() {  # $1 binary, $2 subcommand, $3 option
    local name value
    while read -r name value; do
        if [[ $name == "$3" ]]; then
            printf '%s\n' "$value"
            return 0
        fi
    done < <(_hpfreeze_section "$1" "$2" Options)
    return 1
}

_hpfreeze_files() {
    local IFS=$'\n'
    COMPREPLY=($(compgen -f -- "$1"))
    compopt -o filenames 2>/dev/null
    return 0
}

# Completes the value of option $3 ($4: the word so far): file names after a FILE, the
# choices after NAME:{a,b} (--optimizer, --message-format), nothing for other values (a
# mesh, a count, a field name). Fails when $3 takes no value.
_hpfreeze_value() {
    local value
    value=$(_hpfreeze_value_of "$1" "$2" "$3") || return 1
    [[ $value == - ]] && return 1
    if [[ $value == FILE ]]; then
        _hpfreeze_files "$4"
    elif [[ $value =~ ^[^:]+:\{(.*)\}$ ]]; then
        COMPREPLY=($(compgen -W "${BASH_REMATCH[1]//,/ }" -- "$4"))
    fi
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

    # "--plan FILE", "--plan=FILE" (COMP_WORDBREAKS splits at '='); before the command
    # word, hpfreeze's own options (--message-format).
    if [[ $cur == "=" ]] && _hpfreeze_value "$bin" "$sub" "$prev" ""; then
        return 0
    fi
    if [[ $prev == "=" ]] && ((COMP_CWORD > 1)) &&
        _hpfreeze_value "$bin" "$sub" "${COMP_WORDS[COMP_CWORD - 2]}" "$cur"; then
        return 0
    fi
    if [[ $prev == -* ]] && _hpfreeze_value "$bin" "$sub" "$prev" "$cur"; then
        return 0
    fi

    if [[ -z $sub ]]; then
        if [[ $prev == help ]]; then
            COMPREPLY=($(compgen -W "$subcommands" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$subcommands help $(_hpfreeze_words "$bin" "" Options)" \
                -- "$cur"))
        fi
        return 0
    fi

    local flags
    flags=$(_hpfreeze_words "$bin" "$sub" Options)
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        return 0
    fi
    # Positional arguments are files, except placement strings for `parse`; a command
    # without file arguments offers its flags.
    if [[ $sub != parse ]] && [[ -n $(_hpfreeze_words "$bin" "$sub" Positionals) ]]; then
        _hpfreeze_files "$cur"
    elif [[ -z $cur ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    fi
    return 0
}

complete -F _hpfreeze hpfreeze
