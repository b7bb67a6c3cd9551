/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The abstract syntax tree: what the parser builds, semantic analysis
 * annotates (type, map/variable resolution) and code generation walks.
 *
 * One node struct serves every kind; which fields mean something depends on
 * the kind and is written next to each NODE_ value. Lists (statements, call
 * arguments, map keys, tuple elements, probe specs) are chained through
 * `next`. Nodes live in an arena owned by struct ast and are freed together.
 */
#ifndef SONDE_AST_H
#define SONDE_AST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/diag.h"
#include "../common/types.h"

struct function_def;
struct variable_def;

enum node_kind {
	/* ---- top level ---- */
	NODE_PROBE,            /* action block: specs = NODE_PROBE_SPEC list, predicate (or NULL), body */
	NODE_PROBE_SPEC,       /* one probe as written: name = "tracepoint:syscalls:sys_enter_*" */
	/* ---- C definitions before the probes (struct, union, enum, typedef) ---- */
	NODE_C_RECORD,         /* name = "struct foo" / "union foo" ("struct" if anonymous),
				* args = NODE_C_FIELD list; int_value 1: packed, cond =
				* aligned(N)'s N (also on NODE_C_FIELD and NODE_C_ENUM) */
	NODE_C_FIELD,          /* name = type as written ("unsigned int", "struct foo *"),
				* string_value = field name (NULL: an anonymous record's
				* fields belong to the parent), lhs = the record or enum
				* defined in place (then name is its spelling plus stars),
				* args = array lengths, rhs = bitfield width */
	NODE_C_ENUM,           /* name = "enum foo" ("enum" if anonymous), args = NODE_C_ENUMERATOR list */
	NODE_C_ENUMERATOR,     /* name, lhs = its value expression or NULL (previous + 1) */
	NODE_C_TYPEDEF,        /* one NODE_C_FIELD in lhs: its string_value is the new type name */
	NODE_MAP_DECL,         /* let @name = kind(n): name = "@name", string_value = kind, lhs = n */
	NODE_MACRO,            /* macro name(args) { body [value] }: args = parameters (NODE_VAR,
				* NODE_MAP or NODE_BUILTIN for a plain name), body = statements,
				* lhs = the final expression or NULL; int_value: 0 until its body is
				* checked, then 1 sound, 2 not. Expanded by macro.c before
				* semantic analysis: no later pass sees a macro */
	/* ---- statements ---- */
	NODE_EXPR_STMT,        /* expression for its effect: lhs */
	NODE_ASSIGN,           /* lhs op= rhs; lhs is NODE_VAR or NODE_MAP; op = OP_ASSIGN or the compound operator */
	NODE_IF,               /* if (cond) then else els; then/els are statement lists; els may hold one NODE_IF */
	NODE_WHILE,            /* while (cond) body */
	NODE_UNROLL,           /* unroll (lhs) body; lhs is an integer constant expression */
	NODE_FOR_MAP,          /* for (lhs : rhs) body; lhs NODE_VAR, rhs NODE_MAP without keys */
	NODE_FOR_RANGE,        /* for (lhs : cond .. rhs) body; lhs NODE_VAR, cond = start, rhs = end (exclusive) */
	NODE_BREAK,            /* break */
	NODE_CONTINUE,         /* continue */
	NODE_RETURN,           /* return: ends this probe's program */
	NODE_BLOCK,            /* { body } used as a statement */
	/* ---- expressions ---- */
	NODE_INT,              /* int_value (unsigned bits; is_negative_literal not needed: '-' is OP_NEG) */
	NODE_STRING,           /* string_value with escapes decoded, string_length bytes (without NUL) */
	NODE_BUILTIN,          /* name: pid, tid, comm, nsecs, args, arg0, retval, ... */
	NODE_POSITIONAL,       /* $N: int_value = N */
	NODE_POSITIONAL_COUNT, /* $# */
	NODE_VAR,              /* $name: name without the '$' */
	NODE_MAP,              /* @name[keys]: name = "@name" or "@", args = key list or NULL */
	NODE_CALL,             /* name(args) */
	NODE_BINARY,           /* lhs op rhs */
	NODE_UNARY,            /* op lhs: OP_NEG, OP_BITNOT, OP_LNOT, OP_DEREF, OP_ADDR */
	NODE_INCDEC,           /* ++lhs, lhs++, --lhs, lhs--: op = OP_INC/OP_DEC, is_prefix */
	NODE_TERNARY,          /* cond ? lhs : rhs */
	NODE_FIELD,            /* lhs.name or lhs->name (is_arrow) */
	NODE_TUPLE_INDEX,      /* lhs.N: int_value = N */
	NODE_INDEX,            /* lhs[rhs]: array/pointer indexing */
	NODE_CAST,             /* (name)lhs: name is the type as written: "uint8", "struct task_struct *" */
	NODE_TUPLE,            /* (a, b, ...): args = elements (two or more) */
	NODE_SIZEOF,           /* sizeof(name) when name != NULL, else sizeof(lhs) */
	NODE_OFFSETOF,         /* offsetof(name, field): string_value = field path */
	NODE_BLOCK_EXPR,       /* { body; lhs }: the statements run, then lhs is the value; what
				* they declare ends with the block. `if (c) { a } else { b }` as
				* a value is a NODE_TERNARY of two of these, name = "if" */
};

enum op {
	OP_NONE,
	OP_ASSIGN,   /* '=' in NODE_ASSIGN */
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD,
	OP_BITAND, OP_BITOR, OP_BITXOR, OP_SHL, OP_SHR,
	OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	OP_LAND, OP_LOR,
	OP_NEG,      /* unary - */
	OP_BITNOT,   /* ~ */
	OP_LNOT,     /* ! */
	OP_DEREF,    /* unary * */
	OP_ADDR,     /* unary & */
	OP_INC, OP_DEC,
};

struct node {
	enum node_kind kind;
	struct src_loc loc;
	struct node *next;        /* next statement / argument / key / element / probe / spec */

	/* children */
	struct node *lhs;
	struct node *rhs;
	struct node *cond;
	struct node *then;
	struct node *els;
	struct node *body;        /* statement list */
	struct node *args;        /* list: call arguments, map keys, tuple elements, probe specs */
	struct node *predicate;   /* NODE_PROBE */

	/* payload */
	enum op op;
	bool is_prefix;           /* NODE_INCDEC */
	bool is_arrow;            /* NODE_FIELD */
	bool is_declaration;      /* NODE_ASSIGN written `let $x ...`: a new variable */
	uint64_t int_value;
	char *name;
	char *string_value;
	int string_length;

	/* filled by semantic analysis */
	struct type *type;
	int map_id;               /* NODE_MAP: index in program.maps */
	int var_id;               /* NODE_VAR: index of the scratch variable in its probe */
	int event_id;             /* NODE_CALL that sends a ring-buffer event */
	const struct function_def *function; /* NODE_CALL: its record (builtins/builtins.h) */
	const struct variable_def *variable; /* NODE_BUILTIN naming a builtin variable; its
					      * number (arg3) is in int_value */
	int check_id;             /* NODE_BINARY, NODE_ASSIGN: a divisor known only at run time:
				   * 1 + index in program.zero_divisors; 0 = none */
	bool warned;              /* a warning about this node was given (a block is checked
				   * once per probe point: say it once) */
	bool is_constant;         /* integer expression whose value is known: const_value */
	uint64_t const_value;
	bool value_unused;        /* an expression statement's expression: its value is dropped,
				   * so a builtin need not compute it (delete()'s result) */
};

struct ast {
	struct node *probes;      /* list of NODE_PROBE */
	struct node *definitions; /* NODE_C_RECORD, NODE_C_ENUM, NODE_C_TYPEDEF, NODE_MAP_DECL,
				   * in program order */
	struct node *macros;      /* NODE_MACRO definitions, kept for -d after expansion */
	struct node *config;      /* `config = { key = value; ... }`: NODE_ASSIGN each, lhs a
				   * NODE_BUILTIN naming the key, rhs a NODE_INT, NODE_STRING
				   * or NODE_BUILTIN (a word: perf, true) */
	/* arena: every node allocated through ast_new_node is freed by ast_free */
	struct node **nodes;
	int node_count;
	int node_capacity;
	char **strings;           /* strings owned by the arena */
	int string_count;
	int string_capacity;
};

struct node *ast_new_node(struct ast *ast, enum node_kind kind, struct src_loc loc);
char *ast_strdup(struct ast *ast, const char *text, size_t length);
void ast_free(struct ast *ast);

/* Prints the tree in a stable indented text form (for -d and parser tests). */
void ast_dump(const struct ast *ast, FILE *out);
const char *node_kind_name(enum node_kind kind);
const char *op_spelling(enum op op);  /* "+", "==", "++", ... */
/* How many nodes a list (arguments, keys, statements) chains through `next`. */
int ast_list_length(const struct node *list);

/* Parses source into *ast. Returns 0, or -1 after reporting errors to diag. */
int parse_program(const struct source *source, struct ast *ast, struct diag *diag);
/* Parses source as one expression with nothing after it (a tool's argument
 * that will become part of a generated program): 0 with *out set, or -1
 * after reporting the first error to diag. */
int parse_expression_alone(const struct source *source, struct ast *ast, struct node **out,
			   struct diag *diag);

#endif
