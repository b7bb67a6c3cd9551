/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AST storage and the AST dump.
 *
 * Nodes and the strings they point to are allocated one by one but owned
 * by struct ast, which remembers every allocation; ast_free() releases them
 * all at once. Passes therefore never free individual nodes, and a parse
 * that stops halfway through an error leaks nothing.
 *
 * ast_dump() writes one node per line, children indented two spaces under
 * their parent, starting with the node kind's name and followed by its
 * payload:
 *
 *     probe
 *       probe_spec kprobe:vfs_read
 *       predicate:
 *         binary ==
 *           builtin pid
 *           int 42
 *       body:
 *         assign +=
 *           map @bytes
 *             builtin comm
 *           builtin retval
 *
 * Lines ending in ':' are not nodes but labels naming a statement list
 * (body:, then:, else:) or the predicate, so lists and lone children cannot
 * be confused. Source locations are left out so that tests survive edits
 * to whitespace. The format is what parser tests compare against; change
 * it only together with them.
 */
#include "compiler/ast.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

struct node *ast_new_node(struct ast *ast, enum node_kind kind, struct src_loc loc)
{
	struct node *node = xcalloc(1, sizeof(*node));

	node->kind = kind;
	node->loc = loc;
	/* Not yet resolved; 0 would be a valid index. */
	node->map_id = -1;
	node->var_id = -1;
	node->event_id = -1;
	if (ast->node_count == ast->node_capacity) {
		ast->node_capacity = ast->node_capacity ? ast->node_capacity * 2 : 64;
		ast->nodes = xrealloc(ast->nodes, sizeof(*ast->nodes) * (size_t)ast->node_capacity);
	}
	ast->nodes[ast->node_count++] = node;
	return node;
}

char *ast_strdup(struct ast *ast, const char *text, size_t length)
{
	char *copy = xstrndup(text, length);

	if (ast->string_count == ast->string_capacity) {
		ast->string_capacity = ast->string_capacity ? ast->string_capacity * 2 : 64;
		ast->strings = xrealloc(ast->strings,
					sizeof(*ast->strings) * (size_t)ast->string_capacity);
	}
	ast->strings[ast->string_count++] = copy;
	return copy;
}

void ast_free(struct ast *ast)
{
	int i;

	for (i = 0; i < ast->node_count; i++)
		free(ast->nodes[i]);
	for (i = 0; i < ast->string_count; i++)
		free(ast->strings[i]);
	free(ast->nodes);
	free(ast->strings);
	memset(ast, 0, sizeof(*ast));
}

const char *node_kind_name(enum node_kind kind)
{
	switch (kind) {
	case NODE_PROBE: return "probe";
	case NODE_PROBE_SPEC: return "probe_spec";
	case NODE_C_RECORD: return "c_record";
	case NODE_C_FIELD: return "c_field";
	case NODE_C_ENUM: return "c_enum";
	case NODE_C_ENUMERATOR: return "c_enumerator";
	case NODE_C_TYPEDEF: return "c_typedef";
	case NODE_MAP_DECL: return "map_decl";
	case NODE_MACRO: return "macro";
	case NODE_EXPR_STMT: return "expr_stmt";
	case NODE_ASSIGN: return "assign";
	case NODE_IF: return "if";
	case NODE_WHILE: return "while";
	case NODE_UNROLL: return "unroll";
	case NODE_FOR_MAP: return "for_map";
	case NODE_FOR_RANGE: return "for_range";
	case NODE_BREAK: return "break";
	case NODE_CONTINUE: return "continue";
	case NODE_RETURN: return "return";
	case NODE_BLOCK: return "block";
	case NODE_INT: return "int";
	case NODE_STRING: return "string";
	case NODE_BUILTIN: return "builtin";
	case NODE_POSITIONAL: return "positional";
	case NODE_POSITIONAL_COUNT: return "positional_count";
	case NODE_VAR: return "var";
	case NODE_MAP: return "map";
	case NODE_CALL: return "call";
	case NODE_BINARY: return "binary";
	case NODE_UNARY: return "unary";
	case NODE_INCDEC: return "incdec";
	case NODE_TERNARY: return "ternary";
	case NODE_FIELD: return "field";
	case NODE_TUPLE_INDEX: return "tuple_index";
	case NODE_INDEX: return "index";
	case NODE_CAST: return "cast";
	case NODE_TUPLE: return "tuple";
	case NODE_SIZEOF: return "sizeof";
	case NODE_OFFSETOF: return "offsetof";
	case NODE_BLOCK_EXPR: return "block_expr";
	}
	return "?";
}

const char *op_spelling(enum op op)
{
	switch (op) {
	case OP_NONE: return "";
	case OP_ASSIGN: return "=";
	case OP_ADD: return "+";
	case OP_SUB: return "-";
	case OP_MUL: return "*";
	case OP_DIV: return "/";
	case OP_MOD: return "%";
	case OP_BITAND: return "&";
	case OP_BITOR: return "|";
	case OP_BITXOR: return "^";
	case OP_SHL: return "<<";
	case OP_SHR: return ">>";
	case OP_EQ: return "==";
	case OP_NE: return "!=";
	case OP_LT: return "<";
	case OP_LE: return "<=";
	case OP_GT: return ">";
	case OP_GE: return ">=";
	case OP_LAND: return "&&";
	case OP_LOR: return "||";
	case OP_NEG: return "-";
	case OP_BITNOT: return "~";
	case OP_LNOT: return "!";
	case OP_DEREF: return "*";
	case OP_ADDR: return "&";
	case OP_INC: return "++";
	case OP_DEC: return "--";
	}
	return "?";
}

static void ast_indent(FILE *out, int depth)
{
	fprintf(out, "%*s", depth * 2, "");
}

/* Writes string bytes the way a C literal would show them. */
static void ast_dump_string(FILE *out, const char *text, int length)
{
	fputc('"', out);
	for (int i = 0; i < length; i++) {
		unsigned char c = (unsigned char)text[i];

		switch (c) {
		case '\n': fputs("\\n", out); break;
		case '\t': fputs("\\t", out); break;
		case '\r': fputs("\\r", out); break;
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		default:
			if (c < 0x20 || c >= 0x7f)
				fprintf(out, "\\x%02x", c);
			else
				fputc(c, out);
		}
	}
	fputc('"', out);
}

static void ast_dump_node(const struct node *node, FILE *out, int depth);

static void ast_dump_list(const struct node *list, FILE *out, int depth)
{
	for (; list; list = list->next)
		ast_dump_node(list, out, depth);
}

static void ast_dump_label(const char *label, const struct node *list, FILE *out, int depth)
{
	ast_indent(out, depth);
	fprintf(out, "%s:\n", label);
	ast_dump_list(list, out, depth + 1);
}

/* The part of a node's line after its kind name. */
static void ast_dump_payload(const struct node *node, FILE *out)
{
	switch (node->kind) {
	case NODE_C_FIELD:
	case NODE_MAP_DECL:
		fprintf(out, " %s %s", node->name ? node->name : "",
			node->string_value ? node->string_value : "(anonymous)");
		break;
	case NODE_C_RECORD:
	case NODE_C_ENUM:
	case NODE_C_ENUMERATOR:
	case NODE_PROBE_SPEC:
	case NODE_MACRO:
	case NODE_BUILTIN:
	case NODE_MAP:
	case NODE_CALL:
	case NODE_CAST:
		fprintf(out, " %s", node->name ? node->name : "");
		break;
	case NODE_VAR:
		fprintf(out, " $%s", node->name ? node->name : "");
		break;
	case NODE_INT:
	case NODE_POSITIONAL:
	case NODE_TUPLE_INDEX:
		fprintf(out, " %llu", (unsigned long long)node->int_value);
		break;
	case NODE_STRING:
		fputc(' ', out);
		ast_dump_string(out, node->string_value ? node->string_value : "",
				node->string_length);
		break;
	case NODE_ASSIGN:
		/* Compound assignments show as written: "+=", "<<=". */
		fprintf(out, "%s %s%s", node->is_declaration ? " let" : "",
			node->op == OP_ASSIGN ? "" : op_spelling(node->op), "=");
		if (node->name)
			fprintf(out, " : %s", node->name);
		break;
	case NODE_BINARY:
	case NODE_UNARY:
		fprintf(out, " %s", op_spelling(node->op));
		break;
	case NODE_INCDEC:
		fprintf(out, " %s %s", node->is_prefix ? "prefix" : "postfix", op_spelling(node->op));
		break;
	case NODE_FIELD:
		fprintf(out, " %s%s", node->is_arrow ? "->" : ".", node->name ? node->name : "");
		break;
	case NODE_SIZEOF:
		if (node->name)
			fprintf(out, " %s", node->name);
		break;
	case NODE_OFFSETOF:
		if (node->name)
			fprintf(out, " %s,", node->name);
		fprintf(out, " %s", node->string_value ? node->string_value : "");
		break;
	default:
		break;
	}
}

static void ast_dump_node(const struct node *node, FILE *out, int depth)
{
	ast_indent(out, depth);
	fputs(node_kind_name(node->kind), out);
	ast_dump_payload(node, out);
	fputc('\n', out);

	switch (node->kind) {
	case NODE_PROBE:
		ast_dump_list(node->args, out, depth + 1);
		if (node->predicate)
			ast_dump_label("predicate", node->predicate, out, depth + 1);
		ast_dump_label("body", node->body, out, depth + 1);
		break;
	case NODE_IF:
		ast_dump_node(node->cond, out, depth + 1);
		ast_dump_label("then", node->then, out, depth + 1);
		if (node->els)
			ast_dump_label("else", node->els, out, depth + 1);
		break;
	case NODE_WHILE:
		ast_dump_node(node->cond, out, depth + 1);
		ast_dump_label("body", node->body, out, depth + 1);
		break;
	case NODE_UNROLL:
		ast_dump_node(node->lhs, out, depth + 1);
		ast_dump_label("body", node->body, out, depth + 1);
		break;
	case NODE_FOR_MAP:
		ast_dump_node(node->lhs, out, depth + 1);
		ast_dump_node(node->rhs, out, depth + 1);
		ast_dump_label("body", node->body, out, depth + 1);
		break;
	case NODE_FOR_RANGE:
		ast_dump_node(node->lhs, out, depth + 1);
		ast_dump_node(node->cond, out, depth + 1);
		ast_dump_node(node->rhs, out, depth + 1);
		ast_dump_label("body", node->body, out, depth + 1);
		break;
	case NODE_BLOCK:
		ast_dump_list(node->body, out, depth + 1);
		break;
	case NODE_MACRO:
		ast_dump_list(node->args, out, depth + 1);
		ast_dump_label("body", node->body, out, depth + 1);
		if (node->lhs)
			ast_dump_label("value", node->lhs, out, depth + 1);
		break;
	case NODE_BLOCK_EXPR:
		if (node->body)
			ast_dump_label("body", node->body, out, depth + 1);
		ast_dump_label("value", node->lhs, out, depth + 1);
		break;
	case NODE_TUPLE:
		ast_dump_list(node->args, out, depth + 1);
		if (node->rhs) /* a record's field names */
			ast_dump_label("names", node->rhs, out, depth + 1);
		break;
	case NODE_TERNARY:
		ast_dump_node(node->cond, out, depth + 1);
		ast_dump_node(node->lhs, out, depth + 1);
		ast_dump_node(node->rhs, out, depth + 1);
		break;
	default:
		/* Expressions and simple statements: operands, then any list. */
		if (node->lhs)
			ast_dump_node(node->lhs, out, depth + 1);
		if (node->rhs)
			ast_dump_node(node->rhs, out, depth + 1);
		ast_dump_list(node->args, out, depth + 1);
		break;
	}
}

void ast_dump(const struct ast *ast, FILE *out)
{
	ast_dump_list(ast->definitions, out, 0);
	if (ast->config) {
		fprintf(out, "config:\n");
		ast_dump_list(ast->config, out, 1);
	}
	ast_dump_list(ast->macros, out, 0);
	ast_dump_list(ast->probes, out, 0);
}

int ast_list_length(const struct node *list)
{
	int count = 0;
	for (; list; list = list->next)
		count++;
	return count;
}
