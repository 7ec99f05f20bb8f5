/* The core's lookup with a key's hash already known: a parser that hashed
 * a field's name as it read it (sws_http_header_t.hash, sws_hash_key of
 * the lower-case name) does not hash it again. Core-private. */
#ifndef SWS_HASH_INTERNAL_H
#define SWS_HASH_INTERNAL_H

#include <scalws/sws_hash.h>

/* hash: sws_hash_key(key) with key in lower case when h is a lowercase
 * table (= sws_hash_key_lc of the key in any case). */
void *sws_hash_find_hashed(const sws_hash_t *h, uint32_t hash, const u_char *key,
                           size_t len);

#endif
