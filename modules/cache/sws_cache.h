/*
 * The cache module: an RFC 9111 shared response cache in front of the
 * upstream framework (proxy, fastcgi, any protocol module), on the
 * framework's cache hooks (sws_http_upstream_cache_t). Shared between its
 * files:
 *
 *   sws_cache_module.c    directives (one table for every prefix: proxy_,
 *                         fastcgi_), configuration, variables, descriptor
 *   sws_cache_path.c      proxy_cache_path: the zone, the index (nodes in
 *                         a slab, by key), file names, the memory copies
 *   sws_cache_entry.c     the stored-entry format (files and memory alike)
 *                         and its checked reader (outside input: fuzzed)
 *   sws_cache_parse.c     the parsers: Cache-Control, Age, Expires, targeted
 *                         fields (CDN-Cache-Control) (fuzzed)
 *   sws_cache_rfc.c       freshness, age, what may be stored
 *   sws_cache_vary.c      the normal form of a Vary'd request field (fuzzed)
 *   sws_cache_lookup.c    the lookup hook: hits, misses, lock, stale
 *   sws_cache_store.c     the store hooks: the fill (temp file + rename),
 *                         revalidation's 304, stale on errors
 *   sws_cache_helpers.c   the cache manager and the cache loader
 *   sws_cache_purge.c     proxy_cache_purge and the purge function
 *   sws_cache_invalidate.c  RFC 9111 4.4: what an unsafe method's answer
 *                         invalidates
 *   sws_cache_partial.c   RFC 9111 3.3, 3.4: 206 parts stored, combined,
 *                         and ranges answered from them
 *   sws_cache_range.c     Content-Range's parser and the parts' arithmetic
 *                         (fuzzed)
 */
#ifndef SWS_CACHE_H
#define SWS_CACHE_H

#include <scalws/scalws.h>

/* ---- the stored entry (sws_cache_entry.c) ------------------------------ */

/*
 * A stored response is one run of bytes, the same in a file under the
 * cache's path and in shared memory: this fixed header, the key (the base
 * key first, then, for a variant, what the Vary fields selected), the Vary
 * field names, the response fields, then the body. Numbers are native
 * (a cache directory belongs to one machine). The reader checks every
 * length and byte before anything is used: a file in PATH is outside input.
 */
#define SWS_CACHE_MAGIC       "SWSCACH1"
#define SWS_CACHE_VERSION     1
#define SWS_CACHE_MAX_KEY     4096
#define SWS_CACHE_MAX_FIELDS  256
#define SWS_CACHE_MAX_HEADER  (64 * 1024)

/* flags */
#define SWS_CACHE_F_NO_CACHE         0x0001   /* revalidate on every use */
#define SWS_CACHE_F_MUST_REVALIDATE  0x0002   /* never stale */
#define SWS_CACHE_F_PARTIAL          0x0004   /* parts of a representation (a 206) */
#define SWS_CACHE_F_ALL              0x0007

/* A partial entry (RFC 9111 3.3): its status is 206, its body_len the
 * representation's whole length, and the body holds at the offsets of the
 * representation only the parts listed after the fields (parts_len bytes:
 * pairs of uint64 start, end; sorted, apart, none empty); the rest of the
 * body is a hole of the file. */
#define SWS_CACHE_MAX_PARTS          32

typedef struct {
    uint64_t   start;
    uint64_t   end;               /* exclusive */
} sws_cache_part_t;

typedef struct {
    u_char     magic[8];
    uint32_t   version;
    uint32_t   header_len;      /* everything before the body */
    uint64_t   body_len;
    uint32_t   key_len;
    uint32_t   base_len;        /* the key without the variant part */
    uint32_t   vary_len;        /* "accept-encoding,accept-language" */
    uint32_t   fields_len;
    uint32_t   nfields;
    uint16_t   status;
    uint16_t   flags;
    int64_t    response_time;   /* when it came (wall clock seconds) */
    int64_t    initial_age;     /* its age then (RFC 9111 4.2.3) */
    int64_t    fresh_until;     /* wall clock seconds */
    int64_t    swr;             /* stale-while-revalidate, seconds */
    int64_t    sie;             /* stale-if-error, seconds */
    int64_t    last_modified;   /* -1: none */
    uint32_t   checksum;        /* of the header with this field 0 */
    uint32_t   parts_len;       /* a partial entry's list of parts; 0: none */
} sws_cache_file_header_t;

/* A checked entry: pointers into the bytes it was read from. */
typedef struct {
    sws_cache_file_header_t   h;
    const u_char             *key;
    const u_char             *vary;
    const u_char             *fields;
    const u_char             *body;       /* NULL when only the header was read */
    sws_str_t                 etag;       /* from the fields; len 0: none */
    const u_char             *parts;      /* h.parts_len bytes (sws_cache_part_t) */
} sws_cache_entry_t;

/* Check the header at [p, p + len) (len: what was read, at least the
 * header), of an entry whose size is total (file or memory). NULL if
 * valid, else why not (a static string, for the log). */
const char *sws_cache_entry_parse(const u_char *p, size_t len, uint64_t total,
    sws_cache_entry_t *e);
/* An entry this module put in shared memory (trusted): its parts only. */
void        sws_cache_entry_map(const u_char *p, size_t len, sws_cache_entry_t *e);
/* The fields of a checked entry, one by one: *pos starts at 0. 0 at the end.
 * (Inline: every hit walks its entry's fields.) */
static inline int
sws_cache_entry_field(const sws_cache_entry_t *e, uint32_t *pos, sws_str_t *name,
    sws_str_t *value)
{
    uint16_t  n, v;

    if (*pos + 4 > e->h.fields_len) {
        return 0;
    }
    memcpy(&n, e->fields + *pos, 2);
    memcpy(&v, e->fields + *pos + 2, 2);
    name->data = (u_char *) e->fields + *pos + 4;
    name->len = n;
    value->data = name->data + n;
    value->len = v;
    *pos += 4 + (uint32_t) n + v;
    return 1;
}
/* The header's size for these parts, and writing it at buf (that many
 * bytes). The checksum is computed here. A partial entry's list of parts
 * (h->parts_len bytes) follows its fields at fields, and is counted in
 * fields_len for the size. */
size_t      sws_cache_entry_header_size(size_t key_len, size_t vary_len, size_t fields_len);
u_char     *sws_cache_entry_write(u_char *buf, sws_cache_file_header_t *h, const u_char *key,
    const u_char *vary, const u_char *fields);
/* The value of a checked entry's first field named lcname (lower case,
 * compared without case): 1 if it has one. */
int         sws_cache_entry_value(const sws_cache_entry_t *e, const char *lcname, size_t len,
    sws_str_t *value);
/* One field into a fields block (name and value lengths < 64 KiB). */
size_t      sws_cache_field_size(const sws_str_t *name, const sws_str_t *value);
u_char     *sws_cache_field_write(u_char *p, const sws_str_t *name, const sws_str_t *value);
/* FNV-1a, for the header's checksum; and the 128-bit key digest that
 * names the files. */
uint32_t    sws_cache_checksum(const u_char *p, size_t len);
void        sws_cache_digest(const u_char *key, size_t len, u_char digest[16]);

/* ---- the index in shared memory (sws_cache_path.c) ----------------------- */

/* One key in the zone: a stored entry, a Vary marker (its variants are
 * under longer keys), or only a count of uses (min_uses). */
typedef struct sws_cache_node_s  sws_cache_node_t;

/* A memory copy of an entry, in the zone: hits send straight from it, so
 * it goes only when the last of them is done (refs), even when its node
 * was evicted or refilled meanwhile (orphan). After the entry's bytes, its
 * fields prepared once for every hit (sws_http_stored_head_t, pointing
 * into data; the zone is at one address in every worker). */
typedef struct {
    uint32_t               refs;        /* atomic */
    uint32_t               size;        /* of data: the entry */
    uint32_t               orphan;      /* atomic: 1 no node points to it, 2 freed */
    uint32_t               head_off;    /* the prepared head at data + head_off; 0: none */
    u_char                 data[];
} sws_cache_blob_t;

struct sws_cache_node_s {
    sws_slab_hash_node_t   hash;
    sws_slab_lru_node_t    lru;          /* every node, by use */
    sws_slab_lru_node_t    mem_lru;      /* nodes with a memory copy */
    sws_queue_t            variants;     /* marker: its variants; variant: siblings */
    sws_cache_node_t      *marker;       /* variant: its marker */
    u_char                 digest[16];
    time_t                 fresh_until;
    time_t                 response_time;
    time_t                 initial_age;  /* the entry's age when it came */
    time_t                 last_access;  /* for inactive */
    time_t                 swr;
    time_t                 sie;
    sws_msec_t             lock_until;   /* a fill runs (monotonic ms); 0: none */
    uint64_t               fs_size;      /* the file's bytes (0: no file) */
    uint64_t               uniq;         /* the file's inode (0: unknown): a worker's
                                            cached descriptor is of this file */
    sws_cache_blob_t      *mem;          /* the entry's bytes in the zone, or NULL */
    uint32_t               uses;
    uint32_t               key_len;
    u_char                *vary;         /* marker: the Vary names (in the zone) */
    uint32_t               vary_len;
    uint16_t               flags;        /* SWS_CACHE_F_* */
    unsigned               exists:1;     /* a complete entry is stored */
    unsigned               is_marker:1;
    unsigned               in_mem_lru:1;
    u_char                 key[];
};

/* A worker's counts of requests by final $upstream_cache_status
 * (SWS_CACHE_MISS - 1 ..): a cache line of its own, plain adds. */
typedef struct {
    uint64_t               n[8];
} sws_cache_row_t;

/* The root of a zone (sws_slab_data). */
typedef struct {
    sws_slab_hash_t       *hash;
    sws_slab_lru_t         lru;
    sws_slab_lru_t         mem_lru;
    uint64_t               fs_used;      /* bytes in files */
    uint64_t               mem_used;     /* bytes of memory copies */
    uint64_t               nentries;
    unsigned               loaded:1;     /* the loader has finished */
    uint64_t               counter;      /* temp file names */
    sws_cache_row_t       *rows;         /* SWS_STATUS_SLOTS of them */
    uint64_t               evictions;    /* by the manager (under the lock) */
} sws_cache_sh_t;

/* mem_size not given: keys_zone's size / SWS_CACHE_MEM_SHARE */
#define SWS_CACHE_MEM_UNSET  ((size_t) -1)
#define SWS_CACHE_MEM_SHARE  2

/* open_files not given: entry files each worker keeps open (its open file
 * cache), and how long one unused stays open */
#define SWS_CACHE_OPEN_FILES     256
#define SWS_CACHE_OPEN_INACTIVE  60000

/* proxy_cache_path */
typedef struct {
    sws_str_t              name;         /* keys_zone NAME */
    sws_str_t              path;         /* absolute, no trailing slash */
    sws_uint_t             levels[3];    /* 0 ends: levels=1:2 -> {1, 2, 0} */
    size_t                 keys_size;
    size_t                 max_size;     /* 0: no limit */
    time_t                 inactive;     /* seconds */
    size_t                 mem_size;     /* 0: no memory copies */
    size_t                 mem_max_object;
    sws_uint_t             open_files;   /* entry files a worker keeps open; 0: none */
    sws_int_t              use_temp_path;
    sws_shm_zone_t        *zone;
    sws_slab_pool_t       *pool;
    sws_cache_sh_t        *sh;
    const char            *file;         /* where it was defined */
    sws_uint_t             line;
} sws_cache_path_t;

/* The module's http-level conf: every proxy_cache_path. */
typedef struct {
    sws_array_t           *paths;        /* sws_cache_path_t * */
    sws_http_format_t     *server_port;  /* "$server_port": an :authority's port
                                            (HTTP/2, HTTP/3 without Host) */
} sws_cache_main_conf_t;

/* What a prefix (proxy_, fastcgi_) stands for. */
typedef struct {
    const char            *name;         /* "proxy" */
    const char            *default_key;
} sws_cache_prefix_t;

/* proxy_cache_valid */
typedef struct {
    sws_uint_t             status;       /* 0: any */
    time_t                 valid;
} sws_cache_valid_t;

/* proxy_cache_use_stale */
#define SWS_CACHE_STALE_ERROR     0x0001
#define SWS_CACHE_STALE_TIMEOUT   0x0002
#define SWS_CACHE_STALE_UPDATING  0x0004
#define SWS_CACHE_STALE_500       0x0008
#define SWS_CACHE_STALE_502       0x0010
#define SWS_CACHE_STALE_503       0x0020
#define SWS_CACHE_STALE_504       0x0040
#define SWS_CACHE_STALE_OFF       0x8000

/* proxy_ignore_headers */
#define SWS_CACHE_IGN_CC          0x0001   /* Cache-Control */
#define SWS_CACHE_IGN_EXPIRES     0x0002
#define SWS_CACHE_IGN_SET_COOKIE  0x0004
#define SWS_CACHE_IGN_VARY        0x0008

typedef struct {
    sws_cache_path_t      *path;         /* NULL: off */
    sws_str_t              cache_name;   /* while parsing */
    sws_cache_main_conf_t *main;         /* where the paths are (for the merge) */
    sws_int_t              cache_set;    /* proxy_cache given here */
    const sws_cache_prefix_t *prefix;
    sws_http_format_t     *key;
    sws_array_t           *valid;        /* sws_cache_valid_t */
    sws_uint_t             methods;      /* SWS_HTTP_GET | ... */
    sws_int_t              min_uses;
    sws_array_t           *bypass;       /* sws_http_format_t * */
    sws_array_t           *no_cache;     /* sws_http_format_t * */
    sws_uint_t             ignore;       /* SWS_CACHE_IGN_* */
    sws_int_t              revalidate;
    sws_int_t              lock;
    sws_msec_t             lock_timeout;
    sws_msec_t             lock_age;
    sws_uint_t             use_stale;    /* SWS_CACHE_STALE_* */
    sws_int_t              background_update;
    sws_int_t              partial;             /* 206 parts stored (sws_cache_partial.c) */
    sws_int_t              request_directives;  /* honour the request's Cache-Control */
    sws_int_t              convert_head;        /* a HEAD miss is asked as GET */
    sws_int_t              heuristic;           /* percent of the age since
                                                   Last-Modified (4.2.2); 0: off */
    time_t                 heuristic_max;
    sws_array_t           *targets;      /* RFC 9213's target list: sws_str_t, lower
                                            case, first first; empty: off */
    sws_int_t              targeted_hide;       /* not forwarded downstream */
    sws_array_t           *purge_allow;  /* proxy_cache_purge: sws_cache_cidr_t */
} sws_cache_loc_conf_t;

/* $upstream_cache_status */
enum {
    SWS_CACHE_NONE = 0,
    SWS_CACHE_MISS,
    SWS_CACHE_HIT,
    SWS_CACHE_EXPIRED,
    SWS_CACHE_STALE,
    SWS_CACHE_UPDATING,
    SWS_CACHE_REVALIDATED,
    SWS_CACHE_BYPASS
};

/* Another variant of the request's key, whose ETag a variant miss sends
 * (RFC 9111 4.3.1): a 304 naming it makes it this variant's entry too. */
#define SWS_CACHE_MAX_SIBLINGS  8

typedef struct {
    u_char                 digest[16];
    sws_str_t              key;          /* pool copy */
    sws_str_t              etag;         /* from its file */
} sws_cache_sibling_t;

/* A request's state. */
typedef struct {
    sws_cache_loc_conf_t  *conf;
    sws_cache_path_t      *path;
    sws_str_t              key;          /* the base key */
    sws_str_t              vkey;         /* the variant's key (= key without Vary) */
    sws_str_t              lkey;         /* the key whose lock this request holds */
    u_char                 digest[16];
    sws_uint_t             status;       /* SWS_CACHE_* */
    const char            *source;       /* "memory", "file" */
    /* the stored entry being answered from or revalidated */
    sws_cache_blob_t      *blob;         /* a memory copy held (released at the end) */
    u_char                *stored;       /* the file's header read (pool) */
    int                    fd;           /* the file, or -1 */
    uint64_t               uniq;         /* the node's file (sws_cache_take_locked) */
    const u_char          *fdata;        /* a cached file's bytes (fd -1), or NULL */
    const sws_http_stored_head_t *prepared_head;  /* the entry's fields prepared once */
    sws_cache_entry_t      entry;
    off_t                  body_off;     /* where the body starts in blob or fd */
    /* the fill */
    int                    tmp_fd;
    sws_str_t              tmp_name;
    u_char                *mem;          /* header + body for a memory copy */
    size_t                 mem_len;
    size_t                 mem_cap;
    uint64_t               body_len;
    off_t                  expect_len;   /* Content-Length, -1 unknown */
    sws_cache_file_header_t fh;
    u_char                *head;         /* the header to write */
    size_t                 head_len;
    sws_msec_t             wait_until;   /* lock wait deadline */
    /* the request's Cache-Control (RFC 9111 5.2.1), -1: not given */
    time_t                 req_max_age;
    time_t                 req_min_fresh;
    time_t                 req_max_stale;    /* "max-stale" alone: any staleness */
    sws_msec_t             asked;        /* when the server was asked (the request time
                                            of 4.2.3), monotonic ms; 0: not asked */
    sws_cache_sibling_t   *siblings;     /* a variant miss validated with their ETags */
    sws_uint_t             nsiblings;
    /* this answer's own fields besides the entry's (a 304's Set-Cookie) */
    sws_http_header_t     *extra;
    sws_uint_t             nextra;
    sws_chain_t           *body;         /* this answer's body instead of the entry's
                                            (several ranges of the parts), or NULL */
    /* a 206 being stored (sws_cache_partial.c): its part [start, end) of
     * total bytes, its fields and Vary names for the entry it goes in */
    sws_cache_part_t       part;
    uint64_t               part_total;   /* 0: not a part */
    sws_str_t              part_fields;
    sws_str_t              part_vary;
    unsigned               locked:1;     /* this request holds the key's lock */
    unsigned               no_store:1;   /* lock timed out: do not store */
    unsigned               have_stale:1; /* an entry to serve on errors */
    unsigned               filling:1;
    unsigned               bypass:1;
    unsigned               background:1; /* answered stale: the update is the cache's */
    unsigned               only_if_cached:1; /* the request's: no origin request */
    unsigned               prepared:1;   /* key and request fields evaluated */
    unsigned               req_no_cache:1;   /* the request's no-cache */
    unsigned               req_limits:1;     /* any of the four: no fast hit */
    unsigned               invalidate:1;     /* an unsafe method: its answer decides */
    unsigned               head_update:1;    /* a HEAD for a stale entry: its 200 updates it */
    unsigned               unprepared:1;     /* not the memory copy's prepared head: entry is
                                                an updated header, or extra fields go too */
    unsigned               fd_cached:1;      /* fd is the open file cache's: not closed here */
} sws_cache_ctx_t;

extern sws_module_t sws_module;
extern const sws_http_upstream_cache_t sws_cache_hooks;
extern sws_uint_t  sws_cache_stat_slot;   /* this worker's row of the counters */

/* sws_cache_path.c */
char             *sws_cache_path_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
sws_cache_path_t *sws_cache_path_find(sws_cache_main_conf_t *cmcf, const sws_str_t *name);
/* postconfiguration: every cache's figures, for sws_http_cache_stats(). */
sws_int_t sws_cache_stats_init(sws_conf_t *cf);
sws_cache_node_t *sws_cache_node_find_locked(sws_cache_path_t *p, const u_char *key, size_t len);
/* A new node for key (the lock held); NULL if the zone is full. */
sws_cache_node_t *sws_cache_node_new_locked(sws_cache_path_t *p, const u_char *key, size_t len);
/* Take node out of the index (its file stays: the caller unlinks it). */
void              sws_cache_node_remove_locked(sws_cache_path_t *p, sws_cache_node_t *n);
/* Drop node's memory copy (freed now, or by its last sender). */
void              sws_cache_mem_detach_locked(sws_cache_path_t *p, sws_cache_node_t *n);
/* Give node a memory copy of the len bytes at data if mem_size has room
 * (never evicts); 1 if it has one now. */
int               sws_cache_mem_attach_locked(sws_cache_path_t *p, sws_cache_node_t *n,
    const u_char *data, size_t len);
void              sws_cache_blob_release(sws_cache_path_t *p, sws_cache_blob_t *b);
/* The fields of a checked entry prepared once for many answers
 * (sws_http_stored_prepare) into head, with fields: room for nfields (a
 * memory copy's, a cached file's). */
void              sws_cache_entry_prepare(const sws_cache_entry_t *e,
    sws_http_stored_head_t *head, sws_http_header_t *fields);
/* PATH/c/ab/<32 hex> into buf (PATH_MAX); returns its length. */
size_t            sws_cache_file_name(sws_cache_path_t *p, const u_char digest[16], char *buf,
    size_t size);
/* Make the directories of a file name (before a rename into it). */
sws_int_t         sws_cache_make_dirs(sws_cache_path_t *p, char *name, sws_log_t *log);

/* sws_cache_rfc.c */
typedef struct {
    time_t     max_age;            /* -1: none */
    time_t     s_maxage;
    time_t     swr;
    time_t     sie;
    time_t     min_fresh;          /* request directives; -1: none */
    time_t     max_stale;          /* without a value: SWS_CACHE_ANY_STALE */
    unsigned   no_store:1;
    unsigned   no_cache:1;
    unsigned   private_:1;
    unsigned   public_:1;
    unsigned   must_revalidate:1;
    unsigned   proxy_revalidate:1;
    unsigned   only_if_cached:1;
    unsigned   must_understand:1;
    unsigned   strip:1;            /* no-cache="f", private="f": fields to drop */
} sws_cache_cc_t;

#define SWS_CACHE_ANY_STALE  ((time_t) 1 << 40)

/* sws_cache_parse.c: Cache-Control, delta-seconds, dates (fuzzed) */
void      sws_cache_cc_init(sws_cache_cc_t *cc);
void      sws_cache_cc_parse(const sws_str_t *v, sws_cache_cc_t *cc);
/* delta-seconds at [p, last): digits only, saturating; -1 if invalid */
time_t    sws_cache_delta(const u_char *p, const u_char *last);
/* no-cache="..." and private="..." names of one value ("a,b,"), at w
 * (NULL: measured); the bytes */
size_t    sws_cache_cc_field_names(const sws_str_t *v, u_char *w);
/* The request's Cache-Control (client directives) combined over its fields. */
void      sws_cache_cc_request(sws_http_request_t *r, sws_cache_cc_t *cc);
/* Whether the response on r may be stored, and the entry's times: NULL and
 * h filled, or why not (for the debug log). delay: the whole seconds the
 * server took to answer (its response_delay counts in the age), -1
 * unknown. strip: the
 * fields not to store (no-cache="f", private="f": "a,b,"). update: the
 * response updates a stored one (a 304's fields merged, RFC 9111 3.2): a
 * Set-Cookie is then left out of the entry, not a reason to keep none. */
const char *sws_cache_storable(sws_http_request_t *r, sws_cache_loc_conf_t *lcf,
    sws_cache_file_header_t *h, sws_str_t *vary, time_t delay, sws_str_t *strip, int update);
/* ctx->asked to now in whole seconds: storable's delay. */
time_t    sws_cache_response_delay(const sws_cache_ctx_t *ctx);
/* A targeted field's value (RFC 9213 2.2: an RFC 8941 Dictionary, its
 * lines joined by ",") into cc (set anew), and the field names of its
 * no-cache="..." and private="..." at names (room: v->len bytes) as
 * "a,b,", *names_len their length. SWS_OK, or SWS_DECLINED when it is
 * empty or does not parse: the field is then as if absent, cc untouched. */
sws_int_t sws_cache_targeted_parse(const sws_str_t *v, sws_cache_cc_t *cc, u_char *names,
    size_t *names_len);
/* An HTTP date in any letter case (Expires); -1 if not a date. */
time_t    sws_cache_parse_date(const u_char *p, size_t len);
/* A reference ref relative to a request target (a path, with its query),
 * not a network-path nor an absolute one, resolved (RFC 3986 5.2.2, dot
 * segments removed) at out (room: tlen + len + 1); its length, 0 if the
 * target is not a path. */
size_t    sws_cache_ref_resolve(const u_char *target, size_t tlen, const u_char *ref,
    size_t len, u_char *out);
/* Is name one of the names of such a list? */
int       sws_cache_strips(const sws_str_t *names, const sws_str_t *name);
/* Are 206s stored as parts here (proxy_cache_partial on, not a
 * subrequest, proxy_cache_valid not naming 206)? */
int       sws_cache_partial_on(sws_http_request_t *r, sws_cache_loc_conf_t *lcf);
/* The Age of an entry now. */
time_t    sws_cache_age(time_t response_time, time_t initial_age, time_t now);

/* sws_cache_vary.c: a Vary'd request field's value in its normal form */
#define SWS_CACHE_VARY_PLAIN  0        /* whitespace around commas, at the ends */
#define SWS_CACHE_VARY_SET    1        /* a set of values with q-values */

typedef struct {
    const u_char  *p;
    size_t         len;
} sws_cache_vary_elt_t;

/* The scratch memory sws_cache_vary_normalize needs for len bytes. */
#define SWS_CACHE_VARY_SCRATCH(len)                                                       \
    (sws_align((len), sizeof(void *)) + ((len) / 2 + 1) * sizeof(sws_cache_vary_elt_t))

/* How the field name (lower case) is compared: SWS_CACHE_VARY_*. */
int       sws_cache_vary_kind(const u_char *name, size_t len);
/* The normal form of the value at [in, in + len) (its lines joined by
 * ","), written at out (len bytes are enough); its length. */
size_t    sws_cache_vary_normalize(int kind, const u_char *in, size_t len, u_char *out,
    u_char *scratch);

/* sws_cache_lookup.c */
sws_int_t sws_cache_lookup(sws_http_request_t *r, void *data);
sws_int_t sws_cache_hit(sws_http_request_t *r, void *data);
sws_int_t sws_cache_send(sws_http_request_t *r, sws_cache_ctx_t *ctx);
sws_int_t sws_cache_variant_key(sws_http_request_t *r, sws_cache_ctx_t *ctx, const u_char *vary,
    size_t vary_len);
void      sws_cache_unlock(sws_cache_ctx_t *ctx);
/* Open and check the entry's file; SWS_OK, SWS_DECLINED (none or bad). */
sws_int_t sws_cache_open_file(sws_http_request_t *r, sws_cache_ctx_t *ctx);
/* Read and check the header of the entry file fd of size bytes (into pool
 * memory, *buf; data: the file's bytes, read already), of key: NULL, or
 * why not (for the log). */
const char *sws_cache_read_header(sws_pool_t *pool, int fd, const u_char *data, off_t size,
    const sws_str_t *key, sws_cache_entry_t *e, u_char **buf);

/* sws_cache_file.c */
/* A fresh entry's file through the worker's open file cache, its header
 * checked and prepared once per opening: ctx's entry, fd or fdata and
 * prepared_head set. SWS_OK, or SWS_DECLINED (open it as before). */
sws_int_t sws_cache_file_cached(sws_http_request_t *r, sws_cache_ctx_t *ctx);
/* The worker's cached descriptor of the entry named by digest closed (the
 * file was removed): its space is freed now. */
void      sws_cache_file_forget(sws_cache_path_t *p, const u_char digest[16]);

/* Of the siblings, the one whose ETag is etag, loaded as ctx's entry (its
 * file open) with ctx->vkey kept: SWS_OK, or SWS_DECLINED (none). */
sws_int_t sws_cache_sibling_load(sws_http_request_t *r, sws_cache_ctx_t *ctx,
    const sws_str_t *etag);

/* sws_cache_store.c */
sws_int_t sws_cache_store_header(sws_http_request_t *r, void *data);
sws_int_t sws_cache_store_body(sws_http_request_t *r, void *data, const u_char *p, size_t n);
void      sws_cache_store_end(sws_http_request_t *r, void *data, int complete);
sws_int_t sws_cache_not_modified(sws_http_request_t *r, void *data);
sws_int_t sws_cache_failed(sws_http_request_t *r, void *data, sws_int_t rc);
/* Remove key (and its variants) from the index and its files; how many
 * stored entries went. */
sws_uint_t sws_cache_invalidate(sws_cache_path_t *p, const sws_str_t *key, sws_log_t *log);
sws_uint_t sws_cache_drop_node_locked(sws_cache_path_t *p, sws_cache_node_t *n);
/* The response's fields on r as an entry's fields block, without the
 * names of strip ("a,b,"); SWS_DECLINED: too many. */
sws_int_t sws_cache_fields(sws_http_request_t *r, sws_str_t *block, uint32_t *nfields,
    const sws_str_t *strip);
sws_int_t sws_cache_tmp_open(sws_http_request_t *r, sws_cache_ctx_t *ctx);
sws_int_t sws_cache_write(int fd, const u_char *p, size_t n, off_t at);
/* ctx->tmp_name (ctx->head_len + ctx->body_len bytes on the disk) into
 * the entry's place and the index, with ctx->fh. */
sws_int_t sws_cache_commit(sws_http_request_t *r, sws_cache_ctx_t *ctx);

/* sws_cache_range.c (outside input: fuzzed) */
/* A Content-Range value "bytes FIRST-LAST/COMPLETE" (RFC 9110 14.4) into
 * [part->start, part->end) of *total bytes: SWS_OK, or SWS_DECLINED when
 * it is anything else (unsatisfied, "*" for the length, not bytes, out of
 * order, too large). */
sws_int_t sws_cache_content_range(const u_char *p, size_t len, sws_cache_part_t *part,
    uint64_t *total);
/* Add part to the n sorted, apart parts at parts (room for n + 1): those
 * it overlaps or touches are merged into it. The new count. */
sws_uint_t sws_cache_parts_add(sws_cache_part_t *parts, sws_uint_t n,
    const sws_cache_part_t *part);
/* The part of the n that holds [start, end) whole, or NULL. */
const sws_cache_part_t *sws_cache_parts_cover(const sws_cache_part_t *parts, sws_uint_t n,
    uint64_t start, uint64_t end);

/* sws_cache_partial.c */
/* decide found a partial entry (its digest in ctx, the lock let go):
 * answer a range it holds, else what lookup returns for a MISS. */
sws_int_t sws_cache_partial_lookup(sws_http_request_t *r, sws_cache_ctx_t *ctx, int fresh);
/* store_header of a 206 that may be stored: SWS_OK (its body is the
 * part's, into ctx->tmp_fd from offset 0), SWS_DECLINED. */
sws_int_t sws_cache_partial_header(sws_http_request_t *r, sws_cache_ctx_t *ctx,
    const sws_str_t *vary, const sws_str_t *strip);
/* store_end of such a part: combined with the stored parts, or alone. */
void      sws_cache_partial_end(sws_http_request_t *r, sws_cache_ctx_t *ctx, int complete);

/* sws_cache_helpers.c */
sws_int_t sws_cache_helpers_add(sws_conf_t *cf, sws_cache_path_t *p);
/* One pass of the manager (also called by tests through the loader). */
void      sws_cache_manage(sws_cache_path_t *p, sws_log_t *log);

/* sws_cache_purge.c */
char     *sws_cache_purge_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
sws_int_t sws_cache_purge_init(sws_conf_t *cf);
sws_int_t sws_cache_purge_request(sws_http_request_t *r, sws_cache_loc_conf_t *lcf);

/* sws_cache_invalidate.c */
/* Is the method unsafe, or of unknown safety (RFC 9110 9.2.1)? */
int       sws_cache_method_unsafe(sws_uint_t method);
/* The head of an unsafe request's response is on r: invalidate what 4.4
 * says (nothing after an error). */
void      sws_cache_invalidate_after(sws_http_request_t *r, sws_cache_ctx_t *ctx);

#endif
