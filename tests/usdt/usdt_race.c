/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unloading a provider while threads fire its probe, in C, for
 * tests/usdt/check.py (built there with AddressSanitizer and run with sonde
 * attached to every crace_*:* probe, so that firings go through the site
 * and its uprobe).
 *
 * Providers crace_0 .. crace_{CYCLES-1} each have hit(int64, string). Once
 * every probe is enabled, provider by provider: THREADS threads fire it
 * (the header's macro, the function and enabled() in turn) while the main
 * thread unloads it, and keep firing a little after, when the probe must
 * be disabled. Before unload waited for them and kept the semaphore's
 * address readable, this died of SIGSEGV.
 *
 * Protocol on stdout: "ready PID", then "unloaded N"; a failure prints
 * "error: ..." and exits 2.
 *
 * Usage: usdt_race CYCLES THREADS
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <sonde/usdt.h>

#define MAX_CYCLES 100
#define MAX_THREADS 16

static struct sonde_usdt_probe *racing;
static atomic_bool stop;

static void die(const char *what)
{
	printf("error: %s\n", what);
	exit(2);
}

static void pause_us(long us)
{
	struct timespec pause = { us / 1000000, (us % 1000000) * 1000 };
	nanosleep(&pause, NULL);
}

static void *fire_until_stopped(void *unused)
{
	(void)unused;
	for (int64_t i = 0; !atomic_load(&stop); i++) {
		switch (i % 3) {
		case 0:
			sonde_usdt_fire(racing, i, "macro");
			break;
		case 1:
			(sonde_usdt_fire)(racing, i, "function");
			break;
		default:
			if (sonde_usdt_probe_enabled(racing))
				(sonde_usdt_fire)(racing, i, "checked");
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int cycles = argc > 1 ? atoi(argv[1]) : 30, thread_count = argc > 2 ? atoi(argv[2]) : 4;
	struct sonde_usdt_provider *providers[MAX_CYCLES];
	struct sonde_usdt_probe *hits[MAX_CYCLES];
	pthread_t threads[MAX_THREADS];

	if (cycles < 1 || cycles > MAX_CYCLES || thread_count < 1 || thread_count > MAX_THREADS)
		die("usage: usdt_race CYCLES(1-100) THREADS(1-16)");
	for (int n = 0; n < cycles; n++) {
		char name[32];
		snprintf(name, sizeof(name), "crace_%d", n);
		providers[n] = sonde_usdt_provider_new(name);
		hits[n] = sonde_usdt_probe_add(providers[n], "hit", SONDE_USDT_INT64,
					       SONDE_USDT_STRING);
		if (!hits[n] || sonde_usdt_provider_load(providers[n]) < 0)
			die(sonde_usdt_provider_error(providers[n]));
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int n = 0, tries = 0; n < cycles; tries++) {
		if (sonde_usdt_probe_enabled(hits[n]))
			n++;
		else if (tries > 6000)
			die("the probes were never all enabled");
		else
			pause_us(10000);
	}

	for (int n = 0; n < cycles; n++) {
		racing = hits[n];
		atomic_store(&stop, false);
		for (int t = 0; t < thread_count; t++)
			if (pthread_create(&threads[t], NULL, fire_until_stopped, NULL) != 0)
				die("pthread_create failed");
		/* let them get into the site a few times, longer in some cycles */
		pause_us(2000 + 500 * (n % 8));
		if (sonde_usdt_provider_unload(providers[n]) < 0)
			die(sonde_usdt_provider_error(providers[n]));
		pause_us(2000);
		atomic_store(&stop, true);
		for (int t = 0; t < thread_count; t++)
			pthread_join(threads[t], NULL);
		if (sonde_usdt_probe_enabled(hits[n]))
			die("a probe is still enabled after unload");
		sonde_usdt_provider_free(providers[n]);
	}
	printf("unloaded %d\n", cycles);
	return 0;
}
