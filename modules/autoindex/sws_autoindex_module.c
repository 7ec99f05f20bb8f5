/*
 * The autoindex module: a listing for a directory that has no index file.
 *
 *   autoindex on|off;                 (off)
 *   autoindex_format html|json|xml;   (html)
 *   autoindex_exact_size on|off;      (on)   HTML: bytes, or K/M/G rounded
 *   autoindex_localtime on|off;       (off)  HTML: local time, else GMT
 *
 * The core's directory handler (sws_http_set_directory_handler): it runs
 * after every content phase handler, so after static's index handler has
 * declined a directory without an index file; with autoindex off it
 * declines too and the core answers 403. A directory asked for
 * without its trailing slash gets static's 301 first. Directories first,
 * then files, each by name in byte order; names starting with '.' are not
 * listed, as nginx.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include "sws_autoindex.h"

static void *sws_autoindex_create_loc_conf(sws_conf_t *cf);
static char *sws_autoindex_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_autoindex_init(sws_conf_t *cf);

static const sws_conf_enum_t sws_autoindex_formats[] = {
    { sws_string("html"), SWS_AUTOINDEX_HTML },
    { sws_string("json"), SWS_AUTOINDEX_JSON },
    { sws_string("xml"), SWS_AUTOINDEX_XML },
    { sws_string("jsonp"), SWS_AUTOINDEX_JSONP },
    { sws_null_string, 0 }
};

#define ALL  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_autoindex_commands[] = {
    { "autoindex", ALL | SWS_CONF_FLAG, sws_conf_set_flag_slot, SWS_HTTP_LOC_CONF_OFFSET,
      offsetof(sws_autoindex_loc_conf_t, enable), NULL },
    { "autoindex_format", ALL | SWS_CONF_TAKE1, sws_conf_set_enum_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_autoindex_loc_conf_t, format),
      sws_autoindex_formats },
    { "autoindex_exact_size", ALL | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_autoindex_loc_conf_t, exact_size), NULL },
    { "autoindex_localtime", ALL | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_autoindex_loc_conf_t, localtime), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "autoindex",
    .commands = sws_autoindex_commands,
    .create_loc_conf = sws_autoindex_create_loc_conf,
    .merge_loc_conf = sws_autoindex_merge_loc_conf,
    .postconfiguration = sws_autoindex_init,
};

static int
sws_autoindex_cmp(const void *a, const void *b)
{
    const sws_autoindex_entry_t *x = a, *y = b;

    if (x->dir != y->dir) {
        return x->dir ? -1 : 1;
    }
    return strcmp((const char *) x->name.data, (const char *) y->name.data);
}

/* The entries of the open directory d, sorted. */
static sws_int_t
sws_autoindex_read(sws_http_request_t *r, DIR *d, const char *path, sws_array_t *entries)
{
    sws_autoindex_entry_t *e;
    struct dirent         *de;
    struct stat            st;
    size_t                 len;

    for ( ;; ) {
        errno = 0;
        de = readdir(d);
        if (de == NULL) {
            if (errno) {
                sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "readdir() \"%s\" failed",
                              path);
                return SWS_ERROR;
            }
            break;
        }
        if (de->d_name[0] == '.') {
            continue;                         /* ".", "..", hidden files */
        }
        if (fstatat(dirfd(d), de->d_name, &st, 0) == -1) {
            if (errno == ENOENT || errno == ELOOP) {
                continue;                     /* gone, or a dangling link */
            }
            sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "stat() \"%s/%s\" failed",
                          path, de->d_name);
            return SWS_ERROR;
        }
        e = sws_array_push(entries);
        len = strlen(de->d_name);
        if (e == NULL || (e->name.data = sws_pnalloc(sws_http_pool(r), len + 1)) == NULL) {
            return SWS_ERROR;
        }
        memcpy(e->name.data, de->d_name, len + 1);
        e->name.len = len;
        e->dir = S_ISDIR(st.st_mode) ? 1 : 0;
        e->file = S_ISREG(st.st_mode) ? 1 : 0;
        e->size = st.st_size;
        e->mtime = st.st_mtime;
    }
    if (entries->nelts > 1) {
        qsort(entries->elts, entries->nelts, sizeof(sws_autoindex_entry_t), sws_autoindex_cmp);
    }
    return SWS_OK;
}

static const sws_str_t sws_autoindex_types[] = {
    sws_string("text/html"), sws_string("application/json"), sws_string("text/xml"),
    sws_string("application/javascript")
};

/* jsonp's ?callback=NAME: *cb empty if none; SWS_ERROR if NAME is not made
 * of letters, digits, '_' and '.' (as nginx, a 400: it is put in a script). */
static sws_int_t
sws_autoindex_callback(sws_http_request_t *r, sws_str_t *cb)
{
    const sws_str_t  *args = sws_http_args(r);
    u_char           *p = args->data, *end = args->data + args->len, *amp;
    size_t            i;

    cb->len = 0;
    cb->data = NULL;
    while (p < end) {
        amp = memchr(p, '&', (size_t) (end - p));
        if (amp == NULL) {
            amp = end;
        }
        if (amp - p >= 9 && memcmp(p, "callback=", 9) == 0) {
            cb->data = p + 9;
            cb->len = (size_t) (amp - p - 9);
        }
        p = amp + 1;
    }
    for (i = 0; i < cb->len; i++) {
        u_char c = cb->data[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
              || c == '_' || c == '.'))
        {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

static sws_int_t
sws_autoindex_handler(sws_http_request_t *r)
{
    sws_autoindex_loc_conf_t *alcf = sws_http_loc_conf(r, &sws_module);
    const sws_str_t          *uri = sws_http_uri(r);
    sws_autoindex_out_t       out;
    sws_http_file_t           f;
    sws_array_t              *entries;
    sws_str_t                 path, body, callback = sws_null_string;
    sws_uint_t                format;
    size_t                    root_len;
    sws_int_t                 rc;
    DIR                      *d;
    int                       fd;

    if (!alcf->enable || uri->len == 0 || uri->data[uri->len - 1] != '/') {
        return SWS_DECLINED;
    }
    if (!(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD))) {
        return SWS_DECLINED;
    }
    rc = sws_http_discard_body(r);
    if (rc != SWS_OK && rc != SWS_AGAIN) {
        return rc;
    }
    if (sws_http_map_uri_to_path(r, &path, &root_len, 0) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (path.len > 1 && path.data[path.len - 1] == '/') {
        path.data[--path.len] = '\0';
    }
    /* Looked up as the static handler would (disable_symlinks, the open
     * file cache), then opened: a path that is not a directory is 404. */
    if (sws_http_file_info(r, &path, &f) != SWS_OK || !f.is_dir) {
        if (f.err == EACCES || f.err == ELOOP) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), f.err, "\"%s\" is forbidden", path.data);
            return SWS_HTTP_FORBIDDEN;
        }
        return SWS_HTTP_NOT_FOUND;
    }
    fd = open((char *) path.data, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    d = fd == -1 ? NULL : fdopendir(fd);
    if (d == NULL) {
        rc = errno;
        if (fd != -1) {
            close(fd);
        }
        sws_log_error(rc == EACCES ? SWS_LOG_ERR : SWS_LOG_CRIT, sws_http_log(r), rc,
                      "opendir() \"%s\" failed", path.data);
        return rc == EACCES ? SWS_HTTP_FORBIDDEN
                            : rc == ENOENT || rc == ENOTDIR ? SWS_HTTP_NOT_FOUND
                                                            : SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    entries = sws_array_create(sws_http_pool(r), 32, sizeof(sws_autoindex_entry_t));
    rc = entries ? sws_autoindex_read(r, d, (char *) path.data, entries) : SWS_ERROR;
    closedir(d);
    if (rc != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }

    sws_memzero(&out, sizeof(out));
    out.pool = sws_http_pool(r);
    format = alcf->format;
    if (format == SWS_AUTOINDEX_JSONP) {
        if (sws_autoindex_callback(r, &callback) != SWS_OK) {
            sws_log_error(SWS_LOG_INFO, sws_http_log(r), 0, "client sent invalid callback");
            return SWS_HTTP_BAD_REQUEST;
        }
        if (callback.len == 0) {
            format = SWS_AUTOINDEX_JSON;    /* no callback: plain json, as nginx */
        }
    }
    switch (format) {
    case SWS_AUTOINDEX_JSON:
    case SWS_AUTOINDEX_JSONP:
        rc = sws_autoindex_json(&out, format == SWS_AUTOINDEX_JSONP ? &callback : NULL,
                                entries->elts, entries->nelts);
        break;
    case SWS_AUTOINDEX_XML:
        rc = sws_autoindex_xml(&out, entries->elts, entries->nelts);
        break;
    default:
        rc = sws_autoindex_html(&out, uri, entries->elts, entries->nelts, alcf);
        break;
    }
    if (rc != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    body.data = out.start;
    body.len = (size_t) (out.pos - out.start);
    return sws_http_send_response(r, SWS_HTTP_OK, &sws_autoindex_types[format], &body);
}

/* ---- configuration ---- */

static void *
sws_autoindex_create_loc_conf(sws_conf_t *cf)
{
    sws_autoindex_loc_conf_t *alcf;

    alcf = sws_palloc(sws_conf_pool(cf), sizeof(sws_autoindex_loc_conf_t));
    if (alcf) {
        alcf->enable = SWS_UNSET;
        alcf->format = SWS_UNSET_UINT;
        alcf->exact_size = SWS_UNSET;
        alcf->localtime = SWS_UNSET;
    }
    return alcf;
}

static char *
sws_autoindex_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_autoindex_loc_conf_t *prev = parent, *conf = child;

    sws_conf_merge_value(conf->enable, prev->enable, 0);
    sws_conf_merge_uint_value(conf->format, prev->format, SWS_AUTOINDEX_HTML);
    sws_conf_merge_value(conf->exact_size, prev->exact_size, 1);
    sws_conf_merge_value(conf->localtime, prev->localtime, 0);
    return SWS_CONF_OK;
}

static sws_int_t
sws_autoindex_init(sws_conf_t *cf)
{
    return sws_http_set_directory_handler(cf, sws_autoindex_handler);
}
