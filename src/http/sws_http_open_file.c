/* sws_http_open_file: open + fstat, and sws_http_file_info: what a path
 * is; both through the open file cache when the location has one, and
 * both under the location's disable_symlinks (sws_http_open_path.c). */
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sws_http_core.h"
#include "sws_http_open_file_cache.h"
#include "sws_http_open_path.h"

static void
sws_http_close_fd(void *data)
{
    (void) close((int) (intptr_t) data);
}

sws_int_t
sws_http_open_file(sws_http_request_t *r, const sws_str_t *path, sws_http_file_t *f)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    sws_http_symlinks_t       sl;
    struct stat               st;
    int                       fd;

    sws_memzero(f, sizeof(*f));
    f->fd = -1;
    sws_http_symlinks(r, path, &sl);

    if (clcf->open_file_cache
        && sws_http_ofc_admits(clcf->open_file_cache,
                               (sws_uint_t) clcf->open_file_cache_min_uses, &sl, path))
    {
        return sws_http_ofc_open(r, clcf->open_file_cache, clcf->open_file_cache_valid,
                                 (int) clcf->open_file_cache_errors, &sl, path, f);
    }

    /* O_NONBLOCK: a FIFO in the tree must not block the worker. */
    fd = sws_http_path_open(path->data, path->len, &sl, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd == -1) {
        f->err = errno;
        return SWS_ERROR;
    }
    if (fstat(fd, &st) == -1) {
        f->err = errno;
        (void) close(fd);
        return SWS_ERROR;
    }
    if (sws_pool_cleanup_add(r->pool, sws_http_close_fd, (void *) (intptr_t) fd) != SWS_OK) {
        (void) close(fd);
        f->err = ENOMEM;
        return SWS_ERROR;
    }
    f->fd = fd;
    f->size = st.st_size;
    f->mtime = st.st_mtime;
    f->is_file = S_ISREG(st.st_mode) ? 1 : 0;
    f->is_dir = S_ISDIR(st.st_mode) ? 1 : 0;
    return SWS_OK;
}

sws_int_t
sws_http_file_info(sws_http_request_t *r, const sws_str_t *path, sws_http_file_t *f)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    sws_http_symlinks_t       sl;
    struct stat               st;

    sws_memzero(f, sizeof(*f));
    f->fd = -1;
    sws_http_symlinks(r, path, &sl);

    if (clcf->open_file_cache) {
        if (sws_http_ofc_open(r, clcf->open_file_cache, clcf->open_file_cache_valid,
                              (int) clcf->open_file_cache_errors, &sl, path, f) == SWS_OK)
        {
            return SWS_OK;
        }
        if (f->err != EACCES) {
            return SWS_ERROR;
        }
        /* There but not readable: stat() tells what it is, as without the
         * cache (the handler that opens it answers 403). */
    }

    sws_memzero(f, sizeof(*f));
    f->fd = -1;
    if (sws_http_path_stat(path->data, path->len, &sl, &st) == -1) {
        f->err = errno;
        return SWS_ERROR;
    }
    f->size = st.st_size;
    f->mtime = st.st_mtime;
    f->is_file = S_ISREG(st.st_mode) ? 1 : 0;
    f->is_dir = S_ISDIR(st.st_mode) ? 1 : 0;
    return SWS_OK;
}
