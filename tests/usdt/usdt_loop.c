/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libsonde-usdt without a tracer, built with -fsanitize=address by
 * tests/usdt/check.py: the errors the API promises, NULL given to every
 * entry point (-EINVAL, false or NULL, never a crash), what a loaded
 * provider looks like in /proc/self/maps (a memfd, not a file on disk), the
 * semaphore's address still readable after unload, and 10,000 load/unload
 * cycles that must leave no mapping, no file descriptor and (LeakSanitizer,
 * at exit) no memory behind.
 *
 * Prints PASS/FAIL lines and "N passed, N failed".
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sonde/usdt.h>

static int passed, failed;

static void check(bool ok, const char *what, const char *detail)
{
	printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what, detail && !ok ? ": " : "",
	       detail && !ok ? detail : "");
	if (ok)
		passed++;
	else
		failed++;
}

/* Lines of /proc/self/maps of a sonde-usdt memfd; the first one in first. */
static int memfd_mappings(char *first, size_t size)
{
	char line[512];
	int count = 0;
	FILE *maps = fopen("/proc/self/maps", "r");

	if (!maps)
		return -1;
	while (fgets(line, sizeof(line), maps)) {
		if (!strstr(line, "/memfd:sonde-usdt"))
			continue;
		if (count++ == 0 && first)
			snprintf(first, size, "%s", line);
	}
	fclose(maps);
	return count;
}

static int open_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int count = 0;

	if (!dir)
		return -1;
	while (readdir(dir))
		count++;
	closedir(dir);
	return count;
}

static void check_errors(void)
{
	struct sonde_usdt_provider *p;
	struct sonde_usdt_probe *probe;
	const enum sonde_usdt_type seven[7] = { SONDE_USDT_INT8, SONDE_USDT_INT8, SONDE_USDT_INT8,
		SONDE_USDT_INT8, SONDE_USDT_INT8, SONDE_USDT_INT8, SONDE_USDT_INT8 };
	const enum sonde_usdt_type bad[1] = { (enum sonde_usdt_type)99 };

	errno = 0;
	check(!sonde_usdt_provider_new("bad name") && errno == EINVAL,
	      "provider name with a space is refused (EINVAL)", NULL);
	p = sonde_usdt_provider_new("errors");
	check(sonde_usdt_provider_load(p) == -ENOENT, "loading no probes is -ENOENT",
	      sonde_usdt_provider_error(p));
	check(!sonde_usdt_probe_add_types(p, "seven", seven, 7) &&
	      strstr(sonde_usdt_provider_error(p), "at most 6"),
	      "seven arguments are refused with a sentence", sonde_usdt_provider_error(p));
	check(!sonde_usdt_probe_add_types(p, "bad", bad, 1) &&
	      strstr(sonde_usdt_provider_error(p), "no valid type"),
	      "an unknown type is refused", sonde_usdt_provider_error(p));
	check(!sonde_usdt_probe_add(p, "a-b", SONDE_USDT_INT32), "probe name a-b is refused",
	      NULL);
	probe = sonde_usdt_probe_add(p, "six", SONDE_USDT_INT8, SONDE_USDT_UINT16,
				     SONDE_USDT_INT32, SONDE_USDT_UINT64, SONDE_USDT_STRING,
				     SONDE_USDT_POINTER);
	check(probe != NULL, "six arguments are accepted", sonde_usdt_provider_error(p));
	check(!sonde_usdt_probe_add(p, "six") && strstr(sonde_usdt_provider_error(p), "already"),
	      "a duplicate probe name is refused", sonde_usdt_provider_error(p));
	check(!sonde_usdt_probe_enabled(probe) && !sonde_usdt_probe_site(probe),
	      "a probe of an unloaded provider is disabled and has no site", NULL);
	sonde_usdt_fire(probe, 1, 2, 3, (uint64_t)4, "five", NULL); /* must just return */
	check(sonde_usdt_provider_unload(p) == -EINVAL, "unloading what is not loaded is -EINVAL",
	      sonde_usdt_provider_error(p));
	check(sonde_usdt_provider_load(p) == 0, "load", sonde_usdt_provider_error(p));
	check(sonde_usdt_provider_load(p) == -EALREADY, "loading twice is -EALREADY",
	      sonde_usdt_provider_error(p));
	errno = 0;
	check(!sonde_usdt_probe_add(p, "late", SONDE_USDT_INT32) && errno == EBUSY &&
	      strstr(sonde_usdt_provider_error(p), "after it was loaded"),
	      "adding a probe after load is refused (EBUSY) with a sentence",
	      sonde_usdt_provider_error(p));
	check(sonde_usdt_probe_site(probe) && !sonde_usdt_probe_enabled(probe),
	      "a loaded probe has a site and is disabled without a tracer", NULL);
	sonde_usdt_fire(probe, 1, 2, 3, (uint64_t)4, "five", NULL);

	char line[512] = "";
	int count = memfd_mappings(line, sizeof(line));
	check(count >= 2 && strstr(line, "/memfd:sonde-usdt-errors (deleted)") &&
	      strstr(line, "r-xp"), "loaded: mapped executable from a memfd, no file on disk",
	      line);
	sonde_usdt_provider_free(p);
	check(memfd_mappings(NULL, 0) == 0, "free while loaded unmaps it", NULL);
}

/* The README's first lines with add() failing: enabled() and fire() of
 * its NULL must not crash. Then NULL for every other pointer. */
static void check_null_arguments(void)
{
	struct sonde_usdt_provider *p = sonde_usdt_provider_new("nulls");
	struct sonde_usdt_probe *bad = sonde_usdt_probe_add(p, "bad name", SONDE_USDT_INT64);

	check(!bad, "a probe with a bad name is NULL", NULL);
	check(!sonde_usdt_probe_enabled(bad) && !(sonde_usdt_probe_enabled)(bad),
	      "enabled(NULL) is false (macro and function)", NULL);
	sonde_usdt_fire(bad, (int64_t)1);
	check((sonde_usdt_fire)(bad, (int64_t)1) == -EINVAL, "fire(NULL) is -EINVAL", NULL);
	check(!sonde_usdt_probe_site(NULL) && !sonde_usdt_probe_semaphore(NULL),
	      "site(NULL) and semaphore(NULL) are NULL", NULL);
	errno = 0;
	check(!sonde_usdt_provider_new(NULL) && errno == EINVAL, "provider_new(NULL) is EINVAL",
	      NULL);
	errno = 0;
	check(!sonde_usdt_probe_add(NULL, "x", SONDE_USDT_INT64) && errno == EINVAL,
	      "probe_add to a NULL provider is EINVAL", NULL);
	errno = 0;
	check(!sonde_usdt_probe_add_types(p, NULL, NULL, 0) && errno == EINVAL,
	      "a NULL probe name is EINVAL", sonde_usdt_provider_error(p));
	errno = 0;
	check(!sonde_usdt_probe_add_types(p, "x", NULL, 2) && errno == EINVAL &&
	      strstr(sonde_usdt_provider_error(p), "no argument types"),
	      "NULL types with 2 arguments are EINVAL with a sentence",
	      sonde_usdt_provider_error(p));
	errno = 0;
	check(!sonde_usdt_probe_add_types(p, "x", NULL, -1) && errno == EINVAL,
	      "a negative argument count is EINVAL", sonde_usdt_provider_error(p));
	check(sonde_usdt_provider_load(NULL) == -EINVAL && sonde_usdt_provider_unload(NULL) == -EINVAL,
	      "load(NULL) and unload(NULL) are -EINVAL", NULL);
	check(strlen(sonde_usdt_provider_error(NULL)) > 0, "error(NULL) is a sentence", NULL);
	sonde_usdt_provider_free(NULL);

	struct sonde_usdt_probe *none = sonde_usdt_probe_add_types(p, "none", NULL, 0);
	struct sonde_usdt_probe *one = sonde_usdt_probe_add(p, "one", SONDE_USDT_INT64);
	check(none && one, "no types with no arguments is a probe", sonde_usdt_provider_error(p));
	check(sonde_usdt_provider_load(p) == 0, "load", sonde_usdt_provider_error(p));
	check((sonde_usdt_fire)(one, (int64_t)1) == 0 && (sonde_usdt_fire)(none) == 0,
	      "loaded and disabled, fire is 0", NULL);
	const volatile uint16_t *semaphore = sonde_usdt_probe_semaphore(one);
	check(sonde_usdt_provider_unload(p) == 0, "unload", sonde_usdt_provider_error(p));
	/* a thread that read the address just before unload reads it after */
	check(semaphore && *semaphore == 0 && memfd_mappings(NULL, 0) == 0,
	      "after unload the semaphore's address reads 0 and no memfd is mapped", NULL);
	sonde_usdt_provider_free(p);
}

static void check_loop(int iterations)
{
	int fds_before = open_fds(), problems = 0;
	char detail[128] = "";

	for (int i = 0; i < iterations && !problems; i++) {
		char name[32];
		snprintf(name, sizeof(name), "loop%d", i % 7);
		struct sonde_usdt_provider *p = sonde_usdt_provider_new(name);
		struct sonde_usdt_probe *a = sonde_usdt_probe_add(p, "a", SONDE_USDT_INT64,
								  SONDE_USDT_STRING);
		struct sonde_usdt_probe *b = sonde_usdt_probe_add(p, "b");
		if (!a || !b || sonde_usdt_provider_load(p) < 0) {
			snprintf(detail, sizeof(detail), "iteration %d: %s", i,
				 sonde_usdt_provider_error(p));
			problems++;
		}
		sonde_usdt_fire(a, (int64_t)i, "x");
		sonde_usdt_fire(b);
		/* every other time, unload and load again before freeing loaded */
		if (i % 2 && (sonde_usdt_provider_unload(p) < 0 || sonde_usdt_provider_load(p) < 0)) {
			snprintf(detail, sizeof(detail), "iteration %d: %s", i,
				 sonde_usdt_provider_error(p));
			problems++;
		}
		if (i % 3 == 0 && sonde_usdt_provider_unload(p) < 0)
			problems++;
		sonde_usdt_provider_free(p);
	}
	check(!problems, "10,000 load/unload cycles", detail);
	snprintf(detail, sizeof(detail), "%d mappings", memfd_mappings(NULL, 0));
	check(memfd_mappings(NULL, 0) == 0, "no mapping left after the cycles", detail);
	snprintf(detail, sizeof(detail), "%d open before, %d after", fds_before, open_fds());
	check(open_fds() == fds_before, "no file descriptor left after the cycles", detail);
}

int main(int argc, char **argv)
{
	check_errors();
	check_null_arguments();
	check_loop(argc > 1 ? atoi(argv[1]) : 10000);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
