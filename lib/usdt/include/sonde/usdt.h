/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libsonde-usdt: USDT probes defined at run time.
 *
 * A program that has no ELF file of its own for its hot code (a JIT, an
 * interpreter) declares a provider and its probes, loads the provider, and
 * fires the probes. Loading builds a small shared object in memory: one
 * probe site per probe, `.note.stapsdt` notes that describe them in the
 * SystemTap format, and a semaphore per probe. Any USDT-capable tracer
 * attached to the process sees them as ordinary USDT probes.
 *
 *     struct sonde_usdt_provider *p = sonde_usdt_provider_new("myapp");
 *     struct sonde_usdt_probe *req = sonde_usdt_probe_add(p, "request",
 *                                        SONDE_USDT_INT64, SONDE_USDT_STRING);
 *     if (!req || sonde_usdt_provider_load(p) < 0) ... sonde_usdt_provider_error(p) ...
 *     if (sonde_usdt_probe_enabled(req))
 *             sonde_usdt_fire(req, (int64_t)latency_ns, url);
 *     sonde_usdt_provider_free(p);
 *
 * Errors are negative errno values; the provider keeps a sentence saying
 * what went wrong (sonde_usdt_provider_error). Nothing is ever printed.
 * Every function checks its pointers: NULL is -EINVAL (NULL and errno
 * EINVAL for those returning a pointer, false for enabled()).
 *
 * Threads: firing and enabled() may be called from any thread at any time
 * until the provider is freed, also while another thread unloads it:
 * unload waits for the firings already inside the probe's site, and the
 * others see the probe disabled. Adding probes, loading, unloading and
 * freeing a provider must not race with one another on that provider, and
 * nothing may use a provider or its probes once it is freed.
 */
#ifndef SONDE_USDT_H
#define SONDE_USDT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The type of a probe argument, which fixes its note's argument spec
 * ("-4@%edi") and how sonde_usdt_fire reads it from its variadic list. */
enum sonde_usdt_type {
	SONDE_USDT_NONE,    /* not a type: the terminator of lists */
	SONDE_USDT_INT8,    /* int8_t  (passed as int) */
	SONDE_USDT_UINT8,   /* uint8_t (passed as int) */
	SONDE_USDT_INT16,   /* int16_t (passed as int) */
	SONDE_USDT_UINT16,  /* uint16_t (passed as int) */
	SONDE_USDT_INT32,   /* int32_t */
	SONDE_USDT_UINT32,  /* uint32_t */
	SONDE_USDT_INT64,   /* int64_t */
	SONDE_USDT_UINT64,  /* uint64_t */
	SONDE_USDT_POINTER, /* const void * */
	SONDE_USDT_STRING,  /* const char *, NUL-terminated: read with str() */
};

#define SONDE_USDT_MAX_ARGS 6

struct sonde_usdt_provider;
struct sonde_usdt_probe;

/* A provider named `name` (letters, digits and '_'), with no probes yet.
 * NULL only when out of memory or the name is invalid (errno set). */
struct sonde_usdt_provider *sonde_usdt_provider_new(const char *name);

/* Adds a probe with `count` argument types. Returns the probe, or NULL
 * with errno set (the reason in sonde_usdt_provider_error) for a NULL
 * provider, a bad name or type, NULL types with a count above 0, more than
 * SONDE_USDT_MAX_ARGS arguments (E2BIG), a duplicate name, or a provider
 * that is already loaded. The probe belongs to the provider. */
struct sonde_usdt_probe *sonde_usdt_probe_add_types(struct sonde_usdt_provider *provider,
						    const char *name,
						    const enum sonde_usdt_type *types, int count);

/* sonde_usdt_probe_add(provider, name, TYPE...): the argument types listed. */
#define sonde_usdt_probe_add(provider, name, ...)                                        \
	sonde_usdt_probe_add_types((provider), (name),                                   \
		(const enum sonde_usdt_type[]){ SONDE_USDT_NONE, ##__VA_ARGS__ } + 1,    \
		(int)(sizeof((const enum sonde_usdt_type[]){ SONDE_USDT_NONE, ##__VA_ARGS__ }) / \
		      sizeof(enum sonde_usdt_type)) - 1)

/* Builds the shared object and maps it. 0 or -errno (-EALREADY when it is
 * already loaded, -ENOENT when it has no probes). With SONDE_USDT_DUMP=PATH
 * in the environment the object is also written to PATH (for readelf -n). */
int sonde_usdt_provider_load(struct sonde_usdt_provider *provider);
/* Unmaps the object; the probes stay defined but no longer fire, and the
 * provider can be loaded again. Firings already in the probes' sites are
 * waited for. Its address range reads as zeros until free, for threads
 * that read a semaphore's address just before (see usdt.c). 0 or -errno
 * (-EINVAL when not loaded). */
int sonde_usdt_provider_unload(struct sonde_usdt_provider *provider);
/* Unloads if needed and frees the provider and its probes. NULL is fine. */
void sonde_usdt_provider_free(struct sonde_usdt_provider *provider);
/* The last error's sentence ("" if none); valid until the next call. */
const char *sonde_usdt_provider_error(const struct sonde_usdt_provider *provider);

/* Whether a tracer is attached to the probe (its semaphore is raised);
 * false for NULL and while the provider is not loaded. */
bool sonde_usdt_probe_enabled(const struct sonde_usdt_probe *probe);

/* Fires the probe with its arguments, in the declared types, when it is
 * enabled; does nothing when it is not, or when the provider is not loaded.
 * 0, or -EINVAL for a NULL probe (the macro below is a statement: call
 * `(sonde_usdt_fire)(...)` for the value). A language binding calls this
 * function, passing each argument as va_arg reads it (int for the 8- to
 * 32-bit types, unsigned int for the unsigned ones). */
int sonde_usdt_fire(const struct sonde_usdt_probe *probe, ...);

/*
 * The same two, inline: a probe starts with a pointer to its semaphore
 * (a constant 0 while unloaded), so the disabled path is a test for NULL,
 * two loads and a branch, with no call. The pointer is volatile so that a
 * loop does not keep the address of a previous load. The functions above
 * remain for taking their address and for bindings (write
 * `(sonde_usdt_fire)(...)` to call the function). The macros evaluate
 * `probe` once.
 */
struct sonde_usdt_probe_head_ {
	const volatile uint16_t *volatile semaphore;
};
#define sonde_usdt_semaphore_(probe)                                                     \
	(*((const struct sonde_usdt_probe_head_ *)(const void *)(probe))->semaphore)
static inline bool sonde_usdt_probe_enabled_inline_(const struct sonde_usdt_probe *probe)
{
	return __builtin_expect(probe != 0, 1) && sonde_usdt_semaphore_(probe) != 0;
}
#define sonde_usdt_probe_enabled(probe) sonde_usdt_probe_enabled_inline_(probe)
/* Each test with its own expectation: one over the inline function's
 * result lays the loop out with a taken branch around the call, which
 * made a disabled fire twice as slow (bench/usdt_bench.c). */
#define sonde_usdt_fire(probe, ...)                                                      \
	do {                                                                             \
		const struct sonde_usdt_probe *sonde_usdt_probe_ = (probe);              \
		if (__builtin_expect(sonde_usdt_probe_ != 0, 1) &&                       \
		    __builtin_expect(sonde_usdt_semaphore_(sonde_usdt_probe_) != 0, 0))  \
			(void)(sonde_usdt_fire)(sonde_usdt_probe_, ##__VA_ARGS__);       \
	} while (0)

/* For language bindings: the probe's site, a function taking its arguments
 * as the first six integer arguments of the platform's calling convention
 * (calling it directly is not counted, so unload does not wait for it:
 * call sonde_usdt_fire), and its semaphore, which stays readable
 * (as 0) after unload until free; both NULL while the provider is not
 * loaded or for NULL. */
void *sonde_usdt_probe_site(const struct sonde_usdt_probe *probe);
const volatile uint16_t *sonde_usdt_probe_semaphore(const struct sonde_usdt_probe *probe);

#ifdef __cplusplus
}
#endif

#endif
