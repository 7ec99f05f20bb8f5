/*
 * A small open-hashing table from string keys to pointers, built once (at
 * configuration time) and then read-only: lookups are lock-free and cheap.
 */
#ifndef SWS_HASH_H
#define SWS_HASH_H

#include <scalws/sws_types.h>

typedef struct sws_hash_s sws_hash_t;   /* opaque */

/* Case-insensitive when lowercase is set (keys compared lower-cased). */
sws_hash_t *sws_hash_create(sws_pool_t *pool, sws_uint_t expected, int lowercase);
/* SWS_OK, SWS_BUSY if the key exists, SWS_ERROR on allocation failure. */
sws_int_t   sws_hash_add(sws_hash_t *h, const sws_str_t *key, void *value);
void       *sws_hash_find(const sws_hash_t *h, const u_char *key, size_t len);
sws_uint_t  sws_hash_count(const sws_hash_t *h);

#endif
