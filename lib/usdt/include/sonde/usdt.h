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
 *     if (sonde_usdt_provider_load(p) < 0) ... sonde_usdt_provider_error(p) ...
 *     if (sonde_usdt_probe_enabled(req))
 *             sonde_usdt_fire(req, (int64_t)latency_ns, url);
 *     sonde_usdt_provider_free(p);
 *
 * Errors are negative errno values; the provider keeps a sentence saying
 * what went wrong (sonde_usdt_provider_error). Nothing is ever printed.
 *
 * Threads: firing and enabled() may be called from any thread at any time
 * while the provider is loaded. Adding probes, loading, unloading and
 * freeing a provider must not race with anything else on that provider.
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
 * (the reason in sonde_usdt_provider_error) for a bad name or type, more
 * than SONDE_USDT_MAX_ARGS arguments, a duplicate name, or a provider that
 * is already loaded. The probe belongs to the provider. */
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
 * provider can be loaded again. 0 or -errno (-EINVAL when not loaded). */
int sonde_usdt_provider_unload(struct sonde_usdt_provider *provider);
/* Unloads if needed and frees the provider and its probes. NULL is fine. */
void sonde_usdt_provider_free(struct sonde_usdt_provider *provider);
/* The last error's sentence ("" if none); valid until the next call. */
const char *sonde_usdt_provider_error(const struct sonde_usdt_provider *provider);

/* Whether a tracer is attached to the probe (its semaphore is raised). */
bool sonde_usdt_probe_enabled(const struct sonde_usdt_probe *probe);

/* Fires the probe with its arguments, in the declared types, when it is
 * enabled; does nothing when it is not, or when the provider is not loaded. */
void sonde_usdt_fire(const struct sonde_usdt_probe *probe, ...);

/*
 * The same two, inline: a probe starts with a pointer to its semaphore
 * (a constant 0 while unloaded), so the disabled path is two loads and a
 * branch, with no call. The functions above remain for taking their address
 * and for bindings (write `(sonde_usdt_fire)(...)` to call the function).
 * The macros evaluate `probe` once.
 */
struct sonde_usdt_probe_head_ {
	const volatile uint16_t *semaphore;
};
#define sonde_usdt_probe_enabled(probe)                                                  \
	(*((const struct sonde_usdt_probe_head_ *)(const void *)(probe))->semaphore != 0)
#define sonde_usdt_fire(probe, ...)                                                      \
	do {                                                                             \
		const struct sonde_usdt_probe *sonde_usdt_probe_ = (probe);              \
		if (__builtin_expect(sonde_usdt_probe_enabled(sonde_usdt_probe_), 0))    \
			(sonde_usdt_fire)(sonde_usdt_probe_, ##__VA_ARGS__);             \
	} while (0)

/* For language bindings: the probe's site, a function taking its arguments
 * as the first six integer arguments of the platform's calling convention,
 * and its semaphore; both NULL while the provider is not loaded. */
void *sonde_usdt_probe_site(const struct sonde_usdt_probe *probe);
const volatile uint16_t *sonde_usdt_probe_semaphore(const struct sonde_usdt_probe *probe);

#ifdef __cplusplus
}
#endif

#endif
