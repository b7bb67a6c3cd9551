/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event generator for the stack and symbol tests (runtime/stacks.test).
 *
 *     stack_prog [N [ROUNDS]]
 *
 * Each round makes N getppid system calls from sonde_stack_leaf, called
 * through sonde_stack_middle and sonde_stack_outer, so a user stack taken at
 * sys_enter_getppid names those functions, then passes sonde_callback's
 * address as the first argument of sonde_call_with (for usym(arg0) in a
 * uprobe). Rounds are 100 ms apart: user addresses are named by reading the
 * process's maps when sonde prints them, so a test lets the process live on
 * for a few rounds after the event it prints. Last, it writes a fixed buffer
 * with a tab, a newline, control and high bytes to stdout (for buf(), %r).
 *
 * The runner builds tools with plain -O2, which omits frame pointers, and
 * the kernel walks user stacks by frame pointer; the pragma keeps them. The
 * system call is made inline so that the first frame is our own function
 * rather than the C library's syscall().
 */
#pragma GCC optimize("no-omit-frame-pointer", "no-shrink-wrap", "no-optimize-sibling-calls")
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline)) void sonde_stack_done(void)
{
	__asm__ volatile("");
}

__attribute__((noinline)) void sonde_stack_leaf(int n)
{
	for (int i = 0; i < n; i++) {
		long ret;
		__asm__ volatile("syscall"
				 : "=a"(ret)
				 : "0"((long)SYS_getppid)
				 : "rcx", "r11", "memory");
	}
	sonde_stack_done();
}

__attribute__((noinline)) void sonde_stack_middle(int n)
{
	sonde_stack_leaf(n);
	__asm__ volatile("");
}

__attribute__((noinline)) void sonde_stack_outer(int n)
{
	sonde_stack_middle(n);
	__asm__ volatile("");
}

__attribute__((noinline)) int sonde_callback(int x)
{
	__asm__ volatile("");
	return x + 1;
}

__attribute__((noinline)) int sonde_call_with(int (*function)(int), int x)
{
	__asm__ volatile("");
	return function(x);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	int rounds = argc > 2 ? atoi(argv[2]) : 1;
	/* on the stack, not in .rodata: a BPF program cannot fault in a page
	 * of the executable that was never touched */
	const char message[] = "hi\tthere\n\x01\xff\"\\ ok";

	int (*volatile function)(int) = sonde_callback;

	for (int round = 0; round < rounds; round++) {
		if (round)
			usleep(100000);
		sonde_stack_outer(n);
		sonde_call_with(function, 1);
	}
	if (write(1, message, sizeof(message) - 1) < 0)
		return 1;
	return 0;
}
