/*
 * Builtin functions, family: Time: the wall-clock time printed, and timestamps formatted in user space.
 */
#include "family.h"

static void check_time(struct sema *sema, struct node *call)
{
	call->type = type_void();
	if (call->args) {
		sema_check_expr(sema, call->args);
		if (call->args->kind != NODE_STRING) {
			sema_error(sema, call->args->loc, "time() needs a string literal format");
			return;
		}
	}
	struct event_desc *event = sema_new_event(sema, call, EVENT_TIME);
	event->record_size = 8;
	event->format = xstrdup(call->args ? call->args->string_value : "%H:%M:%S\n");
}

static void check_strftime(struct sema *sema, struct node *call)
{
	struct node *format = call->args, *when = call->args->next;
	sema_check_expr(sema, format);
	sema_check_expr(sema, when);
	call->type = type_new(TYPE_INT);
	call->type->size = 8;
	call->type->strftime_format = xstrdup(format->kind == NODE_STRING ? format->string_value : "");
	if (format->kind != NODE_STRING)
		sema_error(sema, format->loc, "strftime() needs a string literal format");
	if (when->type && when->type->kind != TYPE_NONE && !sema_is_int(when))
		sema_error(sema, when->loc, "strftime() needs an integer time in nanoseconds");
}

static struct value generate_time(struct codegen *gen, struct node *call)
{
	gen_send_event(gen, call, NULL);
	return value_none();
}

static struct value generate_strftime(struct codegen *gen, struct node *call)
{
	return gen_expr(gen, call->args->next);
}

const struct function_def builtins_time[] = {
	{ FUNCTION(time, 0, 1) },
	{ FUNCTION(strftime, 2, 2) },
	{ 0 },
};
