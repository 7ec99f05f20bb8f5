/*
 * proxy_cache_path: where a cache keeps its files and its index.
 *
 *   proxy_cache_path PATH keys_zone=NAME:SIZE [levels=1:2] [max_size=SIZE]
 *       [inactive=TIME] [use_temp_path=on|off] [mem_size=SIZE]
 *       [mem_max_object=SIZE] [open_files=N];
 *
 * The index is a slab zone (seen by every worker, kept across reloads) of
 * nodes found by key; the zone is keys_zone's SIZE plus mem_size, so the
 * memory copies of small entries come from the same allocator as the
 * nodes. Eviction is the manager's (sws_cache_helpers.c): a request never
 * evicts, it only stores less when the room is not there.
 */
#include <errno.h>
#include <sys/stat.h>
#include "sws_cache.h"

/* The path whose zone sws_shm_zone_add() is initialising (it calls the
 * init at once, before it returns). */
static sws_cache_path_t  *sws_cache_path_initing;

static sws_int_t
sws_cache_zone_init(sws_shm_zone_t *zone, void *old_data)
{
    sws_cache_path_t  *p = sws_cache_path_initing;
    sws_slab_pool_t   *pool;
    sws_cache_sh_t    *sh;

    pool = sws_slab_init(zone, old_data);
    if (pool == NULL) {
        return SWS_ERROR;
    }
    /* zone->data is the pool now; the path keeps its own pointers. */
    p->pool = pool;
    sh = sws_slab_data(pool);
    if (sh != NULL) {
        p->sh = sh;                    /* a reload: the entries stay */
        return SWS_OK;                 /* (and the counts: rows were made) */
    }
    sws_slab_lock(pool);
    sh = sws_slab_calloc_locked(pool, sizeof(sws_cache_sh_t));
    if (sh) {
        /* a bucket per 512 bytes of keys zone: about one per node */
        sh->hash = sws_slab_hash_create_locked(pool, p->keys_size / 512 + 16);
        sws_slab_lru_init(&sh->lru);
        sws_slab_lru_init(&sh->mem_lru);
        sws_slab_set_data(pool, sh->hash ? sh : NULL);
    }
    sws_slab_unlock(pool);
    p->sh = sws_slab_data(pool);
    if (p->sh && p->sh->rows == NULL) {
        sws_slab_lock(pool);
        p->sh->rows = sws_slab_calloc_locked(pool, sizeof(sws_cache_row_t) * SWS_STATUS_SLOTS);
        sws_slab_unlock(pool);
    }
    return p->sh && p->sh->rows ? SWS_OK : SWS_ERROR;
}

static void
sws_cache_stats(void *data, sws_http_cache_stats_t *st)
{
    sws_cache_path_t  *p = data;
    sws_cache_sh_t    *sh = p->sh;
    sws_uint_t         i, k;

    sws_slab_lock(p->pool);
    st->entries = sh->nentries;
    st->disk_bytes = sh->fs_used;
    st->memory_bytes = sh->mem_used;
    st->evictions = sh->evictions;
    sws_slab_unlock(p->pool);
    st->max_disk_bytes = p->max_size;
    st->max_memory_bytes = p->mem_size;
    /* SWS_CACHE_MISS .. BYPASS are SWS_HTTP_CACHE_MISS + 1 .. */
    for (i = 0; i < SWS_STATUS_SLOTS; i++) {
        for (k = 0; k < SWS_HTTP_CACHE_STATUSES; k++) {
            st->responses[k] += __atomic_load_n(&sh->rows[i].n[k], __ATOMIC_RELAXED);
        }
    }
}

sws_int_t
sws_cache_stats_init(sws_conf_t *cf)
{
    sws_cache_main_conf_t  *cmcf = sws_conf_http_main_conf(cf, &sws_module);
    sws_cache_path_t      **pp;
    sws_uint_t              i;

    for (i = 0; cmcf && cmcf->paths && i < cmcf->paths->nelts; i++) {
        pp = cmcf->paths->elts;
        if (sws_http_cache_stats_register(cf, &pp[i]->name, sws_cache_stats, pp[i]) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

sws_cache_path_t *
sws_cache_path_find(sws_cache_main_conf_t *cmcf, const sws_str_t *name)
{
    sws_cache_path_t **pp;
    sws_uint_t         i;

    if (cmcf->paths == NULL) {
        return NULL;
    }
    pp = cmcf->paths->elts;
    for (i = 0; i < cmcf->paths->nelts; i++) {
        if (sws_str_eq(&pp[i]->name, name)) {
            return pp[i];
        }
    }
    return NULL;
}

static char *
sws_cache_parse_levels(sws_cache_path_t *p, const sws_str_t *v)
{
    sws_uint_t  n = 0, i;

    for (i = 0; i < v->len; i++) {
        if (n == 3) {
            return "has too many levels (at most 3)";
        }
        if (v->data[i] < '1' || v->data[i] > '2') {
            return "has invalid levels (1 or 2, separated by \":\")";
        }
        p->levels[n++] = (sws_uint_t) (v->data[i] - '0');
        if (i + 1 < v->len) {
            if (v->data[++i] != ':' || i + 1 == v->len) {
                return "has invalid levels (1 or 2, separated by \":\")";
            }
        }
    }
    if (n == 0) {
        return "has invalid levels (1 or 2, separated by \":\")";
    }
    return SWS_CONF_OK;
}

/* proxy_cache_path PATH keys_zone=NAME:SIZE [...] (http level) */
char *
sws_cache_path_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_cache_main_conf_t  *cmcf = conf;
    sws_cache_path_t       *p, **pp;
    sws_str_t              *a, v, zname;
    sws_uint_t              i, n = sws_conf_nargs(cf);
    ssize_t                 size;
    sws_msec_t              ms;
    u_char                 *colon;
    char                   *rv;
    struct stat             st;

    (void) cmd;
    p = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_cache_path_t));
    if (p == NULL) {
        return SWS_CONF_ERROR;
    }
    p->path = *sws_conf_arg(cf, 1);
    if (sws_conf_full_name(cf, &p->path, 0) != SWS_OK) {
        return SWS_CONF_ERROR;
    }
    while (p->path.len > 1 && p->path.data[p->path.len - 1] == '/') {
        p->path.len--;
    }
    p->path.data = sws_pstrdup(sws_conf_pool(cf), &p->path);   /* NUL-terminated */
    if (p->path.data == NULL) {
        return SWS_CONF_ERROR;
    }
    p->levels[0] = 1;
    p->levels[1] = 2;
    p->inactive = 600;
    p->use_temp_path = 0;
    p->mem_max_object = 64 * 1024;
    p->mem_size = SWS_CACHE_MEM_UNSET;
    p->open_files = SWS_CACHE_OPEN_FILES;
    p->file = sws_conf_file(cf);
    p->line = sws_conf_line(cf);

    for (i = 2; i < n; i++) {
        a = sws_conf_arg(cf, i);
        if (sws_conf_param(a, "keys_zone=", &v)) {
            colon = memchr(v.data, ':', v.len);
            if (colon == NULL || colon == v.data) {
                return "needs keys_zone=NAME:SIZE";
            }
            p->name.data = v.data;
            p->name.len = (size_t) (colon - v.data);
            v.len -= p->name.len + 1;
            v.data = colon + 1;
            size = sws_parse_size(&v);
            if (size == SWS_ERROR || size < 64 * 1024) {
                return "has an invalid keys_zone size (at least 64k)";
            }
            p->keys_size = (size_t) size;
        } else if (sws_conf_param(a, "levels=", &v)) {
            sws_memzero(p->levels, sizeof(p->levels));
            rv = sws_cache_parse_levels(p, &v);
            if (rv != SWS_CONF_OK) {
                return rv;
            }
        } else if (sws_conf_param(a, "max_size=", &v)) {
            size = sws_parse_size(&v);
            if (size == SWS_ERROR) {
                return "has an invalid max_size";
            }
            p->max_size = (size_t) size;
        } else if (sws_conf_param(a, "inactive=", &v)) {
            ms = sws_parse_time_ms(&v);
            if (ms == SWS_ERROR || ms < 1000) {
                return "has an invalid inactive time (at least 1s)";
            }
            p->inactive = (time_t) (ms / 1000);
        } else if (sws_conf_param(a, "use_temp_path=", &v)) {
            if (sws_str_eq_cstr(&v, "on")) {
                p->use_temp_path = 1;
            } else if (sws_str_eq_cstr(&v, "off")) {
                p->use_temp_path = 0;
            } else {
                return "has an invalid use_temp_path (on or off)";
            }
        } else if (sws_conf_param(a, "mem_size=", &v)) {
            size = sws_parse_size(&v);
            if (size == SWS_ERROR) {
                return "has an invalid mem_size";
            }
            p->mem_size = (size_t) size;
        } else if (sws_conf_param(a, "mem_max_object=", &v)) {
            size = sws_parse_size(&v);
            if (size == SWS_ERROR || size > 64 * 1024 * 1024) {
                return "has an invalid mem_max_object (at most 64m)";
            }
            p->mem_max_object = (size_t) size;
        } else if (sws_conf_param(a, "open_files=", &v)) {
            size = sws_atoi(v.data, v.len);
            if (size == SWS_ERROR || size > 65536) {
                return "has an invalid open_files (a number up to 65536, 0: off)";
            }
            p->open_files = (sws_uint_t) size;
        } else {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "proxy_cache_path: unknown parameter "
                               "\"%.*s\"", (int) a->len, a->data);
            return SWS_CONF_ERROR;
        }
    }
    if (p->keys_size == 0) {
        return "needs keys_zone=NAME:SIZE";
    }
    if (p->mem_size == SWS_CACHE_MEM_UNSET) {
        /* a configuration from nginx (no mem_size) gets memory hits for its
         * hot small entries too: half of keys_zone's size, added to the
         * zone (mapped as used) */
        p->mem_size = p->keys_size / SWS_CACHE_MEM_SHARE;
    }
    if (stat((char *) p->path.data, &st) == -1) {
        if (errno != ENOENT || mkdir((char *) p->path.data, 0700) == -1) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, errno, "proxy_cache_path \"%s\" cannot be "
                               "used", p->path.data);
            return SWS_CONF_ERROR;
        }
    } else if (!S_ISDIR(st.st_mode)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "proxy_cache_path \"%s\" is not a directory",
                           p->path.data);
        return SWS_CONF_ERROR;
    }
    if (cmcf->paths == NULL) {
        cmcf->paths = sws_array_create(sws_conf_pool(cf), 2, sizeof(sws_cache_path_t *));
        if (cmcf->paths == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    if (sws_cache_path_find(cmcf, &p->name)) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "a cache named \"%.*s\" is already defined",
                           (int) p->name.len, p->name.data);
        return SWS_CONF_ERROR;
    }
    /* The zone's name carries the layout's version: a module whose nodes
     * changed must not take over an old zone on reload. */
    zname.len = p->name.len + 9;
    zname.data = sws_pnalloc(sws_conf_pool(cf), zname.len);
    if (zname.data == NULL) {
        return SWS_CONF_ERROR;
    }
    memcpy(zname.data, "cache2.", 7);
    memcpy(zname.data + 7, p->name.data, p->name.len);
    memcpy(zname.data + 7 + p->name.len, ".z", 2);
    sws_cache_path_initing = p;
    p->zone = sws_shm_zone_add(cf, &zname, p->keys_size + p->mem_size, sws_cache_zone_init,
                               &sws_module);
    sws_cache_path_initing = NULL;
    if (p->zone == NULL || p->sh == NULL) {
        return SWS_CONF_ERROR;
    }
    pp = sws_array_push(cmcf->paths);
    if (pp == NULL) {
        return SWS_CONF_ERROR;
    }
    *pp = p;
    return sws_cache_helpers_add(cf, p) == SWS_OK ? SWS_CONF_OK : SWS_CONF_ERROR;
}

/* ---- the index ---- */

sws_cache_node_t *
sws_cache_node_find_locked(sws_cache_path_t *p, const u_char *key, size_t len)
{
    sws_slab_hash_node_t  *hn = sws_slab_hash_find(p->sh->hash, key, len);

    return hn ? sws_slab_hash_entry(hn, sws_cache_node_t, hash) : NULL;
}

sws_cache_node_t *
sws_cache_node_new_locked(sws_cache_path_t *p, const u_char *key, size_t len)
{
    sws_cache_node_t  *n;

    n = sws_slab_calloc_locked(p->pool, sizeof(sws_cache_node_t) + len);
    if (n == NULL) {
        return NULL;
    }
    memcpy(n->key, key, len);
    n->key_len = (uint32_t) len;
    sws_cache_digest(key, len, n->digest);
    sws_queue_init(&n->variants);
    n->last_access = sws_time_sec();
    sws_slab_hash_insert(p->sh->hash, &n->hash, n->key, len);
    sws_slab_lru_insert(&p->sh->lru, &n->lru);
    return n;
}

/* orphan 1 -> 2: whoever does it frees the copy, once. */
static int
sws_cache_blob_claim(sws_cache_blob_t *b)
{
    uint32_t  one = 1;

    return __atomic_compare_exchange_n(&b->orphan, &one, 2, 0, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}

void
sws_cache_mem_detach_locked(sws_cache_path_t *p, sws_cache_node_t *n)
{
    sws_cache_blob_t  *b = n->mem;

    if (n->in_mem_lru) {
        sws_slab_lru_remove(&p->sh->mem_lru, &n->mem_lru);
        n->in_mem_lru = 0;
    }
    if (b == NULL) {
        return;
    }
    n->mem = NULL;
    p->sh->mem_used -= b->size;
    /* orphan first, then the count: a sender letting go at the same time
     * sees one or the other, and the compare-and-swap lets one free it */
    __atomic_store_n(&b->orphan, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&b->refs, __ATOMIC_SEQ_CST) == 0 && sws_cache_blob_claim(b)) {
        sws_slab_free_locked(p->pool, b);
    }
}

void
sws_cache_entry_prepare(const sws_cache_entry_t *e, sws_http_stored_head_t *head,
    sws_http_header_t *fields)
{
    uint32_t  pos = 0, i = 0;

    while (i < e->h.nfields && sws_cache_entry_field(e, &pos, &fields[i].name, &fields[i].value)) {
        i++;
    }
    sws_http_stored_prepare(head, fields, fields, i);
}

int
sws_cache_mem_attach_locked(sws_cache_path_t *p, sws_cache_node_t *n, const u_char *data,
    size_t len)
{
    sws_cache_blob_t        *b;
    sws_cache_entry_t        e;
    sws_http_stored_head_t  *head;
    sws_http_header_t       *fields;
    size_t                   off;

    sws_cache_mem_detach_locked(p, n);
    if (len > p->mem_max_object || p->sh->mem_used + len > p->mem_size) {
        return 0;
    }
    /* the data is an entry this module wrote or checked (the fill, a
     * checked file): its fields are where its header says */
    sws_cache_entry_map(data, len, &e);
    off = sws_align(len, sizeof(void *));
    b = sws_slab_alloc_locked(p->pool, sizeof(sws_cache_blob_t) + off
                                       + sizeof(sws_http_stored_head_t)
                                       + e.h.nfields * sizeof(sws_http_header_t));
    if (b == NULL) {
        return 0;
    }
    b->refs = 0;
    b->orphan = 0;
    b->size = (uint32_t) len;
    memcpy(b->data, data, len);
    /* what every hit would do to the fields, done once (not for bytes
     * whose header does not hold its fields: those hits walk them) */
    sws_cache_entry_map(b->data, len, &e);
    b->head_off = 0;
    if (e.h.header_len <= len
        && (size_t) (e.fields - b->data) + e.h.fields_len <= e.h.header_len)
    {
        head = (sws_http_stored_head_t *) (b->data + off);
        fields = (sws_http_header_t *) (head + 1);
        sws_cache_entry_prepare(&e, head, fields);
        b->head_off = (uint32_t) off;
    }
    n->mem = b;
    p->sh->mem_used += len;
    sws_slab_lru_insert(&p->sh->mem_lru, &n->mem_lru);
    n->in_mem_lru = 1;
    return 1;
}

/* A hit is done sending a memory copy: no lock unless it is the last
 * sender of a copy no node holds any more. */
void
sws_cache_blob_release(sws_cache_path_t *p, sws_cache_blob_t *b)
{
    if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_SEQ_CST) == 0
        && __atomic_load_n(&b->orphan, __ATOMIC_SEQ_CST) == 1 && sws_cache_blob_claim(b))
    {
        sws_slab_free(p->pool, b);
    }
}

void
sws_cache_node_remove_locked(sws_cache_path_t *p, sws_cache_node_t *n)
{
    sws_queue_t       *q;
    sws_cache_node_t  *v;

    if (n->is_marker) {
        while (!sws_queue_empty(&n->variants)) {
            q = sws_queue_head(&n->variants);
            v = sws_queue_data(q, sws_cache_node_t, variants);
            sws_queue_remove(q);
            sws_queue_init(q);
            v->marker = NULL;
        }
    } else if (n->marker) {
        sws_queue_remove(&n->variants);
        sws_queue_init(&n->variants);
        n->marker = NULL;
    }
    if (n->exists) {
        p->sh->fs_used -= n->fs_size;
        p->sh->nentries--;
    }
    sws_slab_hash_remove(p->sh->hash, &n->hash);
    sws_slab_lru_remove(&p->sh->lru, &n->lru);
    if (n->vary) {
        sws_slab_free_locked(p->pool, n->vary);
        n->vary = NULL;
    }
    sws_cache_mem_detach_locked(p, n);
    sws_slab_free_locked(p->pool, n);
}

/* ---- files ---- */

size_t
sws_cache_file_name(sws_cache_path_t *p, const u_char digest[16], char *buf, size_t size)
{
    u_char      hex[32];
    sws_uint_t  i, at = 32;
    u_char     *b = (u_char *) buf;

    /* every hit from a file names it: copies, no format */
    if (p->path.len + 1 + 32 + 3 * 3 >= size) {
        *b = '\0';
        return 0;
    }
    sws_hex_dump(hex, digest, 16);
    b = sws_cpymem(b, p->path.data, p->path.len);
    /* nginx's layout: levels=1:2 takes the last character, then the two before it */
    for (i = 0; i < 3 && p->levels[i]; i++) {
        at -= (sws_uint_t) p->levels[i];
        *b++ = '/';
        b = sws_cpymem(b, hex + at, p->levels[i]);
    }
    *b++ = '/';
    b = sws_cpymem(b, hex, 32);
    *b = '\0';
    return (size_t) (b - (u_char *) buf);
}

sws_int_t
sws_cache_make_dirs(sws_cache_path_t *p, char *name, sws_log_t *log)
{
    char  *s;

    for (s = name + p->path.len + 1; (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        if (mkdir(name, 0700) == -1 && errno != EEXIST) {
            sws_log_error(SWS_LOG_CRIT, log, errno, "mkdir(\"%s\") failed", name);
            *s = '/';
            return SWS_ERROR;
        }
        *s = '/';
    }
    return SWS_OK;
}
