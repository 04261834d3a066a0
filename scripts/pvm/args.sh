# SPDX-License-Identifier: GPL-2.0
# args.sh: the command line of the scripts in scripts/pvm, sourced by each
# after it sets $usage, the same as tools/process_vm/pvm_args.h in the
# tools: --help prints $usage on stdout and exits 0 before the script
# does anything; an unknown option, a missing or stray argument or a bad
# number says which on stderr and exits 2; a script that cannot run here
# exits $KSFT_SKIP (4), kselftest's code.  POSIX sh: run-tests and
# ktap2tsv also run under busybox sh in the i386 and arm64 guests.
# shellcheck shell=sh disable=SC2034,SC2154,SC3043
# (KSFT_SKIP is for the scripts, which set $usage; dash, busybox sh and
# bash have local.)
KSFT_SKIP=4
pvm_prog=${0##*/}

# pvm_help: the usage on stdout, exit 0.
pvm_help() {
	printf '%s\n' "$usage"
	exit 0
}

# pvm_usage_error MESSAGE: MESSAGE and the usage on stderr, exit 2.
pvm_usage_error() {
	printf '%s: %s\n%s\n' "$pvm_prog" "$1" "$usage" >&2
	exit 2
}

# pvm_uint NAME VALUE [MIN [MAX]]: VALUE, the value of argument NAME, is a
# whole number (at most 9 digits) from MIN (default 0) to MAX (default
# none), or exit 2.
pvm_uint() {
	local n

	case $2 in
	''|*[!0-9]*) n=x ;;
	*) n=${2#"${2%%[!0]*}"} n=${n:-0} ;;
	esac
	if [ ${#2} -gt 9 ] || [ "$n" = x ] || [ "$n" -lt "${3:-0}" ] ||
		{ [ -n "${4:-}" ] && [ "$n" -gt "$4" ]; }; then
		if [ -n "${4:-}" ]; then
			n="from ${3:-0} to $4"
		else
			n="of at least ${3:-0}"
		fi
		pvm_usage_error "$1: '$2' is not a whole number $n"
	fi
}

# pvm_positional MIN MAX "$@": a script whose MIN to MAX arguments are all
# positional (MAX '' for no limit): answers --help, refuses options and a
# wrong count.
pvm_positional() {
	local min="$1" max="$2" a

	shift 2
	case ${1:-} in --help|-h) pvm_help ;; esac
	for a; do
		case $a in -*) pvm_usage_error "unknown option $a" ;; esac
	done
	[ $# -ge "$min" ] || pvm_usage_error "missing argument"
	if [ -n "$max" ] && [ $# -gt "$max" ]; then
		shift "$max"
		pvm_usage_error "unexpected argument $1"
	fi
}
