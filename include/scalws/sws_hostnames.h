/*
 * Wildcard host names in nginx's forms (ABI 1.6): "*.x.com" matches the
 * names under x.com, ".x.com" those and x.com itself, "www.x.*" the names
 * that start with "www.x.". A lookup gives the value of the longest
 * matching suffix form, else of the longest prefix form. For map's
 * "hostnames" and valid_referers; exact names belong in a sws_hash_t.
 * Built at configuration time, then read-only.
 */
#ifndef SWS_HOSTNAMES_H
#define SWS_HOSTNAMES_H

#include <scalws/sws_types.h>

typedef struct sws_hostnames_s sws_hostnames_t;   /* opaque */

#define SWS_HOSTNAME_INVALID  -1   /* a '*' elsewhere ("a.*.com", "*x.com", "*") */
#define SWS_HOSTNAME_PLAIN     0   /* no wildcard: an exact name */
#define SWS_HOSTNAME_WILDCARD  1

/* Which kind of name this is. */
int              sws_hostnames_kind(const sws_str_t *name);
sws_hostnames_t *sws_hostnames_create(sws_pool_t *pool);
/* Add a wildcard name (any case; copied). SWS_OK; SWS_BUSY when the same
 * form is there already ("*.x.com" and ".x.com" count as the same, as in
 * nginx); SWS_DECLINED for a name that is no wildcard; SWS_ERROR. */
sws_int_t        sws_hostnames_add(sws_hostnames_t *h, const sws_str_t *name, void *value);
/* The value for host (lower case, no trailing dot), NULL if none. */
void            *sws_hostnames_find(const sws_hostnames_t *h, const u_char *host, size_t len);

#endif
