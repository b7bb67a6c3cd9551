/* SPDX-License-Identifier: Apache-2.0 */
/* BTF function information; see func_info.h. */
#include "func_info.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "../common/util.h"

int func_info_build(const struct probe_program *probe, struct func_info *info)
{
	info->btf_fd = -1;
	info->records = NULL;
	info->count = 0;
	if (probe->function_count <= 1)
		return 0;
	struct btf *btf = btf__new_empty();
	if (!btf)
		return -errno;
	int long_type = btf__add_int(btf, "long", 8, BTF_INT_SIGNED);
	int pointer_type = btf__add_ptr(btf, 0);
	int main_proto = btf__add_func_proto(btf, long_type);
	btf__add_func_param(btf, "ctx", pointer_type);
	int main_func = btf__add_func(btf, "sonde_probe", BTF_FUNC_STATIC, main_proto);
	int callback_proto = btf__add_func_proto(btf, long_type);
	const char *params[] = { "map", "key", "value", "context" };
	for (int i = 0; i < 4; i++)
		btf__add_func_param(btf, params[i], pointer_type);
	int callback_func = btf__add_func(btf, "sonde_callback", BTF_FUNC_STATIC, callback_proto);
	if (long_type < 0 || pointer_type < 0 || main_func < 0 || callback_func < 0) {
		btf__free(btf);
		return -EINVAL;
	}
	int err = btf__load_into_kernel(btf);
	if (err) {
		btf__free(btf);
		return err < 0 ? err : -EINVAL;
	}
	info->btf_fd = dup(btf__fd(btf));
	btf__free(btf);
	info->records = xcalloc(probe->function_count, sizeof(*info->records));
	for (int i = 0; i < probe->function_count; i++) {
		info->records[i].insn_off = probe->function_starts[i];
		info->records[i].type_id = i == 0 ? main_func : callback_func;
	}
	info->count = probe->function_count;
	return 0;
}

void func_info_free(struct func_info *info)
{
	if (info->btf_fd >= 0)
		close(info->btf_fd);
	free(info->records);
	info->records = NULL;
	info->btf_fd = -1;
}
