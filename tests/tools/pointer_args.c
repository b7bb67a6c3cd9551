/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Passes arrays of known values to one function, for uprobe tests of
 * pointer arithmetic and of several probes on one function (issue 10).
 * pointer_args(wide, narrow, times, count) gets
 *   wide   = { 11, 22, 33, 44 }                    (uint64_t)
 *   narrow = { 101, 202, 303, 404 }                (uint32_t)
 *   times  = { {1, 111}, {2, 222}, {3, 333} }     (struct timespec: 16 bytes)
 * and returns wide[count - 1]. Run with N (default 1), it calls it N times
 * with count = 1, 2, ..., N (at most 4). For uaddr(): the global
 * pointer_args_calls (2 bytes) equals count during each call, and
 * pointer_args_known (8 bytes) holds -1234567.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) uint64_t pointer_args(const uint64_t *wide, const uint32_t *narrow,
						const struct timespec *times, int count);

volatile uint16_t pointer_args_calls;
volatile int64_t pointer_args_known = -1234567;

__attribute__((noinline)) uint64_t pointer_args(const uint64_t *wide, const uint32_t *narrow,
						const struct timespec *times, int count)
{
	__asm__ volatile("" : : "r"(wide), "r"(narrow), "r"(times) : "memory");
	return wide[count - 1];
}

int main(int argc, char **argv)
{
	/* on the stack, so the pages are present when the uprobe reads them
	 * (a BPF program cannot fault pages in) */
	uint64_t wide[] = { 11, 22, 33, 44 };
	uint32_t narrow[] = { 101, 202, 303, 404 };
	struct timespec times[] = { { 1, 111 }, { 2, 222 }, { 3, 333 } };
	int calls = argc > 1 ? atoi(argv[1]) : 1;
	uint64_t total = 0;

	for (int i = 1; i <= calls && i <= 4; i++) {
		pointer_args_calls = (uint16_t)i;
		total += pointer_args(wide, narrow, times, i);
	}
	return total == 0 || pointer_args_known != -1234567;
}
