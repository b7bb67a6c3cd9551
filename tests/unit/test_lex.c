/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lexer tests: program text -> the token stream written as one line.
 *
 * Each token prints as its kind, with its text or value where it has one:
 *     ident(foo)  int(255)  str("a\n")  var($x)  map(@m)  pos(1)  '$#'
 *     probe(kprobe:vfs_read)  '('  '+='  eof
 * and an error token as error(LINE:COL+LEN message).
 *
 * In PROBE mode the first token and every token after a ',' (until the first
 * '{') are read with lex_probe_spec(), as the parser does at top level.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "compiler/lex.h"

enum lex_test_mode { NORMAL, PROBE };

struct lex_case {
	const char *name;
	enum lex_test_mode mode;
	const char *source;
	const char *tokens;
};

static const struct lex_case lex_cases[] = {
	{ "empty", NORMAL, "", "eof" },
	{ "blanks_only", NORMAL, " \t\r\n\f\v ", "eof" },
	{ "identifiers", NORMAL, "pid comm __builtin_x arg0 _a1",
	  "ident(pid) ident(comm) ident(__builtin_x) ident(arg0) ident(_a1) eof" },
	{ "keywords", NORMAL,
	  "if else while for unroll break continue return let sizeof offsetof struct union enum",
	  "'if' 'else' 'while' 'for' 'unroll' 'break' 'continue' 'return' 'let' 'sizeof' "
	  "'offsetof' 'struct' 'union' 'enum' eof" },
	{ "keyword_prefix_is_ident", NORMAL, "iffy format structs",
	  "ident(iffy) ident(format) ident(structs) eof" },
	{ "decimal", NORMAL, "0 7 42 18446744073709551615",
	  "int(0) int(7) int(42) int(18446744073709551615) eof" },
	{ "underscores", NORMAL, "1_000_000 1_0", "int(1000000) int(10) eof" },
	{ "durations", NORMAL, "5ns 3us 100ms 1s 2m 1h 1d 1_500ms 0s",
	  "int(5) int(3000) int(100000000) int(1000000000) int(120000000000) int(3600000000000) "
	  "int(86400000000000) int(1500000000) int(0) eof" },
	{ "duration_errors", NORMAL, "5sec 1msx 213504d",
	  "error(1:1+4 invalid integer literal) error(1:6+4 invalid integer literal) "
	  "error(1:11+7 duration is too large (over 2^64 nanoseconds)) eof" },
	{ "hex", NORMAL, "0x1F 0XfF 0xdead_beef", "int(31) int(255) int(3735928559) eof" },
	{ "octal", NORMAL, "010 0777 00", "int(8) int(511) int(0) eof" },
	{ "binary", NORMAL, "0b101 0B1", "int(5) int(1) eof" },
	{ "exponent", NORMAL, "1e3 2E2 5e0 0e9", "int(1000) int(200) int(5) int(0) eof" },
	{ "suffixes", NORMAL, "5u 5l 5UL 5ll 5ull 5LLU 5lu",
	  "int(5) int(5) int(5) int(5) int(5) int(5) int(5) eof" },
	{ "int_then_range", NORMAL, "0..10", "int(0) '..' int(10) eof" },
	{ "tuple_index_chain", NORMAL, "$t.0.1", "var($t) '.' int(0) '.' int(1) eof" },
	{ "bad_octal", NORMAL, "08", "error(1:1+2 invalid integer literal) eof" },
	{ "trailing_letters", NORMAL, "12abc", "error(1:1+5 invalid integer literal) eof" },
	{ "hex_without_digits", NORMAL, "0x", "error(1:1+2 invalid integer literal) eof" },
	{ "trailing_underscore", NORMAL, "1_", "error(1:1+2 invalid integer literal) eof" },
	{ "bad_suffix", NORMAL, "5lul", "error(1:1+4 invalid integer literal) eof" },
	{ "too_large", NORMAL, "18446744073709551616",
	  "error(1:1+20 integer literal is too large) eof" },
	{ "exponent_too_large", NORMAL, "1e20",
	  "error(1:1+4 integer literal is too large) eof" },
	{ "strings", NORMAL, "\"\" \"abc\" \"a\\\"b\"",
	  "str(\"\") str(\"abc\") str(\"a\\\"b\") eof" },
	{ "string_escapes_valid", NORMAL, "\"\\n\\t\\r\\a\\b\\f\\v\\e\\\\\\'\\?\\x4\\x41\\0\\101\\377\"",
	  "str(\"\\n\\t\\r\\a\\b\\f\\v\\e\\\\\\'\\?\\x4\\x41\\0\\101\\377\") eof" },
	{ "string_bad_escape", NORMAL, "x \"ab\\qc\" y",
	  "ident(x) error(1:6+2 invalid escape sequence '\\q') ident(y) eof" },
	{ "string_bad_hex_escape", NORMAL, "\"\\xg\"",
	  "error(1:2+2 \\x escape needs at least one hex digit) eof" },
	{ "string_octal_overflow", NORMAL, "\"\\777\"",
	  "error(1:2+2 octal escape out of range) eof" },
	{ "unterminated_string", NORMAL, "\"abc\nx",
	  "error(1:1+4 unterminated string) ident(x) eof" },
	{ "unterminated_string_eof", NORMAL, "a \"abc",
	  "ident(a) error(1:3+4 unterminated string) eof" },
	{ "variables", NORMAL, "$x $long_name $_", "var($x) var($long_name) var($_) eof" },
	{ "positionals", NORMAL, "$1 $10 $#", "pos(1) pos(10) '$#' eof" },
	{ "bad_positional", NORMAL, "$1x", "error(1:1+3 invalid positional parameter) eof" },
	{ "lone_dollar", NORMAL, "$ x",
	  "error(1:1+1 expected a variable name after '$') ident(x) eof" },
	{ "maps", NORMAL, "@ @x @a_b1 @[", "map(@) map(@x) map(@a_b1) map(@) '[' eof" },
	{ "punctuation", NORMAL, "( ) { } [ ] , ; : ? . .. ->",
	  "'(' ')' '{' '}' '[' ']' ',' ';' ':' '?' '.' '..' '->' eof" },
	{ "operators", NORMAL, "+ - * / % & | ^ ~ ! < > <= >= == != << >> && || ++ --",
	  "'+' '-' '*' '/' '%' '&' '|' '^' '~' '!' '<' '>' '<=' '>=' '==' '!=' '<<' '>>' "
	  "'&&' '||' '++' '--' eof" },
	{ "assignments", NORMAL, "= += -= *= /= %= &= |= ^= <<= >>=",
	  "'=' '+=' '-=' '*=' '/=' '%=' '&=' '|=' '^=' '<<=' '>>=' eof" },
	{ "longest_match", NORMAL, "a<<=b>>c---d", "ident(a) '<<=' ident(b) '>>' ident(c) '--' "
	  "'-' ident(d) eof" },
	{ "comments", NORMAL, "a // line\n/* block\n over lines */ b /**/ c",
	  "ident(a) ident(b) ident(c) eof" },
	{ "unterminated_comment", NORMAL, "a /* never\nends",
	  "ident(a) error(1:3+2 unterminated comment) eof" },
	{ "predicate_end", NORMAL, "/pid/ {", "'/' ident(pid) '/' '{' eof" },
	{ "predicate_end_across_comment", NORMAL, "a / // x\n /* y */ {", "ident(a) '/' '{' eof" },
	{ "division_is_slash", NORMAL, "a / 2", "ident(a) '/' int(2) eof" },
	{ "unexpected_character", NORMAL, "a # b", "ident(a) error(1:3+1 unexpected character '#') "
	  "ident(b) eof" },
	{ "unexpected_control_character", NORMAL, "\x01",
	  "error(1:1+1 unexpected character '\\x01') eof" },
	{ "single_quote", NORMAL, "'a'",
	  "error(1:1+1 single quotes are not allowed; strings use double quotes) ident(a) "
	  "error(1:3+1 single quotes are not allowed; strings use double quotes) eof" },
	{ "unexpected_backtick", NORMAL, "`", "error(1:1+1 unexpected character '`') eof" },

	/* probe mode */
	{ "probe_begin", PROBE, "BEGIN { }", "probe(BEGIN) '{' '}' eof" },
	{ "probe_glued_brace", PROBE, "END{}", "probe(END) '{' '}' eof" },
	{ "probe_tracepoint_wildcard", PROBE, "tracepoint:syscalls:sys_enter_* {",
	  "probe(tracepoint:syscalls:sys_enter_*) '{' eof" },
	{ "probe_uprobe_path", PROBE, "uprobe:/bin/bash:readline {",
	  "probe(uprobe:/bin/bash:readline) '{' eof" },
	{ "probe_uprobe_glob_path", PROBE, "uprobe:/lib/*.so:malloc {",
	  "probe(uprobe:/lib/*.so:malloc) '{' eof" },
	{ "probe_usdt", PROBE, "usdt:/usr/lib/libc.so.6:libc:setjmp {",
	  "probe(usdt:/usr/lib/libc.so.6:libc:setjmp) '{' eof" },
	{ "probe_kprobe_offset", PROBE, "kprobe:do_sys_open+10 {",
	  "probe(kprobe:do_sys_open+10) '{' eof" },
	{ "probe_list", PROBE, "kprobe:a,kprobe:b ,\n  kretprobe:vfs_* {",
	  "probe(kprobe:a) ',' probe(kprobe:b) ',' probe(kretprobe:vfs_*) '{' eof" },
	{ "probe_predicate", PROBE, "kprobe:f /pid == 1/ {",
	  "probe(kprobe:f) '/' ident(pid) '==' int(1) '/' '{' eof" },
	{ "probe_predicate_glued_to_begin", PROBE, "BEGIN/1/{",
	  "probe(BEGIN) '/' int(1) '/' '{' eof" },
	{ "probe_quoted_part", PROBE, "uprobe:\"/opt/my app/bin\":main {",
	  "probe(uprobe:\"/opt/my app/bin\":main) '{' eof" },
	{ "probe_unterminated_quote", PROBE, "uprobe:\"/opt",
	  "error(1:1+12 unterminated string in probe) eof" },
	{ "probe_comment_after", PROBE, "kprobe:f// note\n{", "probe(kprobe:f) '{' eof" },
	{ "preamble_shebang_include", PROBE,
	  "#!/usr/bin/env bpftrace\n#include <linux/sched.h>\n\nBEGIN {",
	  "probe(BEGIN) '{' eof" },
	{ "preamble_struct_is_tokens", PROBE,
	  "#include <linux/fs.h>\nstruct nameidata {\n  struct path path; // {\n};",
	  "'struct' ident(nameidata) '{' 'struct' ident(path) ident(path) ';' '}' ';' eof" },
	{ "preamble_enum_brace", PROBE, "enum{ A }", "'enum' '{' ident(A) '}' eof" },
	{ "preamble_continued_define", PROBE, "#define X \\\n  more\nEND {",
	  "probe(END) '{' eof" },
	{ "probe_stops_at_semicolon", PROBE, "BEGIN; END()", "probe(BEGIN) ';' ident(END) '(' ')' eof" },
	{ "probe_not_a_probe", PROBE, "} BEGIN", "'}' ident(BEGIN) eof" },
	{ "probe_only_comments", PROBE, "// nothing\n/* here */", "eof" },
	{ "probe_unterminated_comment", PROBE, "/* x", "error(1:1+2 unterminated comment) eof" },
};

/* Appends one token's test spelling to sb. */
static void lex_test_describe(struct strbuf *sb, const struct token *tok)
{
	switch (tok->kind) {
	case TOK_EOF:
		strbuf_puts(sb, "eof");
		break;
	case TOK_ERROR:
		strbuf_printf(sb, "error(%d:%d+%d %s)", tok->loc.line, tok->loc.column,
			      tok->loc.length, tok->message);
		break;
	case TOK_INT:
		strbuf_printf(sb, "int(%llu)", (unsigned long long)tok->int_value);
		break;
	case TOK_POSITIONAL:
		strbuf_printf(sb, "pos(%llu)", (unsigned long long)tok->int_value);
		break;
	case TOK_IDENT:
	case TOK_STRING:
	case TOK_VAR:
	case TOK_MAP:
	case TOK_PROBE_SPEC: {
		const char *prefix = tok->kind == TOK_IDENT    ? "ident"
				     : tok->kind == TOK_STRING ? "str"
				     : tok->kind == TOK_VAR    ? "var"
				     : tok->kind == TOK_MAP    ? "map"
							       : "probe";
		strbuf_printf(sb, "%s(%.*s)", prefix, tok->length, tok->start);
		break;
	}
	default:
		strbuf_puts(sb, lex_kind_name(tok->kind));
		break;
	}
}

static char *lex_test_run(const char *source, enum lex_test_mode mode)
{
	struct lexer lexer;
	struct strbuf sb;
	bool want_probe = mode == PROBE;
	int guard;

	strbuf_init(&sb);
	lex_init(&lexer, source);
	for (guard = 0; guard < 1000; guard++) {
		struct token tok = want_probe ? lex_probe_spec(&lexer) : lex_next(&lexer);

		if (sb.length)
			strbuf_putc(&sb, ' ');
		lex_test_describe(&sb, &tok);
		if (tok.kind == TOK_EOF)
			break;
		if (tok.kind == TOK_LBRACE)
			mode = NORMAL;
		want_probe = mode == PROBE && tok.kind == TOK_COMMA;
	}
	return strbuf_release(&sb);
}

/* ---- locations ---- */

struct lex_loc_case {
	const char *name;
	const char *source;
	int index;      /* which token (0 = first) */
	int line, column, length;
};

static const struct lex_loc_case lex_loc_cases[] = {
	{ "loc_first", "abc def", 0, 1, 1, 3 },
	{ "loc_second", "abc  def", 1, 1, 6, 3 },
	{ "loc_next_line", "a\n  bb", 1, 2, 3, 2 },
	{ "loc_after_block_comment", "/* x\ny */ z", 0, 2, 6, 1 },
	{ "loc_after_tab", "\tfoo", 0, 1, 2, 3 },
	{ "loc_string", "x \"a\\nb\"", 1, 1, 3, 6 },
	{ "loc_operator", "a <<= b", 1, 1, 3, 3 },
	{ "loc_eof", "ab\ncd", 2, 2, 3, 1 },
	{ "loc_crlf", "a\r\nb", 1, 2, 1, 1 },
};

static int lex_test_location(const struct lex_loc_case *c, char *why, size_t size)
{
	struct lexer lexer;
	struct token tok;
	int i;

	lex_init(&lexer, c->source);
	tok = lex_next(&lexer);
	for (i = 0; i < c->index; i++)
		tok = lex_next(&lexer);
	if (tok.loc.line != c->line || tok.loc.column != c->column ||
	    tok.loc.length != c->length) {
		snprintf(why, size, "expected %d:%d+%d, got %d:%d+%d", c->line, c->column,
			 c->length, tok.loc.line, tok.loc.column, tok.loc.length);
		return 0;
	}
	return 1;
}

/* ---- string decoding ---- */

struct lex_string_case {
	const char *name;
	const char *source;
	const char *bytes;
	int length;
};

static const struct lex_string_case lex_string_cases[] = {
	{ "decode_plain", "\"abc\"", "abc", 3 },
	{ "decode_empty", "\"\"", "", 0 },
	{ "decode_simple_escapes", "\"a\\n\\t\\\\\\\"\"", "a\n\t\\\"", 5 },
	{ "decode_hex", "\"\\x41\\x4g\"", "A\x04g", 3 },
	{ "decode_octal", "\"\\101\\0x\\1234\"", "A\0x\x53" "4", 5 },
	{ "decode_escape_e", "\"\\e[0m\"", "\x1b[0m", 4 },
};

static int lex_test_string(const struct lex_string_case *c, char *why, size_t size)
{
	struct lexer lexer;
	struct token tok;
	char out[64];
	int length;

	lex_init(&lexer, c->source);
	tok = lex_next(&lexer);
	if (tok.kind != TOK_STRING) {
		snprintf(why, size, "not lexed as a string: %s", tok.message);
		return 0;
	}
	length = lex_string_value(&tok, out);
	if (length != c->length || memcmp(out, c->bytes, (size_t)length) != 0) {
		snprintf(why, size, "decoded to %d bytes, expected %d", length, c->length);
		return 0;
	}
	return 1;
}

/* ---- token descriptions in messages ---- */

static int lex_test_describe_messages(char *why, size_t size)
{
	static const struct {
		const char *source;
		const char *expected;
	} cases[] = {
		{ "foo", "identifier 'foo'" },
		{ ")", "')'" },
		{ "", "end of input" },
		{ "42", "integer '42'" },
		{ "$x", "variable '$x'" },
		{ "@m", "map '@m'" },
		{ "if", "'if'" },
		{ "\"0123456789012345678901234567890123456789\"",
		  "string '\"0123456789012345678901234567890...'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lexer lexer;
		struct token tok;
		char text[96];

		lex_init(&lexer, cases[i].source);
		tok = lex_next(&lexer);
		lex_describe(&tok, text, sizeof(text));
		if (strcmp(text, cases[i].expected) != 0) {
			snprintf(why, size, "'%s' described as <%s>, expected <%s>", cases[i].source,
				 text, cases[i].expected);
			return 0;
		}
	}
	return 1;
}

int main(void)
{
	int passed = 0, failed = 0;
	char why[512];
	size_t i;

	for (i = 0; i < sizeof(lex_cases) / sizeof(lex_cases[0]); i++) {
		const struct lex_case *c = &lex_cases[i];
		char *got = lex_test_run(c->source, c->mode);

		if (strcmp(got, c->tokens) == 0) {
			printf("PASS %s\n", c->name);
			passed++;
		} else {
			printf("FAIL %s:\n  expected: %s\n  got:      %s\n", c->name, c->tokens, got);
			failed++;
		}
		free(got);
	}
	for (i = 0; i < sizeof(lex_loc_cases) / sizeof(lex_loc_cases[0]); i++) {
		if (lex_test_location(&lex_loc_cases[i], why, sizeof(why))) {
			printf("PASS %s\n", lex_loc_cases[i].name);
			passed++;
		} else {
			printf("FAIL %s: %s\n", lex_loc_cases[i].name, why);
			failed++;
		}
	}
	for (i = 0; i < sizeof(lex_string_cases) / sizeof(lex_string_cases[0]); i++) {
		if (lex_test_string(&lex_string_cases[i], why, sizeof(why))) {
			printf("PASS %s\n", lex_string_cases[i].name);
			passed++;
		} else {
			printf("FAIL %s: %s\n", lex_string_cases[i].name, why);
			failed++;
		}
	}
	if (lex_test_describe_messages(why, sizeof(why))) {
		printf("PASS describe_tokens\n");
		passed++;
	} else {
		printf("FAIL describe_tokens: %s\n", why);
		failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
