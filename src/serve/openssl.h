/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OpenSSL, loaded when `sonde serve` first needs it (TLS, or basic auth's
 * digests), not at every start: linking libssl and libcrypto made the
 * dynamic loader map and relocate some 5 MB for every tool and script,
 * about 8 ms of each start-up on the development machine, for a feature
 * only serve uses.
 *
 * tls.c and auth.c include this after OpenSSL's own headers: each function
 * they call becomes a pointer that openssl_load() fills from libssl.so.3
 * (and the libcrypto it pulls in). Every entry point that reaches OpenSSL
 * calls openssl_load() first.
 */
#ifndef SONDE_SERVE_OPENSSL_H
#define SONDE_SERVE_OPENSSL_H

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#define OPENSSL_FUNCTIONS(X) \
	X(BIO_clear_flags) X(BIO_free) X(BIO_get_data) X(BIO_get_new_index) X(BIO_meth_free) \
	X(BIO_meth_new) X(BIO_meth_set_create) X(BIO_meth_set_ctrl) X(BIO_meth_set_read) \
	X(BIO_meth_set_write) X(BIO_new) X(BIO_set_data) X(BIO_set_flags) X(BIO_set_init) \
	X(CRYPTO_memcmp) X(ERR_clear_error) X(ERR_peek_error) X(ERR_peek_last_error) \
	X(ERR_reason_error_string) X(EVP_DigestFinal_ex) X(EVP_DigestInit_ex) \
	X(EVP_DigestUpdate) X(EVP_MD_CTX_free) X(EVP_MD_CTX_new) X(EVP_PKEY_free) X(EVP_sha256) \
	X(OPENSSL_cleanse) X(OPENSSL_sk_pop_free) X(PEM_read_PrivateKey) X(RAND_bytes) \
	X(SSL_CTX_ctrl) X(SSL_CTX_free) X(SSL_CTX_get0_certificate) \
	X(SSL_CTX_load_verify_locations) X(SSL_CTX_new) X(SSL_CTX_set_client_CA_list) \
	X(SSL_CTX_set_options) X(SSL_CTX_set_session_id_context) X(SSL_CTX_set_verify) \
	X(SSL_CTX_use_PrivateKey) X(SSL_CTX_use_certificate_chain_file) X(SSL_accept) \
	X(SSL_free) X(SSL_get_error) X(SSL_has_pending) X(SSL_load_client_CA_file) X(SSL_new) \
	X(SSL_read_ex) X(SSL_set_accept_state) X(SSL_set_bio) X(SSL_shutdown) X(SSL_write_ex) \
	X(TLS_server_method) X(X509_NAME_free) X(X509_check_private_key)

struct openssl_functions {
#define OPENSSL_POINTER(name) __typeof__(&name) name;
	OPENSSL_FUNCTIONS(OPENSSL_POINTER)
#undef OPENSSL_POINTER
};

extern struct openssl_functions openssl;

/* Loads the library once: 0, or -ENOENT and a sentence in *error. */
int openssl_load(char **error);

#ifndef SONDE_OPENSSL_LOADER
#define BIO_clear_flags (openssl.BIO_clear_flags)
#define BIO_free (openssl.BIO_free)
#define BIO_get_data (openssl.BIO_get_data)
#define BIO_get_new_index (openssl.BIO_get_new_index)
#define BIO_meth_free (openssl.BIO_meth_free)
#define BIO_meth_new (openssl.BIO_meth_new)
#define BIO_meth_set_create (openssl.BIO_meth_set_create)
#define BIO_meth_set_ctrl (openssl.BIO_meth_set_ctrl)
#define BIO_meth_set_read (openssl.BIO_meth_set_read)
#define BIO_meth_set_write (openssl.BIO_meth_set_write)
#define BIO_new (openssl.BIO_new)
#define BIO_set_data (openssl.BIO_set_data)
#define BIO_set_flags (openssl.BIO_set_flags)
#define BIO_set_init (openssl.BIO_set_init)
#define CRYPTO_memcmp (openssl.CRYPTO_memcmp)
#define ERR_clear_error (openssl.ERR_clear_error)
#define ERR_peek_error (openssl.ERR_peek_error)
#define ERR_peek_last_error (openssl.ERR_peek_last_error)
#define ERR_reason_error_string (openssl.ERR_reason_error_string)
#define EVP_DigestFinal_ex (openssl.EVP_DigestFinal_ex)
#define EVP_DigestInit_ex (openssl.EVP_DigestInit_ex)
#define EVP_DigestUpdate (openssl.EVP_DigestUpdate)
#define EVP_MD_CTX_free (openssl.EVP_MD_CTX_free)
#define EVP_MD_CTX_new (openssl.EVP_MD_CTX_new)
#define EVP_PKEY_free (openssl.EVP_PKEY_free)
#define EVP_sha256 (openssl.EVP_sha256)
#define OPENSSL_cleanse (openssl.OPENSSL_cleanse)
#define OPENSSL_sk_pop_free (openssl.OPENSSL_sk_pop_free)
#define PEM_read_PrivateKey (openssl.PEM_read_PrivateKey)
#define RAND_bytes (openssl.RAND_bytes)
#define SSL_CTX_ctrl (openssl.SSL_CTX_ctrl)
#define SSL_CTX_free (openssl.SSL_CTX_free)
#define SSL_CTX_get0_certificate (openssl.SSL_CTX_get0_certificate)
#define SSL_CTX_load_verify_locations (openssl.SSL_CTX_load_verify_locations)
#define SSL_CTX_new (openssl.SSL_CTX_new)
#define SSL_CTX_set_client_CA_list (openssl.SSL_CTX_set_client_CA_list)
#define SSL_CTX_set_options (openssl.SSL_CTX_set_options)
#define SSL_CTX_set_session_id_context (openssl.SSL_CTX_set_session_id_context)
#define SSL_CTX_set_verify (openssl.SSL_CTX_set_verify)
#define SSL_CTX_use_PrivateKey (openssl.SSL_CTX_use_PrivateKey)
#define SSL_CTX_use_certificate_chain_file (openssl.SSL_CTX_use_certificate_chain_file)
#define SSL_accept (openssl.SSL_accept)
#define SSL_free (openssl.SSL_free)
#define SSL_get_error (openssl.SSL_get_error)
#define SSL_has_pending (openssl.SSL_has_pending)
#define SSL_load_client_CA_file (openssl.SSL_load_client_CA_file)
#define SSL_new (openssl.SSL_new)
#define SSL_read_ex (openssl.SSL_read_ex)
#define SSL_set_accept_state (openssl.SSL_set_accept_state)
#define SSL_set_bio (openssl.SSL_set_bio)
#define SSL_shutdown (openssl.SSL_shutdown)
#define SSL_write_ex (openssl.SSL_write_ex)
#define TLS_server_method (openssl.TLS_server_method)
#define X509_NAME_free (openssl.X509_NAME_free)
#define X509_check_private_key (openssl.X509_check_private_key)
#endif

#endif
