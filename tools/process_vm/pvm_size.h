/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvm_size.h - the size arguments of the process_vm tools: a number (C
 * syntax, as strtoull() reads it) with an optional K or M suffix for KiB
 * or MiB and nothing after it.  Each tool checks its own bounds.
 */
#ifndef PVM_SIZE_H
#define PVM_SIZE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

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

#endif /* PVM_SIZE_H */
