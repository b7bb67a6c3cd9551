/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Macros, as current bpftrace has them: `macro name(params) { body }`
 * before, between or after the probes, expanded where they are called
 * once the whole program is parsed, so that semantic analysis and code
 * generation never see one.
 *
 * A call `name(args)` (or a bare `name` for a macro without parameters)
 * becomes a copy of the body: a NODE_BLOCK_EXPR where a value is wanted,
 * a NODE_BLOCK where the call is a statement of its own. The parameters
 * say how each argument is used:
 *  - `$x` takes a $variable by reference: `$x` in the body is the
 *    caller's variable, and assigning to it changes it;
 *  - `@m` takes a map: `@m[k]` in the body is the caller's map;
 *  - a plain name `x` takes any expression, put in wherever `x` appears
 *    (so evaluated as often as it appears there); a $variable or @map
 *    given for it is read, never assigned (it is wrapped in `{ $v }`).
 * The body is hygienic: any other variable it uses is its own (renamed
 * `$$name_var`, the name bpftrace gives it, so it cannot meet one of the
 * caller's), and it may reach no map but the ones passed in. Its
 * variables are scoped to the expansion: the first assignment of each at
 * the body's top level declares it (`let`), as current bpftrace scopes
 * every variable by block.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "compiler/builtins/builtins.h"
#include "compiler/parse_internal.h"

/* How far calls may nest (a macro calling a macro ...), how deep the tree
 * may grow through them, and how many nodes copying bodies may make: a few
 * macros that each use their argument twice would otherwise double the
 * program at every level. */
#define MACRO_MAX_CHAIN 64
#define MACRO_MAX_DEPTH (2 * PARSE_MAX_DEPTH)
#define MACRO_MAX_NODES 100000

struct expander {
	struct ast *ast;
	struct diag *diag;
	int errors;
	long copied;          /* nodes made by copying bodies and arguments */
	bool too_large;       /* reported once */
};

/* One expansion in progress: the macro and what its parameters are bound to. */
struct frame {
	const struct node *macro;
	struct node **bound;  /* per parameter: the caller's NODE_VAR or NODE_MAP,
			       * or the expression of a plain-name parameter */
	const struct frame *outer;
	int chain;            /* expansions around this one, itself included */
};

static void expander_error(struct expander *ex, struct src_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void expander_error(struct expander *ex, struct src_loc loc, const char *fmt, ...)
{
	char message[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	diag_error(ex->diag, loc, "%s", message);
	ex->errors++;
}

static struct node *find_macro(const struct ast *ast, const char *name)
{
	for (struct node *macro = ast->macros; macro; macro = macro->next)
		if (strcmp(macro->name, name) == 0)
			return macro;
	return NULL;
}

/* The index of the parameter of that kind and name, or -1. */
static int find_param(const struct node *macro, enum node_kind kind, const char *name)
{
	int index = 0;
	for (const struct node *param = macro->args; param; param = param->next, index++)
		if (param->kind == kind && strcmp(param->name, name) == 0)
			return index;
	return -1;
}

/* A deep copy of a node (with `next_too`, of the list it starts). */
static struct node *copy_tree(struct expander *ex, const struct node *node, bool next_too)
{
	struct node *first = NULL;
	struct node **tail = &first;

	for (; node; node = next_too ? node->next : NULL) {
		struct node *copy = ast_new_node(ex->ast, node->kind, node->loc);
		*copy = *node;
		copy->next = NULL;
		ex->copied++;
		copy->lhs = copy_tree(ex, node->lhs, false);
		/* a record's field names (NODE_TUPLE's rhs) are a list */
		copy->rhs = copy_tree(ex, node->rhs, node->kind == NODE_TUPLE);
		copy->cond = copy_tree(ex, node->cond, false);
		copy->then = copy_tree(ex, node->then, true);
		copy->els = copy_tree(ex, node->els, true);
		copy->body = copy_tree(ex, node->body, true);
		copy->args = copy_tree(ex, node->args, true);
		copy->predicate = copy_tree(ex, node->predicate, false);
		*tail = copy;
		tail = &copy->next;
	}
	return first;
}

/* ---- checks of a macro ---- */

static bool is_builtin_name(const char *name)
{
	uint64_t index;
	return function_lookup(name) || variable_lookup(name, &index);
}

/* Duplicate names, parameters given twice, names that hide a builtin:
 * checked for every macro, called or not (current bpftrace does too). */
static void check_definitions(struct expander *ex)
{
	for (struct node *macro = ex->ast->macros; macro; macro = macro->next) {
		for (struct node *earlier = ex->ast->macros; earlier != macro; earlier = earlier->next) {
			if (strcmp(earlier->name, macro->name) == 0) {
				expander_error(ex, macro->loc, "macro '%s' is defined twice",
					       macro->name);
				diag_note(ex->diag, earlier->loc, "first defined here");
				break;
			}
		}
		if (is_builtin_name(macro->name))
			expander_error(ex, macro->loc, "macro '%s' has the name of a builtin; "
				       "choose another name", macro->name);
		for (struct node *param = macro->args; param; param = param->next) {
			for (struct node *other = macro->args; other != param; other = other->next) {
				if (other->kind == param->kind && strcmp(other->name, param->name) == 0) {
					expander_error(ex, param->loc, "parameter %s%s appears twice "
						       "in macro '%s'", param->kind == NODE_VAR ? "$" : "",
						       param->name, macro->name);
					break;
				}
			}
			if (param->kind == NODE_BUILTIN && is_builtin_name(param->name))
				expander_error(ex, param->loc, "parameter '%s' of macro '%s' has the "
					       "name of a builtin; choose another name",
					       param->name, macro->name);
		}
	}
}

struct name_set {
	const char **names;
	int count;
	int capacity;
};

static bool name_set_has(const struct name_set *set, const char *name)
{
	for (int i = 0; i < set->count; i++)
		if (strcmp(set->names[i], name) == 0)
			return true;
	return false;
}

static void name_set_add(struct name_set *set, const char *name)
{
	if (name_set_has(set, name))
		return;
	if (set->count == set->capacity) {
		set->capacity = set->capacity ? set->capacity * 2 : 8;
		set->names = xrealloc(set->names, (size_t)set->capacity * sizeof(*set->names));
	}
	set->names[set->count++] = name;
}

/* The variables a body gives a value: assigned, declared, loop variables. */
static void collect_assigned(const struct node *node, struct name_set *assigned)
{
	for (; node; node = node->next) {
		if ((node->kind == NODE_ASSIGN || node->kind == NODE_FOR_MAP ||
		     node->kind == NODE_FOR_RANGE) && node->lhs && node->lhs->kind == NODE_VAR &&
		    (node->kind != NODE_ASSIGN || node->op == OP_ASSIGN || node->is_declaration))
			name_set_add(assigned, node->lhs->name);
		const struct node *lists[] = { node->lhs, node->rhs, node->cond, node->then,
					       node->els, node->body, node->args };
		for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
			collect_assigned(lists[i], assigned);
	}
}

/* Hygiene: the maps and outside variables a body reaches without being
 * given them, and a `let` that would hide a parameter. */
static void check_hygiene(struct expander *ex, const struct node *macro, const struct node *node,
			  const struct name_set *assigned, struct name_set *reported)
{
	for (; node; node = node->next) {
		if (node->kind == NODE_MAP && find_param(macro, NODE_MAP, node->name) < 0 &&
		    !name_set_has(reported, node->name)) {
			name_set_add(reported, node->name);
			expander_error(ex, node->loc, "macro '%s' uses %s, which is not one of its "
				       "parameters: a macro reaches only the maps passed to it",
				       macro->name, node->name);
		}
		if (node->kind == NODE_VAR && find_param(macro, NODE_VAR, node->name) < 0 &&
		    !name_set_has(assigned, node->name) && !name_set_has(reported, node->name)) {
			name_set_add(reported, node->name);
			expander_error(ex, node->loc, "macro '%s' uses $%s, which is neither one of "
				       "its parameters nor assigned in it: pass it in as an argument",
				       macro->name, node->name);
		}
		if (node->kind == NODE_ASSIGN && node->is_declaration && node->lhs &&
		    find_param(macro, NODE_VAR, node->lhs->name) >= 0)
			expander_error(ex, node->loc, "let $%s in macro '%s' would hide its "
				       "parameter $%s", node->lhs->name, macro->name, node->lhs->name);
		const struct node *lists[] = { node->lhs, node->rhs, node->cond, node->then,
					       node->els, node->body, node->args };
		for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
			check_hygiene(ex, macro, lists[i], assigned, reported);
	}
}

/* Checked at a macro's first expansion, once: as in current bpftrace, a
 * macro that is never called is not held to them. */
static bool check_body(struct expander *ex, struct node *macro)
{
	if (macro->int_value)
		return macro->int_value == 1; /* the verdict of the first time */
	int before = ex->errors;
	struct name_set assigned = { 0 }, reported = { 0 };
	collect_assigned(macro->body, &assigned);
	collect_assigned(macro->lhs, &assigned);
	check_hygiene(ex, macro, macro->body, &assigned, &reported);
	check_hygiene(ex, macro, macro->lhs, &assigned, &reported);
	free(assigned.names);
	free(reported.names);
	macro->int_value = ex->errors == before ? 1 : 2;
	return macro->int_value == 1;
}

/* ---- expansion ---- */

static void rewrite_list(struct expander *ex, struct node **link, const struct frame *frame,
			 int depth);

static char *local_name(struct expander *ex, const char *macro, const char *var)
{
	char *name = xasprintf("$%s_%s", macro, var);
	char *kept = ast_strdup(ex->ast, name, strlen(name));
	free(name);
	return kept;
}

/* A macro's top-level first assignment of each of its own variables
 * declares it: the variable ends with the expansion. */
static void declare_locals(struct node *body, const struct node *macro)
{
	struct name_set seen = { 0 };
	for (struct node *stmt = body; stmt; stmt = stmt->next) {
		if (stmt->kind != NODE_ASSIGN || stmt->lhs->kind != NODE_VAR ||
		    find_param(macro, NODE_VAR, stmt->lhs->name) >= 0)
			continue;
		if (!name_set_has(&seen, stmt->lhs->name) && stmt->op == OP_ASSIGN)
			stmt->is_declaration = true;
		name_set_add(&seen, stmt->lhs->name);
	}
	free(seen.names);
}

/* Has copying made more nodes than MACRO_MAX_NODES? Reported once. */
static bool over_size(struct expander *ex, struct src_loc loc)
{
	if (ex->copied <= MACRO_MAX_NODES)
		return false;
	if (!ex->too_large)
		expander_error(ex, loc, "macro expansion makes the program too large "
			       "(more than %d nodes)", MACRO_MAX_NODES);
	ex->too_large = true;
	return true;
}

static const char *plural(int n)
{
	return n == 1 ? "" : "s";
}

/* Binds the call's arguments to the macro's parameters; false after errors. */
static bool bind_arguments(struct expander *ex, const struct node *macro, struct node *call,
			   struct node **bound)
{
	bool ok = true;
	int index = 0;
	struct node *arg = call->kind == NODE_CALL ? call->args : NULL;
	for (const struct node *param = macro->args; param; param = param->next, arg = arg->next) {
		bool is_var = arg->kind == NODE_VAR;
		bool is_map = arg->kind == NODE_MAP && !arg->args;
		const char *given = is_var ? "a $variable" : is_map ? "a map" : "an expression";
		if (param->kind == NODE_VAR && !is_var) {
			expander_error(ex, arg->loc, "macro '%s' takes a $variable as $%s (it may "
				       "assign to it), not %s; name the parameter without '$' to take "
				       "any expression", macro->name, param->name, given);
			ok = false;
		} else if (param->kind == NODE_MAP && !is_map) {
			expander_error(ex, arg->loc, "macro '%s' takes a map as %s, not %s",
				       macro->name, param->name, given);
			ok = false;
		} else if (param->kind == NODE_BUILTIN && (is_var || is_map)) {
			/* read only: `{ $v }` cannot be assigned or incremented */
			struct node *wrap = ast_new_node(ex->ast, NODE_BLOCK_EXPR, arg->loc);
			wrap->lhs = copy_tree(ex, arg, false);
			bound[index] = wrap;
		} else {
			bound[index] = arg;
		}
		index++;
	}
	return ok;
}

/*
 * The expansion of a call (NODE_CALL or a bare NODE_BUILTIN) of macro:
 * a NODE_BLOCK_EXPR whose lhs is the macro's value, NULL for a macro
 * without one (allowed only when the call is a statement). NULL after
 * errors.
 */
static struct node *expand(struct expander *ex, struct node *macro, struct node *call,
			   const struct frame *frame, bool as_statement, int depth)
{
	int chain = frame ? frame->chain + 1 : 1;
	for (const struct frame *outer = frame; outer; outer = outer->outer) {
		if (outer->macro != macro)
			continue;
		/* name the calls from the first expansion of this macro on */
		const struct frame *path[MACRO_MAX_CHAIN + 1];
		int count = 0;
		for (const struct frame *f = frame; f != outer->outer && count < MACRO_MAX_CHAIN;
		     f = f->outer)
			path[count++] = f;
		struct strbuf text;
		strbuf_init(&text);
		while (count > 0)
			strbuf_printf(&text, "%s > ", path[--count]->macro->name);
		strbuf_puts(&text, macro->name);
		expander_error(ex, call->loc, "macro '%s' calls itself: %s", macro->name,
			       text.data ? text.data : macro->name);
		strbuf_free(&text);
		return NULL;
	}
	if (chain > MACRO_MAX_CHAIN) {
		expander_error(ex, call->loc, "macros call each other more than %d deep",
			       MACRO_MAX_CHAIN);
		return NULL;
	}
	int params = ast_list_length(macro->args);
	if (call->kind == NODE_BUILTIN && params > 0) {
		expander_error(ex, call->loc, "macro '%s' takes %d argument%s: call it as %s(...)",
			       macro->name, params, plural(params), macro->name);
		return NULL;
	}
	int given = call->kind == NODE_CALL ? ast_list_length(call->args) : 0;
	if (given != params) {
		expander_error(ex, call->loc, "macro '%s' takes %d argument%s, but %d %s given",
			       macro->name, params, plural(params), given, given == 1 ? "was" : "were");
		return NULL;
	}
	if (!macro->lhs && !as_statement) {
		expander_error(ex, call->loc, "macro '%s' has no value: its body ends with a "
			       "statement (an expression without ';' after it would be its value)",
			       macro->name);
		return NULL;
	}
	if (!check_body(ex, macro))
		return NULL;
	struct node *bound[params > 0 ? params : 1];
	if (!bind_arguments(ex, macro, call, bound))
		return NULL;

	struct node *result = ast_new_node(ex->ast, NODE_BLOCK_EXPR, call->loc);
	result->body = copy_tree(ex, macro->body, true);
	result->lhs = copy_tree(ex, macro->lhs, false);
	if (over_size(ex, call->loc))
		return NULL;
	declare_locals(result->body, macro);
	struct frame inner = { .macro = macro, .bound = bound, .outer = frame, .chain = chain };
	rewrite_list(ex, &result->body, &inner, depth + 1);
	rewrite_list(ex, &result->lhs, &inner, depth + 1);
	return result;
}

/* A call of a macro (with its arguments) or a bare name of one. */
static struct node *called_macro(const struct expander *ex, const struct node *node,
				 const struct frame *frame)
{
	if (node->kind != NODE_CALL && node->kind != NODE_BUILTIN)
		return NULL;
	if (node->kind == NODE_BUILTIN && frame && find_param(frame->macro, NODE_BUILTIN,
							      node->name) >= 0)
		return NULL; /* a parameter of the body being expanded */
	return find_macro(ex->ast, node->name);
}

/* Would a node of this subtree (with `next_too`, of this list) stand deeper
 * than MACRO_MAX_DEPTH when its root is at depth? Looks no deeper itself. */
static bool too_deep(const struct node *node, int depth, bool next_too)
{
	for (; node; node = next_too ? node->next : NULL) {
		if (depth > MACRO_MAX_DEPTH)
			return true;
		const struct node *single[] = { node->lhs, node->rhs, node->cond, node->predicate };
		const struct node *lists[] = { node->then, node->els, node->body, node->args };
		for (size_t i = 0; i < 4; i++)
			if (too_deep(single[i], depth + 1, node->kind == NODE_TUPLE && i == 1) ||
			    too_deep(lists[i], depth + 1, true))
				return true;
	}
	return false;
}

static void report_too_deep(struct expander *ex, struct src_loc loc)
{
	if (!ex->too_large)
		expander_error(ex, loc, "macro expansion nests the program too deeply "
			       "(more than %d levels)", MACRO_MAX_DEPTH);
	ex->too_large = true;
}

/*
 * Rewrites one node in place (*link): in a body being expanded (frame),
 * parameters become what they are bound to and the body's own variables
 * get their private names; everywhere, calls of macros are expanded.
 */
static void rewrite(struct expander *ex, struct node **link, const struct frame *frame, int depth)
{
	struct node *node = *link;
	if (depth > MACRO_MAX_DEPTH || ex->too_large) {
		report_too_deep(ex, node->loc);
		return;
	}
	if (frame) {
		int index;
		if (node->kind == NODE_BUILTIN &&
		    (index = find_param(frame->macro, NODE_BUILTIN, node->name)) >= 0) {
			/* the argument was expanded where it was written, but here
			 * it may stand deeper */
			if (too_deep(frame->bound[index], depth, false)) {
				report_too_deep(ex, node->loc);
				return;
			}
			struct node *value = copy_tree(ex, frame->bound[index], false);
			value->next = node->next;
			*link = value;
			over_size(ex, node->loc);
			return; /* the caller's expression: already expanded there */
		}
		if (node->kind == NODE_VAR) {
			index = find_param(frame->macro, NODE_VAR, node->name);
			node->name = index >= 0 ? frame->bound[index]->name
						: local_name(ex, frame->macro->name, node->name);
		}
		if (node->kind == NODE_MAP && (index = find_param(frame->macro, NODE_MAP,
								  node->name)) >= 0)
			node->name = frame->bound[index]->name;
	}
	struct node *macro;
	if (node->kind == NODE_EXPR_STMT && (macro = called_macro(ex, node->lhs, frame))) {
		/* a call as a statement of its own: a block, the value dropped */
		rewrite_list(ex, &node->lhs->args, frame, depth + 1);
		struct node *expansion = expand(ex, macro, node->lhs, frame, true, depth);
		if (!expansion)
			return;
		node->kind = NODE_BLOCK;
		node->body = expansion->body;
		if (expansion->lhs) {
			struct node *last = ast_new_node(ex->ast, NODE_EXPR_STMT, expansion->lhs->loc);
			last->lhs = expansion->lhs;
			struct node **tail = &node->body;
			while (*tail)
				tail = &(*tail)->next;
			*tail = last;
		}
		node->lhs = NULL;
		return;
	}
	rewrite_list(ex, &node->lhs, frame, depth + 1);
	rewrite_list(ex, &node->rhs, frame, depth + 1);
	rewrite_list(ex, &node->cond, frame, depth + 1);
	rewrite_list(ex, &node->then, frame, depth + 1);
	rewrite_list(ex, &node->els, frame, depth + 1);
	rewrite_list(ex, &node->body, frame, depth + 1);
	rewrite_list(ex, &node->args, frame, depth + 1);
	if ((macro = called_macro(ex, node, frame))) {
		struct node *expansion = expand(ex, macro, node, frame, false, depth);
		if (expansion) {
			expansion->next = node->next;
			*link = expansion;
		}
	}
}

static void rewrite_list(struct expander *ex, struct node **link, const struct frame *frame,
			 int depth)
{
	for (; *link && !diag_too_many(ex->diag); link = &(*link)->next)
		rewrite(ex, link, frame, depth);
}

int macro_expand_all(struct ast *ast, struct diag *diag)
{
	struct expander ex = { .ast = ast, .diag = diag };

	if (!ast->macros)
		return 0;
	check_definitions(&ex);
	if (ex.errors)
		return -1;
	for (struct node *probe = ast->probes; probe; probe = probe->next) {
		if (probe->predicate)
			rewrite(&ex, &probe->predicate, NULL, 1);
		rewrite_list(&ex, &probe->body, NULL, 1);
	}
	return ex.errors ? -1 : 0;
}
