/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Diagnostics: every phase reports problems here, with a location, and the
 * user sees them the way a C compiler shows them:
 *
 *     stdin:1:23: error: expected ';' or '}' after statement, found ')'
 *     BEGIN { printf("hi") ) }
 *                           ^
 *
 * The source line is quoted from struct source, so callers only hand over a
 * line and column. Tabs before the column are copied into the caret line
 * rather than replaced by spaces, so the caret stays under the right
 * character whatever the terminal's tab width is. Underlining stops at the
 * end of the line even if the token (an unterminated string, say) runs on.
 */
#include "common/diag.h"

#include <stdarg.h>
#include <string.h>

void diag_init(struct diag *diag, const struct source *source, FILE *out)
{
	diag->source = source;
	diag->out = out ? out : stderr;
	diag->error_count = 0;
	diag->first_loc = (struct src_loc){ 0, 0, 0 };
	diag->first_message[0] = '\0';
}

/* Finds line `line` (from 1) of text; sets *length to its length without the newline. */
static const char *diag_find_line(const char *text, int line, size_t *length)
{
	const char *start = text;
	const char *end;

	if (!text || line < 1)
		return NULL;
	while (--line > 0) {
		start = strchr(start, '\n');
		if (!start)
			return NULL;
		start++;
	}
	end = strchr(start, '\n');
	*length = end ? (size_t)(end - start) : strlen(start);
	return start;
}

static void diag_quote_source(struct diag *diag, struct src_loc loc)
{
	const char *line;
	size_t line_length = 0;
	size_t column, underline, i;

	if (!diag->source || loc.column < 1)
		return;
	line = diag_find_line(diag->source->text, loc.line, &line_length);
	if (!line)
		return;
	/* A trailing carriage return would move the caret line's cursor. */
	if (line_length > 0 && line[line_length - 1] == '\r')
		line_length--;
	fprintf(diag->out, "%.*s\n", (int)line_length, line);

	column = (size_t)loc.column - 1;
	if (column > line_length)
		column = line_length;
	for (i = 0; i < column; i++)
		fputc(line[i] == '\t' ? '\t' : ' ', diag->out);
	fputc('^', diag->out);
	underline = loc.length > 1 ? (size_t)loc.length - 1 : 0;
	if (column + 1 + underline > line_length)
		underline = line_length > column + 1 ? line_length - column - 1 : 0;
	for (i = 0; i < underline; i++)
		fputc('~', diag->out);
	fputc('\n', diag->out);
}

/* Counts an error; false when it is one too many to print. The first of
 * those prints the one line that says the rest are left out. */
static bool diag_count_error(struct diag *diag)
{
	diag->error_count++;
	if (diag->error_count <= DIAG_ERRORS_MAX)
		return true;
	if (diag->error_count == DIAG_ERRORS_MAX + 1) {
		fprintf(diag->out, "%s: error: too many errors (%d), stopping\n",
			diag->source && diag->source->filename ? diag->source->filename : "stdin",
			DIAG_ERRORS_MAX);
		fflush(diag->out);
	}
	return false;
}

bool diag_too_many(const struct diag *diag)
{
	return diag->error_count > DIAG_ERRORS_MAX;
}

static void diag_report(struct diag *diag, struct src_loc loc, const char *severity,
			const char *fmt, va_list ap)
{
	const char *filename = diag->source && diag->source->filename ? diag->source->filename
								       : "stdin";

	if (loc.line > 0 && loc.column > 0)
		fprintf(diag->out, "%s:%d:%d: %s: ", filename, loc.line, loc.column, severity);
	else
		fprintf(diag->out, "%s: %s: ", filename, severity);
	vfprintf(diag->out, fmt, ap);
	fputc('\n', diag->out);
	if (loc.line > 0)
		diag_quote_source(diag, loc);
	fflush(diag->out);
}

void diag_error(struct diag *diag, struct src_loc loc, const char *fmt, ...)
{
	va_list ap;

	if (!diag_count_error(diag))
		return;
	if (diag->error_count == 1) {
		diag->first_loc = loc;
		va_start(ap, fmt);
		vsnprintf(diag->first_message, sizeof(diag->first_message), fmt, ap);
		va_end(ap);
	}
	va_start(ap, fmt);
	diag_report(diag, loc, "error", fmt, ap);
	va_end(ap);
}

void diag_warning(struct diag *diag, struct src_loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_report(diag, loc, "warning", fmt, ap);
	va_end(ap);
}

void diag_note(struct diag *diag, struct src_loc loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_report(diag, loc, "note", fmt, ap);
	va_end(ap);
}

void diag_error_noloc(struct diag *diag, const char *fmt, ...)
{
	struct src_loc none = { 0, 0, 0 };
	va_list ap;

	if (!diag_count_error(diag))
		return;
	va_start(ap, fmt);
	diag_report(diag, none, "error", fmt, ap);
	va_end(ap);
}
