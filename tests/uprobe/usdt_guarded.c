/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The semaphore-guarded USDT probe of usdt_target (see usdt_target.c).
 *
 * With _SDT_HAS_SEMAPHORES, sys/sdt.h records the address of
 * PROVIDER_NAME_semaphore in the probe's note. The program declares the
 * counter itself, in the ".probes" section as the systemtap convention
 * has it; a tracer that attaches with a reference-counter offset makes
 * the kernel raise it, and only then is the argument work done.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <sys/sdt.h>

__extension__ unsigned short sonde_test_guarded_semaphore
	__attribute__((unused)) __attribute__((section(".probes")));

#define GUARDED_ENABLED() __builtin_expect(sonde_test_guarded_semaphore, 0)

int guarded_probe(int i);

/* The label is built on the stack (a string literal's page may not be
 * faulted in yet, and probes cannot fault pages in: str() would be empty). */
int guarded_probe(int i)
{
	char label[32];

	if (!GUARDED_ENABLED())
		return 0;
	snprintf(label, sizeof(label), "guarded-%d", i);
	STAP_PROBE2(sonde_test, guarded, i, label);
	return 1;
}
