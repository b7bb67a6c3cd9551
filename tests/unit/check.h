/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The frame the kernel-facing unit tests share: a test is a function
 * returning true, or false after EXPECT() wrote why; run() prints PASS or
 * FAIL with the reason and counts them for the closing line.
 */
#ifndef SONDE_TEST_CHECK_H
#define SONDE_TEST_CHECK_H

#include <stdbool.h>
#include <stdio.h>

static int passed, failed;
static char why[512];

#define EXPECT(cond, ...)                                          \
	do {                                                       \
		if (!(cond)) {                                     \
			snprintf(why, sizeof(why), __VA_ARGS__);   \
			return false;                              \
		}                                                  \
	} while (0)

static void run(const char *name, bool (*test)(void))
{
	why[0] = '\0';
	if (test()) {
		printf("PASS %s\n", name);
		passed++;
	} else {
		printf("FAIL %s: %s\n", name, why);
		failed++;
	}
	fflush(stdout);
}

#endif
