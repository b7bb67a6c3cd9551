/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The config block: `config = { max_strlen = 128; stack_mode = perf }` at
 * the top of a program, as current bpftrace writes it.
 *
 * Each key is looked up in the settings table (common/settings.c) under
 * any of bpftrace's spellings (max_strlen, MAX_STRLEN, BPFTRACE_MAX_STRLEN).
 * A key that changes compiling (string size, map size, stack mode) is
 * written into the compile options the rest of the compiler sees; one that
 * changes the run (ring buffer size, maps at exit, cat's limit) goes into
 * program->settings for the runtime. Either way the environment wins: an
 * option main.c already set from SONDE_* (or bpftrace's alias) is kept, as
 * bpftrace lets its environment variables override a script's config.
 *
 * An unknown key or a malformed value is an error at its place; one of
 * bpftrace's settings that sonde has no use for is a warning saying why.
 */
#include "compiler/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/settings.h"
#include "common/util.h"

#define CONFIG_MAX_STRLEN_LIMIT 1024

/* The value as text: a number, a string's bytes or a word. */
static const char *config_value_text(const struct node *value, char *buffer, size_t size)
{
	if (value->kind == NODE_INT) {
		snprintf(buffer, size, "%llu", (unsigned long long)value->int_value);
		return buffer;
	}
	return value->kind == NODE_STRING ? value->string_value : value->name;
}

/* A number from 1 to limit, else an error at the value. */
static bool config_number(const struct node *item, uint64_t limit, uint64_t *number,
			  struct diag *diag)
{
	if (item->rhs->kind != NODE_INT || item->rhs->int_value < 1 ||
	    item->rhs->int_value > limit) {
		diag_error(diag, item->rhs->loc, "config %s must be a number from 1 to %llu",
			   item->lhs->name, (unsigned long long)limit);
		return false;
	}
	*number = item->rhs->int_value;
	return true;
}

static bool config_one_of(const struct node *item, const char *value,
			  const char *const *choices, struct diag *diag)
{
	for (const char *const *choice = choices; *choice; choice++) {
		if (strcmp(value, *choice) == 0)
			return true;
	}
	struct strbuf list;
	strbuf_init(&list);
	for (const char *const *choice = choices; *choice; choice++)
		strbuf_printf(&list, "%s%s", choice == choices ? "" : choice[1] ? ", " : " or ",
			      *choice);
	diag_error(diag, item->rhs->loc, "config %s must be %s, not '%s'", item->lhs->name,
		   list.data, value);
	strbuf_free(&list);
	return false;
}

static bool config_apply_item(const struct node *item, struct compile_options *options,
			      const struct compile_options *given, struct program *program,
			      struct diag *diag)
{
	static const char *const stack_modes[] = { "bpftrace", "perf", "raw", NULL };
	static const char *const missing_modes[] = { "error", "warn", "ignore", NULL };
	const struct setting *setting = setting_find(item->lhs->name);
	char buffer[32], *error = NULL, *converted;
	const char *value = config_value_text(item->rhs, buffer, sizeof(buffer));
	uint64_t number;

	if (!setting) {
		diag_error(diag, item->lhs->loc, "unknown config key '%s' (see docs/compat.md for the "
			   "keys sonde reads)", item->lhs->name);
		return false;
	}
	switch (setting->id) {
	case SETTING_MAX_STRLEN:
		if (!config_number(item, CONFIG_MAX_STRLEN_LIMIT, &number, diag))
			return false;
		if (!given->max_strlen)
			options->max_strlen = (int)number;
		return true;
	case SETTING_MAX_MAP_KEYS:
		if (!config_number(item, MAP_ENTRIES_LIMIT, &number, diag))
			return false;
		if (!given->max_map_entries)
			options->max_map_entries = (uint32_t)number;
		return true;
	case SETTING_STACK_MODE:
		if (!config_one_of(item, value, stack_modes, diag))
			return false;
		if (!given->stack_mode)
			options->stack_mode = value;
		return true;
	case SETTING_MAX_CAT_BYTES:
		if (!config_number(item, 1u << 30, &number, diag))
			return false;
		program->settings.max_cat_bytes = (uint32_t)number;
		return true;
	case SETTING_PERF_RB_PAGES:
	case SETTING_PRINT_MAPS_ON_EXIT:
		converted = setting_convert(setting, value, &error);
		if (!converted) {
			diag_error(diag, item->rhs->loc, "config %s", error);
			free(error);
			return false;
		}
		if (setting->id == SETTING_PERF_RB_PAGES)
			program->settings.ringbuf_size = (uint32_t)strtoul(converted, NULL, 10);
		else
			program->settings.print_maps_on_exit = converted[0] == '1' ? 1 : -1;
		free(converted);
		return true;
	case SETTING_MISSING_PROBES:
		if (!config_one_of(item, value, missing_modes, diag))
			return false;
		if (!given->missing_probes)
			options->missing_probes = value;
		return true;
	case SETTING_UNUSED:
		diag_warning(diag, item->lhs->loc, "config %s has no effect: %s", item->lhs->name,
			     setting->reason);
		return true;
	}
	return true;
}

int config_apply(const struct ast *ast, struct compile_options *options,
		 const struct compile_options *given, struct program *program, struct diag *diag)
{
	int result = 0;

	for (const struct node *item = ast->config; item; item = item->next) {
		if (!config_apply_item(item, options, given, program, diag))
			result = -1;
	}
	return result;
}
