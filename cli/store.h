/*
 * store.h - the credential store of `mcpc --oauth-store FILE`: a JSON object of
 * string keys to string values, kept in memory and written back atomically
 * (a private temporary file renamed over FILE, mode 0600) on every change.
 */
#ifndef MCPC_CLI_STORE_H
#define MCPC_CLI_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "mcpc.h"

struct store;

/*
 * Opens the store at `path`: loads it when it exists. Returns NULL and sets *why
 * (a static description) when the file cannot be read or is not a JSON object
 * of strings, or when memory runs out.
 */
struct store *store_open(const char *path, const char **why);

/* Frees the store (the file stays). NULL is a no-op. */
void store_free(struct store *s);

/* Hands the store to `oauth` as its mcpc_store_load_cb / mcpc_store_save_cb; the
 * settings own it from then on (also when this fails). */
mcpc_status_t store_attach(struct store *s, mcpc_oauth_t *oauth);

#endif
