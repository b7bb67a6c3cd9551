/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for sonde serve's web config reader (--web.config.file):
 * any bytes as the file go through the YAML subset's reader and the schema
 * walk (users and their bcrypt hashes' shape, the TLS section's keys).
 * Nothing the config names is opened: web_config_parse is the reader from
 * text, which web_config_load calls after reading the file. Build and run
 * with `sh tests/fuzz/run.sh webconfig SECONDS`.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct web_config *config = NULL;
	char *error = NULL;

	memcpy(text, data, size);
	text[size] = '\0';
	int err = web_config_parse("/etc/sonde/web.yml", text, &config, &error);
	/* an error and a config are exclusive, and an error is a sentence */
	if ((err == 0) != (config != NULL) || (err != 0) != (error != NULL))
		abort();
	if (error && strncmp(error, "/etc/sonde/web.yml:", 19) != 0)
		abort();
	web_config_free(config);
	free(error);
	free(text);
	return 0;
}
