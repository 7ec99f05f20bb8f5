/*
 * The static module: files under the location's root or alias.
 *
 *   index FILE...;                 directory index (default index.html)
 *   try_files FILE... URI|=CODE|@NAME;   the first file that exists, or a fallback
 *   etag on|off;                   strong ETag "mtime-size" (default on)
 *   log_not_found on|off;          a missing file in the error log (default on)
 *
 * Content phase: the index handler takes URIs ending in '/', the static
 * handler the others. Pre-content phase: try_files. The core runs content
 * handlers of the phase only in locations without their own content handler.
 *
 * Files are opened with sws_http_open_file: one open() and one fstat() per
 * request, or none with open_file_cache (small files then come from memory).
 * try_files and index look with sws_http_file_info, through the same cache:
 * what they find is what the handler will open.
 * The file goes out as one file buffer (or memory buffer), never copied.
 */
#include <fcntl.h>
#include <unistd.h>
#include <scalws/scalws.h>


/* A try_files argument compiled into parts: literal text and variables. */
enum {
    SWS_STATIC_LIT = 0,
    SWS_STATIC_URI,         /* $uri */
    SWS_STATIC_ARGS,        /* $args, $query_string */
    SWS_STATIC_IS_ARGS      /* $is_args: "?" when there are args */
};

typedef struct {
    sws_uint_t          type;
    sws_str_t           text;       /* SWS_STATIC_LIT */
} sws_static_part_t;

typedef struct {
    sws_static_part_t  *parts;
    sws_uint_t          nparts;
    size_t              lit_len;    /* sum of the literal parts */
    sws_uint_t          nuri;
    sws_uint_t          nargs;
    sws_uint_t          nis_args;
    sws_int_t           code;       /* "=CODE" (last argument), else 0 */
    sws_str_t           named;      /* "@name" (last argument), else empty */
    sws_http_format_t  *fmt;        /* other variables: the whole argument */
    unsigned            test_dir:1; /* written with a trailing '/' */
    unsigned            uri_first:1;/* starts with $uri */
    unsigned            just_uri:1; /* exactly $uri (after dropping the '/') */
} sws_static_try_t;

typedef struct {
    sws_array_t        *index;      /* sws_str_t, NUL-terminated; NULL: unset */
    size_t              index_max;  /* longest relative index name */
    sws_array_t        *try_files;  /* sws_static_try_t; NULL: unset */
    sws_int_t           etag;
    sws_int_t           log_not_found;
} sws_static_loc_conf_t;


static char *sws_static_set_index(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static char *sws_static_set_try_files(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_static_create_loc_conf(sws_conf_t *cf);
static char *sws_static_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_static_postconfiguration(sws_conf_t *cf);

#define SWS_STATIC_CTX  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_static_commands[] = {
    { "index", SWS_STATIC_CTX | SWS_CONF_1MORE, sws_static_set_index,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "try_files", SWS_STATIC_CTX | SWS_CONF_2MORE, sws_static_set_try_files,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "etag", SWS_STATIC_CTX | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_static_loc_conf_t, etag), NULL },
    { "log_not_found", SWS_STATIC_CTX | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_static_loc_conf_t, log_not_found), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "static",
    .commands = sws_static_commands,
    .create_loc_conf = sws_static_create_loc_conf,
    .merge_loc_conf = sws_static_merge_loc_conf,
    .postconfiguration = sws_static_postconfiguration,
};

static sws_str_t  sws_static_default_index_name[] = { sws_string("index.html") };
static sws_array_t  sws_static_default_index = {
    sws_static_default_index_name, 1, sizeof(sws_str_t), 1, NULL
};

static const sws_str_t  sws_static_allow_name = sws_string("Allow");
static const sws_str_t  sws_static_allow_value = sws_string("GET, HEAD");
static u_char           sws_static_empty[] = "";


/* ---- helpers ---------------------------------------------------------- */

static int
sws_static_not_found_errno(int err)
{
    return err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG;
}


static sws_int_t
sws_static_not_allowed(sws_http_request_t *r)
{
    /* RFC 9110 9.1: a method the server does not know at all is 501; a
     * known one that files do not support is 405. */
    if (sws_http_method(r) == SWS_HTTP_UNKNOWN) {
        return SWS_HTTP_NOT_IMPLEMENTED;
    }
    /* The core keeps Allow on the generated 405 page. */
    if (sws_http_header_out_add(r, &sws_static_allow_name, &sws_static_allow_value) == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_HTTP_NOT_ALLOWED;
}


/*
 * An encoded slash ("%2F") in the client's path: decoded, it would name a
 * file in another directory than the segment the client wrote, so files
 * refuse it with 400 (proxied locations still pass it on as it came).
 * Internal redirects (index, try_files, error_page) chose their own URI.
 */
static int
sws_static_encoded_slash(sws_http_request_t *r)
{
    /* (the parser noted it: no scan of the target here) */
    return sws_http_encoded_slash(r) && !sws_http_is_internal(r);
}


/* Drop a request body (GET/HEAD rarely have one) so keep-alive goes on. */
static sws_int_t
sws_static_discard_body(sws_http_request_t *r)
{
    sws_int_t  rc;

    if (!sws_http_has_body(r)) {
        return SWS_OK;
    }
    rc = sws_http_discard_body(r);
    return (rc == SWS_OK || rc == SWS_AGAIN) ? SWS_OK : rc;
}


/* 301 to uri + "/" (+ "?args"): the directory without its slash, with the
 * core's small page for 301. */
static sws_int_t
sws_static_redirect_dir(sws_http_request_t *r, const sws_str_t *uri)
{
    size_t               len;
    u_char              *p;
    sws_str_t           *loc;
    const sws_str_t     *args = sws_http_args(r);

    len = sws_escape_uri_len(uri->data, uri->len, SWS_ESCAPE_URI_PATH) + 1
          + (args->len ? 1 + args->len : 0);

    loc = sws_palloc(sws_http_pool(r), sizeof(sws_str_t) + len);
    if (loc == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }

    loc->data = (u_char *) (loc + 1);
    /* the decoded path escaped again, as a Location must be */
    p = sws_escape_uri(loc->data, uri->data, uri->len, SWS_ESCAPE_URI_PATH);
    *p++ = '/';
    if (args->len) {
        *p++ = '?';
        p = sws_cpymem(p, args->data, args->len);
    }
    loc->len = (size_t) (p - loc->data);

    /* the core's page for 301 keeps the Location, as nginx sends it */
    sws_http_set_location(r, loc);
    return SWS_HTTP_MOVED_PERMANENTLY;
}


/* ---- the static handler --------------------------------------------- */

static sws_int_t
sws_static_open_error(sws_http_request_t *r, int err, const sws_str_t *path)
{
    sws_static_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);

    if (sws_static_not_found_errno(err)) {
        if (lcf->log_not_found) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), err, "open() \"%s\" failed",
                          path->data);
        }
        return SWS_HTTP_NOT_FOUND;
    }
    if (err == EACCES || err == ELOOP) {      /* ELOOP: disable_symlinks */
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), err, "open() \"%s\" failed", path->data);
        return SWS_HTTP_FORBIDDEN;
    }
    sws_log_error(SWS_LOG_CRIT, sws_http_log(r), err, "open() \"%s\" failed", path->data);
    return SWS_HTTP_INTERNAL_SERVER_ERROR;
}


/* Last-Modified, ETag, type and ranges of a 200 for the file f. */
static sws_int_t
sws_static_set_headers(sws_http_request_t *r, const sws_http_file_t *f)
{
    time_t                  now;
    sws_str_t              *etag;
    sws_static_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);

    sws_http_set_status(r, SWS_HTTP_OK);
    sws_http_set_content_length(r, f->size);
    /* RFC 9110 8.8.2: never later than the response's Date (a file dated
     * in the future); the ETag keeps the real mtime */
    now = sws_time_sec();
    sws_http_set_last_modified(r, f->mtime > now ? now : f->mtime);
    sws_http_set_content_type(r, sws_http_mime_type(r, sws_http_exten(r)));
    sws_http_allow_ranges(r, 1);

    if (!lcf->etag) {
        return SWS_OK;
    }
    if (f->etag) {
        sws_http_set_etag(r, f->etag);      /* made once by the file cache */
        return SWS_OK;
    }
    etag = sws_palloc(sws_http_pool(r), sizeof(sws_str_t) + SWS_HTTP_ETAG_LEN);
    if (etag == NULL) {
        return SWS_ERROR;
    }
    etag->data = (u_char *) (etag + 1);
    etag->len = (size_t) (sws_http_etag_make(etag->data, f->mtime, f->size) - etag->data);
    sws_http_set_etag(r, etag);
    return SWS_OK;
}


static sws_int_t
sws_static_handler(sws_http_request_t *r)
{
    size_t            root_len;
    sws_int_t         rc;
    sws_buf_t        *b;
    sws_str_t         path;
    sws_pool_t       *pool;
    sws_chain_t      *out;
    sws_http_file_t   f;
    const sws_str_t  *uri;

    /* POST is looked up like GET, as nginx: a missing file is 404 and a
     * directory is redirected; only a file found refuses it. */
    if (!(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD | SWS_HTTP_POST))) {
        return sws_static_not_allowed(r);
    }
    if (sws_static_encoded_slash(r)) {
        return SWS_HTTP_BAD_REQUEST;
    }

    uri = sws_http_uri(r);
    if (uri->len == 0 || uri->data[uri->len - 1] == '/') {
        return SWS_DECLINED;        /* the index handler's */
    }

    /* The body is dropped only once a file answers: until then an error
     * (404, 403) may go to an error_page that takes it (a proxy). */
    if (sws_http_map_uri_to_path(r, &path, &root_len, 0) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }

    if (sws_http_open_file(r, &path, &f) != SWS_OK) {
        return sws_static_open_error(r, f.err, &path);
    }

    if (!f.is_file) {
        if (f.is_dir) {
            return sws_static_redirect_dir(r, uri);
        }
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "\"%s\" is not a regular file",
                      path.data);
        return SWS_HTTP_NOT_FOUND;
    }
    if (sws_http_method(r) == SWS_HTTP_POST) {
        return sws_static_not_allowed(r);
    }
    rc = sws_static_discard_body(r);
    if (rc != SWS_OK) {
        return rc;
    }

    if (sws_static_set_headers(r, &f) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }

    rc = sws_http_send_header(r);
    if (rc != SWS_OK || sws_http_header_only(r)) {
        return rc;
    }

    if (f.size == 0) {
        return sws_http_send_special(r, 1);
    }

    pool = sws_http_pool(r);
    b = sws_calloc_buf(pool);
    out = sws_alloc_chain_link(pool);
    if (b == NULL || out == NULL) {
        return SWS_ERROR;
    }

    if (f.data) {
        /* A small cached file: its bytes go out with the head, one write. */
        b->pos = b->start = (u_char *) f.data;
        b->last = b->end = (u_char *) f.data + f.size;
        b->memory = 1;
    } else {
        b->in_file = 1;
        b->fd = f.fd;
        b->file_pos = 0;
        b->file_last = f.size;
    }
    b->last_buf = 1;
    b->last_in_chain = 1;

    out->buf = b;
    out->next = NULL;

    return sws_http_output(r, out);
}


/* ---- the index handler ---------------------------------------------- */

static sws_int_t
sws_static_index_handler(sws_http_request_t *r)
{
    int                     err;
    u_char                 *file, *p;
    size_t                  root_len, base;
    sws_str_t               path, new_uri, fpath;
    sws_uint_t              i, n;
    sws_http_file_t         f;
    const sws_str_t        *uri, *name;
    sws_static_loc_conf_t  *lcf;

    uri = sws_http_uri(r);
    if (uri->len == 0 || uri->data[uri->len - 1] != '/') {
        return SWS_DECLINED;
    }
    if (!(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD | SWS_HTTP_POST))) {
        return SWS_DECLINED;        /* the static handler answers 405 */
    }
    if (sws_static_encoded_slash(r)) {
        return SWS_HTTP_BAD_REQUEST;
    }

    lcf = sws_http_loc_conf(r, &sws_module);
    name = lcf->index->elts;
    n = lcf->index->nelts;

    if (sws_http_map_uri_to_path(r, &path, &root_len, lcf->index_max) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    base = path.len;                /* "/root/dir/" */

    for (i = 0; i < n; i++, name++) {

        if (name->data[0] == '/') {
            if (i == n - 1) {
                return sws_http_internal_redirect(r, name, sws_http_args(r));
            }
            /* checked under the document root (exact with root, not alias) */
            file = sws_pnalloc(sws_http_pool(r), root_len + name->len + 1);
            if (file == NULL) {
                return SWS_HTTP_INTERNAL_SERVER_ERROR;
            }
            p = sws_cpymem(file, path.data, root_len);
            sws_memcpy(p, name->data, name->len + 1);
            fpath.len = root_len + name->len;

        } else {
            sws_memcpy(path.data + base, name->data, name->len + 1);
            file = path.data;
            fpath.len = base + name->len;
        }
        fpath.data = file;

        /* through the open file cache, as the static handler will look */
        if (sws_http_file_info(r, &fpath, &f) != SWS_OK) {
            err = f.err;
            if (sws_static_not_found_errno(err)) {
                continue;
            }
            if (err == EACCES || err == ELOOP) {
                sws_log_error(SWS_LOG_ERR, sws_http_log(r), err, "stat() \"%s\" failed", file);
                return SWS_HTTP_FORBIDDEN;
            }
            sws_log_error(SWS_LOG_CRIT, sws_http_log(r), err, "stat() \"%s\" failed", file);
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }

        if (!f.is_file) {
            continue;
        }

        if (name->data[0] == '/') {
            return sws_http_internal_redirect(r, name, sws_http_args(r));
        }

        new_uri.len = uri->len + name->len;
        new_uri.data = sws_pnalloc(sws_http_pool(r), new_uri.len);
        if (new_uri.data == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        p = sws_cpymem(new_uri.data, uri->data, uri->len);
        sws_memcpy(p, name->data, name->len);

        return sws_http_internal_redirect(r, &new_uri, sws_http_args(r));
    }

    /* No index file. A directory: the next content handler's (autoindex),
     * else the core's 403, as nginx. Not a directory: not found. */
    path.data[base] = '\0';
    path.len = base;

    if (sws_http_file_info(r, &path, &f) == SWS_OK && f.is_dir) {
        return SWS_DECLINED;
    }

    sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "directory \"%s\" is not found", path.data);
    return SWS_HTTP_NOT_FOUND;
}


/* ---- try_files ------------------------------------------------------ */

/* A "/.." segment: a variable's value (a header) must not climb out of
 * the root, as $uri (normalised) cannot. */
static int
sws_static_climbs(const u_char *p, size_t len)
{
    size_t  i;

    for (i = 0; i + 2 <= len; i++) {
        if (p[i] == '.' && p[i + 1] == '.' && (i == 0 || p[i - 1] == '/')
            && (i + 2 == len || p[i + 2] == '/'))
        {
            return 1;
        }
    }
    return 0;
}


static size_t
sws_static_try_len(const sws_static_try_t *t, const sws_str_t *uri, const sws_str_t *args)
{
    return t->lit_len + t->nuri * uri->len + t->nargs * args->len
           + (args->len ? t->nis_args : 0);
}


static u_char *
sws_static_try_expand(const sws_static_try_t *t, u_char *p, const sws_str_t *uri,
    const sws_str_t *args)
{
    sws_uint_t  i;

    for (i = 0; i < t->nparts; i++) {
        switch (t->parts[i].type) {
        case SWS_STATIC_LIT:
            p = sws_cpymem(p, t->parts[i].text.data, t->parts[i].text.len);
            break;
        case SWS_STATIC_URI:
            p = sws_cpymem(p, uri->data, uri->len);
            break;
        case SWS_STATIC_ARGS:
            p = sws_cpymem(p, args->data, args->len);
            break;
        default:                    /* SWS_STATIC_IS_ARGS */
            if (args->len) {
                *p++ = '?';
            }
            break;
        }
    }
    return p;
}


/* The fallback: "=CODE" or a URI (with "?args" of its own, else none). */
static sws_int_t
sws_static_try_fallback(sws_http_request_t *r, const sws_static_try_t *t,
    const sws_str_t *uri, const sws_str_t *args)
{
    u_char     *p, *q, *end;
    sws_str_t   new_uri, new_args, text;

    if (t->code) {
        return t->code;
    }
    if (t->named.len) {
        return sws_http_named_location(r, &t->named);
    }

    if (t->fmt) {
        if (sws_http_format_string(t->fmt, r, sws_http_pool(r), 1, NULL, 0, &text) != SWS_OK) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        p = text.data;
        end = p + text.len;
    } else {
        p = sws_pnalloc(sws_http_pool(r), sws_static_try_len(t, uri, args) + 1);
        if (p == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        end = sws_static_try_expand(t, p, uri, args);
    }

    new_uri.data = p;
    new_args.data = sws_static_empty;
    new_args.len = 0;

    for (q = p; q < end && *q != '?'; q++) { /* void */ }

    new_uri.len = (size_t) (q - p);
    if (q < end) {
        new_args.data = q + 1;
        new_args.len = (size_t) (end - q - 1);
    }

    return sws_http_internal_redirect(r, &new_uri, &new_args);
}


static sws_int_t
sws_static_try_files_handler(sws_http_request_t *r)
{
    u_char                 *ubuf, *fbuf, *vbuf, *p, *u;
    size_t                  root_len, ulen, flen, umax, fmax;
    sws_str_t               path, new_uri, file, value;
    sws_uint_t              i, j, n;
    sws_http_file_t         f;
    const sws_str_t        *uri, *args;
    sws_static_try_t       *t;
    sws_static_loc_conf_t  *lcf;

    lcf = sws_http_loc_conf(r, &sws_module);
    if (lcf->try_files == NULL) {
        return SWS_DECLINED;
    }

    t = lcf->try_files->elts;
    n = lcf->try_files->nelts;
    uri = sws_http_uri(r);
    args = sws_http_args(r);
    ubuf = NULL;
    fbuf = NULL;
    vbuf = NULL;

    /* The request URI's own path: "$uri..." arguments extend it (right with
     * root and alias); other arguments are taken under the root part. */
    if (sws_http_map_uri_to_path(r, &path, &root_len, 0) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }

    for (i = 0; i < n - 1; i++, t++) {

        if (t->just_uri) {
            file = path;
            ulen = uri->len;

        } else if (t->fmt) {
            /* any other variable: the value under the root, as nginx */
            if (sws_http_format_string(t->fmt, r, sws_http_pool(r), 0, NULL, 0, &value)
                != SWS_OK)
            {
                return SWS_HTTP_INTERNAL_SERVER_ERROR;
            }
            vbuf = value.data;
            ulen = value.len;
            if (sws_static_climbs(vbuf, ulen)) {
                continue;           /* a value never leads out of the root */
            }
            file.data = sws_pnalloc(sws_http_pool(r), root_len + ulen + 1);
            if (file.data == NULL) {
                return SWS_HTTP_INTERNAL_SERVER_ERROR;
            }
            p = sws_cpymem(file.data, path.data, root_len);
            p = sws_cpymem(p, vbuf, ulen);
            *p = '\0';
            file.len = (size_t) (p - file.data);

        } else {
            if (ubuf == NULL) {
                /* scratch for the longest expansion, on first need */
                umax = 0;
                fmax = 0;
                for (j = i; j < n - 1; j++) {
                    ulen = sws_static_try_len(&t[j - i], uri, args);
                    flen = t[j - i].uri_first ? path.len + ulen - uri->len : root_len + ulen;
                    umax = sws_max(umax, ulen);
                    fmax = sws_max(fmax, flen);
                }
                ubuf = sws_pnalloc(sws_http_pool(r), umax + fmax + 1);
                if (ubuf == NULL) {
                    return SWS_HTTP_INTERNAL_SERVER_ERROR;
                }
                fbuf = ubuf + umax;
            }

            ulen = (size_t) (sws_static_try_expand(t, ubuf, uri, args) - ubuf);

            if (t->uri_first) {
                p = sws_cpymem(fbuf, path.data, path.len);
                p = sws_cpymem(p, ubuf + uri->len, ulen - uri->len);
            } else {
                p = sws_cpymem(fbuf, path.data, root_len);
                p = sws_cpymem(p, ubuf, ulen);
            }
            *p = '\0';
            file.data = fbuf;
            file.len = (size_t) (p - fbuf);
        }

        /* through the open file cache, as the static handler will look */
        if (sws_http_file_info(r, &file, &f) != SWS_OK) {
            if (!sws_static_not_found_errno(f.err)) {
                /* a link that disable_symlinks refuses: the next one, as nginx */
                sws_log_error(f.err == ELOOP ? SWS_LOG_ERR : SWS_LOG_CRIT, sws_http_log(r),
                              f.err, "stat() \"%s\" failed", file.data);
            }
            continue;
        }

        if (t->test_dir ? !f.is_dir : !f.is_file) {
            continue;
        }

        u = t->fmt ? vbuf : ubuf;
        if (t->just_uri || (ulen == uri->len && memcmp(u, uri->data, ulen) == 0)) {
            return SWS_DECLINED;    /* the request's own file: go on */
        }

        new_uri.data = u;
        new_uri.len = ulen;

        return sws_http_internal_redirect(r, &new_uri, args);
    }

    return sws_static_try_fallback(r, t, uri, args);
}


/* ---- configuration ------------------------------------------------- */

static void *
sws_static_create_loc_conf(sws_conf_t *cf)
{
    sws_static_loc_conf_t  *lcf;

    lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_static_loc_conf_t));
    if (lcf == NULL) {
        return NULL;
    }

    /* index, try_files: NULL; index_max: 0 */
    lcf->etag = SWS_UNSET;
    lcf->log_not_found = SWS_UNSET;

    return lcf;
}


static char *
sws_static_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_static_loc_conf_t  *prev = parent;
    sws_static_loc_conf_t  *conf = child;

    (void) cf;

    if (conf->index == NULL) {
        if (prev->index != NULL) {
            conf->index = prev->index;
            conf->index_max = prev->index_max;
        } else {
            conf->index = &sws_static_default_index;
            conf->index_max = sizeof("index.html") - 1;
        }
    }

    sws_conf_merge_ptr_value(conf->try_files, prev->try_files, NULL);
    sws_conf_merge_value(conf->etag, prev->etag, 1);
    sws_conf_merge_value(conf->log_not_found, prev->log_not_found, 1);

    return SWS_CONF_OK;
}


/* index FILE...; repeated directives append, like nginx. */
static char *
sws_static_set_index(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_str_t              *v, *name;
    sws_uint_t              i;
    sws_static_loc_conf_t  *lcf = conf;

    (void) cmd;

    if (lcf->index == NULL) {
        lcf->index = sws_array_create(sws_conf_pool(cf), 4, sizeof(sws_str_t));
        if (lcf->index == NULL) {
            return SWS_CONF_ERROR;
        }
    }

    for (i = 1; i < sws_conf_nargs(cf); i++) {
        v = sws_conf_arg(cf, i);

        if (v->len == 0) {
            return "has an empty file name";
        }
        if (memchr(v->data, '$', v->len) != NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                               "variables are not supported in \"index\": \"%.*s\"",
                               (int) v->len, v->data);
            return SWS_CONF_ERROR;
        }

        name = sws_array_push(lcf->index);
        if (name == NULL) {
            return SWS_CONF_ERROR;
        }
        name->len = v->len;
        name->data = sws_pstrdup(sws_conf_pool(cf), v);
        if (name->data == NULL) {
            return SWS_CONF_ERROR;
        }

        if (v->data[0] != '/') {
            lcf->index_max = sws_max(lcf->index_max, v->len);
        }
    }

    return SWS_CONF_OK;
}


static sws_int_t
sws_static_var_type(const u_char *name, size_t len)
{
    sws_str_t  s = { len, (u_char *) name };

    if (sws_str_eq_cstr(&s, "uri")) {
        return SWS_STATIC_URI;
    }
    if (sws_str_eq_cstr(&s, "args") || sws_str_eq_cstr(&s, "query_string")) {
        return SWS_STATIC_ARGS;
    }
    if (sws_str_eq_cstr(&s, "is_args")) {
        return SWS_STATIC_IS_ARGS;
    }
    return SWS_ERROR;
}


static int
sws_static_var_char(u_char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || c == '_';
}


/* Compile v (the argument's text, a pool copy) into t's parts. */
static char *
sws_static_parse_try(sws_conf_t *cf, sws_str_t *v, sws_static_try_t *t)
{
    u_char             *p, *end, *start;
    size_t              n;
    sws_int_t           type;
    sws_static_part_t  *part;

    n = 1;
    for (p = v->data, end = p + v->len; p < end; p++) {
        n += (*p == '$') ? 2 : 0;
    }

    t->parts = sws_palloc(sws_conf_pool(cf), n * sizeof(sws_static_part_t));
    if (t->parts == NULL) {
        return SWS_CONF_ERROR;
    }

    p = v->data;

    while (p < end) {
        part = &t->parts[t->nparts++];

        if (*p != '$') {
            start = p;
            while (p < end && *p != '$') {
                p++;
            }
            part->type = SWS_STATIC_LIT;
            part->text.data = start;
            part->text.len = (size_t) (p - start);
            t->lit_len += part->text.len;
            continue;
        }

        p++;
        if (p < end && *p == '{') {
            start = ++p;
            while (p < end && *p != '}') {
                p++;
            }
            if (p == end) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                                   "missing \"}\" in try_files argument \"%.*s\"",
                                   (int) v->len, v->data);
                return SWS_CONF_ERROR;
            }
            n = (size_t) (p++ - start);

        } else {
            start = p;
            while (p < end && sws_static_var_char(*p)) {
                p++;
            }
            n = (size_t) (p - start);
        }

        type = sws_static_var_type(start, n);
        if (type == SWS_ERROR) {
            /* another variable ($fastcgi_script_name, one of set or map):
             * the whole argument is a format, evaluated per request */
            const char  *err;

            t->nparts = 0;
            t->lit_len = 0;
            t->nuri = t->nargs = t->nis_args = 0;
            t->fmt = sws_http_format_compile(sws_conf_pool(cf), v, SWS_HTTP_ESCAPE_NONE,
                                             &err);
            if (t->fmt == NULL) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "try_files argument \"%.*s\": %s",
                                   (int) v->len, v->data, err);
                return SWS_CONF_ERROR;
            }
            return SWS_CONF_OK;
        }

        part->type = (sws_uint_t) type;
        t->nuri += (type == SWS_STATIC_URI);
        t->nargs += (type == SWS_STATIC_ARGS);
        t->nis_args += (type == SWS_STATIC_IS_ARGS);
    }

    t->uri_first = t->nparts > 0 && t->parts[0].type == SWS_STATIC_URI;
    t->just_uri = t->nparts == 1 && t->uri_first;

    if (v->data[0] != '/' && !t->uri_first) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "try_files argument \"%.*s\" must start with \"/\" or \"$uri\"",
                           (int) v->len, v->data);
        return SWS_CONF_ERROR;
    }

    return SWS_CONF_OK;
}


static char *
sws_static_set_try_files(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    char                   *rv;
    sws_int_t               code;
    sws_str_t              *arg, v;
    sws_uint_t              i, nargs;
    sws_static_try_t       *t;
    sws_static_loc_conf_t  *lcf = conf;

    (void) cmd;

    if (lcf->try_files != NULL) {
        return "is duplicate";
    }

    nargs = sws_conf_nargs(cf) - 1;

    lcf->try_files = sws_array_create(sws_conf_pool(cf), nargs, sizeof(sws_static_try_t));
    if (lcf->try_files == NULL) {
        return SWS_CONF_ERROR;
    }

    for (i = 1; i <= nargs; i++) {
        arg = sws_conf_arg(cf, i);

        t = sws_array_push(lcf->try_files);
        if (t == NULL) {
            return SWS_CONF_ERROR;
        }
        sws_memzero(t, sizeof(sws_static_try_t));

        if (arg->len == 0) {
            return "has an empty argument";
        }

        if (arg->data[0] == '=') {
            if (i != nargs) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                                   "\"%.*s\" must be the last try_files argument",
                                   (int) arg->len, arg->data);
                return SWS_CONF_ERROR;
            }
            code = sws_atoi(arg->data + 1, arg->len - 1);
            if (code < 400 || code > 599) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                                   "invalid try_files code \"%.*s\": "
                                   "it must be \"=\" and a status from 400 to 599",
                                   (int) arg->len, arg->data);
                return SWS_CONF_ERROR;
            }
            t->code = code;
            continue;
        }

        if (arg->data[0] == '@') {
            if (i != nargs) {
                sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                                   "named location \"%.*s\" must be the last try_files "
                                   "argument", (int) arg->len, arg->data);
                return SWS_CONF_ERROR;
            }
            t->named.len = arg->len;
            t->named.data = (u_char *) sws_pstrdup(sws_conf_pool(cf), arg);
            if (t->named.data == NULL) {
                return SWS_CONF_ERROR;
            }
            continue;
        }

        v.len = arg->len;
        v.data = sws_pstrdup(sws_conf_pool(cf), arg);
        if (v.data == NULL) {
            return SWS_CONF_ERROR;
        }

        /* "$uri/": a directory; tested (and redirected to) without the '/' */
        if (i != nargs && v.len > 1 && v.data[v.len - 1] == '/') {
            t->test_dir = 1;
            v.len--;
        } else if (i != nargs && v.len == 1) {
            t->test_dir = 1;        /* "/" */
        }

        rv = sws_static_parse_try(cf, &v, t);
        if (rv != SWS_CONF_OK) {
            return rv;
        }
    }


    return SWS_CONF_OK;
}


/* try_files only where it is written. */
static sws_uint_t
sws_static_try_files_active(const void *conf)
{
    const sws_static_loc_conf_t *lcf = conf;

    return lcf->try_files != NULL;
}

static sws_int_t
sws_static_postconfiguration(sws_conf_t *cf)
{
    static const sws_http_phase_handler_t handlers[] = {
        { .phase = SWS_HTTP_CONTENT_PHASE, .order = SWS_HTTP_ORDER_INDEX,
          .handler = sws_static_index_handler, .module = &sws_module },
        { .phase = SWS_HTTP_CONTENT_PHASE, .order = SWS_HTTP_ORDER_STATIC,
          .handler = sws_static_handler, .module = &sws_module },
        { .phase = SWS_HTTP_PRE_CONTENT_PHASE, .order = SWS_HTTP_ORDER_DEFAULT,
          .handler = sws_static_try_files_handler, .module = &sws_module,
          .active = sws_static_try_files_active },
    };
    sws_uint_t i;

    for (i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
        if (sws_http_register_phase_handler(cf, &handlers[i]) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}
