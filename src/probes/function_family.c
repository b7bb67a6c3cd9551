/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the two families that trace kernel functions share: kprobe.c
 * (kprobe/kretprobe) and fentry.c (fentry/fexit) each describe themselves
 * in a struct function_family, and a probe written for one family goes
 * through function_family_expand, which expands it with its own family
 * when the kernel has it and with the other one standing in when not.
 */
#include "provider.h"

#include <errno.h>
#include <string.h>

#include "../kernel/features.h"

const char *function_family_provider_name(const struct probe_spec *spec)
{
	const struct provider *provider = provider_lookup(spec->provider_name);
	return provider ? provider->name : spec->provider_name;
}

const char *function_family_module(const char *module)
{
	return module ? module : "vmlinux";
}

int function_family_expand(const struct function_family *written,
			   const struct function_family *stand_in, const struct probe_spec *spec,
			   bool is_return, probe_point_list *out, char **error)
{
	const char *kind = written->kinds[is_return];
	const char *refusal;
	int before = out->count, err;

	if (feature_available(written->feature))
		return written->expand_points(spec, is_return, out, error);
	if (!feature_available(stand_in->feature)) {
		*error = xasprintf("%s %s not available on this kernel (%s); %s cannot stand in "
				   "either (%s)", kind, written->verb, feature_reason(written->feature),
				   stand_in->standing_names[is_return],
				   feature_reason(stand_in->feature));
		return probe_points_unavailable(written->expand_points, spec, is_return, out, error);
	}
	refusal = stand_in->refuses ? stand_in->refuses(spec) : NULL;
	if (refusal) {
		*error = xasprintf("%s %s not available on this kernel (%s), and %s, which stands "
				   "in for them, %s", kind, written->verb,
				   feature_reason(written->feature), stand_in->kinds[is_return],
				   refusal);
		return -EOPNOTSUPP;
	}
	err = stand_in->expand_points(spec, is_return, out, error);
	if (err)
		return err;
	for (int i = before; i < out->count; i++)
		out->items[i]->note = xasprintf("%s %s not available on this kernel; %s is traced "
						"with %s instead%s", kind, written->verb, spec->text,
						stand_in->traced_with[is_return],
						stand_in->traced_detail[is_return]);
	return 0;
}
