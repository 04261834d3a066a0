// SPDX-License-Identifier: GPL-2.0
/*
 * Stand-in for the io_uring tests when liburing is not installed: the
 * program keeps its name and reports one skip, as selftests/mm does for
 * its optional dependencies, so a run still lists every test.
 */
#include "../kselftest.h"

#ifndef PROG
#define PROG "process_vm io_uring test"
#endif

int main(void)
{
	ksft_print_header();
	ksft_set_plan(1);
	ksft_test_result_skip("%s: built without liburing (liburing-dev)\n",
			      PROG);
	ksft_finished();
}
