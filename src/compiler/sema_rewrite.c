/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Rewrites of the tree that semantic analysis makes around its checks:
 * call forms turned into their map forms before the first pass, and
 * printf calls of one line joined into one between the two passes.
 */
#include "sema_internal.h"

#include <stdlib.h>
#include <string.h>

#include "builtins/builtins.h"

/* Rewrites has_key(@m, k...) and delete(@m, k...) into the @m[k...] form
 * once, so the checks (which run several times) see a stable tree. */
void sema_desugar(struct node *node)
{
	for (; node; node = node->next) {
		const struct function_def *def = node->kind == NODE_CALL || node->kind == NODE_BUILTIN
							 ? function_lookup(node->name) : NULL;
		if (node->kind == NODE_CALL && def && def->key_follows_map && node->args &&
		    node->args->kind == NODE_MAP && !node->args->args && node->args->next) {
			struct node *key = node->args->next;
			/* has_key(@m, (a, b)), as current bpftrace writes a
			 * multi-key map's key, is @m[a, b] */
			node->args->args = key->kind == NODE_TUPLE && !key->next ? key->args : key;
			node->args->next = NULL;
		}
		/* a bare `kstack` is kstack() with the defaults */
		if (node->kind == NODE_BUILTIN && def && def->callable_bare)
			node->kind = NODE_CALL;
		struct node *children[] = { node->lhs, node->rhs, node->cond, node->then, node->els,
					    node->body, node->args, node->predicate };
		for (size_t i = 0; i < sizeof(children) / sizeof(children[0]); i++)
			sema_desugar(children[i]);
	}
}

/* ---- joining a line's printf calls ---- */

static bool is_printf_statement(const struct node *stmt)
{
	const struct function_def *def = stmt->kind == NODE_EXPR_STMT && stmt->lhs->kind == NODE_CALL
						 ? function_lookup(stmt->lhs->name) : NULL;
	return def && def->joins_lines && stmt->lhs->args &&
	       stmt->lhs->args->kind == NODE_STRING;
}

/* An `if` whose condition folded to a constant, and whose taken branch
 * holds nothing but printf calls: a tool's optional column. */
static struct node *known_printf_branch(const struct node *stmt, bool *is_known)
{
	*is_known = false;
	if (stmt->kind != NODE_IF || !stmt->cond->is_constant || !stmt->cond->type ||
	    stmt->cond->type->kind != TYPE_INT)
		return NULL;
	struct node *branch = stmt->cond->const_value ? stmt->then : stmt->els;
	for (struct node *inner = branch; inner; inner = inner->next)
		if (!is_printf_statement(inner))
			return NULL;
	*is_known = true;
	return branch;
}

/*
 * Joins printf calls that follow each other in a statement list into one
 * call, taking in the optional columns of `if (OPTION) { printf(...); }`
 * once OPTION is known: one ring-buffer record per line instead of several,
 * so that the lines of events on two CPUs cannot interleave, and a tool's
 * line costs one helper call. Runs between the silent and the reporting
 * pass, which then checks the joined call like any other.
 */
void sema_join_printf_runs(struct ast *ast, struct node **link)
{
	while (*link) {
		struct node *stmt = *link;
		bool is_known;
		struct node *branch = known_printf_branch(stmt, &is_known);
		if (is_known) {
			/* splice the taken branch in place of the if */
			struct node *last = branch;
			while (last && last->next)
				last = last->next;
			if (last) {
				last->next = stmt->next;
				*link = branch;
			} else {
				*link = stmt->next;
			}
			continue;
		}
		if (stmt->kind == NODE_IF) {
			sema_join_printf_runs(ast, &stmt->then);
			sema_join_printf_runs(ast, &stmt->els);
		} else if (stmt->body) {
			sema_join_printf_runs(ast, &stmt->body);
		}
		if (is_printf_statement(stmt) && stmt->next) {
			struct node *following = stmt->next;
			bool next_known = false;
			if (!is_printf_statement(following))
				known_printf_branch(following, &next_known);
			if (next_known) {
				/* flatten it first, then look again */
				sema_join_printf_runs(ast, &stmt->next);
				continue;
			}
			if (is_printf_statement(following)) {
				struct node *format = stmt->lhs->args, *other = following->lhs->args;
				size_t length = strlen(format->string_value) + strlen(other->string_value);
				char *joined = xasprintf("%s%s", format->string_value, other->string_value);
				format->string_value = ast_strdup(ast, joined, length);
				format->string_length = (int)length;
				free(joined);
				struct node *tail = format;
				while (tail->next)
					tail = tail->next;
				tail->next = other->next;
				stmt->next = following->next;
				continue;
			}
		}
		link = &stmt->next;
	}
}
