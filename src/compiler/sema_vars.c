/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scratch variables during semantic analysis: which $name a use refers
 * to, where it is declared and what type its slot holds.
 *
 * Variables declared with `let` are scoped by blocks, as in current
 * bpftrace: one declared inside an if, a loop or a { } block is gone after
 * it, and it hides an outer variable of the same name until its block
 * ends. A variable first assigned without `let` lives to the end of the
 * probe wherever it was assigned, as in bpftrace 0.17, whose scripts (its
 * own tcpconnect.bt and tcpdrop.bt among them) set a variable in both
 * branches of an if and read it after. Every variable is its own slot
 * (var_id); `visible` lists the `let` ones in scope, innermost last, and
 * `unscoped` the others.
 */
#include "sema_internal.h"

#include <stdlib.h>
#include <string.h>

struct var_info *sema_var_find(struct sema *sema, const char *name)
{
	for (int i = sema->visible.count - 1; i >= 0; i--) {
		struct var_info *info = &sema->probe->vars.items[sema->visible.items[i]];
		if (strcmp(info->name, name) == 0)
			return info;
	}
	for (int i = 0; i < sema->unscoped.count; i++) {
		struct var_info *info = &sema->probe->vars.items[sema->unscoped.items[i]];
		if (strcmp(info->name, name) == 0)
			return info;
	}
	return NULL;
}

bool sema_var_was_declared(struct sema *sema, const char *name)
{
	for (int i = 0; i < sema->probe->vars.count; i++)
		if (strcmp(sema->probe->vars.items[i].name, name) == 0)
			return true;
	return false;
}

struct var_info *sema_var_declare(struct sema *sema, const char *name, struct type *type)
{
	struct var_info fresh = { .name = xstrdup(name), .type = type };
	vec_push(&sema->probe->vars, fresh);
	vec_push(&sema->visible, sema->probe->vars.count - 1);
	return &sema->probe->vars.items[sema->probe->vars.count - 1];
}

/* A variable's first assignment without `let`: in scope to the probe's end. */
static struct var_info *sema_var_declare_unscoped(struct sema *sema, const char *name,
					     struct type *type)
{
	struct var_info fresh = { .name = xstrdup(name), .type = type };
	vec_push(&sema->probe->vars, fresh);
	vec_push(&sema->unscoped, sema->probe->vars.count - 1);
	return &sema->probe->vars.items[sema->probe->vars.count - 1];
}

/* `let $x; $x++` or `$x += n`: a declared variable without a value yet
 * starts as the integer 0, as bpftrace's `let` does. */
void sema_var_default_int(struct sema *sema, struct node *var)
{
	struct var_info *info = sema_var_find(sema, var->name);
	if (info && (!info->type || info->type->kind == TYPE_NONE))
		info->type = type_int(8, true);
}

int sema_scope_open(struct sema *sema)
{
	return sema->visible.count;
}

void sema_scope_close(struct sema *sema, int mark)
{
	sema->visible.count = mark;
}

void sema_var_assign(struct sema *sema, struct node *var, struct type *type)
{
	struct var_info *info = sema_var_find(sema, var->name);
	if (!info) {
		info = sema_var_declare_unscoped(sema, var->name, type);
	} else if (info->is_typed && type && type_is_integer_like(type) && info->type->kind == TYPE_INT) {
		/* `let $x: uint8` stays uint8: the value is converted, as in C */
	} else if (type && type->kind != TYPE_NONE) {
		struct type *merged = sema_merge_types(info->type, type);
		if (!merged) {
			sema_error(sema, var->loc, "$%s holds %s; it cannot also hold %s", var->name,
				 type_name(info->type), type_name(type));
			return;
		}
		info->type = merged;
	}
	var->var_id = (int)(info - sema->probe->vars.items);
	var->type = info->type;
}
