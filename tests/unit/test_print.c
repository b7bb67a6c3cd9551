/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for map printing (print.c), value and event formatting (format.c)
 * and format strings (printf_format.c).
 *
 * Map cases create real BPF maps (skipped without root), fill them the
 * way sonde's BPF code would (layouts from program.h, per-CPU values
 * written into chosen CPUs' slots), print them into a memory stream and compare
 * with the text bpftrace 0.17 printed for the program quoted above each
 * case. Cases marked "sonde" have no bpftrace counterpart or show where
 * sonde deliberately differs (docs/compat.md lists those).
 */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "aggregations/aggregation.h"
#include "common/names.h"
#include "common/printf_format.h"
#include "runtime/runtime.h"

static int passed;
static int failed;
static int possible_cpus;
static int current_cpu; /* which CPU's slot aggregations write to */

static void check_text(const char *name, const char *got, const char *expected)
{
	if (strcmp(got, expected) == 0) {
		printf("PASS %s\n", name);
		passed++;
		return;
	}
	printf("FAIL %s: output differs\n--- expected\n%s--- got\n%s---\n", name, expected, got);
	failed++;
}

static void check_true(const char *name, bool ok, const char *why)
{
	if (ok) {
		printf("PASS %s\n", name);
		passed++;
	} else {
		printf("FAIL %s: %s\n", name, why);
		failed++;
	}
}

/* ---- types ---- */

static struct type *t_i64(void) { return type_int(8, true); }
static struct type *t_u64(void) { return type_int(8, false); }
static struct type *t_str(void) { return type_string(16); }

static struct type *t_tuple2(struct type *a, struct type *b)
{
	struct type *elements[2] = { a, b };
	return type_tuple(elements, 2);
}

static struct type *t_inet(void)
{
	struct type *type = type_new(TYPE_INET);
	type->size = 24;
	return type;
}

static struct type *t_agg(const struct aggregation *kind, bool is_signed)
{
	return type_aggregation(kind, is_signed);
}

/* The parameters as lhist.c and hist.c keep them in aggregation_params. */
#define LHIST_MIN(type) ((type)->aggregation_params[0])
#define LHIST_MAX(type) ((type)->aggregation_params[1])
#define LHIST_STEP(type) ((type)->aggregation_params[2])
#define HIST_BITS(type) ((int)(type)->aggregation_params[0])

static struct type *t_lhist(int64_t min, int64_t max, int64_t step)
{
	struct type *type = type_aggregation(&aggregation_lhist, true);
	LHIST_MIN(type) = min;
	LHIST_MAX(type) = max;
	LHIST_STEP(type) = step;
	return type;
}

static struct type *t_hist(int bits)
{
	struct type *type = type_aggregation(&aggregation_hist, true);
	type->aggregation_params[0] = bits;
	return type;
}

/* ---- packing keys and values as program.h lays them out ---- */

static void pack_into(unsigned char *out, const struct type *type, va_list *ap)
{
	switch (type->kind) {
	case TYPE_INT:
	case TYPE_POINTER: {
		int64_t v = va_arg(*ap, long long);
		memcpy(out, &v, 8);
		break;
	}
	case TYPE_STRING: {
		const char *s = va_arg(*ap, const char *);
		strncpy((char *)out, s, type->size);
		break;
	}
	case TYPE_INET: {
		int family = va_arg(*ap, int);
		const char *text = va_arg(*ap, const char *);
		uint64_t f = family;
		memcpy(out, &f, 8);
		inet_pton(family, text, out + 8);
		break;
	}
	case TYPE_TUPLE:
		for (int i = 0; i < type->field_count; i++)
			pack_into(out + type->fields[i].offset, type->fields[i].type, ap);
		break;
	default:
		break;
	}
}

/* Bytes of a key or value; the result lives until 8 more packs. */
static const unsigned char *pack(const struct type *type, ...)
{
	static unsigned char buffers[8][256];
	static int next;
	unsigned char *out = buffers[next];
	va_list ap;

	next = (next + 1) % 8;
	memset(out, 0, 256);
	if (!type)
		return out;
	va_start(ap, type);
	pack_into(out, type, &ap);
	va_end(ap);
	return out;
}

#define NOKEY pack(NULL)

/* ---- maps ---- */

static struct map_desc map_new(const char *name, struct type *key_type, bool multi,
			       struct type *value_type)
{
	struct map_desc map = { 0 };
	bool histogram = type_is_bucketed(value_type);
	int user = key_type ? (type_storage_size(key_type) + 7) & ~7 : 0;

	map.name = (char *)name;
	map.role = MAP_ROLE_USER;
	map.key_type = key_type;
	map.key_is_multi = multi;
	map.value_type = value_type;
	map.key_size = histogram ? user + 8 : (user ? user : 8);
	map.value_size = type_storage_size(value_type);
	map.bpf_map_type = type_is_aggregation(value_type) ? BPF_MAP_TYPE_PERCPU_HASH
							   : BPF_MAP_TYPE_HASH;
	map.max_entries = 256;
	map.fd = bpf_map_create(map.bpf_map_type, NULL, map.key_size, map.value_size,
				map.max_entries, NULL);
	if (map.fd < 0) {
		fprintf(stderr, "bpf_map_create: %s (run as root)\n", strerror(-map.fd));
		exit(2);
	}
	return map;
}

static void map_free(struct map_desc *map)
{
	close(map->fd);
	map->fd = -1;
}

static void set_value(struct map_desc *map, const unsigned char *key, const unsigned char *value)
{
	if (bpf_map_update_elem(map->fd, key, value, BPF_ANY) != 0) {
		fprintf(stderr, "update %s failed: %s\n", map->name, strerror(errno));
		exit(2);
	}
}

/* Per-CPU read-modify-write of current_cpu's slot. */
static void percpu_change(struct map_desc *map, const unsigned char *key, int field,
			  uint64_t value, bool add)
{
	uint32_t stride = (map->value_size + 7) & ~7u;
	unsigned char *values = calloc(possible_cpus, stride);
	uint64_t slot;

	bpf_map_lookup_elem(map->fd, key, values);
	unsigned char *at = values + (size_t)current_cpu * stride + field * 8;
	memcpy(&slot, at, 8);
	slot = add ? slot + value : value;
	memcpy(at, &slot, 8);
	set_value(map, key, values);
	free(values);
}

static uint64_t percpu_get(struct map_desc *map, const unsigned char *key, int field)
{
	uint32_t stride = (map->value_size + 7) & ~7u;
	unsigned char *values = calloc(possible_cpus, stride);
	uint64_t slot;

	bpf_map_lookup_elem(map->fd, key, values);
	memcpy(&slot, values + (size_t)current_cpu * stride + field * 8, 8);
	free(values);
	return slot;
}

static void agg_count(struct map_desc *map, const unsigned char *key)
{
	percpu_change(map, key, 0, 1, true);
}

static void agg_sum(struct map_desc *map, const unsigned char *key, int64_t v)
{
	percpu_change(map, key, 0, (uint64_t)v, true);
}

static void agg_avg(struct map_desc *map, const unsigned char *key, int64_t v)
{
	percpu_change(map, key, 0, (uint64_t)v, true);
	percpu_change(map, key, 1, 1, true);
}

static void agg_min_max(struct map_desc *map, const unsigned char *key, int64_t v, bool is_max)
{
	bool set = percpu_get(map, key, 1);
	int64_t old = (int64_t)percpu_get(map, key, 0);

	if (!set || (is_max ? v > old : v < old)) {
		percpu_change(map, key, 0, (uint64_t)v, false);
		percpu_change(map, key, 1, 1, false);
	}
}

static void agg_bucket(struct map_desc *map, const unsigned char *key, uint64_t bucket)
{
	unsigned char full[256] = { 0 };
	int user = map->key_type ? type_storage_size(map->key_type) : 0;

	memcpy(full, key, user);
	memcpy(full + user, &bucket, 8);
	percpu_change(map, full, 0, 1, true);
}

/* hist bucket numbering from program.h */
static void agg_hist(struct map_desc *map, const unsigned char *key, int64_t v)
{
	int k = HIST_BITS(map->value_type);
	uint64_t bucket;

	if (v < 0) {
		bucket = 0;
	} else if (v == 0) {
		bucket = 1;
	} else {
		uint64_t u = (uint64_t)v;
		int l = 63 - __builtin_clzll(u);
		uint64_t rest = u - (1ULL << l);
		uint64_t s = l >= k ? rest >> (l - k) : rest << (k - l);
		bucket = 2 + ((uint64_t)l << k) + s;
	}
	agg_bucket(map, key, bucket);
}

static void agg_lhist(struct map_desc *map, const unsigned char *key, int64_t v)
{
	const struct type *type = map->value_type;
	int64_t n = (LHIST_MAX(type) - LHIST_MIN(type)) / LHIST_STEP(type);
	uint64_t bucket;

	if (v < LHIST_MIN(type))
		bucket = 0;
	else if (v >= LHIST_MAX(type))
		bucket = n + 1;
	else
		bucket = (v - LHIST_MIN(type)) / LHIST_STEP(type) + 1;
	agg_bucket(map, key, bucket);
}

static char *capture_map(const struct map_desc *map, bool json, int top, int div)
{
	char *text = NULL;
	size_t length = 0;
	FILE *file = open_memstream(&text, &length);
	struct output out = { .file = file, .json = json };

	if (print_map(&out, map, top, div) != 0)
		fprintf(file, "<print_map failed>");
	fclose(file);
	return text;
}

static void expect_map(const char *name, struct map_desc *map, bool json, int top, int div,
		       const char *expected)
{
	char *got = capture_map(map, json, top, div);
	check_text(name, got, expected);
	free(got);
	map_free(map);
}

/* ---- plain maps ---- */

/* bpftrace -e 'BEGIN { @c = count(); @c = count(); @c = count(); exit(); }' */
static void test_count_scalar(void)
{
	struct map_desc m = map_new("@c", NULL, false, t_agg(&aggregation_count, false));
	agg_count(&m, NOKEY);
	agg_count(&m, NOKEY);
	agg_count(&m, NOKEY);
	expect_map("count_scalar", &m, false, 0, 0, "@c: 3\n");
}

/* bpftrace -e 'BEGIN { @s = sum(-5); @s = sum(2); exit(); }' */
static void test_sum_negative(void)
{
	struct map_desc m = map_new("@s", NULL, false, t_agg(&aggregation_sum, true));
	agg_sum(&m, NOKEY, -5);
	agg_sum(&m, NOKEY, 2);
	expect_map("sum_negative", &m, false, 0, 0, "@s: -3\n");
}

/* bpftrace -e 'BEGIN { @a["x"] = count(); @a["x"] = count(); @a["x"] = count();
 *   @a["y"] = count(); @a["z"] = count(); @a["z"] = count(); exit(); }' */
static void test_count_keyed(void)
{
	struct map_desc m = map_new("@a", t_str(), false, t_agg(&aggregation_count, false));
	for (int i = 0; i < 3; i++)
		agg_count(&m, pack(m.key_type, "x"));
	agg_count(&m, pack(m.key_type, "y"));
	agg_count(&m, pack(m.key_type, "z"));
	agg_count(&m, pack(m.key_type, "z"));
	expect_map("count_keyed", &m, false, 0, 0,
		   "@a[y]: 1\n"
		   "@a[z]: 2\n"
		   "@a[x]: 3\n");
}

/* sonde: count spread over CPUs is summed */
static void test_count_per_cpu(void)
{
	struct map_desc m = map_new("@c", t_i64(), false, t_agg(&aggregation_count, false));
	for (int cpu = 0; cpu < possible_cpus; cpu++) {
		current_cpu = cpu;
		agg_count(&m, pack(m.key_type, 7LL));
		agg_count(&m, pack(m.key_type, 7LL));
		agg_count(&m, pack(m.key_type, 8LL));
	}
	current_cpu = 0;
	char expected[128];
	snprintf(expected, sizeof(expected), "@c[8]: %d\n@c[7]: %d\n", possible_cpus,
		 2 * possible_cpus);
	expect_map("count_per_cpu", &m, false, 0, 0, expected);
}

/* bpftrace -e 'BEGIN { @n[3] = -7; @n[-5] = 1; @n[10] = 100; exit(); }' */
static void test_int_signed_keys(void)
{
	struct map_desc m = map_new("@n", t_i64(), false, t_i64());
	set_value(&m, pack(m.key_type, 3LL), pack(m.value_type, -7LL));
	set_value(&m, pack(m.key_type, -5LL), pack(m.value_type, 1LL));
	set_value(&m, pack(m.key_type, 10LL), pack(m.value_type, 100LL));
	expect_map("int_signed_keys", &m, false, 0, 0,
		   "@n[3]: -7\n"
		   "@n[-5]: 1\n"
		   "@n[10]: 100\n");
}

/* bpftrace -e 'BEGIN { @s["b"] = "zzz"; @s["a"] = "yyy"; @s["c"] = "aaa"; exit(); }' */
static void test_string_values(void)
{
	struct map_desc m = map_new("@s", t_str(), false, t_str());
	set_value(&m, pack(m.key_type, "b"), pack(m.value_type, "zzz"));
	set_value(&m, pack(m.key_type, "a"), pack(m.value_type, "yyy"));
	set_value(&m, pack(m.key_type, "c"), pack(m.value_type, "aaa"));
	expect_map("string_values", &m, false, 0, 0,
		   "@s[a]: yyy\n"
		   "@s[b]: zzz\n"
		   "@s[c]: aaa\n");
}

/* sonde: bpftrace 0.17 sorts integer keys as unsigned (@s[-10] after @s[5]);
 * sonde sorts signed keys numerically.
 * bpftrace -e 'BEGIN { @s[-1]="a"; @s[5]="b"; @s[-10]="c"; @s[0]="d"; exit(); }' */
static void test_signed_key_order(void)
{
	struct map_desc m = map_new("@s", t_i64(), false, t_str());
	set_value(&m, pack(m.key_type, -1LL), pack(m.value_type, "a"));
	set_value(&m, pack(m.key_type, 5LL), pack(m.value_type, "b"));
	set_value(&m, pack(m.key_type, -10LL), pack(m.value_type, "c"));
	set_value(&m, pack(m.key_type, 0LL), pack(m.value_type, "d"));
	expect_map("signed_key_order", &m, false, 0, 0,
		   "@s[-10]: c\n"
		   "@s[-1]: a\n"
		   "@s[0]: d\n"
		   "@s[5]: b\n");
}

/* bpftrace -e 'BEGIN { @t[1] = (3, "a"); @t[2] = (1, "b"); @t[3] = (2, "c"); exit(); }' */
static void test_tuple_values(void)
{
	struct map_desc m = map_new("@t", t_i64(), false, t_tuple2(t_i64(), t_str()));
	set_value(&m, pack(m.key_type, 1LL), pack(m.value_type, 3LL, "a"));
	set_value(&m, pack(m.key_type, 2LL), pack(m.value_type, 1LL, "b"));
	set_value(&m, pack(m.key_type, 3LL), pack(m.value_type, 2LL, "c"));
	expect_map("tuple_values", &m, false, 0, 0,
		   "@t[1]: (3, a)\n"
		   "@t[2]: (1, b)\n"
		   "@t[3]: (2, c)\n");
}

/* bpftrace -e 'BEGIN { @t = (1, "a", (2, "b"), -5); exit(); }' */
static void test_tuple_nested(void)
{
	struct type *inner = t_tuple2(t_i64(), t_str());
	struct type *elements[4] = { t_i64(), t_str(), inner, t_i64() };
	struct type *outer = type_tuple(elements, 4);
	struct map_desc m = map_new("@t", NULL, false, outer);
	set_value(&m, NOKEY, pack(outer, 1LL, "a", 2LL, "b", -5LL));
	expect_map("tuple_nested", &m, false, 0, 0, "@t: (1, a, (2, b), -5)\n");
}

/* bpftrace -e 'BEGIN { @m[1, "a"] = 5; @m[2, "b"] = 3; @m[7, "c"] = 9; exit(); }' */
static void test_multi_key_count(void)
{
	struct map_desc m = map_new("@m", t_tuple2(t_i64(), t_str()), true, t_i64());
	set_value(&m, pack(m.key_type, 1LL, "a"), pack(m.value_type, 5LL));
	set_value(&m, pack(m.key_type, 2LL, "b"), pack(m.value_type, 3LL));
	set_value(&m, pack(m.key_type, 7LL, "c"), pack(m.value_type, 9LL));
	expect_map("multi_key_count", &m, false, 0, 0,
		   "@m[2, b]: 3\n"
		   "@m[1, a]: 5\n"
		   "@m[7, c]: 9\n");
}

/* bpftrace -e 'BEGIN { @m[2, "b"] = "x"; @m[1, "z"] = "y"; @m[2, "a"] = "z";
 *   @m[1, "a"] = "w"; exit(); }' */
static void test_multi_key_strings(void)
{
	struct map_desc m = map_new("@m", t_tuple2(t_i64(), t_str()), true, t_str());
	set_value(&m, pack(m.key_type, 2LL, "b"), pack(m.value_type, "x"));
	set_value(&m, pack(m.key_type, 1LL, "z"), pack(m.value_type, "y"));
	set_value(&m, pack(m.key_type, 2LL, "a"), pack(m.value_type, "z"));
	set_value(&m, pack(m.key_type, 1LL, "a"), pack(m.value_type, "w"));
	expect_map("multi_key_strings", &m, false, 0, 0,
		   "@m[1, a]: w\n"
		   "@m[1, z]: y\n"
		   "@m[2, a]: z\n"
		   "@m[2, b]: x\n");
}

/* sonde: a tuple used as one key keeps its parentheses (bpftrace 0.17 has no
 * tuple keys; later versions print them this way) */
static void test_tuple_key(void)
{
	struct map_desc m = map_new("@t", t_tuple2(t_i64(), t_str()), false, t_i64());
	set_value(&m, pack(m.key_type, 1LL, "a"), pack(m.value_type, 5LL));
	expect_map("tuple_key", &m, false, 0, 0, "@t[(1, a)]: 5\n");
}

/* bpftrace -e 'BEGIN { @q[(uint8 *)0x10] = 1; @q[(uint8 *)0x20] = 2; exit(); }' */
static void test_pointer_key(void)
{
	struct map_desc m = map_new("@q", type_pointer(type_int(1, false), false), false, t_i64());
	set_value(&m, pack(m.key_type, 0x10LL), pack(m.value_type, 1LL));
	set_value(&m, pack(m.key_type, 0x20LL), pack(m.value_type, 2LL));
	expect_map("pointer_key", &m, false, 0, 0,
		   "@q[0x10]: 1\n"
		   "@q[0x20]: 2\n");
}

/* bpftrace -e 'BEGIN { @p = (int8 *)0x1234; exit(); }': hex as current bpftrace (0.17: 4660) */
static void test_pointer_value(void)
{
	struct map_desc m = map_new("@p", NULL, false, type_pointer(type_int(1, true), false));
	set_value(&m, NOKEY, pack(m.value_type, 0x1234LL));
	expect_map("pointer_value", &m, false, 0, 0, "@p: 0x1234\n");
}

/* bpftrace -e 'BEGIN { @j[ntop(2, 0x0100007f)] = 5; @j[ntop(0x0200a8c0)] = 3; exit(); }' */
static void test_inet_key(void)
{
	struct map_desc m = map_new("@j", t_inet(), false, t_i64());
	set_value(&m, pack(m.key_type, AF_INET, "127.0.0.1"), pack(m.value_type, 5LL));
	set_value(&m, pack(m.key_type, AF_INET, "192.168.0.2"), pack(m.value_type, 3LL));
	expect_map("inet_key", &m, false, 0, 0,
		   "@j[192.168.0.2]: 3\n"
		   "@j[127.0.0.1]: 5\n");
}

/* bpftrace -e 'BEGIN { @v6 = ntop(pton("fe80::1")); exit(); }' */
static void test_inet_value_v6(void)
{
	struct map_desc m = map_new("@v6", NULL, false, t_inet());
	set_value(&m, NOKEY, pack(m.value_type, AF_INET6, "fe80::1"));
	expect_map("inet_value_v6", &m, false, 0, 0, "@v6: fe80::1\n");
}

/* sonde: bpftrace 0.17 prints ntop() values of a keyed map without newlines
 * between them ("@i[1]: 127.0.0.1@i[2]: 192.168.0.2").
 * bpftrace -e 'BEGIN { @i[1] = ntop(0x0100007f); @i[2] = ntop(0x0200a8c0); exit(); }' */
static void test_inet_values(void)
{
	struct map_desc m = map_new("@i", t_i64(), false, t_inet());
	set_value(&m, pack(m.key_type, 1LL), pack(m.value_type, AF_INET, "127.0.0.1"));
	set_value(&m, pack(m.key_type, 2LL), pack(m.value_type, AF_INET, "192.168.0.2"));
	expect_map("inet_values", &m, false, 0, 0,
		   "@i[1]: 127.0.0.1\n"
		   "@i[2]: 192.168.0.2\n");
}

/* ---- avg, stats, min, max ---- */

/* bpftrace -e 'BEGIN { @a = avg(10); @a = avg(-3); exit(); }' */
static void test_avg_scalar(void)
{
	struct map_desc m = map_new("@a", NULL, false, t_agg(&aggregation_avg, true));
	agg_avg(&m, NOKEY, 10);
	current_cpu = possible_cpus - 1;
	agg_avg(&m, NOKEY, -3);
	current_cpu = 0;
	expect_map("avg_scalar", &m, false, 0, 0, "@a: 3\n");
}

/* bpftrace -e 'BEGIN { @k["a"] = avg(3); @k["a"] = avg(5); @k["b"] = avg(1);
 *   @k["c"] = avg(-8); exit(); }' */
static void test_avg_keyed(void)
{
	struct map_desc m = map_new("@k", t_str(), false, t_agg(&aggregation_avg, true));
	agg_avg(&m, pack(m.key_type, "a"), 3);
	agg_avg(&m, pack(m.key_type, "a"), 5);
	agg_avg(&m, pack(m.key_type, "b"), 1);
	agg_avg(&m, pack(m.key_type, "c"), -8);
	expect_map("avg_keyed", &m, false, 0, 0,
		   "@k[c]: -8\n"
		   "@k[b]: 1\n"
		   "@k[a]: 4\n");
}

/* bpftrace -e 'BEGIN { @st = stats(10); @st = stats(-1); @st = stats(4); exit(); }' */
static void test_stats_scalar(void)
{
	struct map_desc m = map_new("@st", NULL, false, t_agg(&aggregation_stats, true));
	agg_avg(&m, NOKEY, 10);
	agg_avg(&m, NOKEY, -1);
	agg_avg(&m, NOKEY, 4);
	expect_map("stats_scalar", &m, false, 0, 0, "@st: { .count = 3, .average = 4, .total = 13 }\n");
}

/* bpftrace -e 'BEGIN { @ks["x"] = stats(3); @ks["y"] = stats(1); @ks["y"] = stats(2); exit(); }' */
static void test_stats_keyed(void)
{
	struct map_desc m = map_new("@ks", t_str(), false, t_agg(&aggregation_stats, true));
	agg_avg(&m, pack(m.key_type, "x"), 3);
	agg_avg(&m, pack(m.key_type, "y"), 1);
	agg_avg(&m, pack(m.key_type, "y"), 2);
	expect_map("stats_keyed", &m, false, 0, 0,
		   "@ks[y]: { .count = 2, .average = 1, .total = 3 }\n"
		   "@ks[x]: { .count = 1, .average = 3, .total = 3 }\n");
}

/* bpftrace -e 'BEGIN { @mi = min(-4); @mi = min(7); exit(); }' */
static void test_min_scalar(void)
{
	struct map_desc m = map_new("@mi", NULL, false, t_agg(&aggregation_min, true));
	agg_min_max(&m, NOKEY, -4, false);
	current_cpu = possible_cpus - 1;
	agg_min_max(&m, NOKEY, 7, false);
	current_cpu = 0;
	expect_map("min_scalar", &m, false, 0, 0, "@mi: -4\n");
}

/* bpftrace -e 'BEGIN { @mx["a"] = max(5); @mx["a"] = max(3); @mx["b"] = max(2);
 *   @mx["c"] = max(9); exit(); }' */
static void test_max_keyed(void)
{
	struct map_desc m = map_new("@mx", t_str(), false, t_agg(&aggregation_max, true));
	agg_min_max(&m, pack(m.key_type, "a"), 5, true);
	agg_min_max(&m, pack(m.key_type, "a"), 3, true);
	agg_min_max(&m, pack(m.key_type, "b"), 2, true);
	agg_min_max(&m, pack(m.key_type, "c"), 9, true);
	expect_map("max_keyed", &m, false, 0, 0,
		   "@mx[b]: 2\n"
		   "@mx[a]: 5\n"
		   "@mx[c]: 9\n");
}

/* sonde: bpftrace 0.17 loses max() of negative values (prints nothing).
 * bpftrace -e 'BEGIN { @ma = max(-4); @ma = max(-9); exit(); }' */
static void test_max_negative(void)
{
	struct map_desc m = map_new("@ma", NULL, false, t_agg(&aggregation_max, true));
	agg_min_max(&m, NOKEY, -4, true);
	current_cpu = possible_cpus - 1;
	agg_min_max(&m, NOKEY, -9, true);
	current_cpu = 0;
	expect_map("max_negative", &m, false, 0, 0, "@ma: -4\n");
}

/* ---- hist ---- */

/* bpftrace -e 'BEGIN { @h = hist(0); @h = hist(1); @h = hist(1); @h = hist(2);
 *   @h = hist(1024); @h = hist(1500); @h = hist(3145728); exit(); }' */
static void test_hist_basic(void)
{
	struct map_desc m = map_new("@h", NULL, false, t_hist(0));
	int64_t values[] = { 0, 1, 1, 2, 1024, 1500, 3145728 };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		agg_hist(&m, NOKEY, values[i]);
	expect_map("hist_basic", &m, false, 0, 0,
		"@h:\n"
		"[0]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[1]                    2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[2, 4)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[4, 8)                 0 |                                                    |\n"
		"[8, 16)                0 |                                                    |\n"
		"[16, 32)               0 |                                                    |\n"
		"[32, 64)               0 |                                                    |\n"
		"[64, 128)              0 |                                                    |\n"
		"[128, 256)             0 |                                                    |\n"
		"[256, 512)             0 |                                                    |\n"
		"[512, 1K)              0 |                                                    |\n"
		"[1K, 2K)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[2K, 4K)               0 |                                                    |\n"
		"[4K, 8K)               0 |                                                    |\n"
		"[8K, 16K)              0 |                                                    |\n"
		"[16K, 32K)             0 |                                                    |\n"
		"[32K, 64K)             0 |                                                    |\n"
		"[64K, 128K)            0 |                                                    |\n"
		"[128K, 256K)           0 |                                                    |\n"
		"[256K, 512K)           0 |                                                    |\n"
		"[512K, 1M)             0 |                                                    |\n"
		"[1M, 2M)               0 |                                                    |\n"
		"[2M, 4M)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"\n");
}

/* bpftrace -e 'BEGIN { @h = hist(5); @h = hist(100); @h = hist(-3); exit(); }' */
static void test_hist_negative(void)
{
	struct map_desc m = map_new("@h", NULL, false, t_hist(0));
	agg_hist(&m, NOKEY, 5);
	agg_hist(&m, NOKEY, 100);
	agg_hist(&m, NOKEY, -3);
	expect_map("hist_negative", &m, false, 0, 0,
		"@h:\n"
		"(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[0]                    0 |                                                    |\n"
		"[1]                    0 |                                                    |\n"
		"[2, 4)                 0 |                                                    |\n"
		"[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[8, 16)                0 |                                                    |\n"
		"[16, 32)               0 |                                                    |\n"
		"[32, 64)               0 |                                                    |\n"
		"[64, 128)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* bpftrace -e 'BEGIN { @h = hist(4); @h = hist(4); @h = hist(4); @h = hist(16); @h = hist(16);
 *   @h = hist(64) (seven times); exit(); }'   -- bar widths 3/7 and 2/7 of 52 */
static void test_hist_bars(void)
{
	struct map_desc m = map_new("@h", NULL, false, t_hist(0));
	for (int i = 0; i < 3; i++)
		agg_hist(&m, NOKEY, 4);
	for (int i = 0; i < 2; i++)
		agg_hist(&m, NOKEY, 16);
	for (int i = 0; i < 7; i++)
		agg_hist(&m, NOKEY, 64);
	expect_map("hist_bars", &m, false, 0, 0,
		"@h:\n"
		"[4, 8)                 3 |@@@@@@@@@@@@@@@@@@@@@@                              |\n"
		"[8, 16)                0 |                                                    |\n"
		"[16, 32)               2 |@@@@@@@@@@@@@@                                      |\n"
		"[32, 64)               0 |                                                    |\n"
		"[64, 128)              7 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* bpftrace -e 'BEGIN { @g = hist(2147483648); @g = hist(3000000000); @g = hist(-1); exit(); }'
 * (only the tail shown here: bpftrace prints every bucket from (..., 0) up) */
static void test_hist_2g(void)
{
	struct map_desc m = map_new("@g", NULL, false, t_hist(0));
	agg_hist(&m, NOKEY, 2147483648LL);
	agg_hist(&m, NOKEY, 3000000000LL);
	agg_hist(&m, NOKEY, 1073741824LL);
	expect_map("hist_2g", &m, false, 0, 0,
		"@g:\n"
		"[1G, 2G)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[2G, 4G)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* sonde: values >= 2^32 get their own buckets (bpftrace 0.17 puts them all in
 * [2G, 4G)). bpftrace -e 'BEGIN { @g = hist(1 << 32); @g = hist(1 << 40); exit(); }' */
static void test_hist_huge(void)
{
	struct map_desc m = map_new("@g", NULL, false, t_hist(0));
	agg_hist(&m, NOKEY, 1LL << 32);
	agg_hist(&m, NOKEY, 1LL << 40);
	expect_map("hist_huge", &m, false, 0, 0,
		"@g:\n"
		"[4G, 8G)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[8G, 16G)              0 |                                                    |\n"
		"[16G, 32G)             0 |                                                    |\n"
		"[32G, 64G)             0 |                                                    |\n"
		"[64G, 128G)            0 |                                                    |\n"
		"[128G, 256G)           0 |                                                    |\n"
		"[256G, 512G)           0 |                                                    |\n"
		"[512G, 1T)             0 |                                                    |\n"
		"[1T, 2T)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* sonde: the top buckets, [4E, 8E) for 2^62 */
static void test_hist_exa(void)
{
	struct map_desc m = map_new("@g", NULL, false, t_hist(0));
	agg_hist(&m, NOKEY, 1LL << 62);
	agg_hist(&m, NOKEY, (1LL << 62) + 12345);
	expect_map("hist_exa", &m, false, 0, 0,
		"@g:\n"
		"[4E, 8E)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* sonde: hist(x, 2) (linear sub-buckets, as later bpftrace versions have);
 * values below 2^3 get one bucket each, unreachable sub-buckets are skipped */
static void test_hist_bits(void)
{
	struct map_desc m = map_new("@h", NULL, false, t_hist(2));
	int64_t values[] = { 1, 3, 5, 8, 12, 12 };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		agg_hist(&m, NOKEY, values[i]);
	expect_map("hist_bits", &m, false, 0, 0,
		"@h:\n"
		"[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[2]                    0 |                                                    |\n"
		"[3]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[4]                    0 |                                                    |\n"
		"[5]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[6]                    0 |                                                    |\n"
		"[7]                    0 |                                                    |\n"
		"[8, 10)                1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[10, 12)               0 |                                                    |\n"
		"[12, 14)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* sonde: hist(x, 2) labels past 1K: [4K, 5K) */
static void test_hist_bits_k(void)
{
	struct map_desc m = map_new("@h", NULL, false, t_hist(2));
	agg_hist(&m, NOKEY, 1300);
	agg_hist(&m, NOKEY, 4096);
	agg_hist(&m, NOKEY, 4500);
	char *got = capture_map(&m, false, 0, 0);
	check_true("hist_bits_labels",
		   strstr(got, "[1280, 1536)           1 |") && strstr(got, "[4K, 5K)               2 |") &&
		   strstr(got, "[1536, 1792)") && strstr(got, "[3584, 4K)"),
		   got);
	free(got);
	map_free(&m);
}

/* bpftrace -e 'BEGIN { @h["x"] = hist(5); @h["x"] = hist(6); @h["x"] = hist(7);
 *   @h["y"] = hist(100); @h["z"] = hist(1); @h["z"] = hist(1); exit(); }' */
static void test_hist_keyed(void)
{
	struct map_desc m = map_new("@h", t_str(), false, t_hist(0));
	agg_hist(&m, pack(m.key_type, "x"), 5);
	agg_hist(&m, pack(m.key_type, "x"), 6);
	agg_hist(&m, pack(m.key_type, "x"), 7);
	agg_hist(&m, pack(m.key_type, "y"), 100);
	agg_hist(&m, pack(m.key_type, "z"), 1);
	current_cpu = possible_cpus - 1;
	agg_hist(&m, pack(m.key_type, "z"), 1);
	current_cpu = 0;
	expect_map("hist_keyed", &m, false, 0, 0,
		"@h[y]:\n"
		"[64, 128)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"@h[z]:\n"
		"[1]                    2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"@h[x]:\n"
		"[4, 8)                 3 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* bpftrace -e 'BEGIN { @h[1] = hist(1); @h[256] = hist(1); @h[2] = hist(1); @h[-1] = hist(1); exit(); }'
 * equal totals: bpftrace orders by key bytes */
static void test_hist_ties(void)
{
	struct map_desc m = map_new("@h", t_i64(), false, t_hist(0));
	agg_hist(&m, pack(m.key_type, 1LL), 1);
	agg_hist(&m, pack(m.key_type, 256LL), 1);
	agg_hist(&m, pack(m.key_type, 2LL), 1);
	agg_hist(&m, pack(m.key_type, -1LL), 1);
	expect_map("hist_ties", &m, false, 0, 0,
		"@h[256]:\n"
		"[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"@h[1]:\n"
		"[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"@h[2]:\n"
		"[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"@h[-1]:\n"
		"[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* bpftrace -e 'BEGIN { @g = hist(5); zero(@g); exit(); }' */
static void test_hist_zeroed(void)
{
	struct map_desc m = map_new("@g", NULL, false, t_hist(0));
	set_value(&m, pack(t_u64(), 5LL), calloc(possible_cpus, 8));
	expect_map("hist_zeroed", &m, false, 0, 0, "@g:\n\n");
}

/* bpftrace -e 'BEGIN { @h["a"] = hist(1); @h["b"] = hist(2); zero(@h); exit(); }' */
static void test_hist_zeroed_keyed(void)
{
	struct map_desc m = map_new("@h", t_str(), false, t_hist(0));
	agg_hist(&m, pack(m.key_type, "a"), 1);
	agg_hist(&m, pack(m.key_type, "b"), 2);
	unsigned char key[24] = "a";
	uint64_t bucket = 2;
	memcpy(key + 16, &bucket, 8);
	set_value(&m, key, calloc(possible_cpus, 8));
	memcpy(key, "b", 2);
	bucket = 3;
	memcpy(key + 16, &bucket, 8);
	set_value(&m, key, calloc(possible_cpus, 8));
	expect_map("hist_zeroed_keyed", &m, false, 0, 0, "@h[a]:\n\n@h[b]:\n\n");
}

/* ---- lhist ---- */

/* bpftrace -e 'BEGIN { @l = lhist(-5, 0, 100, 10); @l = lhist(5, 0, 100, 10);
 *   @l = lhist(35, 0, 100, 10); @l = lhist(150, 0, 100, 10); @l = lhist(100, 0, 100, 10); exit(); }' */
static void test_lhist_basic(void)
{
	struct map_desc m = map_new("@l", NULL, false, t_lhist(0, 100, 10));
	int64_t values[] = { -5, 5, 35, 150, 100 };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		agg_lhist(&m, NOKEY, values[i]);
	expect_map("lhist_basic", &m, false, 0, 0,
		"@l:\n"
		"(..., 0)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[0, 10)                1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[10, 20)               0 |                                                    |\n"
		"[20, 30)               0 |                                                    |\n"
		"[30, 40)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
		"[40, 50)               0 |                                                    |\n"
		"[50, 60)               0 |                                                    |\n"
		"[60, 70)               0 |                                                    |\n"
		"[70, 80)               0 |                                                    |\n"
		"[80, 90)               0 |                                                    |\n"
		"[90, 100)              0 |                                                    |\n"
		"[100, ...)             2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* bpftrace -e 'BEGIN { @m = lhist(2048, 0, 4096, 1024); @m = lhist(5000, 0, 4096, 1024); exit(); }' */
static void test_lhist_k(void)
{
	struct map_desc m = map_new("@m", NULL, false, t_lhist(0, 4096, 1024));
	agg_lhist(&m, NOKEY, 2048);
	agg_lhist(&m, NOKEY, 5000);
	expect_map("lhist_k", &m, false, 0, 0,
		"@m:\n"
		"[2K, 3K)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[3K, 4K)               0 |                                                    |\n"
		"[4K, ...)              1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* bpftrace -e 'BEGIN { @n = lhist(1048576, 1024, 1049600, 2048);
 *   @n = lhist(1052672, 1024, 1049600, 2048); exit(); }' */
static void test_lhist_m(void)
{
	struct map_desc m = map_new("@n", NULL, false, t_lhist(1024, 1049600, 2048));
	agg_lhist(&m, NOKEY, 1048576);
	agg_lhist(&m, NOKEY, 1052672);
	expect_map("lhist_m", &m, false, 0, 0,
		"@n:\n"
		"[1023K, 1025K)         1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[1025K, ...)           1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* bpftrace -e 'BEGIN { @p[1] = lhist(3, 0, 10, 1); @p[1] = lhist(4, 0, 10, 1);
 *   @p[2] = lhist(7, 0, 10, 1); exit(); }' */
static void test_lhist_keyed(void)
{
	struct map_desc m = map_new("@p", t_i64(), false, t_lhist(0, 10, 1));
	agg_lhist(&m, pack(m.key_type, 1LL), 3);
	agg_lhist(&m, pack(m.key_type, 1LL), 4);
	agg_lhist(&m, pack(m.key_type, 2LL), 7);
	expect_map("lhist_keyed", &m, false, 0, 0,
		"@p[2]:\n"
		"[7]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"@p[1]:\n"
		"[3]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[4]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* bpftrace -e 'BEGIN { @p = lhist(3, 0, 10, 1); @p = lhist(0, 0, 10, 1); exit(); }' */
static void test_lhist_step1(void)
{
	struct map_desc m = map_new("@p", NULL, false, t_lhist(0, 10, 1));
	agg_lhist(&m, NOKEY, 3);
	agg_lhist(&m, NOKEY, 0);
	expect_map("lhist_step1", &m, false, 0, 0,
		"@p:\n"
		"[0]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[1]                    0 |                                                    |\n"
		"[2]                    0 |                                                    |\n"
		"[3]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* ---- print(@m, top, div) ---- */

static struct map_desc four_keys(void)
{
	struct map_desc m = map_new("@k", t_str(), false, t_i64());
	set_value(&m, pack(m.key_type, "a"), pack(m.value_type, 10LL));
	set_value(&m, pack(m.key_type, "b"), pack(m.value_type, 20LL));
	set_value(&m, pack(m.key_type, "c"), pack(m.value_type, 35LL));
	set_value(&m, pack(m.key_type, "d"), pack(m.value_type, 47LL));
	return m;
}

/* bpftrace -e 'BEGIN { @k["a"] = 10; @k["b"] = 20; @k["c"] = 35; @k["d"] = 47; print(@k, 2); ... }' */
static void test_print_top(void)
{
	struct map_desc m = four_keys();
	expect_map("print_top", &m, false, 2, 0, "@k[c]: 35\n@k[d]: 47\n");
}

/* bpftrace -e 'BEGIN { ...same map...; print(@k, 0, 10); ... }' */
static void test_print_div(void)
{
	struct map_desc m = four_keys();
	expect_map("print_div", &m, false, 0, 10, "@k[a]: 1\n@k[b]: 2\n@k[c]: 3\n@k[d]: 4\n");
}

/* bpftrace -e 'BEGIN { ...same map...; print(@k, 3, 3); ... }' */
static void test_print_top_div(void)
{
	struct map_desc m = four_keys();
	expect_map("print_top_div", &m, false, 3, 3, "@k[b]: 6\n@k[c]: 11\n@k[d]: 15\n");
}

/* bpftrace -e 'BEGIN { @h["x"] = hist(5); @h["x"] = hist(6); @h["x"] = hist(7); @h["y"] = hist(100);
 *   @h["z"] = hist(1); @h["z"] = hist(1); print(@h, 2, 2); ... }' */
static void test_print_hist_top_div(void)
{
	struct map_desc m = map_new("@h", t_str(), false, t_hist(0));
	agg_hist(&m, pack(m.key_type, "x"), 5);
	agg_hist(&m, pack(m.key_type, "x"), 6);
	agg_hist(&m, pack(m.key_type, "x"), 7);
	agg_hist(&m, pack(m.key_type, "y"), 100);
	agg_hist(&m, pack(m.key_type, "z"), 1);
	agg_hist(&m, pack(m.key_type, "z"), 1);
	expect_map("print_hist_top_div", &m, false, 2, 2,
		"@h[z]:\n"
		"[1]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n"
		"@h[x]:\n"
		"[4, 8)                 1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* bpftrace -e 'BEGIN { @a["x"] = avg(10); @a["y"] = avg(20); @a["z"] = avg(5); print(@a, 2, 5); ... }' */
static void test_print_avg_top_div(void)
{
	struct map_desc m = map_new("@a", t_str(), false, t_agg(&aggregation_avg, true));
	agg_avg(&m, pack(m.key_type, "x"), 10);
	agg_avg(&m, pack(m.key_type, "y"), 20);
	agg_avg(&m, pack(m.key_type, "z"), 5);
	expect_map("print_avg_top_div", &m, false, 2, 5, "@a[x]: 2\n@a[y]: 4\n");
}

/* bpftrace -e 'BEGIN { @s["x"] = stats(10); @s["y"] = stats(20); print(@s, 1, 2); ... }'
 * (top and div are ignored for stats, with a warning) */
static void test_print_stats_top_div(void)
{
	struct map_desc m = map_new("@s", t_str(), false, t_agg(&aggregation_stats, true));
	agg_avg(&m, pack(m.key_type, "x"), 10);
	agg_avg(&m, pack(m.key_type, "y"), 20);
	expect_map("print_stats_top_div", &m, false, 1, 2,
		   "@s[x]: { .count = 1, .average = 10, .total = 10 }\n"
		   "@s[y]: { .count = 1, .average = 20, .total = 20 }\n");
}

/* sonde: bpftrace 0.17 ignores div for lhist counts; sonde divides them like hist.
 * bpftrace -e 'BEGIN { @l[1] = lhist(5, 0, 10, 1); @l[1] = lhist(5, 0, 10, 1); print(@l, 1, 2); }' */
static void test_print_lhist_div(void)
{
	struct map_desc m = map_new("@l", t_i64(), false, t_lhist(0, 10, 1));
	agg_lhist(&m, pack(m.key_type, 1LL), 5);
	agg_lhist(&m, pack(m.key_type, 1LL), 5);
	expect_map("print_lhist_div", &m, false, 1, 2,
		"@l[1]:\n"
		"[5]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"\n");
}

/* ---- empty maps ---- */

/* bpftrace -e 'BEGIN { @e[1] = 1; clear(@e); print(@e); ... }' */
static void test_empty_plain(void)
{
	struct map_desc m = map_new("@e", t_i64(), false, t_i64());
	expect_map("empty_plain", &m, false, 0, 0, "");
}

/* bpftrace -e 'BEGIN { @e[1] = avg(1); clear(@e); print(@e); ... }' */
static void test_empty_avg(void)
{
	struct map_desc m = map_new("@e", t_i64(), false, t_agg(&aggregation_avg, true));
	expect_map("empty_avg", &m, false, 0, 0, "");
}

/* bpftrace -e 'BEGIN { @e[1] = hist(1); clear(@e); print(@e); ... }' */
static void test_empty_hist(void)
{
	struct map_desc m = map_new("@e", t_i64(), false, t_hist(0));
	expect_map("empty_hist", &m, false, 0, 0, "");
}

/* bpftrace -e 'BEGIN { @s = stats(4); zero(@s); exit(); }' */
static void test_stats_zeroed(void)
{
	struct map_desc m = map_new("@s", NULL, false, t_agg(&aggregation_stats, true));
	set_value(&m, NOKEY, calloc(possible_cpus, 16));
	expect_map("stats_zeroed", &m, false, 0, 0, "@s: { .count = 0, .average = 0, .total = 0 }\n");
}

/* ---- JSON ---- */

/* bpftrace -f json -e 'BEGIN { @c = count(); exit(); }' */
static void test_json_count(void)
{
	struct map_desc m = map_new("@c", NULL, false, t_agg(&aggregation_count, false));
	agg_count(&m, NOKEY);
	expect_map("json_count", &m, true, 0, 0, "{\"type\": \"map\", \"data\": {\"@c\": 1}}\n");
}

/* bpftrace -f json -e 'BEGIN { @k["a"] = 1; @k["b"] = 2; exit(); }' */
static void test_json_keyed(void)
{
	struct map_desc m = map_new("@k", t_str(), false, t_i64());
	set_value(&m, pack(m.key_type, "a"), pack(m.value_type, 1LL));
	set_value(&m, pack(m.key_type, "b"), pack(m.value_type, 2LL));
	expect_map("json_keyed", &m, true, 0, 0,
		   "{\"type\": \"map\", \"data\": {\"@k\": {\"a\": 1, \"b\": 2}}}\n");
}

/* bpftrace -f json -e 'BEGIN { @mk[1, "a"] = 5; @mk[2, "b"] = 3; exit(); }' */
static void test_json_multi_key(void)
{
	struct map_desc m = map_new("@mk", t_tuple2(t_i64(), t_str()), true, t_i64());
	set_value(&m, pack(m.key_type, 1LL, "a"), pack(m.value_type, 5LL));
	set_value(&m, pack(m.key_type, 2LL, "b"), pack(m.value_type, 3LL));
	expect_map("json_multi_key", &m, true, 0, 0,
		   "{\"type\": \"map\", \"data\": {\"@mk\": {\"2,b\": 3, \"1,a\": 5}}}\n");
}

/* bpftrace -f json -e 'BEGIN { @h = hist(5); @h = hist(-1); @h = hist(0); @h = hist(1); exit(); }' */
static void test_json_hist(void)
{
	struct map_desc m = map_new("@h", NULL, false, t_hist(0));
	agg_hist(&m, NOKEY, 5);
	agg_hist(&m, NOKEY, -1);
	agg_hist(&m, NOKEY, 0);
	agg_hist(&m, NOKEY, 1);
	expect_map("json_hist", &m, true, 0, 0,
		   "{\"type\": \"hist\", \"data\": {\"@h\": [{\"max\": -1, \"count\": 1}, "
		   "{\"min\": 0, \"max\": 0, \"count\": 1}, {\"min\": 1, \"max\": 1, \"count\": 1}, "
		   "{\"min\": 2, \"max\": 3, \"count\": 0}, {\"min\": 4, \"max\": 7, \"count\": 1}]}}\n");
}

/* bpftrace -f json -e 'BEGIN { @kh["x"] = hist(100); @kh["y"] = hist(3); exit(); }' */
static void test_json_hist_keyed(void)
{
	struct map_desc m = map_new("@kh", t_str(), false, t_hist(0));
	agg_hist(&m, pack(m.key_type, "x"), 100);
	agg_hist(&m, pack(m.key_type, "y"), 3);
	expect_map("json_hist_keyed", &m, true, 0, 0,
		   "{\"type\": \"hist\", \"data\": {\"@kh\": {\"x\": [{\"min\": 64, \"max\": 127, "
		   "\"count\": 1}], \"y\": [{\"min\": 2, \"max\": 3, \"count\": 1}]}}}\n");
}

/* bpftrace -f json -e 'BEGIN { @h["x"] = hist(5); @h["x"] = hist(6); @h["y"] = hist(1); print(@h, 1, 2); ... }' */
static void test_json_hist_top_div(void)
{
	struct map_desc m = map_new("@h", t_str(), false, t_hist(0));
	agg_hist(&m, pack(m.key_type, "x"), 5);
	agg_hist(&m, pack(m.key_type, "x"), 6);
	agg_hist(&m, pack(m.key_type, "y"), 1);
	expect_map("json_hist_top_div", &m, true, 1, 2,
		   "{\"type\": \"hist\", \"data\": {\"@h\": {\"x\": [{\"min\": 4, \"max\": 7, "
		   "\"count\": 1}]}}}\n");
}

/* bpftrace -f json -e 'BEGIN { @h["a"] = hist(1); zero(@h); exit(); }' */
static void test_json_hist_zeroed(void)
{
	struct map_desc m = map_new("@h", t_str(), false, t_hist(0));
	unsigned char key[24] = "a";
	uint64_t bucket = 2;
	memcpy(key + 16, &bucket, 8);
	set_value(&m, key, calloc(possible_cpus, 8));
	expect_map("json_hist_zeroed", &m, true, 0, 0,
		   "{\"type\": \"hist\", \"data\": {\"@h\": {\"a\": []}}}\n");
}

/* bpftrace -f json -e 'BEGIN { @l = lhist(5, 0, 100, 10); @l = lhist(-1, 0, 100, 10);
 *   @l = lhist(200, 0, 100, 10); exit(); }' */
static void test_json_lhist(void)
{
	struct map_desc m = map_new("@l", NULL, false, t_lhist(0, 100, 10));
	agg_lhist(&m, NOKEY, 5);
	agg_lhist(&m, NOKEY, -1);
	agg_lhist(&m, NOKEY, 200);
	expect_map("json_lhist", &m, true, 0, 0,
		   "{\"type\": \"hist\", \"data\": {\"@l\": [{\"max\": -1, \"count\": 1}, "
		   "{\"min\": 0, \"max\": 9, \"count\": 1}, {\"min\": 10, \"max\": 19, \"count\": 0}, "
		   "{\"min\": 20, \"max\": 29, \"count\": 0}, {\"min\": 30, \"max\": 39, \"count\": 0}, "
		   "{\"min\": 40, \"max\": 49, \"count\": 0}, {\"min\": 50, \"max\": 59, \"count\": 0}, "
		   "{\"min\": 60, \"max\": 69, \"count\": 0}, {\"min\": 70, \"max\": 79, \"count\": 0}, "
		   "{\"min\": 80, \"max\": 89, \"count\": 0}, {\"min\": 90, \"max\": 99, \"count\": 0}, "
		   "{\"min\": 100, \"count\": 1}]}}\n");
}

/* bpftrace -f json -e 'BEGIN { @st = stats(10); @st = stats(-1); exit(); }' */
static void test_json_stats(void)
{
	struct map_desc m = map_new("@st", NULL, false, t_agg(&aggregation_stats, true));
	agg_avg(&m, NOKEY, 10);
	agg_avg(&m, NOKEY, -1);
	expect_map("json_stats", &m, true, 0, 0,
		   "{\"type\": \"stats\", \"data\": {\"@st\": {\"count\": 2, \"average\": 4, "
		   "\"total\": 9}}}\n");
}

/* bpftrace -f json -e 'BEGIN { @ks["x"] = stats(3); @ks["y"] = stats(1); exit(); }' */
static void test_json_stats_keyed(void)
{
	struct map_desc m = map_new("@ks", t_str(), false, t_agg(&aggregation_stats, true));
	agg_avg(&m, pack(m.key_type, "x"), 3);
	agg_avg(&m, pack(m.key_type, "y"), 1);
	expect_map("json_stats_keyed", &m, true, 0, 0,
		   "{\"type\": \"stats\", \"data\": {\"@ks\": {\"y\": {\"count\": 1, \"average\": 1, "
		   "\"total\": 1}, \"x\": {\"count\": 1, \"average\": 3, \"total\": 3}}}}\n");
}

/* bpftrace -f json -e 'BEGIN { @a = avg(10); @a = avg(-3); exit(); }' */
static void test_json_avg(void)
{
	struct map_desc m = map_new("@a", NULL, false, t_agg(&aggregation_avg, true));
	agg_avg(&m, NOKEY, 10);
	agg_avg(&m, NOKEY, -3);
	expect_map("json_avg", &m, true, 0, 0, "{\"type\": \"stats\", \"data\": {\"@a\": 3}}\n");
}

/* bpftrace -f json -e 'BEGIN { @a[1, "x"] = avg(5); @a[2, "y"] = avg(7); exit(); }' */
static void test_json_avg_keyed(void)
{
	struct map_desc m = map_new("@a", t_tuple2(t_i64(), t_str()), true, t_agg(&aggregation_avg, true));
	agg_avg(&m, pack(m.key_type, 1LL, "x"), 5);
	agg_avg(&m, pack(m.key_type, 2LL, "y"), 7);
	expect_map("json_avg_keyed", &m, true, 0, 0,
		   "{\"type\": \"stats\", \"data\": {\"@a\": {\"1,x\": 5, \"2,y\": 7}}}\n");
}

/* bpftrace -f json -e 'BEGIN { @str = "abc\"q\n\t\\"; exit(); }' */
static void test_json_string_escape(void)
{
	struct map_desc m = map_new("@str", NULL, false, t_str());
	set_value(&m, NOKEY, pack(m.value_type, "abc\"q\n\t\\"));
	expect_map("json_string_escape", &m, true, 0, 0,
		   "{\"type\": \"map\", \"data\": {\"@str\": \"abc\\\"q\\n\\t\\\\\"}}\n");
}

/* bpftrace -f json -e 'BEGIN { @t = (1, "a", (2, "b")); exit(); }' */
static void test_json_tuple(void)
{
	struct type *elements[3] = { t_i64(), t_str(), t_tuple2(t_i64(), t_str()) };
	struct type *tuple = type_tuple(elements, 3);
	struct map_desc m = map_new("@t", NULL, false, tuple);
	set_value(&m, NOKEY, pack(tuple, 1LL, "a", 2LL, "b"));
	expect_map("json_tuple", &m, true, 0, 0,
		   "{\"type\": \"map\", \"data\": {\"@t\": [1,\"a\",[2,\"b\"]]}}\n");
}

/* bpftrace -f json -e 'BEGIN { @k["a"] = 10; @k["b"] = 20; @k["c"] = 35; print(@k, 2, 10); ... }' */
static void test_json_top_div(void)
{
	struct map_desc m = map_new("@k", t_str(), false, t_i64());
	set_value(&m, pack(m.key_type, "a"), pack(m.value_type, 10LL));
	set_value(&m, pack(m.key_type, "b"), pack(m.value_type, 20LL));
	set_value(&m, pack(m.key_type, "c"), pack(m.value_type, 35LL));
	expect_map("json_top_div", &m, true, 2, 10,
		   "{\"type\": \"map\", \"data\": {\"@k\": {\"b\": 2, \"c\": 3}}}\n");
}

/* bpftrace -f json -e 'BEGIN { @e[1] = 1; clear(@e); print(@e); ... }'  -- prints nothing */
static void test_json_empty(void)
{
	struct map_desc m = map_new("@e", t_i64(), false, t_i64());
	expect_map("json_empty", &m, true, 0, 0, "");
}

/* ---- print(value) ---- */

static char *capture_value(const struct type *type, const void *data, bool json)
{
	char *text = NULL;
	size_t length = 0;
	FILE *file = open_memstream(&text, &length);
	struct output out = { .file = file, .json = json };

	print_value(&out, type, data);
	fclose(file);
	return text;
}

/* bpftrace -e 'BEGIN { print(5); print(-7); print("abc"); print((1, "x", -2)); exit(); }' */
static void test_print_values(void)
{
	struct type *elements[3] = { t_i64(), t_str(), t_i64() };
	struct type *tuple = type_tuple(elements, 3);
	struct strbuf all;
	char *part;

	strbuf_init(&all);
	part = capture_value(t_i64(), pack(t_i64(), 5LL), false);
	strbuf_puts(&all, part);
	free(part);
	part = capture_value(t_i64(), pack(t_i64(), -7LL), false);
	strbuf_puts(&all, part);
	free(part);
	part = capture_value(t_str(), pack(t_str(), "abc"), false);
	strbuf_puts(&all, part);
	free(part);
	part = capture_value(tuple, pack(tuple, 1LL, "x", -2LL), false);
	strbuf_puts(&all, part);
	free(part);
	check_text("print_values", all.data, "5\n-7\nabc\n(1, x, -2)\n");
	strbuf_free(&all);
}

/* bpftrace -f json -e 'BEGIN { print(5); print("a\"b"); print((1, "x")); exit(); }' */
static void test_json_print_values(void)
{
	struct type *tuple = t_tuple2(t_i64(), t_str());
	struct strbuf all;
	char *part;

	strbuf_init(&all);
	part = capture_value(t_i64(), pack(t_i64(), 5LL), true);
	strbuf_puts(&all, part);
	free(part);
	part = capture_value(t_str(), pack(t_str(), "a\"b"), true);
	strbuf_puts(&all, part);
	free(part);
	part = capture_value(tuple, pack(tuple, 1LL, "x"), true);
	strbuf_puts(&all, part);
	free(part);
	check_text("json_print_values", all.data,
		   "{\"type\": \"value\", \"data\": 5}\n"
		   "{\"type\": \"value\", \"data\": \"a\\\"b\"}\n"
		   "{\"type\": \"value\", \"data\": [1,\"x\"]}\n");
	strbuf_free(&all);
}

/* unsigned values print unsigned */
static void test_format_value_unsigned(void)
{
	struct strbuf sb;
	strbuf_init(&sb);
	format_value(&sb, t_u64(), pack(t_u64(), -1LL), false);
	check_text("format_value_unsigned", sb.data, "18446744073709551615");
	strbuf_free(&sb);
}

/* ---- printf events ---- */

/*
 * Builds an event whose arguments are 8-byte integers, 16-byte strings or
 * addresses, laid out one after another after the u64 event index, and
 * renders it. Argument kinds: 'i' int64, 'u' uint64, 's' string, 'n' inet.
 */
static char *render(const char *format, const char *kinds, ...)
{
	struct event_arg args[16];
	unsigned char record[512] = { 0 };
	int offset = 8;
	int count = (int)strlen(kinds);
	va_list ap;

	va_start(ap, kinds);
	for (int i = 0; i < count; i++) {
		struct type *type = kinds[i] == 'i' ? t_i64() : kinds[i] == 'u' ? t_u64()
				  : kinds[i] == 's' ? t_str() : t_inet();
		args[i] = (struct event_arg){ .type = type, .offset = offset };
		pack_into(record + offset, type, &ap);
		offset += (type_storage_size(type) + 7) & ~7;
	}
	va_end(ap);
	struct event_desc event = {
		.kind = EVENT_PRINTF,
		.format = (char *)format,
		.arg_count = count,
		.args = args,
		.record_size = offset,
	};
	struct strbuf sb;
	strbuf_init(&sb);
	format_event(&sb, &event, record);
	return strbuf_release(&sb);
}

static void expect_render(const char *name, char *got, const char *expected)
{
	check_text(name, got, expected);
	free(got);
}

static void test_printf_events(void)
{
	/* bpftrace -e 'BEGIN { printf("[%d] [%5d] [%-5d] [%05d]", -42, 42, 42, 42); }' */
	expect_render("printf_int_widths",
		      render("[%d] [%5d] [%-5d] [%05d]", "iiii", -42LL, 42LL, 42LL, 42LL),
		      "[-42] [   42] [42   ] [00042]");
	/* bpftrace: printf("[%x]", -1) / ("[%X]", 255) / ("[%o]", 8) / ("[%u]", -1) / ("[%c]", 66) */
	expect_render("printf_int_conversions",
		      render("[%x] [%X] [%o] [%u] [%c]", "iiiii", -1LL, 255LL, 8LL, -1LL, 66LL),
		      "[ffffffff] [FF] [10] [4294967295] [B]");
	/* bpftrace: printf("[%s] [%10s] [%-10s] [%.2s]", "str", "str", "str", "str") */
	expect_render("printf_strings",
		      render("[%s] [%10s] [%-10s] [%.2s]", "ssss", "str", "str", "str", "str"),
		      "[str] [       str] [str       ] [st]");
	/* bpftrace: printf("[%ld] [%lld] [%lu]", -5, -6, -7) */
	expect_render("printf_long", render("[%ld] [%lld] [%lu]", "iii", -5LL, -6LL, -7LL),
		      "[-5] [-6] [18446744073709551609]");
	/* bpftrace: printf("[%hhd] [%hd]", 300, 70000); printf("[%hhu] [%hu]", 300, -1) */
	expect_render("printf_short", render("[%hhd] [%hd] [%hhu] [%hu]", "iiii", 300LL, 70000LL,
					     300LL, -1LL),
		      "[44] [4464] [44] [65535]");
	/* bpftrace: printf("[%p]", 0x1234); ("[%p]", 0); ("[%10p]", 1); ("[%-8p]", 16) */
	expect_render("printf_pointer", render("[%p] [%p] [%10p] [%-8p]", "iiii", 0x1234LL, 0LL,
					       1LL, 16LL),
		      "[0x1234] [(nil)] [       0x1] [0x10    ]");
	/* bpftrace: printf("[%% %d]", 5) */
	expect_render("printf_percent", render("[%% %d]", "i", 5LL), "[% 5]");
	/* sonde: bpftrace 0.17 rejects "%%d" and prints "%%" literally when there
	 * are no arguments */
	expect_render("printf_percent_d", render("[%%d] [%%]", ""), "[%d] [%]");
	/* bpftrace: printf("[%d]", 0x100000005); ("[%lx]", 0x1ffffffff); ("[%x]", 0x1ffffffff) */
	expect_render("printf_int_truncation",
		      render("[%d] [%lx] [%x]", "iii", 0x100000005LL, 0x1ffffffffLL, 0x1ffffffffLL),
		      "[5] [1ffffffff] [ffffffff]");
	/* bpftrace: printf("[%5.3d]", 5); ("[%.0d]", 0) */
	expect_render("printf_precision", render("[%5.3d] [%.0d]", "ii", 5LL, 0LL), "[  005] []");
	/* bpftrace: printf("[%jd] [%zd] [%td]", 1, 2, 3); ("[%llu] [%jx] [%zu]", -1, -1, -1) */
	expect_render("printf_jzt", render("[%jd] [%zd] [%td] [%llu] [%jx]", "iiiii", 1LL, 2LL, 3LL,
					   -1LL, -1LL),
		      "[1] [2] [3] [18446744073709551615] [ffffffffffffffff]");
	/* bpftrace: printf("[%-05d]", 3); ("[%08x]", 0xbeef); ("[%-8x]", 0xbeef) */
	expect_render("printf_flags", render("[%-05d] [%08x] [%-8x]", "iii", 3LL, 0xbeefLL, 0xbeefLL),
		      "[3    ] [0000beef] [beef    ]");
	/* sonde: flags bpftrace 0.17 does not recognise, printed as C does */
	expect_render("printf_more_flags", render("[%+d] [% d] [%#x] [%#o] [%i]", "iiiii", 42LL,
						  42LL, 255LL, 8LL, -3LL),
		      "[+42] [ 42] [0xff] [010] [-3]");
	/* bpftrace: printf("[%c%c] [%5c] [%-3c]", 104, 105, 66, 65) */
	expect_render("printf_chars", render("[%c%c] [%5c] [%-3c]", "iiii", 104LL, 105LL, 66LL, 65LL),
		      "[hi] [    B] [A  ]");
	/* bpftrace: printf("%s|%s\n", ntop(0x0100007f), "x") */
	expect_render("printf_inet", render("%s|%s\n", "ns", AF_INET, "127.0.0.1", "x"),
		      "127.0.0.1|x\n");
	/* bpftrace: printf("%d %s\n", (uint8)255, "tail") -- unsigned value in %d */
	expect_render("printf_unsigned_arg", render("%d %u\n", "uu", 255LL, 4294967295LL),
		      "255 4294967295\n");
	expect_render("printf_no_args", render("plain text\n", ""), "plain text\n");
}

static void test_strftime_event(void)
{
	struct timespec boot;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	uint64_t ns = (uint64_t)boot.tv_sec * 1000000000ULL + boot.tv_nsec;
	unsigned char record[32] = { 0 };
	memcpy(record + 8, &ns, 8);
	struct event_arg arg = {
		.type = t_u64(),
		.offset = 8,
		.conversion = ARG_STRFTIME,
		.strftime_format = "%%f|%f|%Y",
	};
	struct event_desc event = {
		.kind = EVENT_PRINTF,
		.format = "[%s] [%12s]",
		.arg_count = 1,
		.args = &arg,
		.record_size = 16,
	};
	struct event_arg args2[2] = { arg, arg };
	args2[1].strftime_format = "%H";
	event.args = args2;
	event.arg_count = 2;
	struct strbuf sb;
	strbuf_init(&sb);
	format_event(&sb, &event, record);

	time_t now = time(NULL);
	struct tm local;
	localtime_r(&now, &local);
	char expected_prefix[64];
	snprintf(expected_prefix, sizeof(expected_prefix), "[%%f|");
	char year[16];
	strftime(year, sizeof(year), "|%Y] [", &local);
	bool ok = strncmp(sb.data, expected_prefix, strlen(expected_prefix)) == 0 &&
		  strlen(sb.data) == strlen("[%f|123456|2026] [          14]") &&
		  strstr(sb.data, year) != NULL;
	for (int i = 4; ok && i < 10; i++)
		ok = sb.data[i] >= '0' && sb.data[i] <= '9';
	check_true("strftime_event", ok, sb.data);
	strbuf_free(&sb);
}

static void test_time_and_join_events(void)
{
	struct event_desc time_event = { .kind = EVENT_TIME, .format = "%Y" };
	struct strbuf sb;
	char year[16];
	time_t now = time(NULL);
	struct tm local;

	localtime_r(&now, &local);
	strftime(year, sizeof(year), "%Y", &local);
	strbuf_init(&sb);
	format_event(&sb, &time_event, "\0\0\0\0\0\0\0\0");
	check_text("time_event", sb.data, year);

	unsigned char record[8 + 4 * 16] = { 0 };
	strcpy((char *)record + 8, "ls");
	strcpy((char *)record + 24, "-l");
	strcpy((char *)record + 40, "/tmp");
	struct event_arg arg = { .type = type_string(4 * 16), .offset = 8 };
	struct event_desc join = {
		.kind = EVENT_JOIN,
		.format = ",",
		.arg_count = 1,
		.args = &arg,
		.record_size = sizeof(record),
		.join_count = 4,
	};
	strbuf_reset(&sb);
	format_event(&sb, &join, record);
	check_text("join_event", sb.data ? sb.data : "", "ls,-l,/tmp");
	strbuf_free(&sb);
}

/* ---- format strings ---- */

static void test_format_parse(void)
{
	struct format_pieces pieces;
	char *error = NULL;
	int offset = -1;

	int rc = format_parse("a%%b%-08lldc%s", &pieces, &error, &offset);
	bool ok = rc == 0 && pieces.count == 4 && pieces.conversion_count == 2 &&
		  !pieces.items[0].is_conversion && strcmp(pieces.items[0].text, "a%b") == 0 &&
		  pieces.items[0].text_offset == 0 && pieces.items[1].is_conversion &&
		  strcmp(pieces.items[1].text, "%-08lld") == 0 && pieces.items[1].conversion == 'd' &&
		  pieces.items[1].text_offset == 4 && strcmp(pieces.items[2].text, "c") == 0 &&
		  pieces.items[2].text_offset == 11 && pieces.items[3].conversion == 's';
	check_true("format_parse_pieces", ok, "unexpected pieces");
	if (rc == 0)
		format_pieces_free(&pieces);

	rc = format_parse("%%d %%", &pieces, &error, &offset);
	ok = rc == 0 && pieces.count == 1 && pieces.conversion_count == 0 &&
	     strcmp(pieces.items[0].text, "%d %") == 0;
	check_true("format_parse_percent", ok, "%%d should be literal");
	if (rc == 0)
		format_pieces_free(&pieces);

	const char *bad[] = { "x %e", "100%", "%ls", "%*d", "%5" };
	const int bad_offset[] = { 2, 3, 0, 0, 0 };
	for (int i = 0; i < 5; i++) {
		error = NULL;
		rc = format_parse(bad[i], &pieces, &error, &offset);
		char name[64];
		snprintf(name, sizeof(name), "format_parse_error_%d", i);
		check_true(name, rc < 0 && error && (i == 3 || offset == bad_offset[i]),
			   error ? error : "accepted");
		free(error);
	}

	/* Widths and precisions are bounded: %2147483647d wrote 2 GiB, and
	 * %99999999999d overflowed into a silently dropped value. */
	const char *huge[] = { "%2147483647d", "%99999999999d", "a%.4097s", "%-4097x" };
	const int huge_offset[] = { 1, 1, 3, 2 };
	for (int i = 0; i < 4; i++) {
		error = NULL;
		rc = format_parse(huge[i], &pieces, &error, &offset);
		char name[64];
		snprintf(name, sizeof(name), "format_parse_width_bound_%d", i);
		check_true(name, rc < 0 && error && offset == huge_offset[i] &&
			   strstr(error, "too large (at most 4096)"), error ? error : "accepted");
		free(error);
	}
	rc = format_parse("%-4096s|%.4096d", &pieces, &error, &offset);
	check_true("format_parse_width_bound_edge", rc == 0, error ? error : "");
	if (rc == 0)
		format_pieces_free(&pieces);
}

static void test_format_check_arg(void)
{
	struct format_piece s = { .is_conversion = true, .text = "%s", .conversion = 's' };
	struct format_piece d = { .is_conversion = true, .text = "%d", .conversion = 'd' };
	struct format_piece c = { .is_conversion = true, .text = "%c", .conversion = 'c' };
	char *message;

	message = format_check_arg(&s, t_i64());
	check_text("check_s_int", message ? message : "",
		   "%s specifier expects a value of type string (integer supplied)");
	free(message);
	message = format_check_arg(&d, t_str());
	check_text("check_d_string", message ? message : "",
		   "%d specifier expects a value of type integer (string supplied)");
	free(message);
	message = format_check_arg(&d, t_tuple2(t_i64(), t_i64()));
	check_text("check_d_tuple", message ? message : "",
		   "%d specifier expects a value of type integer (tuple supplied)");
	free(message);
	message = format_check_arg(&c, t_str());
	check_text("check_c_string", message ? message : "",
		   "%c specifier expects a value of type integer (string supplied)");
	free(message);
	check_true("check_ok", !format_check_arg(&s, t_str()) && !format_check_arg(&s, t_inet()) &&
		   !format_check_arg(&d, t_u64()) &&
		   !format_check_arg(&d, type_pointer(t_i64(), false)),
		   "a valid argument was rejected");
}

/* ---- status lines ---- */

static void test_status_lines(void)
{
	char *text = NULL;
	size_t length = 0;
	FILE *file = open_memstream(&text, &length);
	struct output text_out = { .file = file, .json = false };
	struct output json_out = { .file = file, .json = true };

	print_attached(&text_out, file, 1);
	print_attached(&text_out, file, 3);
	print_attached(&json_out, file, 2);
	print_lost(&text_out, file, 5);
	print_lost(&json_out, file, 7);
	fclose(file);
	check_text("status_lines", text,
		   "Attached 1 probe\n"
		   "Attached 3 probes\n"
		   "{\"type\": \"attached_probes\", \"data\": {\"probes\": 2}, \"count\": 2}\n"
		   "Lost 5 events\n"
		   "{\"type\": \"lost_events\", \"data\": {\"events\": 7}, \"count\": 7}\n");
	free(text);
}

/* ---- libbpf-tools layouts (toolprint.c): sonde only ---- */

static struct event_arg tool_args[8];

/* An event for print_log2_hist/print_linear_hist/print_top of map_id 0,
 * its args the given column types laid out as the compiler does. */
static struct event_desc tool_event(enum event_kind kind, const char *format, const char *names,
				    struct type **columns, int count)
{
	struct event_desc event = { .kind = kind, .format = (char *)format, .unit = "usecs",
				    .trailer = "", .field_names = (char *)names, .args = tool_args,
				    .arg_count = count, .record_size = 8 };
	int offset = 8;
	for (int i = 0; i < count; i++) {
		tool_args[i] = (struct event_arg){ .type = columns[i], .offset = offset };
		offset += (type_storage_size(columns[i]) + 7) & ~7;
	}
	return event;
}

static void expect_tool(const char *name, struct map_desc *map, struct map_desc *extra,
			struct event_desc *event, bool json, const char *expected)
{
	char *text = NULL;
	size_t length = 0;
	FILE *file = open_memstream(&text, &length);
	struct output out = { .file = file, .json = json };
	struct map_desc maps[2] = { *map, extra ? *extra : *map };
	struct program program = { 0 };
	int extra_id = 1;

	program.maps.items = maps;
	program.maps.count = 2;
	if (extra) {
		event->extra_map_ids = &extra_id;
		event->extra_map_count = 1;
	}
	if (event->kind == EVENT_PRINT_TOP)
		print_tool_top(&out, &program, event);
	else
		print_tool_histograms(&out, map, event);
	fclose(file);
	check_text(name, text, expected);
	free(text);
	map_free(map);
	if (extra)
		map_free(extra);
}

/* JSON names: "-" is text only (tcptop's padding), "NAME/100" is an integer
 * in hundredths (runqlen's runqocc, cachestat's hitratio) */
static void test_json_field_names(void)
{
	struct type *columns[5] = { t_i64(), t_str(), t_i64(), t_i64(), t_u64() };
	struct event_desc event = tool_event(EVENT_PRINTF, "", "a - r/100 neg/100 k/1000", columns, 5);
	unsigned char record[8 + 8 + 16 + 8 + 8 + 8] = { 0 };
	int64_t a = 5, r = 1234, neg = -5;
	uint64_t k = 7;
	memcpy(record + tool_args[0].offset, &a, 8);
	memcpy(record + tool_args[1].offset, " ", 2);
	memcpy(record + tool_args[2].offset, &r, 8);
	memcpy(record + tool_args[3].offset, &neg, 8);
	memcpy(record + tool_args[4].offset, &k, 8);
	struct strbuf sb;
	strbuf_init(&sb);
	format_json_fields(&sb, &event, record);
	check_text("json_field_names", sb.data, "\"a\": 5, \"r\": 12.34, \"neg\": -0.05, \"k\": 0.007");
	strbuf_free(&sb);
}

/* runqlat's layout: 0 and 1 share slot 0, negatives are not shown */
static void test_tool_log2(void)
{
	struct map_desc m = map_new("@h", NULL, false, t_hist(0));
	int64_t values[] = { 0, 1, 2, 3, 5, 100, -4 };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		agg_hist(&m, NOKEY, values[i]);
	struct event_desc event = tool_event(EVENT_PRINT_LOG2_HIST, "", "", NULL, 0);
	expect_tool("tool_log2", &m, NULL, &event, false,
		"     usecs               : count    distribution\n"
		"         0 -> 1          : 2        |****************************************|\n"
		"         2 -> 3          : 2        |****************************************|\n"
		"         4 -> 7          : 1        |********************                    |\n"
		"         8 -> 15         : 0        |                                        |\n"
		"        16 -> 31         : 0        |                                        |\n"
		"        32 -> 63         : 0        |                                        |\n"
		"        64 -> 127        : 1        |********************                    |\n");
}

/* more than 32 slots: wider columns, 20 stars (expected text from
 * trace_helpers.c's formats); hist(x, 2) sub-buckets fold into slots */
static void test_tool_log2_wide(void)
{
	struct map_desc m = map_new("@h", NULL, false, t_hist(2));
	agg_hist(&m, NOKEY, 1);
	for (int i = 0; i < 3; i++)
		agg_hist(&m, NOKEY, (1LL << 33) + i * (1LL << 31));
	struct event_desc event = tool_event(EVENT_PRINT_LOG2_HIST, "", "", NULL, 0);
	event.unit = "nsecs";
	expect_tool("tool_log2_wide", &m, NULL, &event, false,
		"               nsecs                         : count    distribution\n"
		"                   0 -> 1                    : 1        |******              |\n"
		"                   2 -> 3                    : 0        |                    |\n"
		"                   4 -> 7                    : 0        |                    |\n"
		"                   8 -> 15                   : 0        |                    |\n"
		"                  16 -> 31                   : 0        |                    |\n"
		"                  32 -> 63                   : 0        |                    |\n"
		"                  64 -> 127                  : 0        |                    |\n"
		"                 128 -> 255                  : 0        |                    |\n"
		"                 256 -> 511                  : 0        |                    |\n"
		"                 512 -> 1023                 : 0        |                    |\n"
		"                1024 -> 2047                 : 0        |                    |\n"
		"                2048 -> 4095                 : 0        |                    |\n"
		"                4096 -> 8191                 : 0        |                    |\n"
		"                8192 -> 16383                : 0        |                    |\n"
		"               16384 -> 32767                : 0        |                    |\n"
		"               32768 -> 65535                : 0        |                    |\n"
		"               65536 -> 131071               : 0        |                    |\n"
		"              131072 -> 262143               : 0        |                    |\n"
		"              262144 -> 524287               : 0        |                    |\n"
		"              524288 -> 1048575              : 0        |                    |\n"
		"             1048576 -> 2097151              : 0        |                    |\n"
		"             2097152 -> 4194303              : 0        |                    |\n"
		"             4194304 -> 8388607              : 0        |                    |\n"
		"             8388608 -> 16777215             : 0        |                    |\n"
		"            16777216 -> 33554431             : 0        |                    |\n"
		"            33554432 -> 67108863             : 0        |                    |\n"
		"            67108864 -> 134217727            : 0        |                    |\n"
		"           134217728 -> 268435455            : 0        |                    |\n"
		"           268435456 -> 536870911            : 0        |                    |\n"
		"           536870912 -> 1073741823           : 0        |                    |\n"
		"          1073741824 -> 2147483647           : 0        |                    |\n"
		"          2147483648 -> 4294967295           : 0        |                    |\n"
		"          4294967296 -> 8589934591           : 0        |                    |\n"
		"          8589934592 -> 17179869183          : 3        |********************|\n");
}

/* biolatency -D: a label per key, ascending keys */
static void test_tool_log2_keyed(void)
{
	struct type *key = t_str();
	struct map_desc m = map_new("@h", key, false, t_hist(0));
	agg_hist(&m, pack(key, "vda"), 10);
	agg_hist(&m, pack(key, "sda"), 1);
	agg_hist(&m, pack(key, "vda"), 20);
	struct event_desc event = tool_event(EVENT_PRINT_LOG2_HIST, "\ndisk = %s\t\n", "disk", &key, 1);
	expect_tool("tool_log2_keyed", &m, NULL, &event, false,
		"\n"
		"disk = sda\t\n"
		"     usecs               : count    distribution\n"
		"         0 -> 1          : 1        |****************************************|\n"
		"\n"
		"disk = vda\t\n"
		"     usecs               : count    distribution\n"
		"         0 -> 1          : 0        |                                        |\n"
		"         2 -> 3          : 0        |                                        |\n"
		"         4 -> 7          : 0        |                                        |\n"
		"         8 -> 15         : 1        |****************************************|\n"
		"        16 -> 31         : 1        |****************************************|\n");
}

static void test_tool_log2_json(void)
{
	struct type *key = t_str();
	struct map_desc m = map_new("@h", key, false, t_hist(0));
	agg_hist(&m, pack(key, "vda"), 3);
	agg_hist(&m, pack(key, "vda"), 0);
	struct event_desc event = tool_event(EVENT_PRINT_LOG2_HIST, "disk = %s\n", "disk", &key, 1);
	expect_tool("tool_log2_json", &m, NULL, &event, true,
		"{\"unit\": \"usecs\", \"disk\": \"vda\", \"buckets\": [{\"low\": 0, \"high\": 1, "
		"\"count\": 1}, {\"low\": 2, \"high\": 3, \"count\": 1}]}\n");
}

/* nothing at all for an empty histogram, as print_log2_hist */
static void test_tool_log2_empty(void)
{
	struct map_desc m = map_new("@h", NULL, false, t_hist(0));
	agg_hist(&m, NOKEY, -1);
	struct event_desc event = tool_event(EVENT_PRINT_LOG2_HIST, "", "", NULL, 0);
	expect_tool("tool_log2_empty", &m, NULL, &event, false, "");
}

/* print_linear_hist: only non-empty slots; values at or above max in the last */
static void test_tool_linear(void)
{
	struct map_desc m = map_new("@l", NULL, false, t_lhist(0, 100, 10));
	int64_t values[] = { 3, 55, 57, 500 };
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		agg_lhist(&m, NOKEY, values[i]);
	struct event_desc event = tool_event(EVENT_PRINT_LINEAR_HIST, "", "", NULL, 0);
	event.unit = "slot";
	expect_tool("tool_linear", &m, NULL, &event, false,
		"     slot          : count     distribution\n"
		"        0          : 1        |********************                    |\n"
		"        50         : 2        |****************************************|\n"
		"        100        : 1        |********************                    |\n");
}

/* syscount -L: by count descending, ties by key, a second map's column (0 when absent) */
static void test_tool_top(void)
{
	struct type *named = type_named_int(&int_names_syscall);
	struct map_desc m = map_new("@c", named, false, t_agg(&aggregation_count, false));
	struct map_desc s = map_new("@t", named, false, t_agg(&aggregation_sum, true));
	for (int i = 0; i < 3; i++)
		agg_count(&m, pack(named, 1LL));
	agg_count(&m, pack(named, 0LL));
	agg_count(&m, pack(named, 999LL));
	agg_count(&m, pack(named, 39LL));
	agg_sum(&s, pack(named, 1LL), 1500);
	agg_sum(&s, pack(named, 0LL), 7);
	struct type *columns[] = { named, t_u64(), t_i64() };
	struct event_desc event = tool_event(EVENT_PRINT_TOP, "%-22s %8d %lld\n", "syscall count time",
					     columns, 3);
	event.top = 3;
	expect_tool("tool_top", &m, &s, &event, false,
		"write                         3 1500\n"
		"read                          1 7\n"
		"getpid                        1 0\n");
}

static void test_tool_top_json(void)
{
	struct type *named = type_named_int(&int_names_signal);
	struct map_desc m = map_new("@c", named, false, t_agg(&aggregation_count, false));
	agg_count(&m, pack(named, 9LL));
	struct type *columns[] = { named, t_u64() };
	struct event_desc event = tool_event(EVENT_PRINT_TOP, "%s %d\n", "sig count", columns, 2);
	expect_tool("tool_top_json", &m, NULL, &event, true, "{\"sig\": \"SIGKILL\", \"count\": 1}\n");
}

/* the names behind syscall_name() and friends, and their fallbacks */
static void test_int_names(void)
{
	struct { const struct int_names *names; int64_t value; const char *expected; } cases[] = {
		{ &int_names_syscall, 0, "read" },
		{ &int_names_syscall, 59, "execve" },
		{ &int_names_syscall, 999, "[unknown: 999]" },
		{ &int_names_signal, 0, "N/A" },
		{ &int_names_signal, 9, "SIGKILL" },
		{ &int_names_signal, 40, "40" },
		{ &int_names_errno, 2, "ENOENT" },
		{ &int_names_errno, -13, "EACCES" },
		{ &int_names_errno, 0, "0" },
		{ &int_names_softirq, 3, "net_rx" },
		{ &int_names_softirq, 12, "12" },
		{ &int_names_strerror, 2, "No such file or directory" },
		{ &int_names_strerror, -2, "Unknown error -2" },
		{ &int_names_username, 0, "root" },
		{ &int_names_username, 2147483000, "2147483000" },
		{ &int_names_cgroup_path, 0, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[INT_NAME_MAX], name[64];
		snprintf(name, sizeof(name), "int_names_%s_%lld", cases[i].names->what,
			 (long long)cases[i].value);
		check_text(name, cases[i].names->name(cases[i].names, cases[i].value, buf, sizeof(buf)),
			   cases[i].expected);
	}
}

static void run_map_tests(void)
{
	test_count_scalar();
	test_sum_negative();
	test_count_keyed();
	test_count_per_cpu();
	test_int_signed_keys();
	test_string_values();
	test_signed_key_order();
	test_tuple_values();
	test_tuple_nested();
	test_multi_key_count();
	test_multi_key_strings();
	test_tuple_key();
	test_pointer_key();
	test_pointer_value();
	test_inet_key();
	test_inet_value_v6();
	test_inet_values();
	test_avg_scalar();
	test_avg_keyed();
	test_stats_scalar();
	test_stats_keyed();
	test_min_scalar();
	test_max_keyed();
	test_max_negative();
	test_hist_basic();
	test_hist_negative();
	test_hist_bars();
	test_hist_2g();
	test_hist_huge();
	test_hist_exa();
	test_hist_bits();
	test_hist_bits_k();
	test_hist_keyed();
	test_hist_ties();
	test_hist_zeroed();
	test_hist_zeroed_keyed();
	test_lhist_basic();
	test_lhist_k();
	test_lhist_m();
	test_lhist_keyed();
	test_lhist_step1();
	test_print_top();
	test_print_div();
	test_print_top_div();
	test_print_hist_top_div();
	test_print_avg_top_div();
	test_print_stats_top_div();
	test_print_lhist_div();
	test_json_field_names();
	test_tool_log2();
	test_tool_log2_wide();
	test_tool_log2_keyed();
	test_tool_log2_json();
	test_tool_log2_empty();
	test_tool_linear();
	test_tool_top();
	test_tool_top_json();
	test_empty_plain();
	test_empty_avg();
	test_empty_hist();
	test_stats_zeroed();
	test_json_count();
	test_json_keyed();
	test_json_multi_key();
	test_json_hist();
	test_json_hist_keyed();
	test_json_hist_top_div();
	test_json_hist_zeroed();
	test_json_lhist();
	test_json_stats();
	test_json_stats_keyed();
	test_json_avg();
	test_json_avg_keyed();
	test_json_string_escape();
	test_json_tuple();
	test_json_top_div();
	test_json_empty();
}

int main(void)
{
	possible_cpus = libbpf_num_possible_cpus();
	if (possible_cpus <= 0) {
		fprintf(stderr, "cannot count possible CPUs\n");
		return 2;
	}
	setenv("TZ", "UTC", 0);

	/* Map cases need CAP_BPF; without it, run the rest and say so. */
	int probe = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 8, 8, 1, NULL);
	if (probe >= 0) {
		close(probe);
		run_map_tests();
	} else {
		printf("SKIP map printing cases: bpf_map_create: %s (needs root)\n",
		       strerror(-probe));
	}
	test_print_values();
	test_json_print_values();
	test_int_names();
	test_format_value_unsigned();
	test_printf_events();
	test_strftime_event();
	test_time_and_join_events();
	test_format_parse();
	test_format_check_arg();
	test_status_lines();

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
