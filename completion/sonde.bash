# bash completion for sonde                                  -*- shell-script -*-
#
# Installed as share/bash-completion/completions/sonde, where
# bash-completion loads it the first time `sonde` is completed; sourcing it
# by hand works too. It needs nothing from bash-completion itself.
#
# Everything it offers is asked of the sonde being completed, so it cannot
# fall behind the binary: its options and subcommands from `sonde --help`,
# the tools from `sonde tools`, a tool's options from `sonde TOOL --help`,
# the probe types from `sonde providers`, and probe names after a type
# (`tracepoint:sched:<TAB>`) from `sonde -l`, which needs root; as another
# user that part completes nothing. The answers, except -l's, are kept for
# the rest of the shell session.
#
# Probe names hold colons, which bash treats as word breaks: the words it
# split are joined again (_sonde_words), and a name offered for an unquoted
# word is cut after its last colon, since bash replaces only the text after
# the colon. Inside quotes (-e 'tracepoint:...) bash breaks at nothing and
# the whole name is offered.

# Joins the words bash split at COMP_WORDBREAKS characters, using COMP_LINE
# to see which pieces were typed with no space between them. Sets
# _sonde_word (array) and _sonde_cword (the index of the word completed).
_sonde_words()
{
	local line=$COMP_LINE i piece
	_sonde_word=()
	_sonde_cword=0
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		piece=${COMP_WORDS[i]}
		if ((i == 0)) || [[ $line =~ ^[[:space:]]+ ]]; then
			line=${line#"${BASH_REMATCH[0]}"}
			_sonde_word+=("$piece")
		else
			_sonde_word[-1]+=$piece
		fi
		line=${line#"$piece"}
		((i == COMP_CWORD)) && _sonde_cword=$((${#_sonde_word[@]} - 1))
	done
	return 0
}

# COMPREPLY from compgen's lines (names with blanks stay whole).
_sonde_reply()
{
	mapfile -t COMPREPLY < <(compgen "$@")
}

# The options a --help text lists: in each line that starts with blanks and
# a dash, the words before the description (two blanks) that start with a
# dash, without ",", "=ARG" or "[=ARG]".
_sonde_help_options()
{
	local line names word
	while IFS= read -r line; do
		[[ $line =~ ^[[:space:]]+(-.*) ]] || continue
		names=${BASH_REMATCH[1]%%  *}
		for word in $names; do
			word=${word%,}
			word=${word%%[=[]*}
			[[ $word == -* ]] && printf '%s\n' "$word"
		done
	done
}

# Asks `$1 ARGS...` once per shell session (per command, per question)
# and prints the answer; $2 names the question.
_sonde_ask()
{
	local cmd=$1 key var
	shift
	key=$(printf '%s' "$cmd $*" | cksum)
	var=_sonde_cache_${key%% *}
	if [[ -z ${!var+set} ]]; then
		printf -v "$var" '%s' "$("$cmd" "$@" 2>/dev/null)"
	fi
	printf '%s\n' "${!var}"
}

# Subcommands: the `sonde WORD` forms in the usage text (tools, providers,
# flamegraph, heatmap, ...), TOOL and options left out.
_sonde_subcommands()
{
	_sonde_ask "$1" --help | sed -n 's/^.*sonde \([a-z][a-z-]*\)\b.*$/\1/p' | sort -u
}

_sonde_tool_names()
{
	_sonde_ask "$1" tools | while read -r name _; do printf '%s\n' "$name"; done
}

# Probe specs for $2 (the word, maybe opening with a quote) of sonde $1:
# the probe types while no colon is typed, then the probes -l lists.
_sonde_probes()
{
	local cmd=$1 word=$2 spec prefix names type rest line canonical
	spec=${word#[\'\"]}
	if [[ $spec != *:* ]]; then
		# BEGIN and END are whole probes; every other type takes arguments
		while read -r type rest; do
			if [[ $type == [A-Z]* ]]; then
				names+="$type "
			else
				names+="$type: "
			fi
		done < <(_sonde_ask "$cmd" providers)
		_sonde_reply -W "$names" -- "$spec"
		[[ ${COMPREPLY[*]} == *: ]] && compopt -o nospace 2>/dev/null
		return 0
	fi
	# -l prints canonical names; what was typed may be an alias ("t:")
	type=${spec%%:*}
	COMPREPLY=()
	while IFS= read -r line; do
		canonical=${line%%:*}
		line=$type${line#"$canonical"}
		[[ $line == "$spec"* ]] && COMPREPLY+=("$line")
	done < <("$cmd" -l "$spec*" 2>/dev/null)
	if [[ $word == "$spec" && $COMP_WORDBREAKS == *:* ]]; then
		prefix=${spec%:*}:
		COMPREPLY=("${COMPREPLY[@]#"$prefix"}")
	fi
	return 0
}

# Options of a tool: $1 is how to run it (sonde TOOL, or the tool's link).
_sonde_tool_options()
{
	local cur=${_sonde_word[_sonde_cword]}
	if [[ $cur == -* ]]; then
		_sonde_reply -W "$(_sonde_ask "$@" --help | _sonde_help_options)" -- "$cur"
	else
		_sonde_reply -f -- "$cur"
	fi
}

_sonde()
{
	local cmd cur prev first
	_sonde_words
	cmd=${_sonde_word[0]}
	cur=${_sonde_word[_sonde_cword]}
	prev=
	((_sonde_cword > 0)) && prev=${_sonde_word[_sonde_cword - 1]}
	first=${_sonde_word[1]-}
	COMPREPLY=()

	# sonde TOOL ... and sonde SUBCOMMAND ...: their own options
	if ((_sonde_cword > 1)) && [[ $first != -* ]]; then
		local commands
		commands=$'\n'$(_sonde_tool_names "$cmd"; _sonde_subcommands "$cmd")$'\n'
		if [[ $commands == *$'\n'"$first"$'\n'* ]]; then
			_sonde_tool_options "$cmd" "$first"
			return 0
		fi
	fi

	case $prev in
	-e)
		_sonde_probes "$cmd" "$cur"
		return 0
		;;
	-l)
		if [[ $cur == */* ]]; then
			_sonde_reply -f -- "$cur"
		else
			_sonde_probes "$cmd" "$cur"
		fi
		return 0
		;;
	-f)
		_sonde_reply -W "text json" -- "$cur"
		return 0
		;;
	-o)
		_sonde_reply -f -- "$cur"
		return 0
		;;
	-c)
		_sonde_reply -c -- "$cur"
		return 0
		;;
	-p)
		local pids=(/proc/[0-9]*)
		_sonde_reply -W "${pids[*]#/proc/}" -- "$cur"
		return 0
		;;
	esac

	if [[ $cur == -* ]]; then
		_sonde_reply -W "$(_sonde_ask "$cmd" --help | _sonde_help_options)" -- "$cur"
	elif ((_sonde_cword == 1)); then
		# a tool, a subcommand or a program file
		mapfile -t COMPREPLY < <(compgen -W "$(_sonde_tool_names "$cmd") \
			$(_sonde_subcommands "$cmd")" -- "$cur"; compgen -f -- "$cur")
	else
		_sonde_reply -f -- "$cur"
	fi
	return 0
}

# A tool run through its link (execsnoop -> sonde): the tool's options.
_sonde_tool_link()
{
	_sonde_words
	_sonde_tool_options "${_sonde_word[0]}"
}

complete -F _sonde sonde

# The links `make install` puts beside sonde: a tool name completes as a
# tool only where that name, on PATH, is this sonde (another package's
# execsnoop keeps its own completion).
_sonde_register_links()
{
	local sonde tool
	sonde=$(type -P sonde) || return 0
	for tool in $(_sonde_tool_names "$sonde"); do
		[[ $(type -P "$tool") -ef $sonde ]] && complete -F _sonde_tool_link "$tool"
	done
	return 0
}
_sonde_register_links
