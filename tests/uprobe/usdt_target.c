/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A program with USDT probes for usdt tests (needs <sys/sdt.h>, Debian
 * package systemtap-sdt-dev).
 *
 *   sonde_test:loop     (i, i * 1000000000000) every iteration, no semaphore
 *   sonde_test:guarded  (i, "guarded-I") only while the semaphore is raised,
 *                        i.e. while a tracer is attached to it
 *   sonde_test:constant (42, global counter) — a constant and a global,
 *                        which gcc writes as $42 and counter(%rip)
 *   sonde_test:negative (-i - 1 as a signed char, short, int)
 *
 * Usage: usdt_target [ITERATIONS] (default 5; each iteration sleeps 100 ms).
 * At exit it prints how many times the guarded probe's work ran.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
#include <time.h>

/* usdt_guarded.c: the probe with a semaphore (sys/sdt.h gives semaphores
 * to every probe of a file compiled with _SDT_HAS_SEMAPHORES, so it lives
 * in a file of its own). Returns 1 when the guarded work ran. */
int guarded_probe(int i);

long counter = 7;

int main(int argc, char **argv)
{
	int iterations = argc > 1 ? atoi(argv[1]) : 5;
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	int guarded_runs = 0;

	for (int i = 0; i < iterations; i++) {
		long big = (long)i * 1000000000000L;
		signed char small = (signed char)(-i - 1);
		short medium = (short)(-i - 1);
		int whole = -i - 1;

		STAP_PROBE2(sonde_test, loop, i, big);
		guarded_runs += guarded_probe(i);
		STAP_PROBE2(sonde_test, constant, 42, counter);
		STAP_PROBE3(sonde_test, negative, small, medium, whole);
		counter++;
		nanosleep(&pause, NULL);
	}
	printf("guarded ran %d times\n", guarded_runs);
	return 0;
}
