/*
 * Keyed shared zones: a slab zone (sws_slab.h) that keeps one record per
 * key (a byte string: an address, a URI ...) for all the workers, as
 * limit_req and limit_conn count per client.
 *
 * A module declares a zone by name at configuration time (its *_zone
 * directive: sws_keyed_zone_add), its other directives name the zone
 * (sws_keyed_zone_use) and the name is resolved when the configuration is
 * merged (sws_keyed_zone_resolve), so a zone may be declared after its
 * first use in the block. A reload keeps a zone and its records when the
 * same name and size remain. Requests look keys up and insert them under
 * the zone's lock. Zones of one type (one module) share a name space; two
 * modules may each have a zone "one".
 */
#ifndef SWS_KEYED_ZONE_H
#define SWS_KEYED_ZONE_H

#include <scalws/sws_types.h>
#include <scalws/sws_conf.h>
#include <scalws/sws_array.h>

typedef struct sws_keyed_zone_s  sws_keyed_zone_t;    /* opaque */

/* The kind of zone a module keeps (static, one per module). */
typedef struct {
    const char  *name;          /* "limit_req": the zones' owner, in listings */
    const char  *directive;     /* "limit_req_zone": the one declaring them */
    void        *tag;           /* the owner: &sws_module */
    size_t       record_size;   /* the owner's part of each record */
    /* 1: a full zone drops the records used least recently (see
     * sws_keyed_zone_touch) to make room for a new key; 0: an insert
     * into a full zone fails. */
    sws_uint_t   evict;
    /* ABI 1.8 (was reserved[0]): the names of the zone's outcome counters
     * ("passed", "rejected" ...: see sws_keyed_zone_counters), NULL-ended,
     * at most SWS_KEYED_ZONE_COUNTERS; NULL: the zone counts nothing. */
    const char *const  *counters;
    void        *reserved[3];   /* zero */
} sws_keyed_zone_type_t;

/* A directive's reference to a zone by name, resolved at merge. */
typedef struct {
    sws_str_t          name;
    sws_keyed_zone_t  *zone;    /* NULL until resolved */
    void              *data;    /* once resolved: sws_keyed_zone_data(zone) */
    const char        *file;    /* where the zone was named */
    sws_uint_t         line;
} sws_keyed_zone_ref_t;

/*
 * "NAME:SIZE", the value of a zone= parameter: *name points into spec.
 * Logs `invalid zone size "SPEC"` or `zone "SPEC" is too small` (under
 * 32 KiB, eight pages as nginx) and returns SWS_ERROR.
 */
sws_int_t sws_keyed_zone_parse(sws_conf_t *cf, const sws_str_t *spec, sws_str_t *name,
    size_t *size);

/*
 * Declare zone name (copied) of type in the configuration being read, and
 * map it (or keep the previous configuration's: same name and size). key
 * is the text of the zone's key (for messages and listings); data is the
 * owner's (its compiled key, its rate ...), for sws_keyed_zone_data().
 * Declared twice: logs nginx's `the size N of shared memory zone "NAME"
 * conflicts with already declared size M` or `DIRECTIVE "NAME" is already
 * bound to key "KEY"`, and returns NULL.
 */
sws_keyed_zone_t *sws_keyed_zone_add(sws_conf_t *cf, const sws_keyed_zone_type_t *type,
    const sws_str_t *name, size_t size, const sws_str_t *key, void *data);

/* The zone of type declared under name in the configuration being read
 * so far, or NULL (ABI 1.8): a subsystem that keeps one zone of its own
 * for all its directives declares it at the first of them. */
sws_keyed_zone_t *sws_keyed_zone_get(sws_conf_t *cf, const sws_keyed_zone_type_t *type,
    const sws_str_t *name);

/* A directive names a zone: ref gets a copy of name and the directive's
 * file and line. SWS_ERROR: no memory. */
sws_int_t sws_keyed_zone_use(sws_conf_t *cf, sws_keyed_zone_ref_t *ref, const sws_str_t *name);

/* At merge, for each element of uses (an array whose elements start with
 * a sws_keyed_zone_ref_t, or NULL): ref->zone is the zone of type declared
 * under ref's name in the configuration. SWS_ERROR, after logging nginx's
 * `zero size shared memory zone "NAME"` with ref's file and line, when
 * none is. Resolved refs are left as they are. */
sws_int_t sws_keyed_zone_resolve(sws_conf_t *cf, const sws_keyed_zone_type_t *type,
    sws_array_t *uses);

/*
 * The limits of one configuration level on zones of a type, as nginx's
 * limit_req and limit_conn have them: the level's uses of zones (each
 * element starts with a sws_keyed_zone_ref_t; a level without any
 * inherits its parent's, one with any has only its own), the status of a
 * refusal, the level refusals are logged at, and a dry run mode. A module
 * may make it its location conf and point its *_status, *_log_level and
 * *_dry_run directives at the fields.
 */
typedef struct {
    sws_array_t  *uses;        /* NULL: inherited */
    sws_int_t     status;      /* default 503 */
    sws_uint_t    log_level;   /* default error */
    sws_int_t     dry_run;     /* default off */
    void         *reserved[2];
} sws_keyed_zone_limits_t;

/* A new one (pool memory), every field unset; NULL: no memory. */
sws_keyed_zone_limits_t *sws_keyed_zone_limits_create(sws_conf_t *cf);
/* A use of zone name at this level: a new element of conf->uses (size
 * bytes, zeroed but for its ref). NULL with *err set to "is duplicate"
 * (one use of a zone per level, as nginx) or SWS_CONF_ERROR. */
void *sws_keyed_zone_limits_add(sws_conf_t *cf, sws_keyed_zone_limits_t *conf, size_t size,
    const sws_str_t *name, char **err);
/* Resolve both levels' uses (sws_keyed_zone_resolve) and merge. Returns
 * SWS_CONF_OK or SWS_CONF_ERROR, as a merge_loc_conf hook. */
char *sws_keyed_zone_limits_merge(sws_conf_t *cf, const sws_keyed_zone_type_t *type,
    sws_keyed_zone_limits_t *prev, sws_keyed_zone_limits_t *conf);

const sws_str_t *sws_keyed_zone_name(sws_keyed_zone_t *zone);
void            *sws_keyed_zone_data(sws_keyed_zone_t *zone);

/*
 * ABI 1.8: outcome counters. A zone whose type names counters keeps them
 * in its shared memory, one row per worker (and per generation parity, as
 * the connection counters): the owner adds to its own worker's row with
 * plain adds, no lock and no atomic, e.g.
 *     sws_keyed_zone_counters(zone)[MY_REJECTED]++;
 * (NULL when the type names none). They go on across reloads that keep
 * the zone. sws_keyed_zone_counters_sum() fills sum[0 .. n-1] with the
 * sums over every row (a snapshot: each row is read as it is).
 */
#define SWS_KEYED_ZONE_COUNTERS  8
uint64_t *sws_keyed_zone_counters(sws_keyed_zone_t *zone);
void      sws_keyed_zone_counters_sum(sws_keyed_zone_t *zone, uint64_t *sum, sws_uint_t n);

/* ABI 1.8: the keyed zones of cycle, of every type, in the order they were
 * declared: i from 0 until NULL. */
sws_keyed_zone_t *sws_keyed_zone_at(sws_cycle_t *cycle, sws_uint_t i);
const sws_keyed_zone_type_t *sws_keyed_zone_type(sws_keyed_zone_t *zone);

/* ---- records: the functions below need the zone's lock ---- */

void   sws_keyed_zone_lock(sws_keyed_zone_t *zone);
void   sws_keyed_zone_unlock(sws_keyed_zone_t *zone);

/* The record of key (its owner's part, record_size bytes), or NULL. */
void  *sws_keyed_zone_lookup(sws_keyed_zone_t *zone, const u_char *key, size_t len);
/* A new record for key, not in the zone yet, zeroed; in an
 * evicting zone it counts as used now. NULL when the zone has no room
 * (an evicting zone first drops the records used least recently). */
void  *sws_keyed_zone_insert(sws_keyed_zone_t *zone, const u_char *key, size_t len);
/* The record was used now (evicting zones: it goes last). */
void   sws_keyed_zone_touch(sws_keyed_zone_t *zone, void *record);
/* Remove and free a record. */
void   sws_keyed_zone_delete(sws_keyed_zone_t *zone, void *record);
/* How many records the zone holds. */
sws_uint_t sws_keyed_zone_count(sws_keyed_zone_t *zone);

#endif
