/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The config block's settings applied to the compile options and to the
 * program's run settings (config.c).
 */
#ifndef SONDE_COMPILER_CONFIG_H
#define SONDE_COMPILER_CONFIG_H

#include "common/diag.h"
#include "common/program.h"
#include "compiler/ast.h"
#include "compiler/compiler.h"

/* Applies ast->config: options (a copy of given) takes the values given
 * left unset; program->settings the run's. Returns 0, or -1 after
 * reporting every bad key and value through diag. */
int config_apply(const struct ast *ast, struct compile_options *options,
		 const struct compile_options *given, struct program *program, struct diag *diag);

#endif
