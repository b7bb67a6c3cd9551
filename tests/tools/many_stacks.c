/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Many distinct stack keys, for the size of the counts map of stackcount
 * (tools_stacks.test).
 *
 *     many_stacks THREADS LEVELS ROUNDS [GO_FILE]
 *
 * Waits for GO_FILE to exist, if given, then starts THREADS threads, each
 * with a name of its own (ms_0, ms_1, ...). Each calls many_leaf ROUNDS
 * times through each of the 2^LEVELS call chains that choose, at every
 * level, many_left or many_right; the process then lives one more second,
 * so that its user addresses can still be named, and exits.
 *
 * The keys multiply by thread names rather than by stacks because a BPF
 * stack map loses a stack whenever another one holds its hash bucket:
 * thousands of distinct stacks would collide in any map of a sensible size.
 * A few chains in many threads give stackcount thousands of keys (comm,
 * stack) out of a few stack ids. The last level always goes through
 * many_last, so that a uprobe on many_leaf, which runs before many_leaf has
 * pushed its frame and so misses its caller's return address, still sees
 * every choice.
 */
#pragma GCC optimize("no-omit-frame-pointer", "no-shrink-wrap", "no-optimize-sibling-calls", "no-inline")
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((noinline)) void many_leaf(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void many_last(void)
{
	many_leaf();
	__asm__ volatile("");
}

void many_left(int level, unsigned path);
void many_right(int level, unsigned path);

/* the next level, chosen by the lowest bit of path */
__attribute__((noinline)) static void many_next(int level, unsigned path)
{
	if (level == 0)
		many_last();
	else if (path & 1)
		many_left(level - 1, path >> 1);
	else
		many_right(level - 1, path >> 1);
	__asm__ volatile("");
}

__attribute__((noinline)) void many_left(int level, unsigned path)
{
	many_next(level, path);
	__asm__ volatile("");
}

__attribute__((noinline)) void many_right(int level, unsigned path)
{
	many_next(level, path);
	__asm__ volatile("");
}

static int levels = 5, rounds = 1;

static void *many_thread(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "ms_%d", (int)(long)arg);
	prctl(PR_SET_NAME, name);
	for (int round = 0; round < rounds; round++)
		for (unsigned path = 0; path < (1u << levels); path++)
			many_next(levels, path);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	struct stat go;

	levels = argc > 2 ? atoi(argv[2]) : 5;
	rounds = argc > 3 ? atoi(argv[3]) : 1;
	while (argc > 4 && stat(argv[4], &go) != 0)
		usleep(10000);
	/* one at a time: the names are what differ, not the timing */
	for (long t = 0; t < threads; t++) {
		pthread_t thread;
		if (pthread_create(&thread, NULL, many_thread, (void *)t) != 0 ||
		    pthread_join(thread, NULL) != 0)
			return 1;
	}
	sleep(1);
	return 0;
}
