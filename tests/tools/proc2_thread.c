/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event generator for threadsnoop: creates one thread (argv[1] threads,
 * default 1) whose start routine has a name of its own, and waits for it.
 * It stays alive half a second more: the tracer names the start routine
 * from /proc/PID/maps when it prints the event, after the process exited
 * it could only print the address.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

void *proc2_marked_start(void *arg)
{
	return arg;
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 1;

	for (int i = 0; i < count; i++) {
		pthread_t thread;

		if (pthread_create(&thread, NULL, proc2_marked_start, NULL) != 0)
			return 1;
		pthread_join(thread, NULL);
	}
	usleep(500000);
	return 0;
}
