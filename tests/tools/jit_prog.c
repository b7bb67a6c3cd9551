/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A tiny JIT for the perf-map tests (runtime/symbols.test).
 *
 *     jit_prog [MS]
 *
 * Generates two copies of a spin loop into anonymous executable memory and
 * describes them in /tmp/perf-PID.map, the file a JIT writes for profilers,
 * covering the format's edge cases:
 *  - lines out of address order, and a name with spaces and brackets;
 *  - a decoy entry next to the code that no sample can land in;
 *  - a stale line for the second function's range, written at start, and
 *    the line that replaces it appended only when that function is made,
 *    halfway through the run (the later line must win, and a reader must
 *    notice that the file grew).
 * The first function runs for the first half of MS (default 1200), the
 * second for the rest. The map file is left for the test to remove once the
 * profile has read it.
 *
 * Each function is: mov ecx, 0x100000; loop: dec ecx; jnz loop; ret.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static const unsigned char spin_code[] = {
	0xb9, 0x00, 0x00, 0x10, 0x00, /* mov ecx, 0x100000 */
	0xff, 0xc9,                   /* dec ecx */
	0x75, 0xfc,                   /* jnz -4 */
	0xc3,                         /* ret */
};

#define FIRST_OFFSET 0x100
#define SECOND_OFFSET 0x400

static long now_ms(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void map_line(const char *path, unsigned char *start, size_t size, const char *name)
{
	FILE *file = fopen(path, "a");

	if (!file) {
		perror(path);
		exit(1);
	}
	fprintf(file, "%lx %zx %s\n", (unsigned long)start, size, name);
	fclose(file);
}

static void run_for(void (*function)(void), long ms)
{
	long end = now_ms() + ms;

	while (now_ms() < end)
		function();
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1200;
	char path[64];
	unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	memset(code, 0xcc, 4096); /* int3 everywhere else */
	memcpy(code + FIRST_OFFSET, spin_code, sizeof(spin_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) < 0) {
		perror("mprotect");
		return 1;
	}
	map_line(path, code + SECOND_OFFSET, sizeof(spin_code), "jit_stale_name");
	map_line(path, code + FIRST_OFFSET, sizeof(spin_code), "jit hot loop A (spaces) [x]");
	map_line(path, code, 0x40, "jit decoy");
	run_for((void (*)(void))(code + FIRST_OFFSET), ms / 2);

	/* the second function appears only now, over the stale line's range */
	if (mprotect(code, 4096, PROT_READ | PROT_WRITE) < 0)
		return 1;
	memcpy(code + SECOND_OFFSET, spin_code, sizeof(spin_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC) < 0)
		return 1;
	map_line(path, code + SECOND_OFFSET, sizeof(spin_code), "jit phase two B");
	run_for((void (*)(void))(code + SECOND_OFFSET), ms - ms / 2);
	return 0;
}
