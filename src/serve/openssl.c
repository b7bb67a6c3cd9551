/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading OpenSSL on first use (openssl.h says why). libssl.so.3 is opened
 * once; dlsym on its handle also finds libcrypto's functions, which it
 * depends on. A missing library or function is one sentence, for serve to
 * report where TLS or basic auth was asked for.
 */
#define SONDE_OPENSSL_LOADER
#include "openssl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

#include "../common/util.h"

struct openssl_functions openssl;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int load_status = 1;  /* 1: not tried yet */
static char *load_error;

int openssl_load(char **error)
{
	pthread_mutex_lock(&load_lock);
	if (load_status == 1) {
		void *library = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
		load_status = 0;
		if (!library) {
			load_error = xasprintf("cannot load OpenSSL (libssl.so.3), which TLS and "
					       "basic auth need: %s", dlerror());
			load_status = -ENOENT;
		}
#define OPENSSL_RESOLVE(name)                                                                \
		if (load_status == 0) {                                                      \
			*(void **)&openssl.name = dlsym(library, #name);                     \
			if (!openssl.name) {                                                 \
				load_error = xasprintf("OpenSSL (libssl.so.3) lacks %s", #name); \
				load_status = -ENOENT;                                       \
			}                                                                    \
		}
		OPENSSL_FUNCTIONS(OPENSSL_RESOLVE)
#undef OPENSSL_RESOLVE
	}
	int status = load_status;
	if (status < 0 && error)
		*error = xstrdup(load_error);
	pthread_mutex_unlock(&load_lock);
	return status;
}
