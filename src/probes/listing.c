/* SPDX-License-Identifier: Apache-2.0 */
/* -l: listing probes and kernel types; see listing.h. */
#include "probes/listing.h"

#include <fnmatch.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/btf.h"
#include "probes/provider.h"

/* One provider's -l answer, through list_process when -p gave a pid and
 * the provider has one; its error added to errors. */
static int list_provider(const struct provider *provider, const char *pattern, pid_t pid,
			 bool verbose, FILE *out, struct strbuf *errors)
{
	char *error = NULL;
	int status = 0;

	if (pid && provider->list_process)
		status = provider->list_process(pattern, pid, verbose, out, &error);
	else if (provider->list)
		status = provider->list(pattern, verbose, out, &error);
	if (status < 0 && error)
		strbuf_printf(errors, "%s\n", error);
	free(error);
	return status;
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * -l 'struct task_struct' (or 'union ...', 'enum ...', wildcards allowed):
 * the kernel's types of that name, as bpftrace lists them: the names, and
 * with -v their C definitions. Nothing when no type matches.
 */
static int list_types(const char *pattern, bool verbose, FILE *out)
{
	const char *space = strchr(pattern, ' ');
	char *keyword = xstrndup(pattern, (size_t)(space - pattern));
	const char *name_pattern = space + 1;
	int kinds[2] = { strcmp(keyword, "struct") == 0 ? BTF_KIND_STRUCT
			 : strcmp(keyword, "union") == 0 ? BTF_KIND_UNION : BTF_KIND_ENUM,
			 strcmp(keyword, "enum") == 0 ? BTF_KIND_ENUM64 : -1 };
	VEC(char *) names = { 0 };

	for (int k = 0; k < 2 && kinds[k] >= 0; k++) {
		btf_name_list found = { 0 };
		if (btf_list_names(kinds[k], "", false, &found) == 0) {
			for (int i = 0; i < found.count; i++)
				if (fnmatch(name_pattern, found.items[i].name, 0) == 0)
					vec_push(&names, xasprintf("%s %s", keyword, found.items[i].name));
		}
		btf_name_list_free(&found);
	}
	if (names.count > 1)
		qsort(names.items, (size_t)names.count, sizeof(*names.items), compare_strings);
	for (int i = 0; i < names.count; i++) {
		if (i > 0 && strcmp(names.items[i], names.items[i - 1]) == 0)
			continue;
		char *text = NULL;
		if (!verbose)
			fprintf(out, "%s\n", names.items[i]);
		else if (btf_type_definition(names.items[i], &text) == 0)
			fputs(text, out);
		free(text);
	}
	for (int i = 0; i < names.count; i++)
		free(names.items[i]);
	free(names.items);
	free(keyword);
	return 0;
}

int probes_list(const char *pattern, pid_t pid, bool verbose, FILE *out, struct strbuf *errors)
{
	const char *colon = pattern ? strchr(pattern, ':') : NULL;
	int status = 0;

	if (pattern && (strncmp(pattern, "struct ", 7) == 0 || strncmp(pattern, "union ", 6) == 0 ||
			strncmp(pattern, "enum ", 5) == 0))
		return list_types(pattern, verbose, out);

	if (colon) {
		char *name = xstrndup(pattern, (size_t)(colon - pattern));
		const struct provider *provider = provider_lookup(name);

		free(name);
		if (provider) {
			char *canonical = xasprintf("%s%s", provider->name, colon);

			status = list_provider(provider, canonical, pid, verbose, out, errors);
			free(canonical);
			return status < 0 ? 1 : 0;
		}
	}
	char *search = NULL;

	if (pattern && !has_wildcard(pattern))
		search = xasprintf("*%s*", pattern);
	for (const struct provider *const *p = provider_table; *p; p++) {
		if (list_provider(*p, search ? search : pattern, pid, verbose, out, errors) < 0)
			status = 1;
	}
	free(search);
	return status;
}
