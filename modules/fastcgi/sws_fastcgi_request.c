/*
 * The request as FastCGI records: BEGIN_REQUEST, the PARAMS stream (the
 * constant fastcgi_param pairs encoded once at configuration time, the
 * others and the client's headers as HTTP_* per request), then STDIN: the
 * buffered body framed here, or a streamed one piece by piece through
 * frame_body. Everything of one request's head goes in one buffer sized
 * exactly; nothing is zeroed.
 */
#include "sws_fastcgi.h"

/* ---- configuration: fastcgi_param compiled ---- */

char *
sws_fcgi_compile_params(sws_conf_t *cf, sws_fcgi_loc_conf_t *flcf)
{
    static int          marker;
    sws_pool_t         *pool = sws_conf_pool(cf);
    sws_fcgi_params_t  *ps;
    sws_str_t          *t;
    sws_uint_t          i, n;
    size_t              len = 0;
    u_char             *p;
    const char         *err;

    ps = sws_pcalloc(pool, sizeof(sws_fcgi_params_t));
    if (ps == NULL) {
        return SWS_CONF_ERROR;
    }
    flcf->params = ps;
    ps->http_names = sws_hash_create(pool, 8, 0);
    if (ps->http_names == NULL) {
        return SWS_CONF_ERROR;
    }
    if (flcf->param_list == NULL) {
        return SWS_CONF_OK;
    }
    t = flcf->param_list->elts;
    n = flcf->param_list->nelts / 3;
    ps->dynamic = sws_pcalloc(pool, n * sizeof(sws_fcgi_param_t));
    if (ps->dynamic == NULL) {
        return SWS_CONF_ERROR;
    }
    for (i = 0; i < n; i++) {
        if (t[3 * i + 2].len == 0 && memchr(t[3 * i + 1].data, '$', t[3 * i + 1].len) == NULL) {
            len += sws_fcgi_pair_len(t[3 * i].len, t[3 * i + 1].len);
        }
    }
    p = sws_pnalloc(pool, len + 1);
    if (p == NULL) {
        return SWS_CONF_ERROR;
    }
    ps->static_pairs.data = p;

    for (i = 0; i < n; i++) {
        sws_str_t        *name = &t[3 * i], *value = &t[3 * i + 1];
        sws_fcgi_param_t *fp;

        if (name->len > 5 && memcmp(name->data, "HTTP_", 5) == 0
            && sws_hash_add(ps->http_names, name, &marker) == SWS_ERROR)
        {
            return SWS_CONF_ERROR;
        }
        if (t[3 * i + 2].len == 0 && memchr(value->data, '$', value->len) == NULL) {
            p = sws_fcgi_write_pair(p, name->data, name->len, value->data, value->len);
            continue;
        }
        fp = &ps->dynamic[ps->ndynamic++];
        fp->name = *name;
        fp->if_not_empty = t[3 * i + 2].len != 0;
        fp->content_length = sws_str_eq_cstr(name, "CONTENT_LENGTH");
        fp->value = sws_http_format_compile(pool, value, SWS_HTTP_ESCAPE_NONE, &err);
        if (fp->value == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "fastcgi_param %.*s: %s",
                               (int) name->len, name->data, err);
            return SWS_CONF_ERROR;
        }
    }
    ps->static_pairs.len = (size_t) (p - ps->static_pairs.data);
    return SWS_CONF_OK;
}

/* ---- the client's headers as HTTP_* ---- */

/* A header FastCGI gets as HTTP_NAME: names made only of letters, digits
 * and '-' (with '_' a client could pose as another header, "X_Foo" for
 * "X-Foo"), and never Proxy (HTTP_PROXY would set a CGI program's proxy:
 * "httpoxy"). */
static int
sws_fcgi_header_ok(const sws_http_header_t *h)
{
    size_t i;

    if (h->hash == 0 || h->name.len == 0
        || (h->name.len == 5 && memcmp(h->name.data, "proxy", 5) == 0))
    {
        return 0;
    }
    for (i = 0; i < h->name.len; i++) {
        u_char c = h->name.data[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'
              || (c >= 'A' && c <= 'Z')))
        {
            return 0;
        }
    }
    return 1;
}

/* "HTTP_" and the name upper-cased, '-' as '_'. */
static u_char *
sws_fcgi_http_name(u_char *p, const sws_str_t *name)
{
    size_t i;

    memcpy(p, "HTTP_", 5);
    p += 5;
    for (i = 0; i < name->len; i++) {
        u_char c = name->data[i];
        *p++ = c == '-' ? '_' : sws_toupper(c);
    }
    return p;
}

/* Whether header i is the first of its name (later ones are joined to it). */
static int
sws_fcgi_first_of_name(const sws_http_header_t *hs, sws_uint_t i)
{
    sws_uint_t j;

    for (j = 0; j < i; j++) {
        if (hs[j].hash == hs[i].hash && sws_str_eq(&hs[j].name, &hs[i].name)
            && sws_fcgi_header_ok(&hs[j]))
        {
            return 0;
        }
    }
    return 1;
}

/* The joined value of every header named as hs[i]: ", " between them
 * (RFC 9110 5.3), "; " for Cookie (RFC 6265 5.4). Returns its length;
 * writes it at out when out is not NULL. */
static size_t
sws_fcgi_joined(const sws_http_header_t *hs, sws_uint_t n, sws_uint_t i, u_char *out)
{
    int        cookie = hs[i].name.len == 6 && memcmp(hs[i].name.data, "cookie", 6) == 0;
    size_t     len = hs[i].value.len;
    sws_uint_t j;

    if (out && hs[i].value.len) {       /* an empty value may have no data */
        out = sws_cpymem(out, hs[i].value.data, hs[i].value.len);
    }
    for (j = i + 1; j < n; j++) {
        if (hs[j].hash != hs[i].hash || !sws_str_eq(&hs[j].name, &hs[i].name)) {
            continue;
        }
        len += 2 + hs[j].value.len;
        if (out) {
            *out++ = cookie ? ';' : ',';
            *out++ = ' ';
            if (hs[j].value.len) {
                out = sws_cpymem(out, hs[j].value.data, hs[j].value.len);
            }
        }
    }
    return len;
}

/* The client's conditional and range fields, which a request whose
 * response goes to a cache does not pass on (the server is to answer in
 * full; sws_http_upstream_cache_request). Names are lower-case. */
static int
sws_fcgi_cache_drops(const sws_str_t *name)
{
    static const char *const drop[] = {
        "if-none-match", "if-modified-since", "if-match", "if-unmodified-since",
        "if-range", "range", NULL
    };
    sws_uint_t i;

    if (name->len < 5 || (name->data[0] != 'i' && name->data[0] != 'r')) {
        return 0;
    }
    for (i = 0; drop[i]; i++) {
        if (name->len == strlen(drop[i]) && memcmp(name->data, drop[i], name->len) == 0) {
            return 1;
        }
    }
    return 0;
}

/* Is the client's header h sent as HTTP_*: not when fastcgi_param set it,
 * nor a conditional one when the response is for a cache. */
static int
sws_fcgi_header_sent(sws_fcgi_params_t *ps, const sws_http_header_t *h, u_char *scratch,
    int for_cache)
{
    u_char *e;

    if (!sws_fcgi_header_ok(h) || (for_cache && sws_fcgi_cache_drops(&h->name))) {
        return 0;
    }
    if (ps->http_names == NULL || h->name.len > 250) {
        return 1;
    }
    e = sws_fcgi_http_name(scratch, &h->name);
    return sws_hash_find(ps->http_names, scratch, (size_t) (e - scratch)) == NULL;
}

/* ---- the request ---- */

/* The PARAMS stream's content at p (size known), then cut into records of
 * at most 65535 bytes: pairs were written after room for the headers, and
 * each piece moves down behind its header (a no-op for one record). */
static u_char *
sws_fcgi_frame_params(u_char *start, size_t plen, sws_uint_t nrec)
{
    u_char     *out = start, *src = start + nrec * SWS_FCGI_HEADER_LEN;
    size_t      n;
    sws_uint_t  i;

    for (i = 0; i < nrec; i++) {
        n = sws_min(plen, (size_t) SWS_FCGI_MAX_CONTENT);
        out = sws_fcgi_write_header(out, SWS_FCGI_PARAMS, n, 0);
        if (out != src) {
            memmove(out, src, n);
        }
        out += n;
        src += n;
        plen -= n;
    }
    return out;
}

/* The buffered body as STDIN records: record headers (8 bytes each, from
 * one array) and shadows of the body's buffers, memory or file. */
static sws_int_t
sws_fcgi_body_records(sws_http_request_t *r, sws_chain_t ***tail)
{
    sws_pool_t   *pool = sws_http_pool(r);
    sws_chain_t  *in, *cl;
    sws_buf_t    *b, *hb;
    off_t         size, n, at;
    u_char       *h;

    for (in = sws_http_request_body(r); in; in = in->next) {
        size = sws_buf_size(in->buf);
        at = 0;
        while (at < size) {
            n = sws_min(size - at, (off_t) SWS_FCGI_MAX_CONTENT);
            h = sws_pnalloc(pool, SWS_FCGI_HEADER_LEN);
            hb = sws_calloc_buf(pool);
            b = sws_calloc_buf(pool);
            cl = sws_alloc_chain_link(pool);
            if (h == NULL || hb == NULL || b == NULL || cl == NULL) {
                return SWS_ERROR;
            }
            hb->start = hb->pos = h;
            hb->end = hb->last = sws_fcgi_write_header(h, SWS_FCGI_STDIN, (size_t) n, 0);
            hb->temporary = 1;
            hb->fd = -1;
            cl->buf = hb;
            **tail = cl;
            *tail = &cl->next;

            cl = sws_alloc_chain_link(pool);
            if (cl == NULL) {
                return SWS_ERROR;
            }
            *b = *in->buf;
            b->last_buf = 0;
            if (in->buf->in_file && !sws_buf_in_memory(in->buf)) {
                b->file_pos = in->buf->file_pos + at;
                b->file_last = b->file_pos + n;
            } else {
                b->pos = in->buf->pos + at;
                b->last = b->pos + n;
                b->in_file = 0;
            }
            cl->buf = b;
            **tail = cl;
            *tail = &cl->next;
            at += n;
        }
    }
    return SWS_OK;
}

sws_int_t
sws_fcgi_create_request(sws_http_request_t *r, void *data, sws_chain_t **out)
{
    sws_fcgi_ctx_t           *ctx = data;
    sws_fcgi_loc_conf_t      *flcf = ctx->flcf;
    sws_fcgi_params_t        *ps = flcf->params;
    sws_http_upstream_t      *u = ctx->u;
    sws_pool_t               *pool = sws_http_pool(r);
    const sws_array_t        *hdrs = sws_http_headers_in(r);
    const sws_http_header_t  *hs = hdrs ? hdrs->elts : NULL;
    sws_uint_t                nh = hdrs ? hdrs->nelts : 0, i, nrec, mode;
    sws_fcgi_param_t         *fp;
    size_t                    plen, vlen, *lens;
    u_char                    scratch[256], numbuf[24], *start, *p, *e;
    off_t                     body_len;
    sws_chain_t              *cl, **tail;
    sws_buf_t                *b;
    sws_str_t                 inm, ims;
    int                       for_cache;

    mode = sws_http_upstream_body_mode(u);
    body_len = sws_http_upstream_body_length(u);
    /* For a cache (fastcgi_cache): the client's conditionals stay out, the
     * cache's validators go in on a revalidation, as HTTP_IF_* params. */
    for_cache = sws_http_upstream_cache_request(u, &inm, &ims);
    if (for_cache < 0) {
        return SWS_ERROR;
    }

    /* The length of every pair first (formats keep their values for the
     * render that follows), so that one buffer of the exact size does.
     * lens[i] has its top bit set when CONTENT_LENGTH's value is the body
     * length written here instead of the format's (empty) output. */
    lens = ps->ndynamic ? sws_palloc(pool, ps->ndynamic * sizeof(size_t)) : NULL;
    if (ps->ndynamic && lens == NULL) {
        return SWS_ERROR;
    }
    plen = ps->static_pairs.len;
    for (i = 0; i < ps->ndynamic; i++) {
        fp = &ps->dynamic[i];
        vlen = sws_http_format_len(fp->value, r);
        if (vlen == 0 && fp->content_length && body_len > 0) {
            /* A chunked body, buffered: its length is known now. */
            vlen = (size_t) (sws_sprint_uint(numbuf, (uint64_t) body_len) - numbuf);
            lens[i] = vlen | ((size_t) 1 << (sizeof(size_t) * 8 - 1));
        } else {
            lens[i] = vlen;
        }
        if (vlen || !fp->if_not_empty) {
            plen += sws_fcgi_pair_len(fp->name.len, vlen);
        }
    }
    if (flcf->pass_request_headers) {
        for (i = 0; i < nh; i++) {
            if (sws_fcgi_header_sent(ps, &hs[i], scratch, for_cache)
                && sws_fcgi_first_of_name(hs, i))
            {
                plen += sws_fcgi_pair_len(5 + hs[i].name.len, sws_fcgi_joined(hs, nh, i, NULL));
            }
        }
    }
    if (inm.len) {
        plen += sws_fcgi_pair_len(sizeof("HTTP_IF_NONE_MATCH") - 1, inm.len);
    }
    if (ims.len) {
        plen += sws_fcgi_pair_len(sizeof("HTTP_IF_MODIFIED_SINCE") - 1, ims.len);
    }
    nrec = plen ? (sws_uint_t) ((plen + SWS_FCGI_MAX_CONTENT - 1) / SWS_FCGI_MAX_CONTENT) : 0;

    /* BEGIN_REQUEST, the PARAMS records, the empty one, and without a
     * streamed body the empty STDIN (after the body's records, if any). */
    start = sws_pnalloc(pool, 16 + nrec * SWS_FCGI_HEADER_LEN + plen + 2 * SWS_FCGI_HEADER_LEN);
    b = sws_calloc_buf(pool);
    cl = sws_alloc_chain_link(pool);
    if (start == NULL || b == NULL || cl == NULL) {
        return SWS_ERROR;
    }
    p = sws_fcgi_write_begin(start, ctx->keep);
    e = p + nrec * SWS_FCGI_HEADER_LEN;        /* the pairs go here first */
    e = sws_cpymem(e, ps->static_pairs.data, ps->static_pairs.len);
    for (i = 0; i < ps->ndynamic; i++) {
        fp = &ps->dynamic[i];
        vlen = lens[i] & ~((size_t) 1 << (sizeof(size_t) * 8 - 1));
        if (vlen == 0 && fp->if_not_empty) {
            continue;
        }
        if (lens[i] != vlen) {
            sws_sprint_uint(numbuf, (uint64_t) body_len);
            e = sws_fcgi_write_pair(e, fp->name.data, fp->name.len, numbuf, vlen);
            continue;
        }
        e = sws_fcgi_write_lens(e, fp->name.len, vlen);
        e = sws_cpymem(e, fp->name.data, fp->name.len);
        e = sws_http_format_render(fp->value, r, e);
    }
    if (flcf->pass_request_headers) {
        for (i = 0; i < nh; i++) {
            if (!sws_fcgi_header_sent(ps, &hs[i], scratch, for_cache)
                || !sws_fcgi_first_of_name(hs, i))
            {
                continue;
            }
            vlen = sws_fcgi_joined(hs, nh, i, NULL);
            e = sws_fcgi_write_lens(e, 5 + hs[i].name.len, vlen);
            e = sws_fcgi_http_name(e, &hs[i].name);
            e += sws_fcgi_joined(hs, nh, i, e);
        }
    }
    if (inm.len) {
        e = sws_fcgi_write_pair(e, (u_char *) "HTTP_IF_NONE_MATCH",
                                sizeof("HTTP_IF_NONE_MATCH") - 1, inm.data, inm.len);
    }
    if (ims.len) {
        e = sws_fcgi_write_pair(e, (u_char *) "HTTP_IF_MODIFIED_SINCE",
                                sizeof("HTTP_IF_MODIFIED_SINCE") - 1, ims.data, ims.len);
    }
    p = sws_fcgi_frame_params(p, plen, nrec);
    p = sws_fcgi_write_header(p, SWS_FCGI_PARAMS, 0, 0);

    b->start = b->pos = start;
    b->temporary = 1;
    b->fd = -1;
    cl->buf = b;
    cl->next = NULL;
    *out = cl;
    tail = &cl->next;

    if (mode == SWS_UPSTREAM_BODY_BUFFERED) {
        if (sws_fcgi_body_records(r, &tail) != SWS_OK) {
            return SWS_ERROR;
        }
        /* The empty STDIN after the body: at the end of the head's buffer,
         * in a link of its own. */
        e = p;
        p = sws_fcgi_write_header(p, SWS_FCGI_STDIN, 0, 0);
        b->end = b->last = e;
        b = sws_calloc_buf(pool);
        cl = sws_alloc_chain_link(pool);
        if (b == NULL || cl == NULL) {
            return SWS_ERROR;
        }
        b->start = b->pos = e;
        b->end = b->last = p;
        b->temporary = 1;
        b->fd = -1;
        cl->buf = b;
        cl->next = NULL;
        *tail = cl;
        return SWS_OK;
    }
    if (mode != SWS_UPSTREAM_BODY_STREAM) {
        p = sws_fcgi_write_header(p, SWS_FCGI_STDIN, 0, 0);
    }
    b->end = b->last = p;
    return SWS_OK;
}

/* A streamed body's piece (at most 65535 bytes: the handler set that)
 * becomes one STDIN record; the last is followed by the empty one. */
void
sws_fcgi_frame_body(sws_http_request_t *r, void *data, sws_buf_t *b, int last)
{
    size_t n = (size_t) (b->last - b->pos);

    (void) r;
    (void) data;
    if (n) {
        b->pos -= SWS_FCGI_HEADER_LEN;
        sws_fcgi_write_header(b->pos, SWS_FCGI_STDIN, n, 0);
    }
    if (last) {
        b->last = sws_fcgi_write_header(b->last, SWS_FCGI_STDIN, 0, 0);
    }
}
