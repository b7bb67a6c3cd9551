/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a family file of builtins includes: the record type, and the parts
 * of semantic analysis and code generation a builtin's callbacks use.
 */
#ifndef SONDE_BUILTINS_FAMILY_H
#define SONDE_BUILTINS_FAMILY_H

#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/names.h"
#include "../../common/printf_format.h"
#include "../../kernel/btf.h"
#include "../../kernel/kallsyms.h"
#include "../codegen_internal.h"
#include "../sema_internal.h"
#include "builtins.h"

/* The check of a variable that is an unsigned 64-bit integer. */
void builtin_check_u64(struct sema *sema, struct node *node);

#endif
