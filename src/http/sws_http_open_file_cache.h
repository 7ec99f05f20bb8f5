/*
 * The open file cache: per worker, descriptors, stat results, ETags and the
 * contents of small files, keyed by path. Entries are dropped when inotify
 * reports a change to the file (at once), when open_file_cache_valid has
 * passed since the last check and a stat shows a change, or when unused for
 * `inactive`. One cache per worker, shared by the locations that enable it
 * and by modules for their own files (sws_http_open_cached: the cache's
 * entry files, checked by the inode the caller expects instead of stat).
 */
#ifndef SWS_HTTP_OPEN_FILE_CACHE_H
#define SWS_HTTP_OPEN_FILE_CACHE_H

#include <scalws/scalws.h>
#include "sws_http_open_path.h"

/* What "open_file_cache max=N inactive=T" says; NULL in a loc conf: off. */
typedef struct {
    sws_uint_t  max;
    sws_msec_t  inactive;
} sws_http_ofc_conf_t;

/* Files up to this size are kept in memory and sent without file I/O. */
#define SWS_HTTP_OFC_DATA_MAX  8192

/* open_file_cache_min_uses: may path go through the cache now? Yes when it
 * is in it or min_uses is 1; else its uses within `inactive` are counted
 * (a small per-worker table by the path's hash) and it is let in at the
 * min_uses-th. Until then it is opened without the cache. */
int       sws_http_ofc_admits(const sws_http_ofc_conf_t *conf, sws_uint_t min_uses,
    const sws_http_symlinks_t *sl, const sws_str_t *path);

/* sl: how the path is opened (disable_symlinks); entries opened under
 * different rules are different entries. */
sws_int_t sws_http_ofc_open(sws_http_request_t *r, const sws_http_ofc_conf_t *conf,
    sws_msec_t valid, int cache_errors, const sws_http_symlinks_t *sl, const sws_str_t *path,
    sws_http_file_t *f);

#endif
