/*
 * The dav module: nginx's ngx_http_dav_module, the WebDAV methods that
 * change files under the location's root or alias.
 *
 *   dav_methods off | [PUT] [DELETE] [MKCOL] [COPY] [MOVE];   (default off)
 *   dav_access USERS:PERM ...;     mode of what is created (default user:rw)
 *   create_full_put_path on|off;   PUT makes missing directories (default off)
 *   min_delete_depth N;            DELETE only N segments deep (default 0)
 *
 * A content phase handler ahead of the static module's: the methods it is
 * not given here it declines (GET and HEAD go on to the files). It runs
 * after the access phase, so allow/deny, auth_basic and limit_except
 * blocks guard it as any content. PUT streams the body into a temporary
 * file next to its target and renames it into place: never a partial file
 * at the target's name, never the whole body in memory.
 */
#include <fcntl.h>
#include <unistd.h>
#include "sws_dav.h"

static char *sws_dav_set_methods(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_dav_set_access(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_dav_create_loc_conf(sws_conf_t *cf);
static char *sws_dav_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_dav_postconfiguration(sws_conf_t *cf);

#define SWS_DAV_CTX  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_dav_commands[] = {
    { "dav_methods", SWS_DAV_CTX | SWS_CONF_1MORE, sws_dav_set_methods,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "dav_access", SWS_DAV_CTX | SWS_CONF_TAKE123, sws_dav_set_access,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_dav_loc_conf_t, access), NULL },
    { "create_full_put_path", SWS_DAV_CTX | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_dav_loc_conf_t, create_full_put_path), NULL },
    { "min_delete_depth", SWS_DAV_CTX | SWS_CONF_TAKE1, sws_conf_set_num_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_dav_loc_conf_t, min_delete_depth), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "dav",
    .commands = sws_dav_commands,
    .create_loc_conf = sws_dav_create_loc_conf,
    .merge_loc_conf = sws_dav_merge_loc_conf,
    .postconfiguration = sws_dav_postconfiguration,
};

static const struct {
    const char  *name;
    sws_int_t    bit;
} sws_dav_method_names[] = {
    { "PUT", SWS_DAV_PUT }, { "DELETE", SWS_DAV_DELETE }, { "MKCOL", SWS_DAV_MKCOL },
    { "COPY", SWS_DAV_COPY }, { "MOVE", SWS_DAV_MOVE }, { NULL, 0 }
};

static const char *const  sws_dav_other_methods[] = {
    "PROPFIND", "PROPPATCH", "LOCK", "UNLOCK", NULL
};

#define SWS_DAV_OTHER  0x100            /* never enabled: 405 */

/* What a PUT keeps while its body arrives. */
typedef struct {
    sws_str_t   path;           /* the target */
    sws_str_t   temp;           /* the temporary file next to it */
    int         fd;
    u_char     *buf;
    size_t      size;
} sws_dav_put_t;

#define SWS_DAV_PUT_BUF  65536


/* ---- shared helpers --------------------------------------------------- */

/* A failed file operation as nginx answers it. */
sws_int_t
sws_dav_error(sws_http_request_t *r, int err, sws_int_t not_found, const char *op,
    const u_char *path)
{
    sws_uint_t  level = SWS_LOG_ERR;
    sws_int_t   rc;

    if (err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG) {
        rc = not_found;
    } else if (err == EACCES || err == EPERM || err == ELOOP) {
        rc = SWS_HTTP_FORBIDDEN;        /* ELOOP: a link disable_symlinks refuses */
    } else if (err == EEXIST) {
        rc = SWS_HTTP_NOT_ALLOWED;
    } else if (err == ENOSPC) {
        level = SWS_LOG_CRIT;
        rc = 507;                       /* Insufficient Storage */
    } else {
        level = SWS_LOG_CRIT;
        rc = SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_log_error(level, sws_http_log(r), err, "%s \"%s\" failed", op, path);
    return rc;
}

/* Depth: "0", "1" or "infinity" (RFC 4918 10.2, as nginx: lower case). */
sws_int_t
sws_dav_depth(sws_http_request_t *r, sws_int_t dflt)
{
    const sws_str_t  *v = sws_http_header_in(r, "depth", 5);

    if (v == NULL) {
        return dflt;
    }
    if (v->len == 1 && (v->data[0] == '0' || v->data[0] == '1')) {
        return v->data[0] - '0';
    }
    if (sws_str_eq_cstr(v, "infinity")) {
        return SWS_DAV_INFINITY;
    }
    sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "client sent invalid \"Depth\" header: \"%.*s\"",
                  (int) v->len, v->data);
    return SWS_DAV_INVALID;
}

/* A body where the method takes none (DELETE, MKCOL, COPY, MOVE): nginx's
 * 415. */
sws_int_t
sws_dav_has_body(sws_http_request_t *r)
{
    off_t  n = sws_http_content_length_in(r);

    return n > 0 || (n == -1 && sws_http_has_body(r));
}

/*
 * disable_symlinks: the directory a new name goes into (path up to its
 * last '/', len bytes) is looked up under the location's rule. SWS_OK
 * also when it does not exist (the operation then fails on its own),
 * 403 when a link on the way is refused.
 */
sws_int_t
sws_dav_symlinks_allowed(sws_http_request_t *r, const u_char *path, size_t len)
{
    sws_http_file_t  f;
    sws_str_t        dir;

    while (len > 1 && path[len - 1] != '/') {
        len--;
    }
    if (len > 1) {
        len--;                          /* without the '/' */
    }
    dir.data = sws_pnalloc(sws_http_pool(r), len + 1);
    if (dir.data == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_memcpy(dir.data, path, len);
    dir.data[len] = '\0';
    dir.len = len;
    if (sws_http_file_info(r, &dir, &f) != SWS_OK && f.err == ELOOP) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), ELOOP, "\"%s\" is not allowed", dir.data);
        return SWS_HTTP_FORBIDDEN;
    }
    return SWS_OK;
}

/* A 201 or 204 without a body, as nginx sends them (201 with
 * Content-Length: 0, and the new resource's Location when given). */
sws_int_t
sws_dav_respond(sws_http_request_t *r, sws_uint_t status, const sws_str_t *location)
{
    sws_int_t  rc;

    sws_http_set_status(r, status);
    if (status == SWS_HTTP_CREATED) {
        sws_http_set_content_length(r, 0);
    }
    if (location) {
        sws_http_set_location(r, location);
    }
    rc = sws_http_send_header(r);
    if (rc != SWS_OK || sws_http_header_only(r)) {
        return rc;
    }
    return sws_http_send_special(r, 1);
}

/* The request's URI, escaped, for the Location of what was created (the
 * core makes it absolute). */
static sws_str_t *
sws_dav_location(sws_http_request_t *r)
{
    const sws_str_t  *uri = sws_http_uri(r);
    sws_str_t        *loc;
    size_t            len;

    len = sws_escape_uri_len(uri->data, uri->len, SWS_ESCAPE_URI_PATH);
    loc = sws_palloc(sws_http_pool(r), sizeof(sws_str_t) + len);
    if (loc == NULL) {
        return NULL;
    }
    loc->data = (u_char *) (loc + 1);
    loc->len = (size_t) (sws_escape_uri(loc->data, uri->data, uri->len, SWS_ESCAPE_URI_PATH)
                         - loc->data);
    return loc;
}

static sws_int_t
sws_dav_map(sws_http_request_t *r, sws_str_t *path)
{
    size_t  root_len;

    if (sws_http_map_uri_to_path(r, path, &root_len, 0) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_OK;
}


/* ---- PUT --------------------------------------------------------------- */

static void
sws_dav_put_cleanup(void *data)
{
    sws_dav_put_t  *put = data;

    if (put->fd != -1) {
        close(put->fd);
        put->fd = -1;
        (void) unlink((char *) put->temp.data);
    }
}

/* The whole body is in the temporary file: into place with it. */
static sws_int_t
sws_dav_put_done(sws_http_request_t *r, sws_dav_put_t *put)
{
    sws_dav_loc_conf_t  *dlcf = sws_http_loc_conf(r, &sws_module);
    const sws_str_t     *date;
    struct timespec      ts[2];
    struct stat          st;
    sws_uint_t           status;
    sws_str_t           *loc = NULL;
    time_t               t;
    int                  fd = put->fd;

    put->fd = -1;                       /* the cleanup leaves it now */
    (void) fchmod(fd, (mode_t) dlcf->access);
    /* a Date field sets the file's time, as nginx's */
    date = sws_http_header_in(r, "date", 4);
    if (date && (t = sws_parse_http_time(date->data, date->len)) != (time_t) -1) {
        ts[0].tv_sec = t;
        ts[0].tv_nsec = 0;
        ts[1] = ts[0];
        (void) futimens(fd, ts);
    }
    if (close(fd) != 0) {
        sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "close() \"%s\" failed",
                      put->temp.data);
        goto failed;
    }

    if (stat((char *) put->path.data, &st) == -1) {
        status = SWS_HTTP_CREATED;
        loc = sws_dav_location(r);
        if (loc == NULL) {
            goto failed;
        }
    } else if (S_ISDIR(st.st_mode)) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), EISDIR, "\"%s\" could not be created",
                      put->path.data);
        (void) unlink((char *) put->temp.data);
        return SWS_HTTP_CONFLICT;
    } else {
        status = SWS_HTTP_NO_CONTENT;
    }
    if (rename((char *) put->temp.data, (char *) put->path.data) != 0) {
        sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "rename() \"%s\" to \"%s\" failed",
                      put->temp.data, put->path.data);
        goto failed;
    }
    return sws_dav_respond(r, status, loc);

failed:
    (void) unlink((char *) put->temp.data);
    return SWS_HTTP_INTERNAL_SERVER_ERROR;
}

/* Write what arrived of the body to the file: SWS_AGAIN while more is to
 * come, else what the request is finalized with. */
static sws_int_t
sws_dav_put_pull(sws_http_request_t *r, sws_dav_put_t *put)
{
    sws_int_t  rc;
    size_t     n, off;
    ssize_t    w;

    for ( ;; ) {
        rc = sws_http_read_body_data(r, put->buf, put->size, &n);
        if (rc == SWS_AGAIN) {
            return SWS_AGAIN;
        }
        if (rc != SWS_OK && rc != SWS_DONE) {
            sws_dav_put_cleanup(put);
            return rc;
        }
        for (off = 0; off < n; off += (size_t) w) {
            w = write(put->fd, put->buf + off, n - off);
            if (w < 0) {
                if (errno == EINTR) {
                    w = 0;
                    continue;
                }
                rc = sws_dav_error(r, errno, SWS_HTTP_INTERNAL_SERVER_ERROR, "write()",
                                   put->temp.data);
                sws_dav_put_cleanup(put);
                return rc == 507 ? rc : SWS_HTTP_INTERNAL_SERVER_ERROR;
            }
        }
        if (rc == SWS_DONE) {
            return sws_dav_put_done(r, put);
        }
    }
}

/* Body data may be there (the core's body handler). */
static void
sws_dav_put_body(sws_http_request_t *r)
{
    sws_dav_put_t  *put = sws_http_get_ctx(r, &sws_module);
    sws_int_t       rc;

    if (put == NULL || put->fd == -1) {
        return;
    }
    rc = sws_dav_put_pull(r, put);
    if (rc != SWS_AGAIN) {
        sws_http_finalize(r, rc);
    }
}

static sws_int_t
sws_dav_put(sws_http_request_t *r, sws_dav_loc_conf_t *dlcf)
{
    const sws_str_t  *uri = sws_http_uri(r);
    sws_dav_put_t    *put;
    sws_pool_t       *pool = sws_http_pool(r);
    sws_int_t         rc;

    if (uri->data[uri->len - 1] == '/') {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "cannot PUT to a collection");
        return SWS_HTTP_CONFLICT;
    }
    if (sws_http_header_in(r, "content-range", 13)) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "PUT with range is unsupported");
        return SWS_HTTP_NOT_IMPLEMENTED;
    }
    put = sws_pcalloc(pool, sizeof(sws_dav_put_t));
    if (put == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    put->fd = -1;
    rc = sws_dav_map(r, &put->path);
    if (rc != SWS_OK) {
        return rc;
    }
    rc = sws_dav_symlinks_allowed(r, put->path.data, put->path.len);
    if (rc != SWS_OK) {
        return rc;
    }
    put->fd = sws_dav_temp_file(pool, put->path.data, put->path.len, &put->temp);
    if (put->fd == -1 && errno == ENOENT && dlcf->create_full_put_path) {
        if (sws_dav_create_path(put->path.data, put->path.len,
                                sws_dav_dir_access(dlcf->access)) != 0)
        {
            return sws_dav_error(r, errno, SWS_HTTP_CONFLICT, "mkdir()", put->path.data);
        }
        put->fd = sws_dav_temp_file(pool, put->path.data, put->path.len, &put->temp);
    }
    if (put->fd == -1) {
        /* nginx's 500: its rename() into a missing directory fails */
        sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "mkstemp() \"%s\" failed",
                      put->temp.data ? put->temp.data : put->path.data);
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sws_pool_cleanup_add(pool, sws_dav_put_cleanup, put) != SWS_OK) {
        sws_dav_put_cleanup(put);
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    put->size = SWS_DAV_PUT_BUF;
    put->buf = sws_pnalloc(pool, put->size);
    if (put->buf == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_http_set_ctx(r, &sws_module, put);
    rc = sws_http_read_body_stream(r, sws_dav_put_body);
    if (rc != SWS_OK) {
        sws_dav_put_cleanup(put);
        return rc;
    }
    /* what is there already; the rest through sws_dav_put_body (never
     * finalized from here: the phase engine finalizes what we return) */
    rc = sws_dav_put_pull(r, put);
    return rc == SWS_AGAIN ? SWS_DONE : rc;
}


/* ---- DELETE ------------------------------------------------------------ */

static sws_int_t
sws_dav_delete(sws_http_request_t *r, sws_dav_loc_conf_t *dlcf)
{
    const sws_str_t  *uri = sws_http_uri(r);
    struct stat       st;
    sws_str_t         path;
    sws_int_t         rc, depth, d;
    size_t            i, root_len;

    if (sws_dav_has_body(r)) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "DELETE with body is unsupported");
        return 415;
    }
    if (dlcf->min_delete_depth) {
        /* at least that many '/' with something after the last counted */
        for (i = 0, d = 0; i < uri->len; ) {
            if (uri->data[i++] == '/' && ++d >= dlcf->min_delete_depth && i < uri->len) {
                break;
            }
        }
        if (i >= uri->len) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                          "insufficient URI depth:%d to DELETE", (int) d);
            return SWS_HTTP_CONFLICT;
        }
    }
    if (sws_http_map_uri_to_path(r, &path, &root_len, 0) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (lstat((char *) path.data, &st) == -1) {
        /* a file where the path wants a directory: nginx's 409 */
        return sws_dav_error(r, errno, errno == ENOTDIR ? SWS_HTTP_CONFLICT : SWS_HTTP_NOT_FOUND,
                             "lstat()", path.data);
    }
    rc = sws_dav_symlinks_allowed(r, path.data, path.len);
    if (rc != SWS_OK) {
        return rc;
    }
    if (S_ISDIR(st.st_mode)) {
        if (uri->data[uri->len - 1] != '/') {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), EISDIR, "DELETE \"%s\" failed",
                          path.data);
            return SWS_HTTP_CONFLICT;
        }
        depth = sws_dav_depth(r, SWS_DAV_INFINITY);
        if (depth != SWS_DAV_INFINITY) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "\"Depth\" header must be infinity");
            return SWS_HTTP_BAD_REQUEST;
        }
        while (path.len > 1 && path.data[path.len - 1] == '/') {
            path.data[--path.len] = '\0';
        }
        if (path.len <= root_len) {
            /* the location's root itself: nginx empties it and then fails */
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "DELETE of the root \"%s\" refused",
                          path.data);
            return SWS_HTTP_FORBIDDEN;
        }
    } else {
        depth = sws_dav_depth(r, 0);
        if (depth != 0 && depth != SWS_DAV_INFINITY) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                          "\"Depth\" header must be 0 or infinity");
            return SWS_HTTP_BAD_REQUEST;
        }
    }
    if (sws_dav_remove_tree(sws_http_log(r), path.data) != 0) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return sws_dav_respond(r, SWS_HTTP_NO_CONTENT, NULL);
}


/* ---- MKCOL ------------------------------------------------------------- */

static sws_int_t
sws_dav_mkcol(sws_http_request_t *r, sws_dav_loc_conf_t *dlcf)
{
    const sws_str_t  *uri = sws_http_uri(r);
    sws_str_t         path, *loc;
    sws_int_t         rc;

    if (sws_dav_has_body(r)) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "MKCOL with body is unsupported");
        return 415;
    }
    if (uri->data[uri->len - 1] != '/') {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "MKCOL can create a collection only");
        return SWS_HTTP_CONFLICT;
    }
    rc = sws_dav_map(r, &path);
    if (rc != SWS_OK) {
        return rc;
    }
    while (path.len > 1 && path.data[path.len - 1] == '/') {
        path.data[--path.len] = '\0';
    }
    rc = sws_dav_symlinks_allowed(r, path.data, path.len);
    if (rc != SWS_OK) {
        return rc;
    }
    if (mkdir((char *) path.data, sws_dav_dir_access(dlcf->access)) != 0) {
        return sws_dav_error(r, errno, SWS_HTTP_CONFLICT, "mkdir()", path.data);
    }
    loc = sws_dav_location(r);
    if (loc == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return sws_dav_respond(r, SWS_HTTP_CREATED, loc);
}


/* ---- the handler ------------------------------------------------------- */

/* The request's method as a dav_methods bit, 0 for the others. */
static sws_int_t
sws_dav_method(sws_http_request_t *r)
{
    const sws_str_t  *name;
    sws_uint_t        i;

    switch (sws_http_method(r)) {
    case SWS_HTTP_PUT:
        return SWS_DAV_PUT;
    case SWS_HTTP_DELETE:
        return SWS_DAV_DELETE;
    case SWS_HTTP_UNKNOWN:
        name = sws_http_method_name(r);
        for (i = 2; sws_dav_method_names[i].name; i++) {
            if (sws_str_eq_cstr(name, sws_dav_method_names[i].name)) {
                return sws_dav_method_names[i].bit;
            }
        }
        /* WebDAV methods nginx knows but does not implement */
        for (i = 0; sws_dav_other_methods[i]; i++) {
            if (sws_str_eq_cstr(name, sws_dav_other_methods[i])) {
                return SWS_DAV_OTHER;
            }
        }
        return 0;
    default:
        return 0;
    }
}

static sws_int_t
sws_dav_handler(sws_http_request_t *r)
{
    sws_dav_loc_conf_t  *dlcf = sws_http_loc_conf(r, &sws_module);
    sws_int_t            m = sws_dav_method(r);

    if (m == 0) {
        return SWS_DECLINED;            /* GET, HEAD ... go on to the files */
    }
    if (!(dlcf->methods & m)) {
        /* nginx knows MKCOL, COPY, MOVE, PROPFIND...: files refuse them
         * with 405 (the static module answers 501 for a method unknown) */
        return (m & (SWS_DAV_PUT | SWS_DAV_DELETE)) ? SWS_DECLINED : SWS_HTTP_NOT_ALLOWED;
    }
    if (sws_http_uri(r)->len == 0) {
        return SWS_HTTP_BAD_REQUEST;
    }
    switch (m) {
    case SWS_DAV_PUT:
        return sws_dav_put(r, dlcf);
    case SWS_DAV_DELETE:
        return sws_dav_delete(r, dlcf);
    case SWS_DAV_MKCOL:
        return sws_dav_mkcol(r, dlcf);
    case SWS_DAV_COPY:
        return sws_dav_copy_move(r, 0);
    default:
        return sws_dav_copy_move(r, 1);
    }
}

/* Only where dav_methods enables something. */
static sws_uint_t
sws_dav_active(const void *conf)
{
    const sws_dav_loc_conf_t  *dlcf = conf;

    return dlcf && dlcf->methods > 0;
}


/* ---- configuration ----------------------------------------------------- */

static char *
sws_dav_set_methods(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_dav_loc_conf_t  *dlcf = conf;
    sws_str_t           *v;
    sws_uint_t           i, k;

    (void) cmd;
    if (dlcf->methods != SWS_UNSET) {
        return "is duplicate";
    }
    dlcf->methods = 0;
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        v = sws_conf_arg(cf, i);
        if (sws_str_caseeq_cstr(v, "off")) {
            if (sws_conf_nargs(cf) != 2) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "\"off\" goes alone");
                return SWS_CONF_ERROR;
            }
            continue;
        }
        for (k = 0; sws_dav_method_names[k].name; k++) {
            if (sws_str_caseeq_cstr(v, sws_dav_method_names[k].name)) {
                break;
            }
        }
        if (sws_dav_method_names[k].name == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\"",
                               (int) v->len, v->data);
            return SWS_CONF_ERROR;
        }
        if (dlcf->methods & sws_dav_method_names[k].bit) {
            sws_conf_log_error(SWS_LOG_WARN, cf, 0, "duplicate value \"%.*s\"",
                               (int) v->len, v->data);
        }
        dlcf->methods |= sws_dav_method_names[k].bit;
    }
    return SWS_CONF_OK;
}

/* "user:rw group:r all:r": the mode of created files. */
static char *
sws_dav_set_access(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_dav_loc_conf_t  *dlcf = conf;
    sws_str_t           *v;
    sws_uint_t           i;
    sws_int_t            shift, right, user = 0600;
    const u_char        *p;
    size_t               len;

    (void) cmd;
    if (dlcf->access != SWS_UNSET) {
        return "is duplicate";
    }
    dlcf->access = 0;
    for (i = 1; i < sws_conf_nargs(cf); i++) {
        v = sws_conf_arg(cf, i);
        p = v->data;
        len = v->len;
        if (len > 5 && sws_strncasecmp(p, (u_char *) "user:", 5) == 0) {
            shift = 6;
            p += 5;
            len -= 5;
            user = 0;
        } else if (len > 6 && sws_strncasecmp(p, (u_char *) "group:", 6) == 0) {
            shift = 3;
            p += 6;
            len -= 6;
        } else if (len > 4 && sws_strncasecmp(p, (u_char *) "all:", 4) == 0) {
            shift = 0;
            p += 4;
            len -= 4;
        } else {
            goto invalid;
        }
        if (len == 2 && p[0] == 'r' && p[1] == 'w') {
            right = 6;
        } else if (len == 1 && p[0] == 'r') {
            right = 4;
        } else {
            goto invalid;
        }
        dlcf->access |= right << shift;
    }
    /* the owner has rw unless "user:" says otherwise */
    dlcf->access |= user;
    return SWS_CONF_OK;

invalid:
    sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\"", (int) v->len, v->data);
    return SWS_CONF_ERROR;
}

static void *
sws_dav_create_loc_conf(sws_conf_t *cf)
{
    sws_dav_loc_conf_t  *dlcf;

    dlcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_dav_loc_conf_t));
    if (dlcf == NULL) {
        return NULL;
    }
    dlcf->methods = SWS_UNSET;
    dlcf->access = SWS_UNSET;
    dlcf->create_full_put_path = SWS_UNSET;
    dlcf->min_delete_depth = SWS_UNSET;
    return dlcf;
}

static char *
sws_dav_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_dav_loc_conf_t  *prev = parent;
    sws_dav_loc_conf_t  *conf = child;

    (void) cf;
    sws_conf_merge_value(conf->methods, prev->methods, 0);
    sws_conf_merge_value(conf->access, prev->access, 0600);
    sws_conf_merge_value(conf->create_full_put_path, prev->create_full_put_path, 0);
    sws_conf_merge_value(conf->min_delete_depth, prev->min_delete_depth, 0);
    return SWS_CONF_OK;
}

static sws_int_t
sws_dav_postconfiguration(sws_conf_t *cf)
{
    /* ahead of the index and static handlers, which answer 405 for what
     * is not GET, HEAD or POST */
    static const sws_http_phase_handler_t  handler = {
        .phase = SWS_HTTP_CONTENT_PHASE, .order = SWS_HTTP_ORDER_INDEX - 50,
        .handler = sws_dav_handler, .module = &sws_module, .active = sws_dav_active
    };

    return sws_http_register_phase_handler(cf, &handler);
}
