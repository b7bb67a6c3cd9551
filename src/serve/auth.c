/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HTTP basic authentication for sonde serve, against the bcrypt hashes of
 * the web config's basic_auth_users.
 *
 * A bcrypt check costs about 100 ms at cost 10, far more than the loop may
 * spend between two rounds of event draining, so it is never made in the
 * loop. One worker thread runs libcrypt's crypt_r() on a small queue; the
 * loop parks the connection whose credentials are being checked and polls
 * an eventfd the worker signals when a check is done. Each answer, yes or
 * no, is kept in a cache keyed by a salted SHA-256 of the credentials as
 * sent, compared in constant time, so a scraper's password is checked once
 * and a wrong one repeated costs nothing either.
 *
 * A flood of wrong passwords must neither take the machine nor lock out
 * the scraper. So the good answers have a table of their own, which only
 * another good answer can evict: a flood of failures replaces failures.
 * New credentials are checked only within a budget of the worker's time
 * (AUTH_BUDGET_SHARE of the wall clock, saved up to AUTH_BUDGET_MAX_NS),
 * and at most AUTH_QUEUE_MAX at once; past either, the request gets 429
 * at once, without a check. (http.c adds the per-connection bound: a
 * connection whose credentials a check refused is closed after its 401.)
 *
 * A user name that is not configured is checked against another user's
 * hash all the same and refused, so the time of an answer does not tell
 * which names exist (exporter-toolkit does the same with a fixed hash).
 */
#include "serve/serve.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <crypt.h>

#include "openssl.h"

#define AUTH_CACHE_SIZE 256     /* refused credentials remembered */
#define AUTH_GOOD_SIZE 16       /* accepted credentials remembered (scrapers use one or two) */
#define AUTH_QUEUE_MAX 16       /* checks waiting or running at once */
/* The worker's time new credentials may take: half of one core (a check
 * costs 50-100 ms at cost 10 here, 0.3-0.6 s at cost 12), with 4 s of it
 * saved up so that a few scrapers starting together, or a user mistyping
 * a password twice, are checked at once. */
#define AUTH_BUDGET_SHARE 2     /* 1/2 */
#define AUTH_BUDGET_MAX_NS (4000ull * 1000000ull)
#define AUTH_DIGEST_SIZE 32

enum auth_job_state {
	JOB_FREE,       /* the slot is unused */
	JOB_QUEUED,     /* waiting for the worker */
	JOB_RUNNING,    /* the worker is hashing it */
	JOB_DONE,       /* answered; the loop has not collected it yet */
};

struct auth_job {
	enum auth_job_state state;
	unsigned long order;    /* the worker takes the oldest first */
	unsigned char digest[AUTH_DIGEST_SIZE];
	char *password;
	const char *hash;       /* the user's, or another user's for an unknown name */
	bool known_user;
	bool ok;
	uint64_t cost_ns;       /* how long the check took */
};

struct auth_entry {
	bool used;
	unsigned char digest[AUTH_DIGEST_SIZE];
};

struct auth {
	const struct web_config *config;
	unsigned char salt[32];
	struct auth_entry cache[AUTH_CACHE_SIZE];       /* refused */
	int cache_next;                 /* the entry replaced next when the cache is full */
	struct auth_entry good[AUTH_GOOD_SIZE];         /* accepted */
	uint64_t good_used_ns[AUTH_GOOD_SIZE];          /* last use: the oldest goes first */
	int64_t budget_ns;              /* worker time left for new credentials */
	uint64_t budget_at_ns;          /* when it was last topped up */
	struct auth_job jobs[AUTH_QUEUE_MAX];
	unsigned long next_order;
	int event_fd;                   /* readable when a check is done */
	pthread_t thread;
	pthread_mutex_t lock;           /* jobs[] and stop */
	pthread_cond_t wake;
	bool stop;
	struct auth_stats stats;
};

bool auth_hash_valid(const char *hash)
{
	static const char alphabet[] =
		"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	/* $2a$, $2b$ or $2y$, a two-digit cost from 04 to 31, $, 22 characters
	 * of salt and 31 of hash */
	if (strlen(hash) != 60 || hash[0] != '$' || hash[1] != '2' || !strchr("aby", hash[2]) ||
	    hash[3] != '$' || hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9' ||
	    hash[6] != '$')
		return false;
	int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
	if (cost < 4 || cost > 31)
		return false;
	for (int i = 7; i < 60; i++)
		if (!hash[i] || !strchr(alphabet, hash[i]))
			return false;
	return true;
}

/* ---- the worker ---- */

static struct auth_job *auth_oldest_queued(struct auth *auth)
{
	struct auth_job *oldest = NULL;

	for (int i = 0; i < AUTH_QUEUE_MAX; i++) {
		struct auth_job *job = &auth->jobs[i];
		if (job->state == JOB_QUEUED && (!oldest || job->order < oldest->order))
			oldest = job;
	}
	return oldest;
}

static void *auth_worker(void *argument)
{
	struct auth *auth = argument;
	struct crypt_data *data = xcalloc(1, sizeof(*data));

	pthread_mutex_lock(&auth->lock);
	for (;;) {
		struct auth_job *job;
		while (!auth->stop && !(job = auth_oldest_queued(auth)))
			pthread_cond_wait(&auth->wake, &auth->lock);
		if (auth->stop)
			break;
		job->state = JOB_RUNNING;
		pthread_mutex_unlock(&auth->lock);

		/* the job is the worker's alone while it runs */
		uint64_t began = monotonic_ns();
		const char *result = crypt_r(job->password, job->hash, data);
		job->cost_ns = monotonic_ns() - began;
		size_t length = strlen(job->hash);
		bool match = result && strlen(result) == length &&
			     CRYPTO_memcmp(result, job->hash, length) == 0;
		OPENSSL_cleanse(data, sizeof(*data));

		pthread_mutex_lock(&auth->lock);
		job->ok = match && job->known_user;
		job->state = JOB_DONE;
		uint64_t one = 1;
		if (write(auth->event_fd, &one, sizeof(one)) < 0) {
			/* the counter cannot overflow at this rate; nothing to do */
		}
	}
	pthread_mutex_unlock(&auth->lock);
	free(data);
	return NULL;
}

int auth_new(const struct web_config *config, struct auth **out, char **error)
{
	struct auth *auth;
	sigset_t all, saved;
	int err;

	*out = NULL;
	if (!config || config->users.count == 0)
		return 0;
	err = openssl_load(error);
	if (err)
		return err;
	auth = xcalloc(1, sizeof(*auth));
	auth->config = config;
	auth->budget_ns = (int64_t)AUTH_BUDGET_MAX_NS;
	auth->budget_at_ns = monotonic_ns();
	if (RAND_bytes(auth->salt, sizeof(auth->salt)) != 1) {
		*error = xasprintf("basic authentication: no random bytes for the credential cache");
		free(auth);
		return -EIO;
	}
	auth->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (auth->event_fd < 0) {
		err = -errno;
		*error = xasprintf("basic authentication: eventfd: %s", strerror(errno));
		free(auth);
		return err;
	}
	pthread_mutex_init(&auth->lock, NULL);
	pthread_cond_init(&auth->wake, NULL);
	/* signals are the loop's: the worker blocks them all */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	err = pthread_create(&auth->thread, NULL, auth_worker, auth);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (err) {
		*error = xasprintf("basic authentication: cannot start its thread: %s", strerror(err));
		close(auth->event_fd);
		pthread_mutex_destroy(&auth->lock);
		pthread_cond_destroy(&auth->wake);
		free(auth);
		return -err;
	}
	*out = auth;
	return 0;
}

void auth_free(struct auth *auth)
{
	if (!auth)
		return;
	pthread_mutex_lock(&auth->lock);
	auth->stop = true;
	pthread_cond_signal(&auth->wake);
	pthread_mutex_unlock(&auth->lock);
	pthread_join(auth->thread, NULL);
	for (int i = 0; i < AUTH_QUEUE_MAX; i++) {
		if (auth->jobs[i].password) {
			OPENSSL_cleanse(auth->jobs[i].password, strlen(auth->jobs[i].password));
			free(auth->jobs[i].password);
		}
	}
	close(auth->event_fd);
	pthread_mutex_destroy(&auth->lock);
	pthread_cond_destroy(&auth->wake);
	OPENSSL_cleanse(auth, sizeof(*auth));
	free(auth);
}

int auth_fd(const struct auth *auth)
{
	return auth->event_fd;
}

const struct auth_stats *auth_stats(const struct auth *auth)
{
	return &auth->stats;
}

/* ---- the loop's side ---- */

static int auth_base64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard base64 with its padding; NULL for anything else. */
static char *auth_base64_decode(const char *text, size_t length, size_t *decoded)
{
	if (length == 0 || length % 4)
		return NULL;
	char *out = xmalloc(length / 4 * 3 + 1);
	size_t put = 0;
	for (size_t i = 0; i < length; i += 4) {
		int v[4];
		int padding = 0;
		for (int j = 0; j < 4; j++) {
			char c = text[i + j];
			if (c == '=' && i + 4 == length && j >= 2 && (j == 3 || text[i + 3] == '=')) {
				v[j] = 0;
				padding++;
			} else if ((v[j] = auth_base64_value(c)) < 0 || padding) {
				free(out);
				return NULL;
			}
		}
		unsigned bits = (unsigned)(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
		out[put++] = (char)(bits >> 16);
		if (padding < 2)
			out[put++] = (char)(bits >> 8 & 0xff);
		if (padding < 1)
			out[put++] = (char)(bits & 0xff);
	}
	out[put] = '\0';
	*decoded = put;
	return out;
}

/* The entry of table[count] holding digest, or -1. Every entry is
 * compared, in constant time, whatever matches. */
static int auth_find(const struct auth_entry *table, int count, const unsigned char *digest)
{
	int found = -1;

	for (int i = 0; i < count; i++)
		if (table[i].used && CRYPTO_memcmp(table[i].digest, digest, AUTH_DIGEST_SIZE) == 0)
			found = i;
	return found;
}

static bool auth_cached(struct auth *auth, const unsigned char *digest, bool *ok)
{
	int good = auth_find(auth->good, AUTH_GOOD_SIZE, digest);
	int bad = auth_find(auth->cache, AUTH_CACHE_SIZE, digest);

	if (good >= 0)
		auth->good_used_ns[good] = monotonic_ns();
	*ok = good >= 0;
	return good >= 0 || bad >= 0;
}

/* May new credentials be checked now? Tops the budget up for the time
 * since the last call first. */
static bool auth_within_budget(struct auth *auth)
{
	uint64_t now = monotonic_ns();
	uint64_t earned = (now - auth->budget_at_ns) / AUTH_BUDGET_SHARE;

	auth->budget_at_ns = now;
	if (earned > AUTH_BUDGET_MAX_NS || auth->budget_ns + (int64_t)earned > (int64_t)AUTH_BUDGET_MAX_NS)
		auth->budget_ns = (int64_t)AUTH_BUDGET_MAX_NS;
	else
		auth->budget_ns += (int64_t)earned;
	return auth->budget_ns > 0;
}

bool auth_waiting(struct auth *auth, const unsigned char *digest)
{
	bool waiting = false;

	pthread_mutex_lock(&auth->lock);
	for (int i = 0; i < AUTH_QUEUE_MAX; i++) {
		const struct auth_job *job = &auth->jobs[i];
		if (job->state != JOB_FREE && CRYPTO_memcmp(job->digest, digest, AUTH_DIGEST_SIZE) == 0)
			waiting = true;
	}
	pthread_mutex_unlock(&auth->lock);
	return waiting;
}

/* Queues a check of user:password; false when the queue is full. */
static bool auth_queue(struct auth *auth, const unsigned char *digest, const char *user,
		       const char *password)
{
	const struct web_config *config = auth->config;
	struct auth_job *slot = NULL;
	const char *hash = config->users.items[0].hash;
	bool known = false;

	for (int i = 0; i < config->users.count; i++) {
		if (strcmp(config->users.items[i].name, user) == 0) {
			hash = config->users.items[i].hash;
			known = true;
		}
	}
	pthread_mutex_lock(&auth->lock);
	for (int i = 0; i < AUTH_QUEUE_MAX && !slot; i++)
		if (auth->jobs[i].state == JOB_FREE)
			slot = &auth->jobs[i];
	if (slot) {
		memcpy(slot->digest, digest, AUTH_DIGEST_SIZE);
		slot->password = xstrdup(password);
		slot->hash = hash;
		slot->known_user = known;
		slot->order = auth->next_order++;
		slot->state = JOB_QUEUED;
		pthread_cond_signal(&auth->wake);
	}
	pthread_mutex_unlock(&auth->lock);
	return slot != NULL;
}

enum auth_verdict auth_check(struct auth *auth, const char *header, size_t length,
			     unsigned char *digest)
{
	static const char scheme[] = "Basic ";
	size_t scheme_length = sizeof(scheme) - 1;
	bool ok = false;

	if (!auth)
		return AUTH_OK;
	if (!header || length <= scheme_length || strncasecmp(header, scheme, scheme_length) != 0)
		return AUTH_DENIED;
	const char *token = header + scheme_length;
	size_t token_length = length - scheme_length;
	while (token_length && *token == ' ') {
		token++;
		token_length--;
	}
	while (token_length && token[token_length - 1] == ' ')
		token_length--;

	unsigned int digest_length = 0;
	EVP_MD_CTX *context = EVP_MD_CTX_new();
	if (!context || EVP_DigestInit_ex(context, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(context, auth->salt, sizeof(auth->salt)) != 1 ||
	    EVP_DigestUpdate(context, token, token_length) != 1 ||
	    EVP_DigestFinal_ex(context, digest, &digest_length) != 1 ||
	    digest_length != AUTH_DIGEST_SIZE) {
		EVP_MD_CTX_free(context);
		return AUTH_BUSY;
	}
	EVP_MD_CTX_free(context);
	if (auth_cached(auth, digest, &ok)) {
		auth->stats.cache_hits++;
		return ok ? AUTH_OK : AUTH_DENIED;
	}
	if (auth_waiting(auth, digest))
		return AUTH_WAIT;

	size_t decoded_length;
	char *decoded = auth_base64_decode(token, token_length, &decoded_length);
	char *colon = decoded ? memchr(decoded, ':', decoded_length) : NULL;
	enum auth_verdict verdict = AUTH_DENIED;
	/* a NUL would cut the password short for crypt_r */
	if (colon && strlen(decoded) == decoded_length) {
		*colon = '\0';
		verdict = auth_within_budget(auth) && auth_queue(auth, digest, decoded, colon + 1)
				  ? AUTH_WAIT : AUTH_LIMITED;
		if (verdict == AUTH_WAIT)
			auth->stats.checks++;
		else
			auth->stats.limited++;
	}
	if (decoded) {
		OPENSSL_cleanse(decoded, decoded_length);
		free(decoded);
	}
	return verdict;
}

/* Where a good answer goes: a free entry, or the one unused longest. */
static struct auth_entry *auth_good_slot(struct auth *auth)
{
	int oldest = 0;

	for (int i = 0; i < AUTH_GOOD_SIZE; i++) {
		if (!auth->good[i].used) {
			oldest = i;
			break;
		}
		if (auth->good_used_ns[i] < auth->good_used_ns[oldest])
			oldest = i;
	}
	auth->good_used_ns[oldest] = monotonic_ns();
	return &auth->good[oldest];
}

/* Where a refusal goes: a free entry, or the next in turn. */
static struct auth_entry *auth_bad_slot(struct auth *auth)
{
	for (int i = 0; i < AUTH_CACHE_SIZE; i++)
		if (!auth->cache[i].used)
			return &auth->cache[i];
	struct auth_entry *entry = &auth->cache[auth->cache_next];
	auth->cache_next = (auth->cache_next + 1) % AUTH_CACHE_SIZE;
	return entry;
}

bool auth_collect(struct auth *auth)
{
	uint64_t count;
	bool collected = false;

	if (read(auth->event_fd, &count, sizeof(count)) < 0)
		return false;
	pthread_mutex_lock(&auth->lock);
	for (int i = 0; i < AUTH_QUEUE_MAX; i++) {
		struct auth_job *job = &auth->jobs[i];
		if (job->state != JOB_DONE)
			continue;
		auth->budget_ns -= (int64_t)job->cost_ns;
		struct auth_entry *entry = job->ok ? auth_good_slot(auth) : auth_bad_slot(auth);
		entry->used = true;
		memcpy(entry->digest, job->digest, AUTH_DIGEST_SIZE);
		OPENSSL_cleanse(job->password, strlen(job->password));
		free(job->password);
		job->password = NULL;
		job->state = JOB_FREE;
		collected = true;
	}
	pthread_mutex_unlock(&auth->lock);
	return collected;
}
