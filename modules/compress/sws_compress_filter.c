/*
 * On-the-fly compression: a header filter that decides, a body filter that
 * compresses as the body flows.
 *
 * The header filter compresses a response when a coding is on in the
 * location and: the status is 200, 403 or 404 (nginx's set); it has no
 * Content-Encoding and no "Cache-Control: no-transform"; it is not
 * header-only (204, 304); its type is in *_types; its length, when
 * known, is at least *_min_length (unless the client refused identity);
 * the request passes *_http_version, *_disable and *_proxied; and the
 * client's Accept-Encoding allows it. A HEAD gets the same fields as its
 * GET, without a coder. The response then loses its length
 * (chunked over HTTP/1.1) and its ranges (a Range request gets the whole
 * response, as from nginx), its ETag becomes weak, and with *_vary on it
 * says "Vary: Accept-Encoding" (also when this client got identity).
 *
 * The body is the core's body transform (sws_http_transform_create) with
 * the coder of sws_compress_codec.c: at most *_buffers output buffers,
 * back-pressure on the producer when they all wait for the client, a flush
 * buffer (the upstream paused, an SSE event) flushes the coder, the last
 * buffer finishes the stream. Memory per request: the coder's state, the
 * output buffers and one read chunk, whatever the length of the body.
 */
#include "sws_compress.h"

static sws_int_t sws_compress_run(sws_http_request_t *r, void *data, const u_char **in,
    const u_char *in_end, u_char **out, u_char *out_end, int mode);

static sws_http_header_filter_pt  sws_compress_next_header_filter;
static sws_http_body_filter_pt    sws_compress_next_body_filter;

static const sws_str_t  sws_compress_content_encoding = sws_string("Content-Encoding");
static const sws_str_t  sws_compress_vary = sws_string("Vary");
static const sws_str_t  sws_compress_accept_encoding = sws_string("Accept-Encoding");


/* ---- the decision -------------------------------------------------------- */

int
sws_compress_type_ok(const sws_compress_coding_conf_t *cc, const sws_str_t *type)
{
    size_t           len;
    sws_uint_t       i;
    const sws_str_t *t;

    /* "*" takes any response, even one without a type (as in nginx) */
    t = cc->types->elts;
    for (i = 0; i < cc->types->nelts; i++) {
        if (t[i].len == 1 && t[i].data[0] == '*') {
            return 1;
        }
    }
    if (type->len == 0) {
        return 0;
    }
    /* the media type without parameters ("text/html; charset=utf-8") */
    for (len = 0; len < type->len && type->data[len] != ';' && type->data[len] != ' '; len++) {
        /* find the end */
    }
    for (i = 0; i < cc->types->nelts; i++) {
        if (t[i].len == len && sws_strncasecmp(t[i].data, type->data, len) == 0) {
            return 1;
        }
    }
    return 0;
}


static int
sws_compress_has_token(const sws_str_t *v, const char *token)
{
    return v != NULL
           && sws_strlcasestrn(v->data, v->data + v->len, (const u_char *) token,
                               strlen(token) - 1) != NULL;
}


/* gzip_disable: "msie6" is MSIE 4 to 6 (without SV1); the others match
 * the User-Agent as case-insensitive substrings. */
static int
sws_compress_disabled(sws_http_request_t *r, const sws_compress_coding_conf_t *cc)
{
    const sws_str_t  *ua, *d;
    u_char           *p, *last;
    sws_uint_t        i;

    if (cc->disable == NULL || (ua = sws_http_header_in(r, "user-agent", 10)) == NULL) {
        return 0;
    }
    d = cc->disable->elts;
    for (i = 0; i < cc->disable->nelts; i++) {
        if (sws_str_eq_cstr(&d[i], "msie6")) {
            last = ua->data + ua->len;
            p = sws_strlcasestrn(ua->data, last, (const u_char *) "MSIE ", 4);
            if (p != NULL && p + 6 < last && p[5] >= '4' && p[5] <= '6' && p[6] == '.'
                && sws_strlcasestrn(ua->data, last, (const u_char *) "SV1", 2) == NULL)
            {
                return 1;
            }
            continue;
        }
        if (sws_strlcasestrn(ua->data, ua->data + ua->len, d[i].data, d[i].len - 1) != NULL) {
            return 1;
        }
    }
    return 0;
}


/* gzip_proxied: a request that came through a proxy (it has Via) is
 * compressed by nginx's decision: a response with Expires by "expired"
 * alone (one already expired); else one with Cache-Control by "no-cache",
 * "no-store" and "private" alone; else it is, unless "no_last_modified"
 * finds a Last-Modified or "no_etag" an ETag. */
static int
sws_compress_proxied_ok(sws_http_request_t *r, const sws_compress_coding_conf_t *cc, int resp)
{
    sws_uint_t          p = cc->proxied;
    sws_http_header_t  *h;
    time_t              t, date;
    const sws_str_t    *etag;

    if (sws_http_header_in(r, "via", 3) == NULL) {
        return 1;
    }
    if (p & SWS_COMPRESS_PROXIED_OFF) {
        return 0;
    }
    if (p & SWS_COMPRESS_PROXIED_ANY) {
        return 1;
    }
    if ((p & SWS_COMPRESS_PROXIED_AUTH) && sws_http_header_in(r, "authorization", 13)) {
        return 1;
    }
    if (!resp) {
        return 0;
    }
    if ((h = sws_http_header_out(r, "expires", 7)) != NULL) {
        if (!(p & SWS_COMPRESS_PROXIED_EXPIRED)) {
            return 0;
        }
        t = sws_parse_http_time(h->value.data, h->value.len);
        date = sws_http_response_date(r)->len
               ? sws_parse_http_time(sws_http_response_date(r)->data,
                                     sws_http_response_date(r)->len)
               : sws_time_sec();
        return t != -1 && date != -1 && t < date;
    }
    if ((h = sws_http_header_out(r, "cache-control", 13)) != NULL) {
        return ((p & SWS_COMPRESS_PROXIED_NO_CACHE) && sws_compress_has_token(&h->value, "no-cache"))
               || ((p & SWS_COMPRESS_PROXIED_NO_STORE) && sws_compress_has_token(&h->value, "no-store"))
               || ((p & SWS_COMPRESS_PROXIED_PRIVATE) && sws_compress_has_token(&h->value, "private"));
    }
    if ((p & SWS_COMPRESS_PROXIED_NO_LM) && sws_http_last_modified(r) != -1) {
        return 0;
    }
    etag = sws_http_etag(r);
    if ((p & SWS_COMPRESS_PROXIED_NO_ETAG) && etag != NULL && etag->len != 0) {
        return 0;
    }
    return 1;
}


int
sws_compress_request_ok(sws_http_request_t *r, const sws_compress_coding_conf_t *cc, int resp)
{
    return sws_http_version(r) >= cc->http_version && !sws_compress_disabled(r, cc)
           && sws_compress_proxied_ok(r, cc, resp);
}


sws_int_t
sws_compress_negotiate(sws_http_request_t *r, const sws_compress_loc_conf_t *lcf,
    sws_uint_t allowed, sws_compress_accept_t *a)
{
    const sws_str_t  *ae = sws_http_header_in(r, "accept-encoding", 15);

    if (ae == NULL || ae->len == 0) {
        /* RFC 9110 12.5.3 lets us pick any coding then; nginx (and
         * every cautious server) sends identity */
        a->identity_q = 1000;
        return -1;
    }
    sws_compress_accept_parse(ae->data, ae->len, a);
    return sws_compress_accept_choose(a, allowed, lcf->prefer, lcf->nprefer);
}


sws_int_t
sws_compress_add_vary(sws_http_request_t *r)
{
    const sws_array_t        *headers = sws_http_headers_out(r);
    const sws_http_header_t  *h = headers->elts;
    sws_uint_t                i;

    for (i = 0; i < headers->nelts; i++) {
        if (h[i].hash && sws_str_caseeq_cstr(&h[i].name, "vary")
            && (sws_compress_has_token(&h[i].value, "accept-encoding")
                || (h[i].value.len == 1 && h[i].value.data[0] == '*')))
        {
            return SWS_OK;
        }
    }
    return sws_http_header_out_add(r, &sws_compress_vary, &sws_compress_accept_encoding)
           ? SWS_OK : SWS_ERROR;
}


static sws_int_t
sws_compress_header_filter(sws_http_request_t *r)
{
    sws_int_t                 coding;
    sws_uint_t                c, status, allowed = 0, vary = 0, head;
    off_t                     len;
    sws_http_header_t        *h;
    sws_compress_stream_t    *stream;
    sws_http_transform_t     *t;
    sws_compress_accept_t     accept;
    const sws_str_t          *type;
    sws_compress_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    const sws_compress_coding_conf_t *cc;

    /* a filter before this one acted by Accept-Encoding (gunzip) */
    if (lcf->coding[SWS_COMPRESS_GZIP].vary == 1 && sws_http_gzip_vary(r)
        && sws_compress_add_vary(r) != SWS_OK)
    {
        return SWS_ERROR;
    }
    for (c = 0; c < SWS_COMPRESS_NCODINGS; c++) {
        allowed |= lcf->coding[c].enable ? 1u << c : 0;
    }
    if (allowed == 0) {
        return sws_compress_next_header_filter(r);
    }

    /* A HEAD gets the fields its GET would (RFC 9110 9.3.2): coding,
     * weak ETag, Vary, no length; only no coder runs. */
    head = sws_http_method(r) == SWS_HTTP_HEAD;
    status = sws_http_status(r);
    if ((status != SWS_HTTP_OK && status != SWS_HTTP_FORBIDDEN && status != SWS_HTTP_NOT_FOUND)
        || (sws_http_header_only(r) && !head)
        || ((h = sws_http_header_out(r, "content-encoding", 16)) != NULL && h->value.len)
        || ((h = sws_http_header_out(r, "cache-control", 13)) != NULL
            && sws_compress_has_token(&h->value, "no-transform")))
    {
        return sws_compress_next_header_filter(r);
    }

    type = sws_http_content_type(r);
    len = sws_http_content_length(r);

    for (c = 0; c < SWS_COMPRESS_NCODINGS; c++) {
        cc = &lcf->coding[c];
        if (!(allowed & (1u << c))) {
            continue;
        }
        if (len == 0 || !sws_compress_type_ok(cc, type)) {
            allowed &= ~(1u << c);
            continue;
        }
        /* shorter than *_min_length: no Vary, as from nginx (it would
         * still be coded for a client that refuses identity) */
        if (len < 0 || (size_t) len >= cc->min_length) {
            vary |= (sws_uint_t) cc->vary;
        }
        if (!sws_compress_request_ok(r, cc, 1)) {
            allowed &= ~(1u << c);
        }
    }

    if (vary && allowed != 0 && sws_compress_add_vary(r) != SWS_OK) {
        return SWS_ERROR;
    }
    if (vary && allowed == 0) {
        /* the type would be compressed for another client */
        for (c = 0; c < SWS_COMPRESS_NCODINGS; c++) {
            if (lcf->coding[c].enable && lcf->coding[c].vary && len != 0
                && (len < 0 || (size_t) len >= lcf->coding[c].min_length)
                && sws_compress_type_ok(&lcf->coding[c], type))
            {
                if (sws_compress_add_vary(r) != SWS_OK) {
                    return SWS_ERROR;
                }
                break;
            }
        }
    }
    if (allowed == 0) {
        return sws_compress_next_header_filter(r);
    }

    coding = sws_compress_negotiate(r, lcf, allowed, &accept);
    if (coding < 0) {
        return sws_compress_next_header_filter(r);
    }
    cc = &lcf->coding[coding];
    if ((len > 0 && (size_t) len < cc->min_length && accept.identity_q != 0)
        || sws_http_parent(r) != NULL)
    {
        /* (a subrequest's body is for the module that asked, not for
         * the client's Accept-Encoding: nginx leaves it too) */
        return sws_compress_next_header_filter(r);
    }

    if (cc->vary && sws_compress_add_vary(r) != SWS_OK) {
        return SWS_ERROR;               /* (a short body, coded all the same) */
    }

    if (!head) {
        stream = sws_compress_stream_create(r, (sws_uint_t) coding, cc->level, len);
        if (stream == NULL) {
            return SWS_ERROR;
        }
        t = sws_http_transform_create(r, (sws_uint_t) cc->bufs_num, cc->bufs_size,
                                      sws_compress_run, stream);
        if (t == NULL) {
            return SWS_ERROR;
        }
        sws_http_set_ctx(r, &sws_module, t);
    }

    if (sws_http_header_out_add(r, &sws_compress_content_encoding,
                                &sws_compress_token[coding]) == NULL
        || sws_http_weak_etag(r) != SWS_OK)
    {
        return SWS_ERROR;
    }
    sws_http_set_content_length(r, -1);
    sws_http_allow_ranges(r, 0);
    sws_http_header_out_remove(r, "accept-ranges", 13);

    return sws_compress_next_header_filter(r);
}


/* ---- the body ------------------------------------------------------------ */

/* The coder of the core's body transform. */
static sws_int_t
sws_compress_run(sws_http_request_t *r, void *data, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode)
{
    (void) r;
    return sws_compress_stream_run(data, in, in_end, out, out_end, mode);
}


static sws_int_t
sws_compress_body_filter(sws_http_request_t *r, sws_chain_t *in)
{
    sws_http_transform_t  *t = sws_http_get_ctx(r, &sws_module);

    if (t == NULL) {
        return sws_compress_next_body_filter(r, in);
    }
    return sws_http_transform_filter(r, t, in, sws_compress_next_body_filter);
}


sws_int_t
sws_compress_filter_init(sws_conf_t *cf)
{
    (void) cf;
    sws_compress_next_header_filter = sws_http_insert_header_filter(sws_compress_header_filter);
    sws_compress_next_body_filter = sws_http_insert_body_filter(sws_compress_body_filter);
    return SWS_OK;
}
