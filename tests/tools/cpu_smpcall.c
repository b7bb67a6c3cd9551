/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event generator for smpcalls: a thread spins on CPU 1 (as SCHED_FIFO when
 * allowed, so that other work does not push it off for long) while the
 * main thread, on CPU 0, makes N (argv[1], default 1000) expedited private
 * membarrier() calls; each makes the kernel run ipi_mb on the other CPUs
 * that run this process (smp_call_function_many), here CPU 1. The spinner
 * stops after the calls, within a fraction of a second.
 */
#define _GNU_SOURCE
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int done, spinning;

static void pin(int cpu)
{
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
}

static void *spin(void *unused)
{
	struct sched_param param = { .sched_priority = 1 };
	(void)unused;
	pin(1);
	sched_setscheduler(0, SCHED_FIFO, &param);
	atomic_store(&spinning, 1);
	while (!atomic_load(&done))
		;
	return NULL;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 1000;
	pthread_t thread;

	pin(0);
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
		return 1;
	pthread_create(&thread, NULL, spin, NULL);
	while (!atomic_load(&spinning))
		usleep(1000);
	for (long i = 0; i < calls; i++)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
	atomic_store(&done, 1);
	pthread_join(thread, NULL);
	return 0;
}
