/*
 * COPY and MOVE (RFC 4918 9.8, 9.9) as nginx's dav module answers them:
 * the Destination is a path, or an absolute URI of this scheme and Host
 * (any port), mapped under the source location's root or alias; a
 * collection answers 201, a file 204. Destination is decoded and checked
 * here: no "..", no NUL, never outside the location's directory.
 */
#include <fcntl.h>
#include <unistd.h>
#include "sws_dav.h"
#include "sws_dav_path.h"

/*
 * The path of a Destination value (its "/..." part, without a query),
 * decoded into a new string without "." segments. SWS_OK, or
 * SWS_HTTP_BAD_REQUEST (logged) for another host or scheme, a bad escape,
 * a NUL or a ".." segment.
 */
static sws_int_t
sws_dav_destination(sws_http_request_t *r, const sws_str_t *dest, sws_str_t *duri)
{
    const sws_str_t  *host, *scheme;
    const u_char     *p, *last, *seg;

    p = dest->data;
    last = dest->data + dest->len;
    if (dest->len == 0 || p[0] != '/') {
        host = sws_http_host(r);
        scheme = sws_http_scheme(r);
        if (host->len == 0) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "client sent no \"Host\" header");
            return SWS_HTTP_BAD_REQUEST;
        }
        if ((size_t) (last - p) < scheme->len + 3 + host->len
            || memcmp(p, scheme->data, scheme->len) != 0
            || memcmp(p + scheme->len, "://", 3) != 0)
        {
            goto invalid;
        }
        p += scheme->len + 3;
        if (sws_strncasecmp(p, host->data, host->len) != 0) {
            goto other;
        }
        p += host->len;
        if (p < last && *p == ':') {
            do {
                p++;
            } while (p < last && *p >= '0' && *p <= '9');
        }
        if (p == last) {
            goto invalid;
        }
        if (*p != '/') {
            goto other;             /* "host.evil": another name */
        }
    }
    for (seg = p; seg < last && *seg != '?'; seg++) { /* void */ }

    duri->data = sws_pnalloc(sws_http_pool(r), (size_t) (seg - p) + 1);
    if (duri->data == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    duri->len = sws_dav_decode_path(p, seg, duri->data);
    if (duri->len == SWS_DAV_PATH_INVALID) {
        goto invalid;
    }
    return SWS_OK;

other:
    sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "\"Destination\" URI \"%.*s\" is handled "
                  "by different repository than the source URI", (int) dest->len, dest->data);
    return SWS_HTTP_BAD_REQUEST;

invalid:
    sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "client sent invalid \"Destination\" header: "
                  "\"%.*s\"", (int) dest->len, dest->data);
    return SWS_HTTP_BAD_REQUEST;
}

/* Overwrite: T or F (any case); absent is T. -1: invalid. */
static int
sws_dav_overwrite(sws_http_request_t *r)
{
    const sws_str_t  *v = sws_http_header_in(r, "overwrite", 9);

    if (v == NULL) {
        return 1;
    }
    if (v->len == 1 && (v->data[0] | 0x20) == 't') {
        return 1;
    }
    if (v->len == 1 && (v->data[0] | 0x20) == 'f') {
        return 0;
    }
    sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "client sent invalid \"Overwrite\" header: "
                  "\"%.*s\"", (int) v->len, v->data);
    return -1;
}

/*
 * The destination's file: the source's root part, then what the
 * destination URI has after the part of the source's URI that the alias
 * replaced (none with root). A destination outside that prefix would be
 * outside the alias's directory: 403.
 */
static sws_int_t
sws_dav_map_destination(sws_http_request_t *r, const sws_str_t *src, size_t root_len,
    const sws_str_t *duri, sws_str_t *dst)
{
    const sws_str_t  *uri = sws_http_uri(r);
    size_t            tail = src->len - root_len, skip;
    u_char           *p;

    if (tail > uri->len) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    skip = uri->len - tail;
    if (duri->len < skip || memcmp(duri->data, uri->data, skip) != 0
        || (duri->len == skip && skip != uri->len))
    {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "\"Destination\" \"%s\" is outside "
                      "the location's directory", duri->data);
        return SWS_HTTP_FORBIDDEN;
    }
    dst->len = root_len + duri->len - skip;
    dst->data = sws_pnalloc(sws_http_pool(r), dst->len + 1);
    if (dst->data == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    p = sws_cpymem(dst->data, src->data, root_len);
    p = sws_cpymem(p, duri->data + skip, duri->len - skip);
    *p = '\0';
    return SWS_OK;
}

static void
sws_dav_strip_slash(sws_str_t *path)
{
    while (path->len > 1 && path->data[path->len - 1] == '/') {
        path->data[--path->len] = '\0';
    }
}

/* 1 if b is a inside it ("a/..."). */
static int
sws_dav_inside(const sws_str_t *a, const sws_str_t *b)
{
    return b->len > a->len && memcmp(a->data, b->data, a->len) == 0 && b->data[a->len] == '/';
}

/* A file copied next to dst, then renamed over it. */
static sws_int_t
sws_dav_copy_one(sws_http_request_t *r, const sws_str_t *src, const sws_str_t *dst)
{
    struct stat  st;
    sws_str_t    tmp;
    int          fd;

    if (stat((char *) src->data, &st) != 0) {
        return sws_dav_error(r, errno, SWS_HTTP_NOT_FOUND, "stat()", src->data);
    }
    fd = sws_dav_temp_file(sws_http_pool(r), dst->data, dst->len, &tmp);
    if (fd == -1) {
        sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "mkstemp() \"%s\" failed",
                      dst->data);
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    close(fd);
    if (sws_dav_copy_file(sws_http_log(r), src->data, tmp.data, &st) != 0
        || rename((char *) tmp.data, (char *) dst->data) != 0)
    {
        sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno, "copying \"%s\" to \"%s\" failed",
                      src->data, dst->data);
        (void) unlink((char *) tmp.data);
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_HTTP_NO_CONTENT;
}

static sws_int_t
sws_dav_copy_move_paths(sws_http_request_t *r, int move, sws_int_t depth, int overwrite,
    sws_str_t *src, sws_str_t *dst, int dst_slash)
{
    sws_dav_loc_conf_t  *dlcf = sws_http_loc_conf(r, &sws_module);
    const sws_str_t     *uri = sws_http_uri(r);
    struct stat          sst, dst_st;
    sws_http_file_t      f;
    sws_int_t            rc;
    int                  exists = 1;

    if (lstat((char *) src->data, &sst) != 0) {
        return sws_dav_error(r, errno, SWS_HTTP_NOT_FOUND, "lstat()", src->data);
    }
    /* a link the location's disable_symlinks refuses is not copied */
    if (sws_http_file_info(r, src, &f) != SWS_OK && f.err == ELOOP) {
        return sws_dav_error(r, ELOOP, SWS_HTTP_NOT_FOUND, "open()", src->data);
    }
    if (S_ISDIR(sst.st_mode) && uri->data[uri->len - 1] != '/') {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "\"%s\" is collection", src->data);
        return SWS_HTTP_BAD_REQUEST;
    }
    if (lstat((char *) dst->data, &dst_st) != 0) {
        if (errno != ENOENT) {
            return sws_dav_error(r, errno, SWS_HTTP_NOT_FOUND, "lstat()", dst->data);
        }
        exists = 0;
    } else {
        if (S_ISDIR(dst_st.st_mode) && !dst_slash) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "\"%s\" could not be %sed to "
                          "collection \"%s\"", src->data, move ? "mov" : "copi", dst->data);
            return SWS_HTTP_CONFLICT;
        }
        if (!overwrite) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), EEXIST, "\"%s\" could not be created",
                          dst->data);
            return SWS_HTTP_PRECONDITION_FAILED;
        }
    }

    sws_dav_strip_slash(src);
    sws_dav_strip_slash(dst);
    if (sws_str_eq(src, dst) || sws_dav_inside(src, dst) || sws_dav_inside(dst, src)) {
        /* RFC 4918 9.8.5: the same resource is 403; into itself, or over
         * its own parent, it would lose what it copies */
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "\"%s\" and \"%s\" overlap",
                      src->data, dst->data);
        return SWS_HTTP_FORBIDDEN;
    }
    rc = sws_dav_symlinks_allowed(r, dst->data, dst->len);
    if (rc != SWS_OK) {
        return rc;
    }

    if (S_ISDIR(sst.st_mode)) {
        if (exists && sws_dav_remove_tree(sws_http_log(r), dst->data) != 0) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (move && rename((char *) src->data, (char *) dst->data) == 0) {
            return SWS_HTTP_CREATED;
        }
        if (mkdir((char *) dst->data, sst.st_mode & 07777) != 0) {
            /* nginx's 404 for a missing parent (RFC 4918 would say 409) */
            return sws_dav_error(r, errno, SWS_HTTP_NOT_FOUND, "mkdir()", dst->data);
        }
        /* Depth: 0 copies the collection alone (RFC 4918 9.8.3) */
        if (depth == SWS_DAV_INFINITY
            && sws_dav_copy_tree(sws_http_log(r), src->data, dst->data) != 0)
        {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (move && sws_dav_remove_tree(sws_http_log(r), src->data) != 0) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        return SWS_HTTP_CREATED;
    }

    if (!move) {
        return sws_dav_copy_one(r, src, dst);
    }
    /* MOVE of a file makes the destination's directories, as nginx's */
    if (rename((char *) src->data, (char *) dst->data) != 0) {
        if (errno == ENOENT
            && sws_dav_create_path(dst->data, dst->len, sws_dav_dir_access(dlcf->access)) == 0
            && rename((char *) src->data, (char *) dst->data) == 0)
        {
            return SWS_HTTP_NO_CONTENT;
        }
        if (errno != EXDEV) {
            sws_log_error(SWS_LOG_CRIT, sws_http_log(r), errno,
                          "rename() \"%s\" to \"%s\" failed", src->data, dst->data);
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        rc = sws_dav_copy_one(r, src, dst);
        if (rc != SWS_HTTP_NO_CONTENT) {
            return rc;
        }
        if (unlink((char *) src->data) != 0) {
            return sws_dav_error(r, errno, SWS_HTTP_INTERNAL_SERVER_ERROR, "unlink()",
                                 src->data);
        }
    }
    return SWS_HTTP_NO_CONTENT;
}

sws_int_t
sws_dav_copy_move(sws_http_request_t *r, int move)
{
    const sws_str_t  *uri = sws_http_uri(r), *dest;
    sws_str_t         duri, src, dst;
    sws_int_t         rc, depth;
    size_t            root_len;
    int               overwrite, dst_slash;

    if (sws_dav_has_body(r)) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "COPY and MOVE with body is unsupported");
        return 415;
    }
    dest = sws_http_header_in(r, "destination", 11);
    if (dest == NULL) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "client sent no \"Destination\" header");
        return SWS_HTTP_BAD_REQUEST;
    }
    rc = sws_dav_destination(r, dest, &duri);
    if (rc != SWS_OK) {
        return rc;
    }
    dst_slash = duri.data[duri.len - 1] == '/';
    if ((uri->data[uri->len - 1] == '/') != dst_slash) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "both URI \"%.*s\" and \"Destination\" "
                      "URI \"%s\" should be either collections or non-collections",
                      (int) uri->len, uri->data, duri.data);
        return SWS_HTTP_CONFLICT;
    }
    depth = sws_dav_depth(r, SWS_DAV_INFINITY);
    if (depth != SWS_DAV_INFINITY && (move || depth != 0)) {
        sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, move
                      ? "\"Depth\" header must be infinity"
                      : "\"Depth\" header must be 0 or infinity");
        return SWS_HTTP_BAD_REQUEST;
    }
    overwrite = sws_dav_overwrite(r);
    if (overwrite == -1) {
        return SWS_HTTP_BAD_REQUEST;
    }
    if (sws_http_map_uri_to_path(r, &src, &root_len, 0) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    rc = sws_dav_map_destination(r, &src, root_len, &duri, &dst);
    if (rc != SWS_OK) {
        return rc;
    }
    rc = sws_dav_copy_move_paths(r, move, depth, overwrite, &src, &dst, dst_slash);
    if (rc == SWS_HTTP_CREATED || rc == SWS_HTTP_NO_CONTENT) {
        return sws_dav_respond(r, (sws_uint_t) rc, NULL);
    }
    return rc;
}
