/*
 * RFC 9111 rules for a shared cache: the response's Cache-Control, its
 * freshness lifetime (s-maxage, max-age, Expires against Date, else
 * proxy_cache_valid), its age (Age and Date, 4.2.3), and what must never
 * be stored (no-store, private, Set-Cookie, a request with Authorization
 * unless public, s-maxage or must-revalidate allow it, Vary: *).
 */
#include "sws_cache.h"

/* delta-seconds: digits only, saturating; -1 if none or anything else
 * follows ("12abc" is invalid, RFC 9111 1.2.2). max-age="60" is tolerated. */
static time_t
sws_cache_delta(const u_char *p, const u_char *last)
{
    time_t  t = 0;
    int     any = 0, quoted = 0;

    if (p < last && *p == '"') {
        quoted = 1;
        p++;
    }
    for (; p < last && *p >= '0' && *p <= '9'; p++) {
        any = 1;
        if (t < ((time_t) 1 << 40)) {
            t = t * 10 + (*p - '0');
        }
    }
    if (quoted && p < last && *p == '"') {
        p++;
    }
    while (p < last && (*p == ' ' || *p == '\t')) {
        p++;
    }
    return any && p == last ? t : -1;
}

static int
sws_cache_token_is(const u_char *p, size_t n, const char *name)
{
    size_t  len = strlen(name);

    return n == len && sws_strncasecmp((u_char *) p, (u_char *) name, len) == 0;
}

void
sws_cache_cc_parse(const sws_str_t *v, sws_cache_cc_t *cc)
{
    const u_char  *p = v->data, *last = v->data + v->len, *name, *val, *end;
    size_t         n;
    time_t         t;

    while (p < last) {
        while (p < last && (*p == ' ' || *p == '\t' || *p == ',')) {
            p++;
        }
        name = p;
        while (p < last && *p != '=' && *p != ',' && *p != ' ' && *p != '\t') {
            p++;
        }
        n = (size_t) (p - name);
        val = end = NULL;
        if (p < last && *p == '=') {
            val = ++p;
            if (p < last && *p == '"') {
                p++;
                while (p < last && *p != '"') {
                    p++;
                }
                if (p < last) {
                    p++;
                }
            } else {
                while (p < last && *p != ',') {
                    p++;
                }
            }
            end = p;
        }
        if (n == 0) {
            if (p < last) {
                p++;
            }
            continue;
        }
        t = val ? sws_cache_delta(val, end) : -1;
        if (sws_cache_token_is(name, n, "no-store")) {
            cc->no_store = 1;
        } else if (sws_cache_token_is(name, n, "no-cache")) {
            /* no-cache="field" names fields not to send unvalidated: we
             * keep it simple and revalidate the whole response. */
            cc->no_cache = 1;
        } else if (sws_cache_token_is(name, n, "private")) {
            cc->private_ = 1;
        } else if (sws_cache_token_is(name, n, "public")) {
            cc->public_ = 1;
        } else if (sws_cache_token_is(name, n, "must-revalidate")) {
            cc->must_revalidate = 1;
        } else if (sws_cache_token_is(name, n, "proxy-revalidate")) {
            cc->proxy_revalidate = 1;
        } else if (sws_cache_token_is(name, n, "max-age")) {
            /* an invalid value counts as stale (RFC 9111 4.2.1); of two,
             * the first one holds (4.2.1) */
            if (cc->max_age == -1) {
                cc->max_age = t >= 0 ? t : 0;
            }
        } else if (sws_cache_token_is(name, n, "s-maxage")) {
            if (cc->s_maxage == -1) {
                cc->s_maxage = t >= 0 ? t : 0;
            }
        } else if (sws_cache_token_is(name, n, "stale-while-revalidate")) {
            cc->swr = t >= 0 ? t : 0;
        } else if (sws_cache_token_is(name, n, "stale-if-error")) {
            cc->sie = t >= 0 ? t : 0;
        } else if (sws_cache_token_is(name, n, "only-if-cached")) {
            cc->only_if_cached = 1;
        } else if (sws_cache_token_is(name, n, "must-understand")) {
            cc->must_understand = 1;
        } else if (sws_cache_token_is(name, n, "min-fresh")) {
            cc->min_fresh = t >= 0 ? t : 0;
        } else if (sws_cache_token_is(name, n, "max-stale")) {
            /* without a value, or an invalid one: any staleness (5.2.1.2) */
            cc->max_stale = t >= 0 ? t : SWS_CACHE_ANY_STALE;
        }
    }
}

/* The final status codes whose caching this cache implements (RFC 9110
 * 15: the heuristically cacheable ones, and the redirects). */
static int
sws_cache_status_understood(sws_uint_t status)
{
    switch (status) {
    case 200: case 203: case 204: case 300: case 301: case 302: case 307: case 308:
    case 404: case 405: case 410: case 414: case 501:
        return 1;
    }
    return 0;
}

static void
sws_cache_cc_init(sws_cache_cc_t *cc)
{
    sws_memzero(cc, sizeof(*cc));
    cc->max_age = cc->s_maxage = cc->swr = cc->sie = cc->min_fresh = cc->max_stale = -1;
}

time_t
sws_cache_age(time_t response_time, time_t initial_age, time_t now)
{
    return initial_age + (now > response_time ? now - response_time : 0);
}

/* The validity proxy_cache_valid gives status, or -1. */
static time_t
sws_cache_valid_for(sws_cache_loc_conf_t *lcf, sws_uint_t status)
{
    sws_cache_valid_t  *v;
    sws_uint_t          i;

    if (lcf->valid == NULL) {
        return -1;
    }
    v = lcf->valid->elts;
    for (i = 0; i < lcf->valid->nelts; i++) {
        if (v[i].status == status || v[i].status == 0) {
            return v[i].valid;
        }
    }
    return -1;
}

/* proxy_cache_valid names status itself ("any" does not count). */
static int
sws_cache_valid_names(sws_cache_loc_conf_t *lcf, sws_uint_t status)
{
    sws_cache_valid_t  *v;
    sws_uint_t          i;

    if (lcf->valid == NULL) {
        return 0;
    }
    v = lcf->valid->elts;
    for (i = 0; i < lcf->valid->nelts; i++) {
        if (v[i].status == status) {
            return 1;
        }
    }
    return 0;
}

/* "accept-encoding,accept-language" from the Vary fields (lower case,
 * whitespace dropped), into pool memory; "*" gives len 1 "*". */
static sws_int_t
sws_cache_vary_names(sws_http_request_t *r, sws_str_t *vary)
{
    const sws_array_t        *out = sws_http_headers_out(r);
    const sws_http_header_t  *h = out->elts;
    sws_uint_t                i;
    size_t                    len = 0, j;
    u_char                   *p;

    vary->len = 0;
    vary->data = NULL;
    for (i = 0; i < out->nelts; i++) {
        if (h[i].hash && h[i].name.len == 4 && sws_strncasecmp(h[i].name.data,
                                                                (u_char *) "vary", 4) == 0)
        {
            len += h[i].value.len + 1;
        }
    }
    if (len == 0) {
        return SWS_OK;
    }
    p = sws_pnalloc(sws_http_pool(r), len);
    if (p == NULL) {
        return SWS_ERROR;
    }
    vary->data = p;
    for (i = 0; i < out->nelts; i++) {
        if (!(h[i].hash && h[i].name.len == 4
              && sws_strncasecmp(h[i].name.data, (u_char *) "vary", 4) == 0))
        {
            continue;
        }
        for (j = 0; j < h[i].value.len; j++) {
            u_char c = h[i].value.data[j];
            if (c == ' ' || c == '\t') {
                continue;
            }
            if (c == '*') {
                vary->data[0] = '*';
                vary->len = 1;
                return SWS_OK;
            }
            if (c == ',' && (p == vary->data || p[-1] == ',')) {
                continue;
            }
            *p++ = sws_tolower(c);
        }
        if (p > vary->data && p[-1] != ',') {
            *p++ = ',';
        }
    }
    while (p > vary->data && p[-1] == ',') {
        p--;
    }
    vary->len = (size_t) (p - vary->data);
    return SWS_OK;
}

const char *
sws_cache_storable(sws_http_request_t *r, sws_cache_loc_conf_t *lcf,
    sws_cache_file_header_t *fh, sws_str_t *vary)
{
    const sws_array_t        *out = sws_http_headers_out(r);
    const sws_http_header_t  *h = out->elts;
    sws_cache_cc_t            cc;
    sws_uint_t                i, status = sws_http_status(r);
    time_t                    now = sws_time_sec(), date = -1, expires = -1, age = 0;
    time_t                    lifetime = -1, apparent;
    int                       has_expires = 0;

    sws_cache_cc_init(&cc);
    for (i = 0; i < out->nelts; i++) {
        const sws_str_t *n = &h[i].name;

        if (h[i].hash == 0) {
            continue;
        }
        if (n->len == 13 && sws_strncasecmp(n->data, (u_char *) "cache-control", 13) == 0) {
            if (!(lcf->ignore & SWS_CACHE_IGN_CC)) {
                sws_cache_cc_parse(&h[i].value, &cc);
            }
        } else if (n->len == 10
                   && sws_strncasecmp(n->data, (u_char *) "set-cookie", 10) == 0)
        {
            if (!(lcf->ignore & SWS_CACHE_IGN_SET_COOKIE)) {
                return "it sets a cookie";
            }
        } else if (n->len == 7 && sws_strncasecmp(n->data, (u_char *) "expires", 7) == 0) {
            has_expires = 1;
            /* an invalid date means "already expired" (RFC 9111 5.3) */
            expires = sws_parse_http_time(h[i].value.data, h[i].value.len);
        } else if (n->len == 4 && sws_strncasecmp(n->data, (u_char *) "date", 4) == 0) {
            date = sws_parse_http_time(h[i].value.data, h[i].value.len);
        } else if (n->len == 3 && sws_strncasecmp(n->data, (u_char *) "age", 3) == 0) {
            age = sws_cache_delta(h[i].value.data, h[i].value.data + h[i].value.len);
            if (age < 0) {
                age = 0;
            }
        }
    }
    if (date == -1 && sws_http_upstream_get(r)) {
        date = sws_http_upstream_date(sws_http_upstream_get(r));   /* hidden from the client */
    }
    if (cc.must_understand) {
        /* RFC 9111 5.2.2.3: stored only if its status code is understood,
         * and then no-store does not apply */
        if (!sws_cache_status_understood(status)) {
            return "of must-understand with a status code not understood";
        }
    } else if (cc.no_store) {
        return "of no-store";
    }
    if (status == SWS_HTTP_PARTIAL_CONTENT && !sws_cache_valid_names(lcf, status)) {
        /* a part is never served as the whole (RFC 9111 3.3); Range
         * requests are answered from complete entries. Unless
         * proxy_cache_valid names 206: parts kept under keys of their
         * own (slice's $slice_range), as nginx does */
        return "it is partial (206)";
    }
    if (cc.private_) {
        return "it is private";
    }
    /* RFC 9111 3.5: a shared cache keeps an answer to a request with
     * credentials only when the response says it may. */
    if (sws_http_header_in(r, "authorization", 13) != NULL
        && !cc.public_ && cc.s_maxage < 0 && !cc.must_revalidate)
    {
        return "the request had Authorization";
    }
    if (lcf->ignore & SWS_CACHE_IGN_VARY) {
        vary->len = 0;
    } else {
        if (sws_cache_vary_names(r, vary) != SWS_OK) {
            return "of no memory";
        }
        if (vary->len == 1 && vary->data[0] == '*') {
            return "of Vary: *";
        }
    }

    if (cc.s_maxage >= 0) {
        lifetime = cc.s_maxage;
    } else if (cc.max_age >= 0) {
        lifetime = cc.max_age;
    } else if (has_expires && !(lcf->ignore & SWS_CACHE_IGN_EXPIRES)) {
        lifetime = expires == -1 ? 0 : expires - (date != -1 ? date : now);
        if (lifetime < 0) {
            lifetime = 0;
        }
    }
    apparent = date != -1 && now > date ? now - date : 0;
    if (lifetime < 0) {
        /* nothing explicit: proxy_cache_valid, counted from now */
        lifetime = sws_cache_valid_for(lcf, status);
        if (lifetime < 0 && !cc.no_cache) {
            return "no validity is known for it";
        }
        apparent = 0;
        age = 0;
    }
    if (lifetime <= 0 && !cc.no_cache) {
        return "it is already stale";
    }

    sws_memzero(fh, sizeof(*fh));
    fh->status = (uint16_t) status;
    fh->response_time = now;
    fh->initial_age = apparent > age ? apparent : age;
    fh->fresh_until = now + (lifetime > 0 ? lifetime : 0) - fh->initial_age;
    if (cc.no_cache) {
        fh->flags |= SWS_CACHE_F_NO_CACHE;
        fh->fresh_until = 0;
    } else if (fh->fresh_until <= now) {
        return "it is stale on arrival (Age)";
    }
    if (cc.must_revalidate || cc.proxy_revalidate || cc.s_maxage >= 0) {
        fh->flags |= SWS_CACHE_F_MUST_REVALIDATE;   /* s-maxage implies it (5.2.2.10) */
    }
    fh->swr = cc.swr > 0 ? cc.swr : 0;
    fh->sie = cc.sie > 0 ? cc.sie : 0;
    fh->last_modified = sws_http_last_modified(r);
    if (fh->last_modified < -1) {
        fh->last_modified = -1;
    }
    return NULL;
}

void
sws_cache_cc_request(sws_http_request_t *r, sws_cache_cc_t *cc)
{
    const sws_array_t        *in = sws_http_headers_in(r);
    const sws_http_header_t  *h = in->elts;
    sws_uint_t                i;

    sws_cache_cc_init(cc);
    for (i = 0; i < in->nelts; i++) {
        if (h[i].name.len == 13
            && sws_strncasecmp(h[i].name.data, (u_char *) "cache-control", 13) == 0)
        {
            sws_cache_cc_parse(&h[i].value, cc);
        }
    }
}
