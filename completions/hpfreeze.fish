# fish completion for hpfreeze.
#
# Commands, options and their values are read from `hpfreeze --help` and
# `hpfreeze COMMAND --help` when fish first completes hpfreeze, as the bash and zsh
# completions do, so completion follows the installed binary. Installed as
# share/fish/vendor_completions.d/hpfreeze.fish; elsewhere copy it to
# ~/.config/fish/completions/.

# Prints the entries of section $argv[1] ("Subcommands", "Options", "Positionals") of
# `hpfreeze $argv[2..] --help`, one per line: SPEC, a tab, the description.
function __hpfreeze_entries
    set -l want $argv[1]
    set -l section
    set -l spec
    set -l text
    for line in (env NO_COLOR=1 hpfreeze $argv[2..-1] --help 2>/dev/null) ''
        if set -l m (string match -r -- '^([A-Z][A-Za-z ]*):$' $line)
            set section $m[2]
            continue
        end
        set -l entry (string match -r -- '^  (\S+(?: \S+)*)(?:  +(.*))?$' $line)
        set -l more (string match -r -- '^   +(\S.*)$' $line)
        if test -n "$spec"; and begin; set -q entry[1]; or not string match -q -- ' *' $line; end
            printf '%s\t%s\n' $spec $text
            set spec
        end
        if not string match -q -- ' *' $line
            set section
        else if test "$section" = "$want"; and set -q entry[1]
            set spec $entry[2]
            set text $entry[3]
        else if test -n "$spec"; and set -q more[1]
            # CLI11 puts the text on the next line when the left column is too wide.
            set text $more[2]
        end
    end
end

# Registers the options of `hpfreeze $argv[2..] --help` under the condition $argv[1]:
# file names after a FILE, the choices after NAME:{a,b}, nothing for other values.
function __hpfreeze_complete_options
    set -l condition $argv[1]
    for entry in (__hpfreeze_entries Options $argv[2..-1])
        set -l parts (string split -m 1 \t -- $entry)
        set -l words (string split ' ' -- $parts[1])
        set -l flags
        for name in (string split , -- $words[1])
            if string match -q -- '--*' $name
                set -a flags -l (string sub -s 3 -- $name)
            else
                set -a flags -s (string sub -s 2 -- $name)
            end
        end
        set -l value $words[2]
        test "$value" = REQUIRED; and set value
        if test "$value" = FILE
            set -a flags -r -F
        else if set -l choices (string match -r -- '^[^:]+:\{(.*)\}$' $value)
            set -a flags -x
            # The values bare, as bash and zsh show them: the option's description goes
            # on the option alone, registered after them (fish keeps, of two entries for
            # one option, the one registered last), not once per value.
            complete -c hpfreeze -n $condition $flags \
                -a (string join ' ' -- (string split , -- $choices[2]))
        else if test -n "$value"
            set -a flags -x
        end
        complete -c hpfreeze -n $condition $flags -d $parts[2]
    end
end

# True while the command line has no command word yet: the words so far are options or
# the value of --message-format (which __fish_use_subcommand would take for the command).
function __hpfreeze_needs_command
    set -l skip 0
    for word in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
        else if test "$word" = --message-format
            set skip 1
        else if not string match -q -- '-*' $word
            return 1
        end
    end
    return 0
end

function __hpfreeze_register
    set -l commands
    for entry in (__hpfreeze_entries Subcommands)
        set -l parts (string split -m 1 \t -- $entry)
        set -a commands $parts[1]
        complete -c hpfreeze -f -n __hpfreeze_needs_command -a $parts[1] -d $parts[2]
    end
    complete -c hpfreeze -f -n __hpfreeze_needs_command -a help -d 'Print the help of a command'
    complete -c hpfreeze -f -n '__fish_seen_subcommand_from help' -a "$commands"
    __hpfreeze_complete_options __hpfreeze_needs_command
    for command in $commands
        set -l condition "__fish_seen_subcommand_from $command"
        __hpfreeze_complete_options $condition $command
        # Positional arguments are files, except parse's placement strings.
        if test $command = parse; or test -z "$(__hpfreeze_entries Positionals $command)"
            complete -c hpfreeze -f -n $condition
        end
    end
end

__hpfreeze_register
