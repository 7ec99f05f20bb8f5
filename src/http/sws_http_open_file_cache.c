/* The per-worker open file cache (see sws_http_open_file_cache.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include "sws_http_core.h"
#include "sws_http_open_file_cache.h"
#include "sws_http_open_path.h"

typedef struct sws_ofc_entry_s sws_ofc_entry_t;

struct sws_ofc_entry_s {
    sws_ofc_entry_t    *hnext;        /* hash chain */
    sws_queue_t         lru;          /* most recently used at the head */
    sws_rbtree_node_t   wd_node;      /* keyed by the inotify watch */
    sws_ofc_entry_t    *wd_next;      /* other paths of the same inode */
    uint32_t            hash;
    int                 wd;           /* -1: not watched */
    int                 fd;
    int                 err;          /* a cached failure */
    dev_t               dev;
    ino_t               ino;
    off_t               size;
    time_t              mtime;
    sws_uint_t          refs;         /* requests using it now */
    sws_msec_t          used;
    sws_msec_t          checked;
    u_char             *data;
    void               *attached;     /* a module's (sws_http_file_attach) */
    void              (*attached_done)(void *data);
    sws_str_t           etag;
    u_char              etag_buf[SWS_HTTP_ETAG_LEN];
    unsigned            is_file:1;
    unsigned            is_dir:1;
    unsigned            dead:1;       /* out of the cache, freed at refs 0 */
    unsigned            own:1;        /* a module's own file (sws_http_open_cached) */
    sws_http_symlinks_t symlinks;     /* part of the key: how it was opened */
    size_t              path_len;
    u_char              path[];
};

/* The entries of the locations' files, or of modules' own: each kind has
 * its own max, so that one does not push the other out. */
typedef struct {
    sws_queue_t         lru;          /* most recently used at the head */
    sws_uint_t          count;
} sws_ofc_list_t;

static struct {
    sws_ofc_entry_t   **buckets;
    sws_uint_t          nbuckets;
    sws_ofc_list_t      lists[2];     /* by own */
    sws_rbtree_t        wds;
    sws_rbtree_node_t   sentinel;
    int                 inotify_fd;
    sws_connection_t   *ic;
    sws_event_t         expire;
    sws_msec_t          inactive;
    int                 ready;
} ofc;

static u_char sws_ofc_empty[1];

#define SWS_MSEC_NEVER  INT64_MAX      /* a valid time that never ends */

static void sws_ofc_inotify_handler(sws_event_t *ev);
static void sws_ofc_expire_handler(sws_event_t *ev);

static void
sws_ofc_empty_handler(sws_event_t *ev)
{
}

/* The inotify descriptor counts as a connection: a worker that is shutting
 * down waits for none to be left, so it goes at once (the cache goes on
 * with open_file_cache_valid alone). */
static void
sws_ofc_shutdown(sws_connection_t *c)
{
    if (ofc.ic == c) {
        sws_close_connection(ofc.ic);
        ofc.ic = NULL;
        ofc.inotify_fd = -1;
    }
}

static sws_int_t
sws_ofc_init(sws_http_request_t *r, const sws_http_ofc_conf_t *conf)
{
    sws_uint_t n = 1024;              /* the default max's, whoever comes first */

    while (n < conf->max) {
        n <<= 1;
    }
    ofc.buckets = calloc(n, sizeof(sws_ofc_entry_t *));
    if (ofc.buckets == NULL) {
        return SWS_ERROR;
    }
    ofc.nbuckets = n;
    sws_queue_init(&ofc.lists[0].lru);
    sws_queue_init(&ofc.lists[1].lru);
    sws_rbtree_init(&ofc.wds, &ofc.sentinel, sws_rbtree_insert_value);
    ofc.inactive = conf->inactive;

    /* inotify tells at once when a cached file changes; without it (limit
     * reached, no kernel support) only open_file_cache_valid applies. */
    ofc.inotify_fd = sws_exiting ? -1 : inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (ofc.inotify_fd != -1) {
        ofc.ic = sws_get_connection(ofc.inotify_fd, r->session->log);
        if (ofc.ic == NULL || sws_event_add_connection(ofc.ic) != SWS_OK) {
            if (ofc.ic) {
                sws_close_connection(ofc.ic);
            } else {
                close(ofc.inotify_fd);
            }
            ofc.ic = NULL;
            ofc.inotify_fd = -1;
        } else {
            ofc.ic->read->handler = sws_ofc_inotify_handler;
            ofc.ic->write->handler = sws_ofc_empty_handler;
            ofc.ic->shutdown = sws_ofc_shutdown;
            ofc.ic->log = r->session->log;
        }
    } else if (!sws_exiting) {
        sws_log_error(SWS_LOG_WARN, r->log, errno, "inotify_init1() failed: the open "
                      "file cache checks files every open_file_cache_valid only");
    }
    ofc.expire.handler = sws_ofc_expire_handler;
    ofc.expire.data = NULL;
    sws_add_timer(&ofc.expire, 1000);
    ofc.ready = 1;
    return SWS_OK;
}

static void
sws_ofc_free(sws_ofc_entry_t *e)
{
    if (e->fd != -1) {
        close(e->fd);
    }
    if (e->data && e->data != sws_ofc_empty) {
        free(e->data);
    }
    if (e->attached) {
        e->attached_done(e->attached);
    }
    free(e);
}

static void
sws_ofc_unwatch(sws_ofc_entry_t *e)
{
    sws_rbtree_node_t *node, *sentinel = ofc.wds.sentinel;
    sws_ofc_entry_t   *head, **pp;

    if (e->wd == -1) {
        return;
    }
    /* Find the tree node of this watch (one per wd; hard links chain). */
    for (node = ofc.wds.root; node != sentinel; ) {
        if ((sws_uint_t) e->wd == node->key) {
            break;
        }
        node = (sws_uint_t) e->wd < node->key ? node->left : node->right;
    }
    if (node == sentinel) {
        e->wd = -1;
        return;
    }
    head = (sws_ofc_entry_t *) ((u_char *) node - offsetof(sws_ofc_entry_t, wd_node));
    if (head == e) {
        sws_rbtree_delete(&ofc.wds, node);
        if (e->wd_next) {
            e->wd_next->wd_node.key = (sws_uint_t) e->wd;
            sws_rbtree_insert(&ofc.wds, &e->wd_next->wd_node);
        } else if (ofc.inotify_fd != -1) {
            inotify_rm_watch(ofc.inotify_fd, e->wd);
        }
    } else {
        for (pp = &head->wd_next; *pp && *pp != e; pp = &(*pp)->wd_next) { /* find */ }
        if (*pp) {
            *pp = e->wd_next;
        }
    }
    e->wd_next = NULL;
    e->wd = -1;
}

/* Take e out of the cache; it is freed now or when its last user is done. */
static void
sws_ofc_remove(sws_ofc_entry_t *e)
{
    sws_ofc_entry_t **pp = &ofc.buckets[e->hash & (ofc.nbuckets - 1)];

    while (*pp && *pp != e) {
        pp = &(*pp)->hnext;
    }
    if (*pp) {
        *pp = e->hnext;
    }
    sws_queue_remove(&e->lru);
    sws_ofc_unwatch(e);
    ofc.lists[e->own].count--;
    e->dead = 1;
    if (e->refs == 0) {
        sws_ofc_free(e);
    }
}

static void
sws_ofc_release(void *data)
{
    sws_ofc_entry_t *e = data;

    if (--e->refs == 0 && e->dead) {
        sws_ofc_free(e);
    }
}

static void
sws_ofc_watch(sws_ofc_entry_t *e)
{
    sws_rbtree_node_t *node, *sentinel = ofc.wds.sentinel;
    sws_ofc_entry_t   *head;
    int                wd;

    e->wd = -1;
    if (ofc.inotify_fd == -1) {
        return;
    }
    wd = inotify_add_watch(ofc.inotify_fd, (char *) e->path,
                           IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF
                           | IN_CLOSE_WRITE);
    if (wd == -1) {
        return;      /* e.g. the watch limit: valid-time checks still apply */
    }
    e->wd = wd;
    for (node = ofc.wds.root; node != sentinel; ) {
        if ((sws_uint_t) wd == node->key) {
            head = (sws_ofc_entry_t *) ((u_char *) node - offsetof(sws_ofc_entry_t, wd_node));
            e->wd_next = head->wd_next;
            head->wd_next = e;
            return;
        }
        node = (sws_uint_t) wd < node->key ? node->left : node->right;
    }
    e->wd_node.key = (sws_uint_t) wd;
    sws_rbtree_insert(&ofc.wds, &e->wd_node);
}

static void
sws_ofc_inotify_handler(sws_event_t *ev)
{
    u_char                      buf[4096] __attribute__((aligned(8)));
    const struct inotify_event *ie;
    sws_rbtree_node_t          *node, *sentinel = ofc.wds.sentinel;
    sws_ofc_entry_t            *e, *next;
    ssize_t                     n, i;

    for ( ;; ) {
        n = read(ofc.inotify_fd, buf, sizeof(buf));
        if (n <= 0) {
            return;
        }
        for (i = 0; i < n; i += sizeof(struct inotify_event) + ie->len) {
            ie = (const struct inotify_event *) (buf + i);
            for (node = ofc.wds.root; node != sentinel; ) {
                if ((sws_uint_t) ie->wd == node->key) {
                    break;
                }
                node = (sws_uint_t) ie->wd < node->key ? node->left : node->right;
            }
            if (node == sentinel) {
                continue;
            }
            e = (sws_ofc_entry_t *) ((u_char *) node - offsetof(sws_ofc_entry_t, wd_node));
            if (ie->mask & IN_IGNORED) {
                /* The kernel dropped the watch: nothing to remove. */
                for (next = e; next; next = next->wd_next) {
                    next->wd = -1;
                }
                sws_rbtree_delete(&ofc.wds, node);
            }
            while (e) {
                next = e->wd_next;
                sws_ofc_remove(e);
                e = next;
            }
        }
    }
}

/* Drop entries unused for `inactive`, oldest first. */
static void
sws_ofc_expire_handler(sws_event_t *ev)
{
    sws_msec_t       now = sws_current_msec();
    sws_queue_t     *q;
    sws_ofc_entry_t *e;
    sws_uint_t       i;

    if (sws_exiting) {
        return;
    }
    for (i = 0; i < 2; i++) {
        while (!sws_queue_empty(&ofc.lists[i].lru)) {
            q = sws_queue_last(&ofc.lists[i].lru);
            e = sws_queue_data(q, sws_ofc_entry_t, lru);
            if (now - e->used < ofc.inactive) {
                break;
            }
            sws_ofc_remove(e);
        }
    }
    sws_add_timer(&ofc.expire, 1000);
}

/* A module's own file and a location's at the same path are different
 * entries: their hashes differ by this. */
#define SWS_OFC_OWN_SALT  0x9e3779b9u

static uint32_t
sws_ofc_hash(const sws_str_t *path, unsigned own)
{
    return sws_hash_key(path->data, path->len) ^ (own ? SWS_OFC_OWN_SALT : 0);
}

static sws_ofc_entry_t *
sws_ofc_lookup(const sws_str_t *path, uint32_t hash, const sws_http_symlinks_t *sl)
{
    sws_ofc_entry_t *e;

    for (e = ofc.buckets[hash & (ofc.nbuckets - 1)]; e; e = e->hnext) {
        if (e->hash == hash && e->path_len == path->len
            && e->symlinks.mode == sl->mode && e->symlinks.from == sl->from
            && memcmp(e->path, path->data, path->len) == 0)
        {
            return e;
        }
    }
    return NULL;
}

static void
sws_ofc_etag(sws_ofc_entry_t *e)
{
    e->etag.data = e->etag_buf;
    e->etag.len = sws_http_etag_make(e->etag_buf, e->mtime, e->size) - e->etag_buf;
}

/* Open and stat into a new entry (not yet in the cache). */
static sws_ofc_entry_t *
sws_ofc_create(const sws_str_t *path, uint32_t hash, const sws_http_symlinks_t *sl,
    int cache_errors, int *err)
{
    sws_ofc_entry_t *e;
    struct stat      st, now;
    ssize_t          n;
    int              tries;

    e = calloc(1, sizeof(sws_ofc_entry_t) + path->len + 1);
    if (e == NULL) {
        *err = ENOMEM;
        return NULL;
    }
    sws_memcpy(e->path, path->data, path->len);
    e->path[path->len] = '\0';
    e->path_len = path->len;
    e->hash = hash;
    e->fd = -1;
    e->wd = -1;
    e->symlinks = *sl;

    /* Open first: a miss needs no watch (and a missing path cannot be
     * watched), so a lookup that misses (try_files' usual case) costs one
     * system call. A file found is watched, then checked to be still the
     * one at the path: a replacement between the open and the watch would
     * otherwise go unseen. */
    for (tries = 0; ; tries++) {
        e->fd = sws_http_path_open(e->path, e->path_len, sl,
                                   O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (e->fd == -1 || fstat(e->fd, &st) == -1) {
            *err = errno;
            if (e->fd != -1) {
                close(e->fd);
                e->fd = -1;
            }
            if (!cache_errors) {
                sws_ofc_free(e);
                return NULL;
            }
            e->err = *err;
            return e;
        }
        sws_ofc_watch(e);
        if (e->wd == -1
            || (sws_http_path_stat(e->path, e->path_len, sl, &now) == 0
                && now.st_ino == st.st_ino && now.st_dev == st.st_dev))
        {
            break;
        }
        sws_ofc_unwatch(e);          /* the watch is on another file */
        if (tries == 2) {
            break;                   /* unwatched: the valid checks apply */
        }
        close(e->fd);
    }
    e->dev = st.st_dev;
    e->ino = st.st_ino;
    e->size = st.st_size;
    e->mtime = st.st_mtime;
    e->is_file = S_ISREG(st.st_mode) ? 1 : 0;
    e->is_dir = S_ISDIR(st.st_mode) ? 1 : 0;
    if (e->is_file) {
        sws_ofc_etag(e);
    }
    if (!e->is_file) {
        close(e->fd);
        e->fd = -1;
    } else if (e->size == 0) {
        e->data = sws_ofc_empty;
    } else if (e->size <= SWS_HTTP_OFC_DATA_MAX && e->wd != -1) {
        /* Small and watched: keep the bytes, send them without file I/O. */
        e->data = malloc((size_t) e->size);
        if (e->data) {
            n = pread(e->fd, e->data, (size_t) e->size, 0);
            if (n == e->size) {
                close(e->fd);
                e->fd = -1;
            } else {
                free(e->data);
                e->data = NULL;
            }
        }
    }
    return e;
}

static int
sws_ofc_still_valid(sws_ofc_entry_t *e, sws_msec_t now, sws_msec_t valid)
{
    struct stat st;

    if (now - e->checked < valid) {
        return 1;
    }
    /* Under disable_symlinks the check walks the path again: a directory
     * on the way replaced by a link is seen here (inotify watches only
     * the file). */
    if (sws_http_path_stat(e->path, e->path_len, &e->symlinks, &st) == -1) {
        return e->err && errno == e->err;
    }
    if (e->err || st.st_dev != e->dev || st.st_ino != e->ino || st.st_size != e->size
        || st.st_mtime != e->mtime)
    {
        return 0;
    }
    e->checked = now;
    return 1;
}

/* The entry of path, found or made; uniq (an inode, 0: any): a cached
 * entry of another file is replaced. SWS_OK and f filled, or SWS_ERROR
 * with f->err. */
static inline __attribute__((always_inline)) sws_int_t
sws_ofc_get(sws_http_request_t *r, const sws_http_ofc_conf_t *conf, sws_msec_t valid,
    int cache_errors, const sws_http_symlinks_t *sl, const sws_str_t *path, unsigned own,
    uint64_t uniq, sws_http_file_t *f)
{
    sws_msec_t       now = sws_current_msec();
    uint32_t         hash = sws_ofc_hash(path, own);
    sws_ofc_entry_t *e, *old;
    sws_ofc_list_t  *list = &ofc.lists[own];
    sws_queue_t     *q;
    int              err = 0;

    if (!ofc.ready && sws_ofc_init(r, conf) != SWS_OK) {
        f->err = ENOMEM;
        return SWS_ERROR;
    }
    if (conf->inactive > ofc.inactive) {
        ofc.inactive = conf->inactive;
    }

    e = sws_ofc_lookup(path, hash, sl);
    if (e && ((uniq && (e->err || (uint64_t) e->ino != uniq))
              || (now - e->checked >= valid && !sws_ofc_still_valid(e, now, valid))))
    {
        sws_ofc_remove(e);
        e = NULL;
    }

    if (e == NULL) {
        e = sws_ofc_create(path, hash, sl, cache_errors, &err);
        if (e == NULL) {
            f->err = err;
            return SWS_ERROR;
        }
        e->checked = now;
        e->own = own;
        /* Make room: the least recently used entries of the kind (those in
         * use are freed when their requests are over). */
        while (list->count >= conf->max && !sws_queue_empty(&list->lru)) {
            q = sws_queue_last(&list->lru);
            old = sws_queue_data(q, sws_ofc_entry_t, lru);
            sws_ofc_remove(old);
        }
        e->hnext = ofc.buckets[hash & (ofc.nbuckets - 1)];
        ofc.buckets[hash & (ofc.nbuckets - 1)] = e;
        sws_queue_insert_head(&list->lru, &e->lru);
        list->count++;
    } else {
        sws_queue_remove(&e->lru);
        sws_queue_insert_head(&list->lru, &e->lru);
    }
    e->used = now;

    if (e->err) {
        f->err = e->err;
        return SWS_ERROR;
    }
    if (sws_pool_cleanup_add(r->pool, sws_ofc_release, e) != SWS_OK) {
        f->err = ENOMEM;
        return SWS_ERROR;
    }
    e->refs++;
    f->fd = e->fd;
    f->size = e->size;
    f->mtime = e->mtime;
    f->is_file = e->is_file;
    f->is_dir = e->is_dir;
    f->etag = e->is_file ? &e->etag : NULL;
    f->data = e->data;
    f->attached = e->attached;
    f->cached = e;
    return SWS_OK;
}

sws_int_t
sws_http_ofc_open(sws_http_request_t *r, const sws_http_ofc_conf_t *conf, sws_msec_t valid,
    int cache_errors, const sws_http_symlinks_t *sl, const sws_str_t *path, sws_http_file_t *f)
{
    return sws_ofc_get(r, conf, valid, cache_errors, sl, path, 0, 0, f);
}

/* ---- a module's own files (sws_http_open_cached) ---- */

static const sws_http_symlinks_t  sws_ofc_follow = { SWS_HTTP_SYMLINKS_OFF, 0 };

sws_int_t
sws_http_open_cached(sws_http_request_t *r, const sws_str_t *path,
    const sws_http_file_cache_t *fc, sws_http_file_t *f)
{
    sws_http_ofc_conf_t  conf;
    sws_ofc_entry_t     *e;

    sws_memzero(f, sizeof(*f));
    f->fd = -1;
    conf.max = fc->max ? fc->max : 1;
    conf.inactive = fc->inactive;
    /* never stat()ed: the caller's uniq says whether it is still the file */
    if (sws_ofc_get(r, &conf, SWS_MSEC_NEVER, 0, &sws_ofc_follow, path, 1, fc->uniq, f)
        != SWS_OK)
    {
        return SWS_ERROR;
    }
    e = f->cached;
    if (fc->uniq && (uint64_t) e->ino != fc->uniq) {
        /* replaced again since the caller looked: its entry stays (it is
         * the file at the path now), this request does not take it */
        f->err = ESTALE;
        return SWS_DECLINED;
    }
    return SWS_OK;
}

sws_int_t
sws_http_file_attach(sws_http_file_t *f, void *data, void (*done)(void *data))
{
    sws_ofc_entry_t *e = f->cached;

    if (e == NULL || e->attached || e->dead) {
        return SWS_DECLINED;
    }
    e->attached = data;
    e->attached_done = done;
    f->attached = data;
    return SWS_OK;
}

void
sws_http_file_forget(const sws_str_t *path)
{
    sws_ofc_entry_t *e;

    if (!ofc.ready) {
        return;
    }
    e = sws_ofc_lookup(path, sws_ofc_hash(path, 1), &sws_ofc_follow);
    if (e) {
        sws_ofc_remove(e);
    }
}


/* ---- open_file_cache_min_uses ---- */

#define SWS_OFC_COUNTERS  4096         /* slots; a collision resets a count */

typedef struct {
    uint32_t    hash;
    uint32_t    uses;
    sws_msec_t  first;                 /* the first use counted */
} sws_ofc_counter_t;

static sws_ofc_counter_t *sws_ofc_counters;

int
sws_http_ofc_admits(const sws_http_ofc_conf_t *conf, sws_uint_t min_uses,
    const sws_http_symlinks_t *sl, const sws_str_t *path)
{
    sws_ofc_counter_t *c;
    sws_msec_t         now;
    uint32_t           hash;

    if (min_uses <= 1) {
        return 1;
    }
    hash = sws_hash_key(path->data, path->len);
    if (ofc.ready && sws_ofc_lookup(path, hash, sl)) {
        return 1;                      /* cached already */
    }
    if (sws_ofc_counters == NULL) {
        sws_ofc_counters = calloc(SWS_OFC_COUNTERS, sizeof(sws_ofc_counter_t));
        if (sws_ofc_counters == NULL) {
            return 0;
        }
    }
    now = sws_current_msec();
    c = &sws_ofc_counters[hash & (SWS_OFC_COUNTERS - 1)];
    if (c->uses == 0 || c->hash != hash || now - c->first >= conf->inactive) {
        c->hash = hash;
        c->uses = 0;
        c->first = now;
    }
    if (++c->uses < min_uses) {
        return 0;
    }
    c->uses = 0;                       /* in the cache from now on */
    return 1;
}
