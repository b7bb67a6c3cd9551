/*
 * BCC probe specifiers (bccspec.h): reading them, expanding their wildcards
 * and regular expressions, and rewriting BCC's expressions.
 *
 * Expansion asks sonde's own providers (provider.h) for the probes a glob
 * matches, so "u:libc:mall*" finds exactly the functions a sonde program
 * written `uprobe:libc:mall*` would; a regular expression expands the
 * widest glob and keeps the names it matches. Each match becomes one
 * explicit probe, because the tools print the name of each (funccount's
 * FUNC column) and the count tells the user how much they asked for.
 *
 * `u:` means a USDT probe in BCC. sonde's users also write it for a user
 * function (as bpftrace's `u:` is a uprobe), so a `u:lib:name` that names no
 * USDT probe of lib is read as the function; docs/compat.md says so.
 */
#include "bccspec.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "../probes/provider.h"

static char *trim_copy(const char *start, const char *end)
{
	while (start < end && isspace((unsigned char)*start))
		start++;
	while (end > start && isspace((unsigned char)end[-1]))
		end--;
	return xstrndup(start, (size_t)(end - start));
}

/* ---- the probe part ---- */

/* [type:][lib:]function; the type is one of p r t u U. */
int bcc_probe_parse(const char *text, size_t length, unsigned flags, struct bcc_probe *out,
		    char **error)
{
	char *spec = trim_copy(text, text + length);
	char *parts[4];
	int count = 0;
	int status = 0;

	memset(out, 0, sizeof(*out));
	for (char *at = spec; count < 4;) {
		parts[count++] = at;
		char *colon = strchr(at, ':');
		if (!colon)
			break;
		*colon = '\0';
		at = colon + 1;
	}
	const char *type = count == 3 || count == 4 ? parts[0] : NULL;
	bool typed = type && strlen(type) == 1 && strchr("prtuU", type[0]);
	if (!spec[0]) {
		*error = xstrdup("a probe specifier is empty");
		status = -EINVAL;
	} else if (count == 4 && (!typed || (type[0] != 'u' && type[0] != 'U'))) {
		*error = xasprintf("'%.*s' has too many ':'-separated parts", (int)length, text);
		status = -EINVAL;
	} else if (count == 1) {
		out->kind = BCC_KPROBE;
		out->function = xstrdup(parts[0]);
	} else if (count == 2) {
		if (strlen(parts[0]) == 1 && strchr("prtuU", parts[0][0])) {
			*error = xasprintf("'%.*s' needs three parts: %s:LIBRARY:NAME, or %s::FUNCTION "
					   "for the kernel", (int)length, text, parts[0], parts[0]);
			status = -EINVAL;
		} else {
			out->kind = BCC_UPROBE;
			out->library = xstrdup(parts[0]);
			out->function = xstrdup(parts[1]);
		}
	} else if (!typed) {
		*error = xasprintf("'%.*s' has an unknown probe type '%s' (p, r, t, u or U)",
				   (int)length, text, parts[0]);
		status = -EINVAL;
	} else if (type[0] == 'r' && !(flags & BCC_ALLOW_RETURN)) {
		*error = xasprintf("'%.*s': this tool takes no return probes (r:)", (int)length, text);
		status = -EINVAL;
	} else if (type[0] == 't') {
		out->kind = BCC_TRACEPOINT;
		out->category = xstrdup(parts[1]);
		out->function = xstrdup(parts[2]);
		if (!parts[1][0]) {
			*error = xasprintf("'%.*s': a tracepoint is t:CATEGORY:EVENT", (int)length, text);
			status = -EINVAL;
		}
	} else if (type[0] == 'u' || type[0] == 'U') {
		out->kind = BCC_USDT;
		out->user_either = type[0] == 'u' && count == 3;
		out->library = xstrdup(parts[1]);
		out->function = count == 4 ? xasprintf("%s:%s", parts[2], parts[3]) : xstrdup(parts[2]);
		if (!parts[1][0]) {
			*error = xasprintf("'%.*s' names no library or program: %s:LIBRARY:NAME",
					   (int)length, text, type);
			status = -EINVAL;
		}
	} else {
		bool user = parts[1][0] != '\0';
		out->kind = type[0] == 'p' ? (user ? BCC_UPROBE : BCC_KPROBE)
					   : (user ? BCC_URETPROBE : BCC_KRETPROBE);
		out->library = user ? xstrdup(parts[1]) : NULL;
		out->function = xstrdup(parts[2]);
	}
	if (status == 0 && !out->function[0]) {
		*error = xasprintf("'%.*s' names no function", (int)length, text);
		status = -EINVAL;
	}
	if (status == 0 && strpbrk(out->function, " \t")) {
		*error = xasprintf("'%s' is not a function name", out->function);
		status = -EINVAL;
	}
	free(spec);
	if (status < 0)
		bcc_probe_free(out);
	return status;
}

void bcc_probe_free(struct bcc_probe *probe)
{
	free(probe->library);
	free(probe->category);
	free(probe->function);
	memset(probe, 0, sizeof(*probe));
}

bool bcc_kind_has_args(enum bcc_probe_kind kind)
{
	return kind == BCC_KPROBE || kind == BCC_UPROBE || kind == BCC_USDT;
}

bool bcc_kind_is_return(enum bcc_probe_kind kind)
{
	return kind == BCC_KRETPROBE || kind == BCC_URETPROBE;
}

/* ---- expansion ---- */

/* A glob, or a compiled regular expression. */
struct name_matcher {
	const char *glob;
	regex_t regex;
	bool is_regex;
};

static int matcher_init(struct name_matcher *matcher, const char *pattern, bool regex,
			char **error)
{
	memset(matcher, 0, sizeof(*matcher));
	matcher->glob = pattern;
	matcher->is_regex = regex;
	if (regex && regcomp(&matcher->regex, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
		*error = xasprintf("'%s' is not a valid regular expression", pattern);
		return -EINVAL;
	}
	return 0;
}

static bool matcher_matches(const struct name_matcher *matcher, const char *name)
{
	if (matcher->is_regex)
		return regexec(&matcher->regex, name, 0, NULL, 0) == 0;
	return wildcard_match(matcher->glob, name);
}

static void matcher_free(struct name_matcher *matcher)
{
	if (matcher->is_regex)
		regfree(&matcher->regex);
}

static const char *const kind_provider[] = {
	[BCC_KPROBE] = "kprobe",
	[BCC_KRETPROBE] = "kretprobe",
	[BCC_UPROBE] = "uprobe",
	[BCC_URETPROBE] = "uretprobe",
	[BCC_TRACEPOINT] = "tracepoint",
	[BCC_USDT] = "usdt",
};

static void add_target(bcc_target_list *out, enum bcc_probe_kind kind, const char *probe,
		       const char *name, const char *category)
{
	for (int i = 0; i < out->count; i++)
		if (strcmp(out->items[i].probe, probe) == 0)
			return;  /* one symbol under two versions, one tracepoint listed twice */
	struct bcc_target target = { xstrdup(probe), xstrdup(name),
				     category ? xstrdup(category) : NULL, kind };
	vec_push(out, target);
}

static int expand_kernel(const struct bcc_probe *probe, const struct name_matcher *matcher,
			 bcc_target_list *out, char **error)
{
	const char *provider = kind_provider[probe->kind];
	if (!matcher->is_regex && !has_wildcard(probe->function)) {
		char *name = xasprintf("%s:%s", provider, probe->function);
		add_target(out, probe->kind, name, probe->function, NULL);
		free(name);
		return 0;
	}
	const struct kernel_function *functions;
	int count;
	int status = kernel_functions(&functions, &count, error);
	for (int i = 0; status == 0 && i < count && out->count <= BCC_MAX_TARGETS; i++) {
		if (!matcher_matches(matcher, functions[i].name))
			continue;
		char *name = xasprintf("%s:%s", provider, functions[i].name);
		add_target(out, probe->kind, name, functions[i].name, NULL);
		free(name);
	}
	return status;
}

/* Asks the provider for the points of "provider:lib:pattern". */
static int expand_with_provider(const struct bcc_probe *probe, enum bcc_probe_kind kind,
				const struct name_matcher *matcher, bcc_target_list *out,
				char **error)
{
	const char *pattern = matcher->is_regex ? "*" : probe->function;
	char *text = kind == BCC_TRACEPOINT
		? xasprintf("tracepoint:%s:%s", matcher->is_regex ? "*" : probe->category, pattern)
		: xasprintf("%s:%s:%s", kind_provider[kind], probe->library, pattern);
	struct src_loc loc = { 0 };
	struct probe_spec *spec = probe_spec_parse(text, loc);
	const struct provider *provider = spec ? provider_lookup(spec->provider_name) : NULL;
	probe_point_list points = { 0 };
	int status = provider ? provider->expand(spec, &points, error) : -EINVAL;
	const struct probe_point *missing = probe_points_first_unavailable(&points);
	if (!provider) {
		*error = xasprintf("'%s' is not a probe sonde can read", text);
	} else if (status == 0 && missing) {
		/* a probe type this kernel lacks: no target can be traced */
		*error = xstrdup(missing->unavailable);
		status = -EOPNOTSUPP;
	}
	for (int i = 0; status == 0 && i < points.count && out->count <= BCC_MAX_TARGETS; i++) {
		const struct probe_point *point = points.items[i];
		const char *name = point->function ? point->function : point->name;
		char *full = kind == BCC_TRACEPOINT ? xasprintf("%s:%s", point->target, name)
						    : xstrdup(name);
		if (!matcher->is_regex || matcher_matches(matcher, full))
			add_target(out, kind, point->name, name,
				   kind == BCC_TRACEPOINT ? point->target : NULL);
		free(full);
	}
	for (int i = 0; i < points.count; i++)
		probe_point_free(points.items[i]);
	free(points.items);
	if (spec)
		probe_spec_free(spec);
	free(text);
	return status;
}

int bcc_probe_expand(const struct bcc_probe *probe, bool regex, bcc_target_list *out,
		     char **error)
{
	struct name_matcher matcher;
	int status = matcher_init(&matcher, probe->function, regex, error);
	if (status < 0)
		return status;
	int before = out->count;
	if (probe->kind == BCC_KPROBE || probe->kind == BCC_KRETPROBE) {
		status = expand_kernel(probe, &matcher, out, error);
	} else if (probe->user_either) {
		char *usdt_error = NULL;
		status = expand_with_provider(probe, BCC_USDT, &matcher, out, &usdt_error);
		free(usdt_error);
		if (status < 0 || out->count == before)
			status = expand_with_provider(probe, BCC_UPROBE, &matcher, out, error);
	} else {
		status = expand_with_provider(probe, probe->kind, &matcher, out, error);
	}
	matcher_free(&matcher);
	if (status < 0) {
		/* the provider's sentence names the library or function */
		return status == -ESRCH ? -ENOENT : status;
	}
	if (out->count == before) {
		*error = xasprintf("no %s matches '%s'%s%s",
				   probe->kind == BCC_TRACEPOINT ? "tracepoint" : "function",
				   probe->function, probe->library ? " in " : "",
				   probe->library ? probe->library : "");
		return -ENOENT;
	}
	if (out->count - before > BCC_MAX_TARGETS) {
		*error = xasprintf("'%s' matches more than %d probes; narrow it down",
				   probe->function, BCC_MAX_TARGETS);
		return -EINVAL;
	}
	return 0;
}

void bcc_target_list_free(bcc_target_list *list)
{
	for (int i = 0; i < list->count; i++) {
		free(list->items[i].probe);
		free(list->items[i].name);
		free(list->items[i].category);
	}
	free(list->items);
	memset(list, 0, sizeof(*list));
}

char *bcc_entry_probe(const struct bcc_target *target)
{
	const char *colon = strchr(target->probe, ':');
	const char *entry = target->kind == BCC_KRETPROBE ? "kprobe" : "uprobe";
	return xasprintf("%s%s", entry, colon ? colon : "");
}

/* ---- splitting what follows the probe ---- */

size_t bcc_scan_until(const char *text, const char *stops)
{
	int depth = 0;
	char quote = 0;
	size_t i;
	for (i = 0; text[i]; i++) {
		char c = text[i];
		if (quote) {
			if (c == '\\' && text[i + 1])
				i++;
			else if (c == quote)
				quote = 0;
		} else if (c == '"' || c == '\'') {
			quote = c;
		} else if (c == '(' || c == '[') {
			depth++;
		} else if ((c == ')' || c == ']') && depth > 0) {
			depth--;
		} else if (depth == 0 && strchr(stops, c)) {
			break;
		}
	}
	return i;
}

/* type name, type name: the name is the last identifier, '*'s go with the type */
int bcc_params_parse(const char *text, size_t length, bcc_param_list *out, char **error)
{
	char *all = trim_copy(text, text + length), *save = NULL;
	int status = 0;
	for (char *item = strtok_r(all, ",", &save); item && status == 0;
	     item = strtok_r(NULL, ",", &save)) {
		char *param = trim_copy(item, item + strlen(item));
		size_t end = strlen(param), start = end;
		while (start > 0 && (isalnum((unsigned char)param[start - 1]) || param[start - 1] == '_'))
			start--;
		if (start == end || start == 0 || isdigit((unsigned char)param[start])) {
			*error = xasprintf("the parameter '%s' should be 'type name'", param);
			status = -EINVAL;
		} else {
			struct bcc_param parsed = { trim_copy(param, param + start), xstrdup(param + start) };
			vec_push(out, parsed);
		}
		free(param);
	}
	free(all);
	return status;
}

void bcc_params_free(bcc_param_list *params)
{
	for (int i = 0; i < params->count; i++) {
		free(params->items[i].type);
		free(params->items[i].name);
	}
	free(params->items);
	memset(params, 0, sizeof(*params));
}

/* ---- expressions ---- */

/* BCC's specials and what sonde calls them. */
static const struct {
	const char *bcc;
	const char *sonde;
} specials[] = {
	{ "$retval", "retval" },
	{ "$pid", "tid" },      /* BCC's pid is the kernel's: the thread */
	{ "$tgid", "pid" },
	{ "$PID", "pid" },
	{ "$uid", "uid" },
	{ "$gid", "gid" },
	{ "$cpu", "cpu" },
	{ "$task", "curtask" },
	{ "$COMM", "comm" },
};

static bool follows_member_access(const char *text, size_t at)
{
	while (at > 0 && isspace((unsigned char)text[at - 1]))
		at--;
	return (at >= 1 && text[at - 1] == '.') || (at >= 2 && text[at - 2] == '-' && text[at - 1] == '>');
}

char *bcc_expr_rewrite(const char *text, size_t length, const bcc_param_list *params,
		       enum bcc_probe_kind kind, struct bcc_expr_needs *needs, char **error)
{
	struct strbuf out;
	strbuf_init(&out);
	for (size_t i = 0; i < length;) {
		char c = text[i];
		if (c == '"' || c == '\'') {
			size_t end = i + 1;
			while (end < length && text[end] != c)
				end += text[end] == '\\' ? 2 : 1;
			end = end < length ? end + 1 : length;
			strbuf_printf(&out, "%.*s", (int)(end - i), text + i);
			i = end;
			continue;
		}
		if (!(isalpha((unsigned char)c) || c == '_' || c == '$')) {
			strbuf_putc(&out, c);
			i++;
			continue;
		}
		size_t end = i + 1;
		while (end < length && (isalnum((unsigned char)text[end]) || text[end] == '_'))
			end++;
		int word_length = (int)(end - i);
		const char *word = text + i;
		bool member = follows_member_access(text, i);
		bool done = member;
		unsigned long arg_number;
		char *after = NULL;
		if (!done && word_length > 3 && strncmp(word, "arg", 3) == 0 && bcc_kind_has_args(kind) &&
		    isdigit((unsigned char)word[3])) {
			arg_number = strtoul(word + 3, &after, 10);
			if (after == word + word_length && arg_number >= 1) {
				strbuf_printf(&out, "arg%lu", arg_number - 1);
				i = end;
				continue;
			}
		}
		for (int p = 0; !done && params && p < params->count; p++) {
			if ((int)strlen(params->items[p].name) == word_length &&
			    strncmp(params->items[p].name, word, (size_t)word_length) == 0) {
				strbuf_printf(&out, "$%s", params->items[p].name);
				done = true;
			}
		}
		if (!done && word[0] == '$') {
			if (word_length == 8 && strncmp(word, "$latency", 8) == 0) {
				needs->latency = true;
				strbuf_puts(&out, "(nsecs - @bcc_start[tid])");
				done = true;
			} else if (word_length == 6 && strncmp(word, "$entry", 6) == 0) {
				size_t close = end;
				while (close < length && text[close] != ')')
					close++;
				char *inner = close < length && text[end] == '(' ?
					trim_copy(text + end + 1, text + close) : NULL;
				if (!inner || !inner[0]) {
					free(inner);
					*error = xstrdup("$entry needs a parameter name: $entry(size)");
					strbuf_free(&out);
					return NULL;
				}
				strbuf_printf(&out, "@bcc_entry_%s[tid]", inner);
				vec_push(&needs->entries, inner);
				i = close + 1;
				continue;
			}
			for (size_t s = 0; !done && s < sizeof(specials) / sizeof(specials[0]); s++) {
				if ((int)strlen(specials[s].bcc) == word_length &&
				    strncmp(specials[s].bcc, word, (size_t)word_length) == 0) {
					strbuf_puts(&out, specials[s].sonde);
					done = true;
				}
			}
			if (!done) {
				*error = xasprintf("'%.*s' is not a special sonde knows ($retval, $pid, "
						   "$tgid, $uid, $gid, $cpu, $task, $latency, $entry(p))",
						   word_length, word);
				strbuf_free(&out);
				return NULL;
			}
		}
		if (!done || member)
			strbuf_printf(&out, "%.*s", word_length, word);
		i = end;
	}
	return strbuf_release(&out);
}

void bcc_expr_needs_free(struct bcc_expr_needs *needs)
{
	for (int i = 0; i < needs->entries.count; i++)
		free(needs->entries.items[i]);
	free(needs->entries.items);
	memset(needs, 0, sizeof(*needs));
}

/* Integer types sonde can cast to; anything else is read as a u64. */
static const char *const cast_types[] = {
	"int", "long", "short", "char", "size_t", "ssize_t", "off_t", "pid_t", "uid_t", "gid_t",
	"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "int8", "int16", "int32", "int64",
	"uint8", "uint16", "uint32", "uint64",
};

void bcc_params_declare(const bcc_param_list *params, struct strbuf *body)
{
	for (int i = 0; i < params->count; i++) {
		const char *type = params->items[i].type;
		bool cast = strncmp(type, "struct ", 7) == 0 && strchr(type, '*');
		for (size_t t = 0; !cast && t < sizeof(cast_types) / sizeof(cast_types[0]); t++)
			cast = strcmp(type, cast_types[t]) == 0;
		if (cast)
			strbuf_printf(body, "\t$%s = (%s)arg%d;\n", params->items[i].name, type, i);
		else
			strbuf_printf(body, "\t$%s = arg%d;\n", params->items[i].name, i);
	}
}

char *bcc_type_cast(const char *type, const char *expr)
{
	for (size_t t = 0; t < sizeof(cast_types) / sizeof(cast_types[0]); t++)
		if (strcmp(type, cast_types[t]) == 0)
			return xasprintf("(%s)(%s)", type, expr);
	return xstrdup(expr);
}

int bcc_probe_parse_head(const char *text, unsigned flags, struct bcc_probe *probe,
			 bcc_param_list *params, size_t *used, char **error)
{
	size_t end = strcspn(text, " \t(#\"");
	int status = bcc_probe_parse(text, end, flags, probe, error);
	if (status < 0)
		return status;
	if (text[end] == '(') {
		size_t close = end + 1 + bcc_scan_until(text + end + 1, ")");
		if (text[close] != ')') {
			*error = xasprintf("the signature in '%s' has no closing ')'", text);
			bcc_probe_free(probe);
			return -EINVAL;
		}
		status = bcc_params_parse(text + end + 1, close - end - 1, params, error);
		if (status < 0) {
			bcc_probe_free(probe);
			return status;
		}
		end = close + 1;
	}
	*used = end;
	return 0;
}
