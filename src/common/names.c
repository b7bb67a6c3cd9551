/*
 * The name tables behind syscall_name() and friends (names.h). Syscall
 * names are generated at build time from this architecture's
 * <asm/unistd_64.h> (build/gen/syscall_names.h, see the Makefile), so they
 * match the running system's numbering; signal and softirq names are the
 * tables libbpf-tools' sigsnoop and softirqs print; errno names come from
 * the C library.
 */
#include "common/names.h"

#include <stdio.h>
#include <string.h>

static const char *const syscall_names[] = {
#include "syscall_names.h"
};

static const char *names_syscall(int64_t value, char *buf, size_t size)
{
	if (value >= 0 && value < (int64_t)(sizeof(syscall_names) / sizeof(syscall_names[0])) &&
	    syscall_names[value])
		return syscall_names[value];
	snprintf(buf, size, "[unknown: %u]", (unsigned)value);
	return buf;
}

static const char *const signal_names[] = {
	"N/A", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS",
	"SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM",
	"SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG",
	"SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS",
};

static const char *names_signal(int64_t value, char *buf, size_t size)
{
	if (value >= 0 && value < (int64_t)(sizeof(signal_names) / sizeof(signal_names[0])))
		return signal_names[value];
	snprintf(buf, size, "%lld", (long long)value);
	return buf;
}

/* Kernel functions return -errno; both signs name the same error. */
static const char *names_errno(int64_t value, char *buf, size_t size)
{
	int64_t number = value < 0 ? -value : value;
	const char *name = number > 0 && number < 4096 ? strerrorname_np((int)number) : NULL;

	if (name)
		return name;
	snprintf(buf, size, "%lld", (long long)value);
	return buf;
}

static const char *const softirq_names[] = {
	"hi", "timer", "net_tx", "net_rx", "block", "irq_poll", "tasklet", "sched", "hrtimer", "rcu",
};

static const char *names_softirq(int64_t value, char *buf, size_t size)
{
	if (value >= 0 && value < (int64_t)(sizeof(softirq_names) / sizeof(softirq_names[0])))
		return softirq_names[value];
	snprintf(buf, size, "%lld", (long long)value);
	return buf;
}

int syscall_number_of(const char *name)
{
	for (int i = 0; i < (int)(sizeof(syscall_names) / sizeof(syscall_names[0])); i++) {
		if (syscall_names[i] && strcmp(syscall_names[i], name) == 0)
			return i;
	}
	return -1;
}

/* The same names errno_name() prints, looked up the other way. */
int errno_number_of(const char *name)
{
	for (int number = 1; number < 4096; number++) {
		const char *known = strerrorname_np(number);
		if (known && strcmp(known, name) == 0)
			return number;
	}
	return -1;
}

const struct int_names int_names_syscall = { "syscall", names_syscall };
const struct int_names int_names_signal = { "signal", names_signal };
const struct int_names int_names_errno = { "errno", names_errno };
const struct int_names int_names_softirq = { "softirq", names_softirq };
