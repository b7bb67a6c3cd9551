/* SPDX-License-Identifier: Apache-2.0 */
/* The -c child; see child.h. */
#include "runtime/child.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"

/* -c: the command's words (split at whitespace, no quoting, as bpftrace). */
static char **split_command(const char *command)
{
	VEC(char *) words = { 0 };
	const char *p = command;

	for (;;) {
		const char *start;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		vec_push(&words, xstrndup(start, (size_t)(p - start)));
	}
	vec_push(&words, NULL);
	return words.items;
}

static void free_words(char **words)
{
	for (char **word = words; word && *word; word++)
		free(*word);
	free(words);
}

/* Whether path is a file execve() could run: a regular file (access(X_OK)
 * alone also accepts directories) with execute permission. */
static bool command_runnable(const char *path)
{
	struct stat file_status;

	return stat(path, &file_status) == 0 && S_ISREG(file_status.st_mode) &&
	       access(path, X_OK) == 0;
}

/* Whether execvp(name) could find an executable. */
static bool command_exists(const char *name)
{
	const char *path = getenv("PATH");
	bool found = false;
	char *copy, *dir, *save;

	if (strchr(name, '/'))
		return command_runnable(name);
	copy = xstrdup(path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *candidate = xasprintf("%s/%s", *dir ? dir : ".", name);

		found = command_runnable(candidate);
		free(candidate);
	}
	free(copy);
	return found;
}

pid_t child_spawn(const char *command, int *release_fd, char **error)
{
	char **words = split_command(command);
	int fds[2];
	pid_t pid;

	if (!words[0]) {
		*error = xstrdup("-c needs a command");
		free_words(words);
		return -EINVAL;
	}
	if (!command_exists(words[0])) {
		*error = xasprintf("-c: cannot run '%s': not an executable file", words[0]);
		free_words(words);
		return -ENOENT;
	}
	if (pipe2(fds, O_CLOEXEC) != 0) {
		int err = -errno;
		*error = xasprintf("cannot create a pipe for -c: %s", strerror(errno));
		free_words(words);
		return err;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = -errno;
		*error = xasprintf("cannot fork for -c: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		free_words(words);
		return err;
	}
	if (pid == 0) {
		char go;
		ssize_t got;

		close(fds[1]);
		do
			got = read(fds[0], &go, 1);
		while (got < 0 && errno == EINTR);
		if (got != 1)
			_exit(0);
		close(fds[0]);
		execvp(words[0], words);
		/* the child's own last word, on the stderr it shares */
		fprintf(stderr, "sonde: cannot run '%s': %s\n", words[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	free_words(words);
	*release_fd = fds[1];
	return pid;
}

void child_abandon(pid_t pid, int release_fd)
{
	int status;

	if (release_fd >= 0)
		close(release_fd);
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
}
