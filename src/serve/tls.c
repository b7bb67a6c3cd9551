/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TLS for sonde serve, through OpenSSL's libssl: nothing of TLS is
 * written here, only how the web config's tls_server_config becomes an
 * SSL_CTX and how a connection's TLS calls fit a non-blocking loop.
 *
 * The context is built and checked at start-up: the certificate chain and
 * the key are read (a key that does not match the certificate, or one
 * protected by a passphrase, is refused then, never prompted for), and the
 * client certificate policy is set from exporter-toolkit's names for Go's
 * tls.ClientAuthType.
 *
 * Connections: every call (SSL_accept, SSL_read_ex, SSL_write_ex) is made
 * on a non-blocking socket and may answer "want read" or "want write"; the
 * caller is told which poll event to wait for and calls again. The socket
 * is reached through a small BIO of ours rather than OpenSSL's socket BIO
 * only so that writes use send(MSG_NOSIGNAL): a scraper that vanishes
 * mid-response must not raise SIGPIPE in a tracer.
 */
#include "serve/serve.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "openssl.h"

struct tls_context {
	SSL_CTX *ctx;
	BIO_METHOD *bio_method;
};

struct tls_session {
	SSL *ssl;
};

/* exporter-toolkit's client_auth_type values (Go's tls.ClientAuthType) */
static const struct tls_client_auth {
	const char *name;
	int mode;               /* SSL_VERIFY_* */
	bool verifies;          /* a certificate sent is checked against client_ca_file */
} tls_client_auths[] = {
	{ "NoClientCert", SSL_VERIFY_NONE, false },
	{ "RequestClientCert", SSL_VERIFY_PEER, false },
	{ "RequireAnyClientCert", SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, false },
	{ "RequireClientCert", SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, false },
	{ "VerifyClientCertIfGiven", SSL_VERIFY_PEER, true },
	{ "RequireAndVerifyClientCert", SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, true },
};

static const struct tls_version {
	const char *name;
	int version;
} tls_versions[] = {
	{ "TLS10", TLS1_VERSION },
	{ "TLS11", TLS1_1_VERSION },
	{ "TLS12", TLS1_2_VERSION },
	{ "TLS13", TLS1_3_VERSION },
};

/* ---- the socket BIO ---- */

static int tls_bio_write(BIO *bio, const char *data, int length)
{
	int fd = (int)(intptr_t)BIO_get_data(bio);
	ssize_t put = send(fd, data, (size_t)length, MSG_DONTWAIT | MSG_NOSIGNAL);

	BIO_clear_retry_flags(bio);
	if (put < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_write(bio);
	return (int)put;
}

static int tls_bio_read(BIO *bio, char *data, int length)
{
	int fd = (int)(intptr_t)BIO_get_data(bio);
	ssize_t got = recv(fd, data, (size_t)length, MSG_DONTWAIT);

	BIO_clear_retry_flags(bio);
	if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		BIO_set_retry_read(bio);
	return (int)got;
}

static long tls_bio_ctrl(BIO *bio, int command, long number, void *pointer)
{
	/* nothing is buffered here: flushing is done, everything else unknown */
	return command == BIO_CTRL_FLUSH ? 1 : 0;
}

static int tls_bio_create(BIO *bio)
{
	BIO_set_init(bio, 1);
	return 1;
}

/* ---- the context ---- */

/* OpenSSL's reason for the last failure, for the end of a sentence. */
static const char *tls_reason(void)
{
	const char *reason = ERR_reason_error_string(ERR_peek_last_error());

	return reason ? reason : "unknown error";
}

/* Always yes: the policy asks for a certificate but does not verify it. */
static int tls_accept_any(int preverified, X509_STORE_CTX *store)
{
	return 1;
}

/* Fails with *error unless the file can be opened for reading. */
static int tls_readable(const struct web_config *config, const struct web_setting *setting,
			const char *what, char **error)
{
	FILE *file = fopen(setting->value, "r");

	if (!file) {
		int err = errno;
		*error = web_config_error(config, setting->line, "%s %s cannot be read: %s", what,
					  setting->value, strerror(err));
		return -err;
	}
	fclose(file);
	return 0;
}

static int tls_no_passphrase(char *buffer, int size, int rwflag, void *data)
{
	return -1;
}

static int tls_load_key(const struct web_config *config, SSL_CTX *ctx, char **error)
{
	const struct web_setting *setting = &config->key_file;
	FILE *file;
	EVP_PKEY *key;
	int err = tls_readable(config, setting, "key_file", error);

	if (err)
		return err;
	file = fopen(setting->value, "r");
	key = file ? PEM_read_PrivateKey(file, NULL, tls_no_passphrase, NULL) : NULL;
	if (file)
		fclose(file);
	if (!key) {
		*error = web_config_error(config, setting->line,
					  "key_file %s holds no PEM private key sonde can use (%s; a key "
					  "protected by a passphrase is not supported)",
					  setting->value, tls_reason());
		return -EINVAL;
	}
	if (X509_check_private_key(SSL_CTX_get0_certificate(ctx), key) != 1) {
		*error = web_config_error(config, setting->line,
					  "key_file %s does not match the certificate in cert_file %s",
					  setting->value, config->cert_file.value);
		EVP_PKEY_free(key);
		return -EINVAL;
	}
	err = SSL_CTX_use_PrivateKey(ctx, key) == 1 ? 0 : -EINVAL;
	if (err)
		*error = web_config_error(config, setting->line, "key_file %s: %s", setting->value,
					  tls_reason());
	EVP_PKEY_free(key);
	return err;
}

static int tls_version_of(const struct web_config *config, const struct web_setting *setting,
			  const char *name, int fallback, int *version, char **error)
{
	*version = fallback;
	if (!setting->value)
		return 0;
	for (size_t i = 0; i < sizeof(tls_versions) / sizeof(tls_versions[0]); i++) {
		if (strcmp(setting->value, tls_versions[i].name) == 0) {
			*version = tls_versions[i].version;
			return 0;
		}
	}
	*error = web_config_error(config, setting->line,
				  "%s is TLS10, TLS11, TLS12 or TLS13, not '%s'", name, setting->value);
	return -EINVAL;
}

/* The settings, checked against each other and the files they name. */
static int tls_configure(const struct web_config *config, SSL_CTX *ctx, char **error)
{
	const struct tls_client_auth *auth = &tls_client_auths[0];
	int min_version, max_version, err;

	if (!config->cert_file.value || !config->key_file.value) {
		*error = web_config_error(config, config->tls_line,
					  "tls_server_config needs both cert_file and key_file");
		return -EINVAL;
	}
	if ((err = tls_version_of(config, &config->min_version, "min_version", TLS1_2_VERSION,
				  &min_version, error)) ||
	    (err = tls_version_of(config, &config->max_version, "max_version", TLS1_3_VERSION,
				  &max_version, error)))
		return err;
	if (min_version > max_version) {
		*error = web_config_error(config, config->min_version.line,
					  "min_version %s is above max_version %s",
					  config->min_version.value,
					  config->max_version.value ? config->max_version.value : "TLS13");
		return -EINVAL;
	}
	SSL_CTX_set_min_proto_version(ctx, min_version);
	SSL_CTX_set_max_proto_version(ctx, max_version);
	if (!config->prefer_server_cipher_suites.value ||
	    strcmp(config->prefer_server_cipher_suites.value, "true") == 0)
		SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
	/* a client asking to renegotiate costs the loop handshakes: refused */
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
				      SSL_MODE_RELEASE_BUFFERS);
	/* resumed sessions skip the key exchange; with client certificates
	 * OpenSSL resumes only sessions of a named context */
	SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"sonde", 5);

	if ((err = tls_readable(config, &config->cert_file, "cert_file", error)))
		return err;
	if (SSL_CTX_use_certificate_chain_file(ctx, config->cert_file.value) != 1) {
		*error = web_config_error(config, config->cert_file.line,
					  "cert_file %s holds no PEM certificate sonde can use (%s)",
					  config->cert_file.value, tls_reason());
		return -EINVAL;
	}
	if ((err = tls_load_key(config, ctx, error)))
		return err;

	if (config->client_auth_type.value) {
		auth = NULL;
		for (size_t i = 0; i < sizeof(tls_client_auths) / sizeof(tls_client_auths[0]); i++)
			if (strcmp(config->client_auth_type.value, tls_client_auths[i].name) == 0)
				auth = &tls_client_auths[i];
		if (!auth) {
			*error = web_config_error(
				config, config->client_auth_type.line,
				"client_auth_type '%s' is none of NoClientCert, RequestClientCert, "
				"RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert",
				config->client_auth_type.value);
			return -EINVAL;
		}
	}
	if (config->client_ca_file.value) {
		if (auth->mode == SSL_VERIFY_NONE) {
			*error = web_config_error(config, config->client_ca_file.line,
						  "client_ca_file is set but no client_auth_type asks "
						  "for client certificates (RequireAndVerifyClientCert, say)");
			return -EINVAL;
		}
		if ((err = tls_readable(config, &config->client_ca_file, "client_ca_file", error)))
			return err;
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(config->client_ca_file.value);
		if (!names || SSL_CTX_load_verify_locations(ctx, config->client_ca_file.value, NULL) != 1) {
			sk_X509_NAME_pop_free(names, X509_NAME_free);
			*error = web_config_error(config, config->client_ca_file.line,
						  "client_ca_file %s holds no PEM certificate sonde can use (%s)",
						  config->client_ca_file.value, tls_reason());
			return -EINVAL;
		}
		SSL_CTX_set_client_CA_list(ctx, names);
	} else if (auth->verifies) {
		*error = web_config_error(config, config->client_auth_type.line,
					  "client_auth_type %s verifies client certificates: it needs "
					  "client_ca_file", auth->name);
		return -EINVAL;
	}
	SSL_CTX_set_verify(ctx, auth->mode, auth->verifies ? NULL : tls_accept_any);
	return 0;
}

int tls_context_new(const struct web_config *config, struct tls_context **out, char **error)
{
	struct tls_context *tls;
	int err;

	*out = NULL;
	/* any setting turns TLS on (and then a certificate is needed); an empty
	 * section, as for exporter-toolkit, does not */
	if (!config->tls_line)
		return 0;
	if (!config->cert_file.value && !config->key_file.value && !config->client_ca_file.value &&
	    !config->client_auth_type.value && !config->min_version.value &&
	    !config->max_version.value && !config->prefer_server_cipher_suites.value)
		return 0;
	err = openssl_load(error);
	if (err)
		return err;
	tls = xcalloc(1, sizeof(*tls));
	tls->ctx = SSL_CTX_new(TLS_server_method());
	tls->bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sonde socket");
	if (!tls->ctx || !tls->bio_method) {
		*error = web_config_error(config, config->tls_line, "cannot set up TLS: %s",
					  tls_reason());
		tls_context_free(tls);
		return -ENOMEM;
	}
	BIO_meth_set_write(tls->bio_method, tls_bio_write);
	BIO_meth_set_read(tls->bio_method, tls_bio_read);
	BIO_meth_set_ctrl(tls->bio_method, tls_bio_ctrl);
	BIO_meth_set_create(tls->bio_method, tls_bio_create);
	err = tls_configure(config, tls->ctx, error);
	ERR_clear_error();
	if (err) {
		tls_context_free(tls);
		return err;
	}
	*out = tls;
	return 0;
}

void tls_context_free(struct tls_context *tls)
{
	if (!tls)
		return;
	SSL_CTX_free(tls->ctx);
	BIO_meth_free(tls->bio_method);
	free(tls);
}

/* ---- connections ---- */

struct tls_session *tls_session_new(struct tls_context *tls, int fd)
{
	SSL *ssl = SSL_new(tls->ctx);
	BIO *bio = BIO_new(tls->bio_method);

	if (!ssl || !bio) {
		SSL_free(ssl);
		BIO_free(bio);
		ERR_clear_error();
		return NULL;
	}
	BIO_set_data(bio, (void *)(intptr_t)fd);
	SSL_set_bio(ssl, bio, bio);
	SSL_set_accept_state(ssl);
	struct tls_session *session = xcalloc(1, sizeof(*session));
	session->ssl = ssl;
	return session;
}

void tls_session_free(struct tls_session *session)
{
	if (!session)
		return;
	SSL_free(session->ssl);
	free(session);
}

/* What a call that did not complete waits for: -EAGAIN with *events, or
 * -EPROTO (plain HTTP sent to the TLS port), or -EIO (the connection is
 * lost: closed, reset, or a TLS error). */
static int tls_wait(struct tls_session *session, int result, short *events)
{
	int err = SSL_get_error(session->ssl, result);
	unsigned long detail = ERR_peek_error();

	ERR_clear_error();
	switch (err) {
	case SSL_ERROR_WANT_READ:
		*events = POLLIN;
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		*events = POLLOUT;
		return -EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	default:
		if (ERR_GET_LIB(detail) == ERR_LIB_SSL && ERR_GET_REASON(detail) == SSL_R_HTTP_REQUEST)
			return -EPROTO;
		return -EIO;
	}
}

int tls_handshake(struct tls_session *session, short *events)
{
	int result = SSL_accept(session->ssl);

	if (result == 1)
		return 1;
	result = tls_wait(session, result, events);
	return result == 0 ? -EIO : result;
}

ssize_t tls_recv(struct tls_session *session, void *data, size_t length, short *events)
{
	size_t got = 0;

	if (SSL_read_ex(session->ssl, data, length, &got) == 1)
		return (ssize_t)got;
	return tls_wait(session, 0, events);
}

ssize_t tls_send(struct tls_session *session, const void *data, size_t length, short *events)
{
	size_t put = 0;

	if (SSL_write_ex(session->ssl, data, length, &put) == 1)
		return (ssize_t)put;
	int err = tls_wait(session, 0, events);
	return err == 0 ? -EIO : err;
}

bool tls_has_pending(const struct tls_session *session)
{
	return SSL_has_pending(session->ssl) == 1;
}

void tls_close_notify(struct tls_session *session)
{
	/* one try: a client that does not take it loses nothing it asked for */
	if (SSL_shutdown(session->ssl) < 0)
		ERR_clear_error();
}
