/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command line of the process_vm tools, the same in each: --help
 * prints the usage on stdout and exits 0; an unknown option, a stray
 * argument or a bad value prints a message naming the argument on stderr
 * and exits PVM_EXIT_USAGE (2), before the tool does anything; a tool that
 * cannot run here exits KSFT_SKIP (4), kselftest's code.
 *
 * Numbers are C syntax, as strtol() and strtod() read them, with nothing
 * after them; sizes are whole numbers with an optional K or M suffix for
 * KiB or MiB.  Each caller gives the bounds of its argument.
 */
#ifndef PVM_ARGS_H
#define PVM_ARGS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PVM_EXIT_USAGE	2
#ifndef KSFT_SKIP
#define KSFT_SKIP	4
#endif

/* The program's name for messages: glibc's, from argv[0]. */
#define PVM_PROG	program_invocation_short_name

/*
 * Print @usage and exit: on stdout with 0 for --help (@status 0), else on
 * stderr with @status.
 */
static inline _Noreturn void pvm_usage(const char *usage, int status)
{
	fputs(usage, status ? stderr : stdout);
	exit(status);
}

/* Report that argument @name's value @s is not @what; exit 2. */
static inline _Noreturn void pvm_bad_arg(const char *name, const char *s,
					  const char *what)
{
	fprintf(stderr, "%s: %s: '%s' is not %s\n", PVM_PROG, name, s, what);
	exit(PVM_EXIT_USAGE);
}

/* Refuse argument @arg, which the tool does not take: usage, exit 2. */
static inline _Noreturn void pvm_extra_arg(const char *arg, const char *usage)
{
	fprintf(stderr, "%s: unexpected argument '%s'\n", PVM_PROG, arg);
	pvm_usage(usage, PVM_EXIT_USAGE);
}

/* After getopt: refuse what is left of the command line. */
static inline void pvm_args_done(int argc, char **argv, const char *usage)
{
	if (optind < argc)
		pvm_extra_arg(argv[optind], usage);
}

/* For a tool that takes no arguments: answer --help, refuse the rest. */
static inline void pvm_no_args(int argc, char **argv, const char *usage)
{
	if (argc < 2)
		return;
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		pvm_usage(usage, 0);
	pvm_extra_arg(argv[1], usage);
}

/* Parse @s into *@size; false if it is no size or does not fit. */
static inline bool pvm_parse_size(const char *s, size_t *size)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (*s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	if (end == s || *end || errno || v > (SIZE_MAX >> shift))
		return false;
	*size = v << shift;
	return true;
}

/* The whole number @s, the value of argument @name, in [@min, @max]. */
static inline long pvm_arg_long(const char *name, const char *s, long min,
				long max)
{
	char what[80];
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (end == s || *end || errno || v < min || v > max) {
		snprintf(what, sizeof(what), "a whole number from %ld to %ld",
			 min, max);
		pvm_bad_arg(name, s, what);
	}
	return v;
}

/* The number @s, the value of argument @name, in [@min, @max]. */
static inline double pvm_arg_double(const char *name, const char *s,
				    double min, double max)
{
	char what[80];
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* Written so that NaN fails too. */
	if (end == s || *end || errno || !(v >= min && v <= max)) {
		snprintf(what, sizeof(what), "a number from %g to %g", min,
			 max);
		pvm_bad_arg(name, s, what);
	}
	return v;
}

/* The size @s (K, M suffixes), the value of argument @name, in [@min, @max]. */
static inline size_t pvm_arg_size(const char *name, const char *s,
				  size_t min, size_t max)
{
	char what[80];
	size_t v;

	if (!pvm_parse_size(s, &v) || v < min || v > max) {
		if (max == SIZE_MAX)
			snprintf(what, sizeof(what),
				 "a size (K, M suffixes) of at least %zu", min);
		else
			snprintf(what, sizeof(what),
				 "a size (K, M suffixes) from %zu to %zu", min,
				 max);
		pvm_bad_arg(name, s, what);
	}
	return v;
}

#endif /* PVM_ARGS_H */
