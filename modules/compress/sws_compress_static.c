/*
 * Precompressed files: gzip_static, brotli_static, zstd_static. For
 * "/a/page.html" the siblings "page.html.gz", ".br" and ".zst" are tried
 * in the order the client prefers (its q-values, then compress_prefer),
 * among the codings whose *_static is on and that the client accepts
 * ("always": whatever it accepts). A sibling is served only if it is as
 * new as the original or newer (or the original is not there), so a stale
 * .gz left behind by an edit is never sent.
 *
 * A content-phase handler that runs before the static module's (modules
 * are ordered by name: compress before static) and declines whatever it
 * does not serve, so the static module stays as it is. The file is opened
 * through sws_http_open_file (the open file cache) and sent as a file
 * buffer (sendfile) or, when cached, from memory: the cost of a static
 * file. It has its own strong ETag and its own ranges, as in nginx.
 */
#include "sws_compress.h"

static const sws_str_t  sws_compress_static_ce = sws_string("Content-Encoding");


/* What the static module refuses with 400 (an encoded slash): left to it. */
static int
sws_compress_static_encoded_slash(sws_http_request_t *r)
{
    return sws_http_encoded_slash(r) && !sws_http_is_internal(r);
}


/* "mtime-size" in hex, as the static module makes them. */
static const sws_str_t *
sws_compress_static_etag(sws_http_request_t *r, const sws_http_file_t *f)
{
    sws_str_t  *etag;
    u_char     *p;

    if (f->etag) {
        return f->etag;
    }
    etag = sws_palloc(sws_http_pool(r), sizeof(sws_str_t) + 40);
    if (etag == NULL) {
        return NULL;
    }
    etag->data = (u_char *) (etag + 1);
    p = sws_slprintf(etag->data, etag->data + 40, "\"%llx-%llx\"",
                     (unsigned long long) f->mtime, (unsigned long long) f->size);
    etag->len = (size_t) (p - etag->data);
    return etag;
}


static sws_int_t
sws_compress_static_send(sws_http_request_t *r, sws_uint_t coding,
    const sws_compress_coding_conf_t *cc, const sws_http_file_t *f)
{
    sws_int_t         rc;
    sws_buf_t        *b;
    sws_chain_t      *out;
    time_t            now = sws_time_sec();
    const sws_str_t  *etag;

    if (sws_http_has_body(r)) {
        rc = sws_http_discard_body(r);
        if (rc != SWS_OK && rc != SWS_AGAIN) {
            return rc;
        }
    }

    sws_http_set_status(r, SWS_HTTP_OK);
    sws_http_set_content_length(r, f->size);
    sws_http_set_last_modified(r, f->mtime > now ? now : f->mtime);
    sws_http_set_content_type(r, sws_http_mime_type(r, sws_http_exten(r)));
    sws_http_allow_ranges(r, 1);
    etag = sws_compress_static_etag(r, f);
    if (etag == NULL
        || sws_http_header_out_add(r, &sws_compress_static_ce, &sws_compress_token[coding])
           == NULL
        || (cc->vary && sws_compress_add_vary(r) != SWS_OK))
    {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    sws_http_set_etag(r, etag);

    rc = sws_http_send_header(r);
    if (rc != SWS_OK || sws_http_header_only(r)) {
        return rc;
    }
    if (f->size == 0) {
        return sws_http_send_special(r, 1);
    }

    b = sws_calloc_buf(sws_http_pool(r));
    out = sws_alloc_chain_link(sws_http_pool(r));
    if (b == NULL || out == NULL) {
        return SWS_ERROR;
    }
    if (f->data) {
        b->pos = b->start = (u_char *) f->data;
        b->last = b->end = (u_char *) f->data + f->size;
        b->memory = 1;
    } else {
        b->in_file = 1;
        b->fd = f->fd;
        b->file_pos = 0;
        b->file_last = f->size;
    }
    b->last_buf = 1;
    b->last_in_chain = 1;
    out->buf = b;
    out->next = NULL;
    return sws_http_output(r, out);
}


static sws_int_t
sws_compress_static_handler(sws_http_request_t *r)
{
    size_t                    root_len, base;
    sws_int_t                 c;
    int                       have_orig = -1;     /* not looked at yet */
    sws_uint_t                i, allowed = 0, tried = 0;
    sws_str_t                 path;
    sws_http_file_t           f, orig;
    sws_compress_accept_t     a;
    const sws_str_t          *uri;
    sws_compress_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    const sws_compress_coding_conf_t *cc;

    for (i = 0; i < SWS_COMPRESS_NCODINGS; i++) {
        cc = &lcf->coding[i];
        if (cc->static_mode == SWS_COMPRESS_STATIC_ALWAYS
            || (cc->static_mode == SWS_COMPRESS_STATIC_ON && sws_compress_request_ok(r, cc, 0)))
        {
            allowed |= 1u << i;
        }
    }
    if (allowed == 0 || !(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD))) {
        return SWS_DECLINED;
    }
    uri = sws_http_uri(r);
    if (uri->len == 0 || uri->data[uri->len - 1] == '/' || sws_compress_static_encoded_slash(r)) {
        return SWS_DECLINED;            /* the index handler's, or a 400 */
    }

    if (sws_http_map_uri_to_path(r, &path, &root_len, 4) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    base = path.len;
    sws_memzero(&a, sizeof(a));
    for ( ;; ) {
        c = sws_compress_negotiate(r, lcf, allowed & ~tried, &a);
        if (c < 0) {
            /* "always": the client is not asked (a gunzip further on) */
            for (i = 0; c < 0 && i < lcf->nprefer; i++) {
                if (!(tried & (1u << lcf->prefer[i]))
                    && lcf->coding[lcf->prefer[i]].static_mode == SWS_COMPRESS_STATIC_ALWAYS)
                {
                    c = (sws_int_t) lcf->prefer[i];
                }
            }
            if (c < 0) {
                return SWS_DECLINED;
            }
        }
        tried |= 1u << c;

        sws_memcpy(path.data + base, sws_compress_suffix[c].data, sws_compress_suffix[c].len);
        path.data[base + sws_compress_suffix[c].len] = '\0';
        path.len = base + sws_compress_suffix[c].len;

        if (sws_http_open_file(r, &path, &f) != SWS_OK || !f.is_file) {
            continue;                   /* no such sibling: the next coding */
        }

        if (have_orig < 0) {
            path.data[base] = '\0';
            path.len = base;
            have_orig = sws_http_open_file(r, &path, &orig) == SWS_OK;
            if (have_orig && !orig.is_file) {
                return SWS_DECLINED;    /* a directory: the static module redirects */
            }
        }
        if (have_orig && f.mtime < orig.mtime) {
            sws_log_error(SWS_LOG_INFO, sws_http_log(r), 0,
                          "\"%s%s\" is older than the file: not used", path.data,
                          sws_compress_suffix[c].data);
            continue;
        }
        return sws_compress_static_send(r, (sws_uint_t) c, &lcf->coding[c], &f);
    }
}


/* Only where gzip_static, brotli_static or zstd_static is on. */
static sws_uint_t
sws_compress_static_active(const void *conf)
{
    const sws_compress_loc_conf_t *lcf = conf;
    sws_uint_t                     i;

    for (i = 0; i < SWS_COMPRESS_NCODINGS; i++) {
        if (lcf->coding[i].static_mode != SWS_COMPRESS_STATIC_OFF) {
            return 1;
        }
    }
    return 0;
}

/* After the index handler (a URI ending in '/' is its), before the files. */
sws_int_t
sws_compress_static_init(sws_conf_t *cf)
{
    sws_http_phase_handler_t h = {
        .phase = SWS_HTTP_CONTENT_PHASE, .order = SWS_HTTP_ORDER_PRECOMPRESSED,
        .handler = sws_compress_static_handler, .module = &sws_module,
        .active = sws_compress_static_active
    };

    return sws_http_register_phase_handler(cf, &h);
}
