/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The web configuration file of sonde serve (--web.config.file), in the
 * format of Prometheus' exporter-toolkit: TLS under tls_server_config and
 * bcrypt-hashed passwords under basic_auth_users.
 *
 * Two steps. A reader for the part of YAML such a file uses: nested block
 * mappings of `key: value`, plain scalars, 'single' and "double" quoted
 * strings, comments. Everything else YAML has (lists, flow collections,
 * block scalars, anchors, tags, several documents) is refused at its line
 * rather than guessed at: a file this small is better read strictly than
 * half-understood. Then a schema walk over the tree, from two tables: the
 * keys sonde serve reads, and the keys exporter-toolkit documents that it
 * does not (each refused with the reason). A misspelled key is an error, as
 * it is for exporter-toolkit, which reads the file with yaml.UnmarshalStrict.
 *
 * Every error is one sentence, located: "FILE:LINE: error: ...". Relative
 * file names in the file are relative to the file's directory.
 *
 * The file is read once, at start-up (exporter-toolkit rereads it for every
 * request); what it names is checked then too (tls.c loads the certificate
 * and key, auth.c checks the hashes), so a bad file stops sonde before
 * anything is attached.
 */
#include "serve/serve.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A web config is a few hundred bytes; anything past this is the wrong file. */
#define WEB_CONFIG_SIZE_MAX (1u << 20)

/* ---- the YAML subset ---- */

struct yaml_node {
	char *key;
	int line;
	char *scalar;                   /* NULL: a mapping, or nothing (key:) */
	VEC(struct yaml_node *) children;
};

struct yaml_reader {
	const char *path;
	char *error;
	int line;
};

static void yaml_free(struct yaml_node *node)
{
	if (!node)
		return;
	for (int i = 0; i < node->children.count; i++)
		yaml_free(node->children.items[i]);
	free(node->children.items);
	free(node->key);
	free(node->scalar);
	free(node);
}

static int yaml_fail(struct yaml_reader *reader, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static char *web_vlocate(const char *path, int line, const char *fmt, va_list ap)
{
	struct strbuf text;

	strbuf_init(&text);
	strbuf_printf(&text, "%s:%d: error: ", path, line);
	strbuf_vprintf(&text, fmt, ap);
	return strbuf_release(&text);
}

static int yaml_fail(struct yaml_reader *reader, int line, const char *fmt, ...)
{
	va_list ap;

	if (reader->error)
		return -EINVAL;
	va_start(ap, fmt);
	reader->error = web_vlocate(reader->path, line, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* quoted = '...' | "..." on one line. *end is set past the closing quote. */
static int yaml_quoted(struct yaml_reader *reader, const char *text, char **out, const char **end)
{
	char quote = text[0];
	struct strbuf value;

	strbuf_init(&value);
	for (const char *p = text + 1; *p; p++) {
		if (*p == quote && quote == '\'' && p[1] == '\'') {
			strbuf_putc(&value, '\'');
			p++;
		} else if (*p == quote) {
			*out = strbuf_release(&value);
			*end = p + 1;
			return 0;
		} else if (*p == '\\' && quote == '"') {
			static const char escapes[] = "\\\\\"\"//n\nt\tr\r";
			const char *found = p[1] ? strchr(escapes, p[1]) : NULL;
			/* the table pairs an escape letter with its byte */
			if (!found || (found - escapes) % 2) {
				strbuf_free(&value);
				return yaml_fail(reader, reader->line,
						 "the escape \\%c is not supported in a quoted string",
						 p[1] ? p[1] : ' ');
			}
			strbuf_putc(&value, found[1]);
			p++;
		} else {
			strbuf_putc(&value, *p);
		}
	}
	strbuf_free(&value);
	return yaml_fail(reader, reader->line,
			 "a quoted string must end on its line (no closing %c)", quote);
}

/* Cuts a comment (a # at the start or after a blank, outside quotes) and
 * the blanks at the end of the line. */
static void yaml_strip(char *line)
{
	char quote = 0;

	for (char *p = line; *p; p++) {
		if (quote) {
			if (*p == quote)
				quote = 0;
		} else if (*p == '\'' || *p == '"') {
			if (p == line || p[-1] == ' ' || p[-1] == ':')
				quote = *p;
		} else if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
	}
	size_t length = strlen(line);
	while (length && (line[length - 1] == ' ' || line[length - 1] == '\t' ||
			  line[length - 1] == '\r'))
		line[--length] = '\0';
}

/* value = quoted | plain | (nothing) — refusing what the subset leaves out */
static int yaml_value(struct yaml_reader *reader, const char *text, char **out)
{
	*out = NULL;
	if (!*text)
		return 0;
	if (text[0] == '"' || text[0] == '\'') {
		const char *end;
		int err = yaml_quoted(reader, text, out, &end);
		if (err)
			return err;
		if (*end) {
			free(*out);
			*out = NULL;
			return yaml_fail(reader, reader->line, "unexpected text after the quoted string");
		}
		return 0;
	}
	switch (text[0]) {
	case '[': case '{':
		return yaml_fail(reader, reader->line,
				 "flow collections ([...], {...}) are not supported here");
	case '|': case '>':
		return yaml_fail(reader, reader->line,
				 "block scalars (| and >) are not supported here; name a file instead");
	case '&': case '*':
		return yaml_fail(reader, reader->line, "anchors and aliases are not supported here");
	case '!':
		return yaml_fail(reader, reader->line, "tags are not supported here");
	case '-':
		if (text[1] == ' ' || !text[1])
			return yaml_fail(reader, reader->line, "lists are not supported here");
		break;
	case '@': case '`': case '%':
		return yaml_fail(reader, reader->line, "a plain value cannot start with %c; quote it",
				 text[0]);
	}
	if (strstr(text, ": "))
		return yaml_fail(reader, reader->line, "a plain value cannot contain ': '; quote it");
	*out = xstrdup(text);
	return 0;
}

/* entry = key ':' [' ' value] */
static int yaml_entry(struct yaml_reader *reader, const char *text, struct yaml_node **out)
{
	struct yaml_node *node = xcalloc(1, sizeof(*node));
	const char *rest;
	int err;

	*out = NULL;
	node->line = reader->line;
	if (text[0] == '-' && (text[1] == ' ' || !text[1])) {
		yaml_free(node);
		return yaml_fail(reader, reader->line, "lists are not supported here");
	}
	if (text[0] == '"' || text[0] == '\'') {
		err = yaml_quoted(reader, text, &node->key, &rest);
		if (err) {
			yaml_free(node);
			return err;
		}
	} else {
		const char *colon = text;
		while ((colon = strchr(colon, ':')) && colon[1] && colon[1] != ' ')
			colon++;
		if (!colon || text[0] == '?' || text[0] == '[' || text[0] == '{') {
			yaml_free(node);
			return yaml_fail(reader, reader->line, "expected 'key: value'");
		}
		node->key = xstrndup(text, (size_t)(colon - text));
		rest = colon;
	}
	if (rest[0] != ':' || (rest[1] && rest[1] != ' ')) {
		yaml_free(node);
		return yaml_fail(reader, reader->line, "expected ':' after the key");
	}
	rest++;
	while (*rest == ' ')
		rest++;
	err = yaml_value(reader, rest, &node->scalar);
	if (err) {
		yaml_free(node);
		return err;
	}
	*out = node;
	return 0;
}

/*
 * file = { entry at the indentation of its mapping }
 * A key with no value opens a mapping if the next line is indented deeper;
 * otherwise it has no value. Indentation is spaces, as YAML requires.
 */
static int yaml_parse(struct yaml_reader *reader, char *text, struct yaml_node **out)
{
	struct {
		struct yaml_node *node;
		int key_indent;         /* the column of the node's key (-1: the root) */
		int child_indent;       /* the column of its entries (-1: not yet known) */
	} stack[16];
	int depth = 0;
	bool seen_content = false;
	struct yaml_node *root = xcalloc(1, sizeof(*root));

	stack[0].node = root;
	stack[0].key_indent = -1;
	stack[0].child_indent = -1;
	*out = NULL;
	reader->line = 0;
	for (char *line = text, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		reader->line++;
		int indent = 0;
		while (line[indent] == ' ')
			indent++;
		if (line[indent] == '\t') {
			yaml_free(root);
			return yaml_fail(reader, reader->line, "indentation must be spaces, not tabs");
		}
		yaml_strip(line);
		if (!line[indent])
			continue;
		if (indent == 0 && (strcmp(line, "---") == 0 || strcmp(line, "...") == 0)) {
			if (line[0] == '-' && !seen_content)
				continue;
			yaml_free(root);
			return yaml_fail(reader, reader->line,
					 "only one YAML document is supported");
		}
		seen_content = true;
		/* close the mappings this line is not inside */
		while (depth > 0 && (indent <= stack[depth].key_indent ||
				     (stack[depth].child_indent >= 0 && indent < stack[depth].child_indent)))
			depth--;
		if (stack[depth].child_indent < 0)
			stack[depth].child_indent = indent;
		if (indent != stack[depth].child_indent) {
			yaml_free(root);
			return yaml_fail(reader, reader->line,
					 "the indentation of this line (%d spaces) matches no level above it",
					 indent);
		}
		struct yaml_node *parent = stack[depth].node, *node;
		if (parent->scalar) {
			/* the sentence names the parent: made before the tree is freed */
			int err = yaml_fail(reader, reader->line,
					    "'%s' has a value and cannot have nested keys", parent->key);
			yaml_free(root);
			return err;
		}
		if (yaml_entry(reader, line + indent, &node) < 0) {
			yaml_free(root);
			return -EINVAL;
		}
		for (int i = 0; i < parent->children.count; i++) {
			if (strcmp(parent->children.items[i]->key, node->key) == 0) {
				int first = parent->children.items[i]->line;
				yaml_free(node);
				yaml_free(root);
				return yaml_fail(reader, reader->line, "duplicate key (first at line %d)",
						 first);
			}
		}
		vec_push(&parent->children, node);
		if (depth + 1 >= (int)(sizeof(stack) / sizeof(stack[0]))) {
			yaml_free(root);
			return yaml_fail(reader, reader->line, "nested too deeply");
		}
		depth++;
		stack[depth].node = node;
		stack[depth].key_indent = indent;
		stack[depth].child_indent = -1;
	}
	*out = root;
	return 0;
}

/* ---- the schema ---- */

enum web_value {
	WEB_STRING,     /* a non-empty string */
	WEB_BOOL,       /* true or false */
	WEB_USERS,      /* a mapping of user names to bcrypt hashes */
	WEB_SECTION,    /* a mapping of the keys listed with this one as section */
	WEB_REFUSED,    /* documented by exporter-toolkit, not supported here */
};

struct web_key {
	const char *section;    /* NULL: the top level */
	const char *name;
	enum web_value value;
	size_t offset;          /* of the struct web_setting it fills */
	const char *refusal;    /* WEB_REFUSED: why */
};

#define WEB_FIELD(field) offsetof(struct web_config, field)

static const struct web_key web_keys[] = {
	{ NULL, "tls_server_config", WEB_SECTION, 0, NULL },
	{ NULL, "basic_auth_users", WEB_USERS, 0, NULL },
	{ NULL, "http_server_config", WEB_SECTION, 0, NULL },
	{ NULL, "rate_limit", WEB_REFUSED, 0,
	  "sonde serve has no rate limiter (it answers from a bounded, non-blocking loop)" },
	{ "tls_server_config", "cert_file", WEB_STRING, WEB_FIELD(cert_file), NULL },
	{ "tls_server_config", "key_file", WEB_STRING, WEB_FIELD(key_file), NULL },
	{ "tls_server_config", "client_ca_file", WEB_STRING, WEB_FIELD(client_ca_file), NULL },
	{ "tls_server_config", "client_auth_type", WEB_STRING, WEB_FIELD(client_auth_type), NULL },
	{ "tls_server_config", "min_version", WEB_STRING, WEB_FIELD(min_version), NULL },
	{ "tls_server_config", "max_version", WEB_STRING, WEB_FIELD(max_version), NULL },
	{ "tls_server_config", "prefer_server_cipher_suites", WEB_BOOL,
	  WEB_FIELD(prefer_server_cipher_suites), NULL },
	{ "tls_server_config", "cert", WEB_REFUSED, 0,
	  "inline certificates are not supported; give the file as cert_file" },
	{ "tls_server_config", "key", WEB_REFUSED, 0,
	  "inline keys are not supported; give the file as key_file" },
	{ "tls_server_config", "client_ca", WEB_REFUSED, 0,
	  "inline CA certificates are not supported; give the file as client_ca_file" },
	{ "tls_server_config", "cipher_suites", WEB_REFUSED, 0,
	  "sonde serve uses OpenSSL's default cipher suites" },
	{ "tls_server_config", "curve_preferences", WEB_REFUSED, 0,
	  "sonde serve uses OpenSSL's default curves" },
	{ "tls_server_config", "client_allowed_sans", WEB_REFUSED, 0,
	  "matching client certificates' SANs is not supported" },
	{ "http_server_config", "http2", WEB_BOOL, WEB_FIELD(http2), NULL },
	{ "http_server_config", "headers", WEB_REFUSED, 0,
	  "extra response headers are not supported" },
};

static bool web_key_in(const struct web_key *key, const char *section)
{
	if (!section || !key->section)
		return !section && !key->section;
	return strcmp(section, key->section) == 0;
}

static const struct web_key *web_key_find(const char *section, const char *name)
{
	for (size_t i = 0; i < sizeof(web_keys) / sizeof(web_keys[0]); i++)
		if (web_key_in(&web_keys[i], section) && strcmp(name, web_keys[i].name) == 0)
			return &web_keys[i];
	return NULL;
}

static char *web_key_list(const char *section)
{
	struct strbuf list;

	strbuf_init(&list);
	for (size_t i = 0; i < sizeof(web_keys) / sizeof(web_keys[0]); i++) {
		const struct web_key *key = &web_keys[i];
		if (web_key_in(key, section) && key->value != WEB_REFUSED)
			strbuf_printf(&list, "%s%s", list.length ? ", " : "", key->name);
	}
	return strbuf_release(&list);
}

static char *web_join(const char *directory, const char *name)
{
	if (name[0] == '/' || !directory[0])
		return xstrdup(name);
	return xasprintf("%s/%s", directory, name);
}

static int web_read_users(struct yaml_reader *reader, const struct yaml_node *node,
			  struct web_config *config)
{
	if (node->scalar)
		return yaml_fail(reader, node->line,
				 "basic_auth_users needs one 'user: bcrypt-hash' line per user, indented below it");
	for (int i = 0; i < node->children.count; i++) {
		const struct yaml_node *user = node->children.items[i];
		if (!user->scalar || !user->scalar[0])
			return yaml_fail(reader, user->line, "user '%s' has no password hash",
					 user->key);
		/* basic authentication splits user from password at the first
		 * colon, so such a user could never log in */
		if (strchr(user->key, ':'))
			return yaml_fail(reader, user->line,
					 "user '%s': a user name cannot contain ':' (basic authentication "
					 "ends the name at the first colon, so this user could never log in)",
					 user->key);
		if (!auth_hash_valid(user->scalar))
			return yaml_fail(reader, user->line,
					 "user '%s': the password must be a bcrypt hash ($2y$10$ and 53 "
					 "characters, as `htpasswd -nBC 10 \"\" | tr -d ':\\n'` prints)",
					 user->key);
		struct web_user entry = { xstrdup(user->key), xstrdup(user->scalar), user->line };
		vec_push(&config->users, entry);
	}
	return 0;
}

static int web_read_section(struct yaml_reader *reader, const char *section,
			    const struct yaml_node *node, const char *directory,
			    struct web_config *config)
{
	for (int i = 0; i < node->children.count; i++) {
		const struct yaml_node *child = node->children.items[i];
		const struct web_key *key = web_key_find(section, child->key);
		int err = 0;

		if (!key) {
			char *known = web_key_list(section);
			err = yaml_fail(reader, child->line, "unknown key '%s'%s%s (expected one of: %s)",
					child->key, section ? " in " : "", section ? section : "", known);
			free(known);
			return err;
		}
		switch (key->value) {
		case WEB_REFUSED:
			return yaml_fail(reader, child->line, "%s: %s", child->key, key->refusal);
		case WEB_USERS:
			err = web_read_users(reader, child, config);
			break;
		case WEB_SECTION:
			if (child->scalar)
				return yaml_fail(reader, child->line,
						 "%s needs its keys indented below it, not a value",
						 child->key);
			if (strcmp(child->key, "tls_server_config") == 0)
				config->tls_line = child->line;
			err = web_read_section(reader, child->key, child, directory, config);
			break;
		case WEB_STRING:
		case WEB_BOOL: {
			struct web_setting *setting = (struct web_setting *)((char *)config + key->offset);
			if (!child->scalar || !child->scalar[0])
				return yaml_fail(reader, child->line, "%s needs a value", child->key);
			if (key->value == WEB_BOOL && strcmp(child->scalar, "true") != 0 &&
			    strcmp(child->scalar, "false") != 0)
				return yaml_fail(reader, child->line, "%s is true or false, not '%s'",
						 child->key, child->scalar);
			setting->line = child->line;
			/* the *_file settings name files next to the config file */
			const char *suffix = strrchr(child->key, '_');
			setting->value = suffix && strcmp(suffix, "_file") == 0
						 ? web_join(directory, child->scalar)
						 : xstrdup(child->scalar);
			break;
		}
		}
		if (err)
			return err;
	}
	return 0;
}

void web_config_free(struct web_config *config)
{
	if (!config)
		return;
	tls_context_free(config->tls);
	struct web_setting *settings[] = { &config->cert_file, &config->key_file,
					   &config->client_ca_file, &config->client_auth_type,
					   &config->min_version, &config->max_version,
					   &config->prefer_server_cipher_suites, &config->http2 };
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
		free(settings[i]->value);
	for (int i = 0; i < config->users.count; i++) {
		free(config->users.items[i].name);
		free(config->users.items[i].hash);
	}
	free(config->users.items);
	free(config->path);
	free(config);
}

int web_config_parse(const char *path, char *text, struct web_config **out, char **error)
{
	struct yaml_reader reader = { .path = path };
	struct web_config *config = xcalloc(1, sizeof(*config));
	struct yaml_node *root;
	const char *slash = strrchr(path, '/');
	char *directory = slash ? xstrndup(path, (size_t)(slash - path + (slash == path))) : xstrdup("");
	int err;

	*out = NULL;
	config->path = xstrdup(path);
	/* editors on Windows start UTF-8 files with a byte order mark; YAML
	 * allows it there, and Go's yaml package skips it */
	if (strncmp(text, "\xef\xbb\xbf", 3) == 0)
		text += 3;
	err = yaml_parse(&reader, text, &root);
	if (!err) {
		err = web_read_section(&reader, NULL, root, directory, config);
		yaml_free(root);
	}
	free(directory);
	if (err) {
		*error = reader.error;
		web_config_free(config);
		return err;
	}
	*out = config;
	return 0;
}

int web_config_load(const char *path, struct web_config **out, char **error)
{
	size_t length;
	char *text;
	int err;

	*out = NULL;
	/* bounded, so that /dev/zero or a log file named by mistake costs a
	 * megabyte and a sentence rather than all memory */
	err = read_path_bounded(path, WEB_CONFIG_SIZE_MAX, &text, &length);
	if (err == -EFBIG) {
		*error = xasprintf("%s: error: not a web config: larger than %u MiB", path,
				   WEB_CONFIG_SIZE_MAX >> 20);
		return err;
	}
	if (err) {
		*error = xasprintf("%s: error: cannot read the web config: %s", path, strerror(-err));
		return err;
	}
	if (strlen(text) != length) {
		free(text);
		*error = xasprintf("%s: error: not a web config (it holds a NUL byte)", path);
		return -EINVAL;
	}
	err = web_config_parse(path, text, out, error);
	free(text);
	if (err)
		return err;
	err = tls_context_new(*out, &(*out)->tls, error);
	if (err) {
		web_config_free(*out);
		*out = NULL;
	}
	return err;
}

/* "FILE:LINE: error: MESSAGE" for what a setting names (its file, its value). */
char *web_config_error(const struct web_config *config, int line, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	text = web_vlocate(config->path, line, fmt, ap);
	va_end(ap);
	return text;
}
