/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The name tables behind syscall_name() and friends (names.h). Syscall
 * names are generated at build time from this architecture's
 * <asm/unistd_64.h> (build/gen/syscall_names.h, see the Makefile), so they
 * match the running system's numbering; signal and softirq names are the
 * tables libbpf-tools' sigsnoop and softirqs print; errno names and
 * messages and user names come from the C library; cgroup paths from a walk
 * of /sys/fs/cgroup when printed.
 */
#include "common/names.h"

#include <dirent.h>
#include <fnmatch.h>
#include <linux/magic.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>

static const char *const syscall_names[] = {
#include "syscall_names.h"
};

static const char *names_syscall(const struct int_names *names, int64_t value, char *buf, size_t size)
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

static const char *names_signal(const struct int_names *names, int64_t value, char *buf, size_t size)
{
	if (value >= 0 && value < (int64_t)(sizeof(signal_names) / sizeof(signal_names[0])))
		return signal_names[value];
	snprintf(buf, size, "%lld", (long long)value);
	return buf;
}

/* Kernel functions return -errno; both signs name the same error. */
static const char *names_errno(const struct int_names *names, int64_t value, char *buf, size_t size)
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

static const char *names_softirq(const struct int_names *names, int64_t value, char *buf, size_t size)
{
	if (value >= 0 && value < (int64_t)(sizeof(softirq_names) / sizeof(softirq_names[0])))
		return softirq_names[value];
	snprintf(buf, size, "%lld", (long long)value);
	return buf;
}

/* strerror(3) of the value as it is, so -2 is "Unknown error -2", as bpftrace prints strerror() */
static const char *names_strerror(const struct int_names *names, int64_t value, char *buf, size_t size)
{
	char message[256];
	snprintf(buf, size, "%s", strerror_r((int)value, message, sizeof(message)));
	return buf;
}

/* Six bytes, the first in the lowest, as a MAC address: "DE:AD:BE:EF:0A:0B"
 * (upper case, as bpftrace's macaddr()) */
static const char *names_macaddr(const struct int_names *names, int64_t value, char *buf, size_t size)
{
	uint64_t bytes = (uint64_t)value;
	snprintf(buf, size, "%02X:%02X:%02X:%02X:%02X:%02X", (unsigned)(bytes & 0xff),
		 (unsigned)(bytes >> 8 & 0xff), (unsigned)(bytes >> 16 & 0xff), (unsigned)(bytes >> 24 & 0xff),
		 (unsigned)(bytes >> 32 & 0xff), (unsigned)(bytes >> 40 & 0xff));
	return buf;
}

/* The user name of a uid, looked up when printed; the number when there is none. */
static const char *names_username(const struct int_names *names, int64_t value, char *buf, size_t size)
{
	struct passwd entry, *found = NULL;
	char lines[1024];
	if (getpwuid_r((uid_t)value, &entry, lines, sizeof(lines), &found) == 0 && found)
		snprintf(buf, size, "%s", found->pw_name);
	else
		snprintf(buf, size, "%lld", (long long)value);
	return buf;
}

#define CGROUP_ROOT "/sys/fs/cgroup"
#define CGROUP_DEPTH_MAX 32

struct cgroup_hierarchy {
	char name[256]; /* "unified" for cgroup v2, else the directory's name ("memory") */
	char path[300];
};

/* Extends `path` (path_length bytes used) to the directory below it whose
 * inode is `id`; false, path unchanged, when there is none. */
static bool cgroup_find(char *path, size_t path_length, size_t size, uint64_t id, int depth)
{
	DIR *dir = opendir(path);
	if (!dir)
		return false;
	bool found = false;
	struct dirent *entry;
	while (!found && (entry = readdir(dir))) {
		if (entry->d_type != DT_DIR || strcmp(entry->d_name, ".") == 0 ||
		    strcmp(entry->d_name, "..") == 0)
			continue;
		int written = snprintf(path + path_length, size - path_length, "/%s", entry->d_name);
		if (written < 0 || (size_t)written >= size - path_length)
			continue;
		if (entry->d_ino == id)
			found = true;
		else if (depth < CGROUP_DEPTH_MAX)
			found = cgroup_find(path, path_length + (size_t)written, size, id, depth + 1);
	}
	closedir(dir);
	if (!found)
		path[path_length] = '\0';
	return found;
}

static int cgroup_hierarchy_order(const void *pa, const void *pb)
{
	const struct cgroup_hierarchy *a = pa, *b = pb;
	/* the cgroup v2 hierarchy first, as bpftrace lists it */
	if ((strcmp(a->name, "unified") == 0) != (strcmp(b->name, "unified") == 0))
		return strcmp(a->name, "unified") == 0 ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The hierarchies mounted at /sys/fs/cgroup: itself when it is cgroup v2,
 * else each cgroup mount below it. */
static int cgroup_hierarchies(struct cgroup_hierarchy *out, int capacity)
{
	struct statfs fs;
	if (statfs(CGROUP_ROOT, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC) {
		snprintf(out[0].name, sizeof(out[0].name), "unified");
		snprintf(out[0].path, sizeof(out[0].path), "%s", CGROUP_ROOT);
		return 1;
	}
	DIR *dir = opendir(CGROUP_ROOT);
	if (!dir)
		return 0;
	int count = 0;
	struct dirent *entry;
	while (count < capacity && (entry = readdir(dir))) {
		if (entry->d_type != DT_DIR || entry->d_name[0] == '.')
			continue;
		struct cgroup_hierarchy *h = &out[count];
		snprintf(h->path, sizeof(h->path), "%s/%s", CGROUP_ROOT, entry->d_name);
		if (statfs(h->path, &fs) != 0)
			continue;
		if (fs.f_type == CGROUP2_SUPER_MAGIC)
			snprintf(h->name, sizeof(h->name), "unified");
		else if (fs.f_type == CGROUP_SUPER_MAGIC)
			snprintf(h->name, sizeof(h->name), "%s", entry->d_name);
		else
			continue;
		count++;
	}
	closedir(dir);
	qsort(out, (size_t)count, sizeof(*out), cgroup_hierarchy_order);
	return count;
}

/* "unified:/a/b,memory:/a": every hierarchy (matching the pattern) that
 * has a cgroup whose id (its directory's inode) is value. */
static const char *names_cgroup_path(const struct int_names *names, int64_t value, char *buf,
				     size_t size)
{
	struct cgroup_hierarchy hierarchies[32];
	int count = cgroup_hierarchies(hierarchies, 32);
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 0; i < count; i++) {
		if (names->pattern && fnmatch(names->pattern, hierarchies[i].name, 0) != 0)
			continue;
		char path[4096];
		size_t root_length = (size_t)snprintf(path, sizeof(path), "%s", hierarchies[i].path);
		struct stat root;
		bool found = stat(path, &root) == 0 && root.st_ino == (uint64_t)value;
		if (!found && !cgroup_find(path, root_length, sizeof(path), (uint64_t)value, 0))
			continue;
		const char *relative = path[root_length] ? path + root_length : "/";
		int written = snprintf(buf + used, size - used, "%s%s:%s", used ? "," : "",
				       hierarchies[i].name, relative);
		if (written < 0 || (size_t)written >= size - used)
			break;
		used += (size_t)written;
	}
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

int signal_number_of(const char *name)
{
	for (int i = 1; i < (int)(sizeof(signal_names) / sizeof(signal_names[0])); i++)
		if (strcmp(name, signal_names[i]) == 0 || strcmp(name, signal_names[i] + 3) == 0)
			return i;
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

const struct int_names int_names_syscall = { .what = "syscall", .name = names_syscall };
const struct int_names int_names_signal = { .what = "signal", .name = names_signal };
const struct int_names int_names_errno = { .what = "errno", .name = names_errno };
const struct int_names int_names_softirq = { .what = "softirq", .name = names_softirq };
const struct int_names int_names_strerror = { .what = "strerror", .name = names_strerror };
const struct int_names int_names_username = { .what = "username", .name = names_username };
const struct int_names int_names_cgroup_path = { .what = "cgroup_path", .name = names_cgroup_path };
const struct int_names int_names_macaddr = { .what = "macaddr", .name = names_macaddr };
