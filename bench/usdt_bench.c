/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cost of firing a USDT probe defined at run time with libsonde-usdt,
 * against the same probe compiled in with <sys/sdt.h> (a semaphore-guarded
 * STAP_PROBE2), for bench/run.py's usdt group.
 *
 *   usdt_bench lib|sdt disabled N   N firings with no tracer attached
 *   usdt_bench lib|sdt enabled N    prints "ready PID", waits until a tracer
 *                                   has enabled PROVIDER:hit and PROVIDER:done,
 *                                   times N firings of hit, then fires done
 *
 * The providers are bench_lib (run time) and bench_sdt (compiled in); both
 * have hit(int64, string) and done(). Prints "ns N.NNN" per firing.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>

#include <sonde/usdt.h>

__extension__ unsigned short bench_sdt_hit_semaphore __attribute__((section(".probes")));
__extension__ unsigned short bench_sdt_done_semaphore __attribute__((section(".probes")));

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void pause_ms(int ms)
{
	struct timespec pause = { 0, ms * 1000000L };
	nanosleep(&pause, NULL);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: usdt_bench lib|sdt disabled|enabled N\n");
		return 2;
	}
	int library = strcmp(argv[1], "lib") == 0, enabled = strcmp(argv[2], "enabled") == 0;
	long n = atol(argv[3]);
	const char *label = "request";
	struct sonde_usdt_provider *provider = sonde_usdt_provider_new("bench_lib");
	struct sonde_usdt_probe *hit = sonde_usdt_probe_add(provider, "hit", SONDE_USDT_INT64,
							    SONDE_USDT_STRING);
	struct sonde_usdt_probe *done = sonde_usdt_probe_add(provider, "done");

	if (!hit || !done || sonde_usdt_provider_load(provider) < 0) {
		fprintf(stderr, "usdt_bench: %s\n", sonde_usdt_provider_error(provider));
		return 1;
	}
	if (enabled) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (int tries = 0;; tries++) {
			int on = library ? sonde_usdt_probe_enabled(hit) && sonde_usdt_probe_enabled(done)
					 : bench_sdt_hit_semaphore && bench_sdt_done_semaphore;
			if (on)
				break;
			if (tries > 6000) {
				fprintf(stderr, "usdt_bench: never enabled\n");
				return 1;
			}
			pause_ms(10);
		}
	}
	double start = now_ns();
	if (library) {
		for (long i = 0; i < n; i++)
			sonde_usdt_fire(hit, (int64_t)i, label);
	} else {
		for (long i = 0; i < n; i++) {
			if (__builtin_expect(bench_sdt_hit_semaphore, 0))
				STAP_PROBE2(bench_sdt, hit, i, label);
			__asm__ volatile("" ::: "memory");
		}
	}
	double elapsed = now_ns() - start;
	if (library)
		sonde_usdt_fire(done);
	else if (bench_sdt_done_semaphore)
		STAP_PROBE(bench_sdt, done);
	printf("ns %.3f\n", elapsed / (double)n);
	sonde_usdt_provider_free(provider);
	return 0;
}
