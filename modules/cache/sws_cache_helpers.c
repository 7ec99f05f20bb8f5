/*
 * The two helper processes of a cache path (sws_helper.h), so that no
 * request ever evicts or walks the directory:
 *
 *   cache-manager   every 100 ms: entries unused for `inactive`, then the
 *                   least recently used while the files exceed max_size or
 *                   the keys zone runs out of pages, are removed with their
 *                   files; memory copies are dropped, least recently used
 *                   first, to keep room in mem_size for new ones.
 *   cache-loader    once, at start: indexes the entries already in PATH
 *                   (a restart keeps the cache), one lock per file, while
 *                   requests are served (as misses) meanwhile. Temporary
 *                   files of dead processes are removed; a file that is not
 *                   a valid entry of its name is skipped with a log line.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "sws_cache.h"

#define SWS_CACHE_MANAGER_SLEEP  100     /* ms */
#define SWS_CACHE_BATCH          64      /* removals per lock hold */

/* ---- the manager ---- */

/* Whether the keys zone is nearly out of pages (takes the lock). */
static int
sws_cache_zone_low(sws_cache_path_t *p)
{
    size_t  page, total, nfree, keys, used, mem;

    sws_slab_pages(p->pool, &page, &total, &nfree);
    /* the zone is keys_zone + mem_size: the nodes' share is what is left
     * of it beside the memory copies; low past 15/16 of it */
    keys = total - sws_min(total, p->mem_size / page);
    used = total - nfree;
    mem = (p->sh->mem_used + page - 1) / page;
    used = used > mem ? used - mem : 0;
    return used * 16 > keys * 15;
}

void
sws_cache_manage(sws_cache_path_t *p, sws_log_t *log)
{
    sws_cache_sh_t       *sh = p->sh;
    sws_slab_lru_node_t  *q;
    sws_cache_node_t     *n;
    time_t                now = sws_time_sec();
    sws_msec_t            now_ms = sws_current_msec();
    uint64_t              target;
    sws_uint_t            done, evicted = 0;
    int                   low;

    for ( ;; ) {
        done = 0;
        low = sws_cache_zone_low(p);
        sws_slab_lock(p->pool);
        while (done < SWS_CACHE_BATCH && (q = sws_slab_lru_oldest(&sh->lru)) != NULL) {
            n = sws_slab_lru_entry(q, sws_cache_node_t, lru);
            if (n->lock_until > now_ms) {
                break;                 /* being filled: later */
            }
            if (n->last_access + p->inactive <= now
                || (p->max_size && sh->fs_used > p->max_size) || low)
            {
                sh->evictions += sws_cache_drop_node_locked(p, n);
                done++;
                continue;
            }
            break;
        }
        /* memory copies: room for new ones */
        target = p->mem_size - sws_min(p->mem_max_object, p->mem_size / 4);
        while (sh->mem_used > target && (q = sws_slab_lru_oldest(&sh->mem_lru)) != NULL) {
            n = sws_slab_lru_entry(q, sws_cache_node_t, mem_lru);
            sws_cache_mem_detach_locked(p, n);
            done++;
        }
        sws_slab_unlock(p->pool);
        evicted += done;
        if (done < SWS_CACHE_BATCH) {
            break;
        }
    }
    if (evicted) {
        sws_log_error(SWS_LOG_INFO, log, 0, "cache \"%.*s\": manager removed %lu, %llu bytes "
                      "in files, %llu in memory", (int) p->name.len, p->name.data,
                      (unsigned long) evicted, (unsigned long long) sh->fs_used,
                      (unsigned long long) sh->mem_used);
    }
}

static int
sws_cache_manager(sws_helper_t *h, void *data)
{
    sws_cache_path_t *p = data;

    while (sws_helper_sleep(h, SWS_CACHE_MANAGER_SLEEP) == SWS_OK) {
        sws_cache_manage(p, sws_helper_log(h));
    }
    return 0;
}

/* ---- the loader ---- */

typedef struct {
    sws_cache_path_t  *p;
    sws_helper_t      *h;
    sws_log_t         *log;
    sws_uint_t         loaded;
    sws_uint_t         skipped;
} sws_cache_load_t;

static int
sws_cache_hex_name(const char *s)
{
    size_t  i;

    for (i = 0; i < 32; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
            return 0;
        }
    }
    return s[32] == '\0';
}

static void
sws_cache_skip(sws_cache_load_t *ld, const char *file, const char *why)
{
    ld->skipped++;
    sws_log_error(SWS_LOG_WARN, ld->log, 0, "cache \"%.*s\": \"%s\" skipped: %s",
                  (int) ld->p->name.len, ld->p->name.data, file, why);
}

/* Index one entry's file. */
static void
sws_cache_load_file(sws_cache_load_t *ld, const char *file, const char *base, off_t size,
    uint64_t uniq)
{
    sws_cache_path_t  *p = ld->p;
    sws_cache_entry_t  e;
    sws_cache_node_t  *n, *m = NULL;
    u_char             buf[SWS_CACHE_MAX_HEADER + 2 * SWS_CACHE_MAX_KEY + 128], digest[16];
    u_char             hex[33];
    const char        *why;
    ssize_t            r;
    int                fd;

    fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        sws_cache_skip(ld, file, strerror(errno));
        return;
    }
    r = pread(fd, buf, sizeof(buf), 0);
    close(fd);
    if (r < 0) {
        sws_cache_skip(ld, file, strerror(errno));
        return;
    }
    why = sws_cache_entry_parse(buf, (size_t) r, (uint64_t) size, &e);
    if (why == NULL) {
        sws_cache_digest(e.key, e.h.key_len, digest);
        sws_hex_dump(hex, digest, 16);
        if (memcmp(hex, base, 32) != 0) {
            why = "its key does not give its name";
        }
    }
    if (why) {
        sws_cache_skip(ld, file, why);
        return;
    }

    sws_slab_lock(p->pool);
    if (sws_cache_node_find_locked(p, e.key, e.h.key_len) != NULL) {
        sws_slab_unlock(p->pool);      /* a fill since the start is newer */
        return;
    }
    if (e.h.vary_len) {
        m = sws_cache_node_find_locked(p, e.key, e.h.base_len);
        if (m && (!m->is_marker || m->vary_len != e.h.vary_len
                  || memcmp(m->vary, e.vary, e.h.vary_len) != 0))
        {
            sws_slab_unlock(p->pool);
            return;                    /* the base key holds something else now */
        }
        if (m == NULL) {
            m = sws_cache_node_new_locked(p, e.key, e.h.base_len);
            if (m == NULL) {
                goto full;
            }
            m->vary = sws_slab_alloc_locked(p->pool, e.h.vary_len);
            if (m->vary == NULL) {
                sws_cache_node_remove_locked(p, m);
                goto full;
            }
            memcpy(m->vary, e.vary, e.h.vary_len);
            m->vary_len = e.h.vary_len;
            m->is_marker = 1;
        }
    }
    n = sws_cache_node_new_locked(p, e.key, e.h.key_len);
    if (n == NULL) {
        goto full;
    }
    n->exists = 1;
    n->flags = e.h.flags;
    n->fresh_until = e.h.fresh_until;
    n->response_time = e.h.response_time;
    n->initial_age = e.h.initial_age;
    n->swr = e.h.swr;
    n->sie = e.h.sie;
    n->fs_size = (uint64_t) size;
    n->uniq = uniq;
    p->sh->fs_used += (uint64_t) size;
    p->sh->nentries++;
    if (m) {
        sws_queue_insert_tail(&m->variants, &n->variants);
        n->marker = m;
    }
    sws_slab_unlock(p->pool);
    ld->loaded++;
    return;

full:
    sws_slab_unlock(p->pool);
    sws_cache_skip(ld, file, "the keys zone is full");
}

static void
sws_cache_load_dir(sws_cache_load_t *ld, char *dir, size_t len, sws_uint_t depth)
{
    DIR            *d;
    struct dirent  *de;
    struct stat     st;
    long            pid;

    d = opendir(dir);
    if (d == NULL) {
        return;
    }
    while ((de = readdir(d)) != NULL && !sws_helper_stopping(ld->h)) {
        if (de->d_name[0] == '.' && (de->d_name[1] == '\0'
                                     || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
        {
            continue;
        }
        if (len + strlen(de->d_name) + 2 >= 4096) {
            continue;
        }
        dir[len] = '/';
        strcpy(dir + len + 1, de->d_name);
        if (lstat(dir, &st) == -1) {
            dir[len] = '\0';
            continue;
        }
        if (depth == 0 && strncmp(de->d_name, ".tmp.", 5) == 0 && S_ISREG(st.st_mode)) {
            /* a fill's temporary file: of a live process, or left by one killed */
            pid = strtol(de->d_name + 5, NULL, 10);
            if (pid <= 0 || (kill((pid_t) pid, 0) == -1 && errno == ESRCH)) {
                unlink(dir);
            }
        } else if (S_ISDIR(st.st_mode) && depth < 3 && ld->p->levels[depth]) {
            sws_cache_load_dir(ld, dir, len + 1 + strlen(de->d_name), depth + 1);
        } else if (S_ISREG(st.st_mode) && sws_cache_hex_name(de->d_name)) {
            sws_cache_load_file(ld, dir, de->d_name, st.st_size, (uint64_t) st.st_ino);
        } else {
            sws_cache_skip(ld, dir, "not a cache entry's name");
        }
        dir[len] = '\0';
    }
    closedir(d);
}

static int
sws_cache_loader(sws_helper_t *h, void *data)
{
    sws_cache_load_t  ld;
    char              dir[4096];

    ld.p = data;
    ld.h = h;
    ld.log = sws_helper_log(h);
    ld.loaded = ld.skipped = 0;
    if (ld.p->path.len >= sizeof(dir)) {
        return 1;
    }
    memcpy(dir, ld.p->path.data, ld.p->path.len + 1);
    sws_cache_load_dir(&ld, dir, ld.p->path.len, 0);
    if (sws_helper_stopping(h)) {
        return 1;                      /* not done: the next start goes again */
    }
    sws_slab_lock(ld.p->pool);
    ld.p->sh->loaded = 1;
    sws_slab_unlock(ld.p->pool);
    sws_log_error(SWS_LOG_NOTICE, ld.log, 0, "cache \"%.*s\": loaded %lu entries, skipped %lu",
                  (int) ld.p->name.len, ld.p->name.data, (unsigned long) ld.loaded,
                  (unsigned long) ld.skipped);
    return 0;
}

/* ---- declaring them ---- */

sws_int_t
sws_cache_helpers_add(sws_conf_t *cf, sws_cache_path_t *p)
{
    sws_helper_t  *h;
    sws_str_t      name, key;
    u_char        *b;
    size_t         n = sws_min(p->name.len, 18);

    key.data = sws_pnalloc(sws_conf_pool(cf), p->path.len + 200);
    name.data = sws_pnalloc(sws_conf_pool(cf), 32);
    if (key.data == NULL || name.data == NULL) {
        return SWS_ERROR;
    }
    /* everything the helpers read from the configuration: a reload that
     * changes any of it restarts them */
    b = sws_slprintf(key.data, key.data + p->path.len + 199, "%s %zu %zu %ld %zu %zu %lu:%lu:%lu",
                     (char *) p->path.data, p->keys_size, p->max_size, (long) p->inactive,
                     p->mem_size, p->mem_max_object, (unsigned long) p->levels[0],
                     (unsigned long) p->levels[1], (unsigned long) p->levels[2]);
    key.len = (size_t) (b - key.data);

    name.len = (size_t) (sws_slprintf(name.data, name.data + 31, "cache-manager.%.*s", (int) n,
                                      (char *) p->name.data) - name.data);
    h = sws_helper_add(cf, &name);
    if (h == NULL || sws_helper_set_function(h, sws_cache_manager, p) != SWS_OK
        || sws_helper_set_key(h, &key) != SWS_OK)
    {
        return SWS_ERROR;
    }

    name.data = sws_pnalloc(sws_conf_pool(cf), 32);
    if (name.data == NULL) {
        return SWS_ERROR;
    }
    name.len = (size_t) (sws_slprintf(name.data, name.data + 31, "cache-loader.%.*s", (int) n,
                                      (char *) p->name.data) - name.data);
    h = sws_helper_add(cf, &name);
    if (h == NULL || sws_helper_set_function(h, sws_cache_loader, p) != SWS_OK
        || sws_helper_set_key(h, &key) != SWS_OK
        || sws_helper_set_restart(h, SWS_HELPER_RESTART_ON_FAILURE) != SWS_OK)
    {
        return SWS_ERROR;
    }
    return SWS_OK;
}
