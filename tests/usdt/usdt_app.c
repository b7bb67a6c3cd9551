/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A program with run-time USDT probes (libsonde-usdt) for tests/usdt/check.py.
 *
 * Provider PREFIX (default sonde_c) has a probe per argument type, fired
 * with known values once a tracer is attached; PREFIX_ctl:done is fired
 * last, for the tracer to exit on. Probe j (in the table's order) fires
 * ROUNDS + j times; round i passes the values of values_for() (check.py
 * computes the same ones).
 *
 * Protocol on stdout, one line each:
 *   disabled ok        no probe was enabled and the guarded work never ran
 *   ready PID          waiting (up to 30 s) for every probe to be enabled
 *   fired N            all firings done, N of them guarded work
 *   detached ok        every probe disabled again once the tracer left
 *   unloaded ok        after unload, no /memfd:sonde-usdt mapping is left
 * Any failure prints "error: ..." and exits 2.
 *
 * Usage: usdt_app [ROUNDS [PREFIX]]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sonde/usdt.h>

enum { I8, I16, I32, I64, PTRSTR, SIX, LAZY, NONE, PROBE_COUNT };

static struct sonde_usdt_probe *probes[PROBE_COUNT];
static struct sonde_usdt_probe *done;
static int guarded_work;

static void die(const char *what, const struct sonde_usdt_provider *provider)
{
	printf("error: %s: %s\n", what, provider ? sonde_usdt_provider_error(provider) : "");
	exit(2);
}

static void pause_ms(long ms)
{
	struct timespec pause = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&pause, NULL);
}

/* Waits until every probe (and done) is enabled, or none is. */
static int wait_all(bool enabled)
{
	for (int tries = 0; tries < 3000; tries++) {
		bool all = sonde_usdt_probe_enabled(done) == enabled;
		for (int j = 0; j < PROBE_COUNT; j++)
			all = all && sonde_usdt_probe_enabled(probes[j]) == enabled;
		if (all)
			return 0;
		pause_ms(10);
	}
	return -1;
}

/* The only way LAZY's arguments are computed: check.py counts the calls. */
static void fire_lazy(int i)
{
	char label[32];

	if (!sonde_usdt_probe_enabled(probes[LAZY]))
		return;
	guarded_work++;
	snprintf(label, sizeof(label), "lazy-%d", i);
	sonde_usdt_fire(probes[LAZY], (int64_t)i * 1000, label);
}

static void fire_round(int j, int i)
{
	char text[32];

	switch (j) {
	case I8:
		sonde_usdt_fire(probes[j], (int8_t)(-128 + i), (uint8_t)(255 - i));
		break;
	case I16:
		sonde_usdt_fire(probes[j], (int16_t)(-32768 + i), (uint16_t)(65535 - i));
		break;
	case I32:
		sonde_usdt_fire(probes[j], (int32_t)(INT32_MIN + i), (uint32_t)(UINT32_MAX - i));
		break;
	case I64:
		sonde_usdt_fire(probes[j], (int64_t)(INT64_MIN + i), (uint64_t)(UINT64_MAX - i));
		break;
	case PTRSTR:
		snprintf(text, sizeof(text), "str-%d", i);
		sonde_usdt_fire(probes[j], (const void *)(uintptr_t)(0xdeadbeef00 + i), text);
		break;
	case SIX:
		snprintf(text, sizeof(text), "six-%d", i);
		sonde_usdt_fire(probes[j], (int8_t)(-1 - i), (uint16_t)(60000 + i),
				(int32_t)(-100000 - i), (uint64_t)((1ULL << 40) + i), text,
				(const void *)(uintptr_t)(0x1000 + i));
		break;
	case LAZY:
		fire_lazy(i);
		break;
	case NONE:
		sonde_usdt_fire(probes[j]);
		break;
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	const char *prefix = argc > 2 ? argv[2] : "sonde_c";
	char control_name[64], maps_line[512];
	struct sonde_usdt_provider *provider = sonde_usdt_provider_new(prefix);
	struct sonde_usdt_provider *control;

	snprintf(control_name, sizeof(control_name), "%s_ctl", prefix);
	control = sonde_usdt_provider_new(control_name);
	if (!provider || !control)
		die("provider_new", NULL);
	probes[I8] = sonde_usdt_probe_add(provider, "i8", SONDE_USDT_INT8, SONDE_USDT_UINT8);
	probes[I16] = sonde_usdt_probe_add(provider, "i16", SONDE_USDT_INT16, SONDE_USDT_UINT16);
	probes[I32] = sonde_usdt_probe_add(provider, "i32", SONDE_USDT_INT32, SONDE_USDT_UINT32);
	probes[I64] = sonde_usdt_probe_add(provider, "i64", SONDE_USDT_INT64, SONDE_USDT_UINT64);
	probes[PTRSTR] = sonde_usdt_probe_add(provider, "ptrstr", SONDE_USDT_POINTER,
					      SONDE_USDT_STRING);
	probes[SIX] = sonde_usdt_probe_add(provider, "six", SONDE_USDT_INT8, SONDE_USDT_UINT16,
					   SONDE_USDT_INT32, SONDE_USDT_UINT64, SONDE_USDT_STRING,
					   SONDE_USDT_POINTER);
	probes[LAZY] = sonde_usdt_probe_add(provider, "lazy", SONDE_USDT_INT64, SONDE_USDT_STRING);
	probes[NONE] = sonde_usdt_probe_add(provider, "none");
	done = sonde_usdt_probe_add(control, "done");
	for (int j = 0; j < PROBE_COUNT; j++)
		if (!probes[j])
			die("probe_add", provider);
	if (!done)
		die("probe_add", control);
	if (sonde_usdt_provider_load(provider) < 0)
		die("load", provider);
	if (sonde_usdt_provider_load(control) < 0)
		die("load", control);

	for (int j = 0; j < PROBE_COUNT; j++) {
		if (sonde_usdt_probe_enabled(probes[j]))
			die("enabled without a tracer", NULL);
		fire_round(j, 0);
	}
	if (guarded_work)
		die("guarded work ran without a tracer", NULL);
	printf("disabled ok\nready %d\n", (int)getpid());
	fflush(stdout);

	if (wait_all(true) < 0)
		die("the probes were never all enabled", NULL);
	for (int j = 0; j < PROBE_COUNT; j++)
		for (int i = 0; i < rounds + j; i++)
			fire_round(j, i);
	sonde_usdt_fire(done);
	printf("fired %d\n", guarded_work);
	fflush(stdout);

	if (wait_all(false) < 0)
		die("the probes stayed enabled after the tracer left", NULL);
	int before = guarded_work;
	fire_round(LAZY, 0);
	if (guarded_work != before)
		die("guarded work ran after the tracer left", NULL);
	printf("detached ok\n");

	sonde_usdt_provider_free(provider);
	sonde_usdt_provider_free(control);
	FILE *maps = fopen("/proc/self/maps", "r");
	if (!maps)
		die("cannot read /proc/self/maps", NULL);
	while (fgets(maps_line, sizeof(maps_line), maps))
		if (strstr(maps_line, "/memfd:sonde-usdt"))
			die("a mapping is left after unload", NULL);
	fclose(maps);
	printf("unloaded ok\n");
	return 0;
}
