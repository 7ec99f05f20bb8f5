/*
 * RFC 9111 rules for a shared cache: the response's Cache-Control (or the
 * targeted field of RFC 9213 that replaces it, CDN-Cache-Control), its
 * freshness lifetime (s-maxage, max-age, Expires against Date, else
 * proxy_cache_valid), its age (Age and Date, 4.2.3), and what must never
 * be stored (no-store, private, Set-Cookie, a request with Authorization
 * unless public, s-maxage or must-revalidate allow it, Vary: *).
 */
#include "sws_cache.h"

/*
 * The field names that no-cache="..." and private="..." of the response's
 * Cache-Control name, lower case, each followed by ',' ("set-cookie,x-a,"),
 * into pool memory.
 */
static sws_int_t
sws_cache_strip_names(sws_http_request_t *r, sws_str_t *out)
{
    const sws_array_t        *hs = sws_http_headers_out(r);
    const sws_http_header_t  *h = hs->elts;
    sws_uint_t                i, pass;
    size_t                    len = 0;

    out->len = 0;
    out->data = NULL;
    for (pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            out->data = sws_pnalloc(sws_http_pool(r), len + 1);
            if (out->data == NULL) {
                return SWS_ERROR;
            }
        }
        for (i = 0; i < hs->nelts; i++) {
            if (h[i].hash && h[i].name.len == 13
                && sws_strncasecmp(h[i].name.data, (u_char *) "cache-control", 13) == 0)
            {
                if (pass == 0) {
                    len += sws_cache_cc_field_names(&h[i].value, NULL);
                } else {
                    out->len += sws_cache_cc_field_names(&h[i].value, out->data + out->len);
                }
            }
        }
    }
    return SWS_OK;
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

time_t
sws_cache_age(time_t response_time, time_t initial_age, time_t now)
{
    return initial_age + (now > response_time ? now - response_time : 0);
}

time_t
sws_cache_response_delay(const sws_cache_ctx_t *ctx)
{
    if (ctx->asked == 0) {             /* not asked */
        return -1;
    }
    /* whole seconds of the time it took, not the seconds the clock turned
     * meanwhile */
    return (time_t) ((sws_current_msec() - ctx->asked) / 1000);
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

/* The heuristic lifetime (RFC 9111 4.2.2) of a response without an
 * explicit one: proxy_cache_heuristic's share of the time between its
 * Last-Modified and its Date, capped; for the heuristically cacheable
 * status codes (RFC 9110 15.1), or any with public. -1: none. */
static time_t
sws_cache_heuristic(sws_http_request_t *r, sws_cache_loc_conf_t *lcf, sws_uint_t status,
    int public_, time_t date)
{
    time_t  lm = sws_http_last_modified(r), t;

    if (lcf->heuristic <= 0 || lm < 0 || lm >= date) {
        return -1;
    }
    switch (status) {
    case 200: case 203: case 204: case 206: case 300: case 301: case 308:
    case 404: case 405: case 410: case 414: case 501:
        break;
    default:
        if (!public_) {
            return -1;
        }
    }
    t = (date - lm) / 100 * lcf->heuristic + (date - lm) % 100 * lcf->heuristic / 100;
    return t < lcf->heuristic_max ? t : lcf->heuristic_max;
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

/* Nothing but whitespace up to the next ',' or the end of v from j. */
static int
sws_cache_vary_member_ends(const sws_str_t *v, size_t j)
{
    for ( ; j < v->len && v->data[j] != ','; j++) {
        if (v->data[j] != ' ' && v->data[j] != '\t') {
            return 0;
        }
    }
    return 1;
}

int
sws_cache_partial_on(sws_http_request_t *r, sws_cache_loc_conf_t *lcf)
{
    return lcf->partial == 1 && sws_http_parent(r) == NULL
           && !sws_cache_valid_names(lcf, SWS_HTTP_PARTIAL_CONTENT);
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
            if (c == '*' && (p == vary->data || p[-1] == ',')
                && sws_cache_vary_member_ends(&h[i].value, j + 1))
            {
                /* a member "*" (not a '*' inside a field name) */
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

/* The response's lines of the field name (lower case) joined by ",", in
 * v (pool memory when there are several); how many lines. */
static sws_uint_t
sws_cache_field_value(sws_http_request_t *r, const sws_str_t *name, sws_str_t *v)
{
    const sws_array_t        *out = sws_http_headers_out(r);
    const sws_http_header_t  *h = out->elts;
    sws_uint_t                i, n = 0;
    size_t                    len = 0;
    u_char                   *p;

    for (i = 0; i < out->nelts; i++) {
        if (h[i].hash && h[i].name.len == name->len
            && sws_strncasecmp(h[i].name.data, name->data, name->len) == 0)
        {
            if (n++ == 0) {
                *v = h[i].value;
            }
            len += h[i].value.len + 1;
        }
    }
    if (n < 2) {
        return n;
    }
    p = sws_pnalloc(sws_http_pool(r), len);
    if (p == NULL) {
        return 0;
    }
    v->data = p;
    for (i = 0; i < out->nelts; i++) {
        if (h[i].hash && h[i].name.len == name->len
            && sws_strncasecmp(h[i].name.data, name->data, name->len) == 0)
        {
            if (p > v->data) {
                *p++ = ',';
            }
            p = sws_cpymem(p, h[i].value.data, h[i].value.len);
        }
    }
    v->len = (size_t) (p - v->data);
    return n;
}

/*
 * RFC 9213 2.1: the first field of the target list (CDN-Cache-Control by
 * default) present with a valid, non-empty value: its directives in cc and
 * the field names its no-cache="..." and private="..." name in names.
 * 0: none, Cache-Control and Expires decide.
 */
static int
sws_cache_targeted(sws_http_request_t *r, sws_cache_loc_conf_t *lcf, sws_cache_cc_t *cc,
    sws_str_t *names)
{
    const sws_str_t  *t;
    sws_str_t         v;
    sws_uint_t        i;

    if (lcf->targets == NULL) {
        return 0;
    }
    t = lcf->targets->elts;
    for (i = 0; i < lcf->targets->nelts; i++) {
        if (sws_cache_field_value(r, &t[i], &v) == 0 || v.len == 0) {
            continue;
        }
        names->data = sws_pnalloc(sws_http_pool(r), v.len);
        if (names->data != NULL
            && sws_cache_targeted_parse(&v, cc, names->data, &names->len) == SWS_OK)
        {
            return 1;
        }
    }
    return 0;
}

/* proxy_cache_targeted_hide: the target list's fields added to the names
 * not stored ("a,b,"), so that hits do not send them either. */
static sws_int_t
sws_cache_strip_targets(sws_http_request_t *r, sws_cache_loc_conf_t *lcf, sws_str_t *strip)
{
    const sws_str_t  *t = lcf->targets->elts;
    size_t            len = strip->len;
    sws_uint_t        i;
    u_char           *p;

    for (i = 0; i < lcf->targets->nelts; i++) {
        len += t[i].len + 1;
    }
    p = sws_pnalloc(sws_http_pool(r), len ? len : 1);
    if (p == NULL) {
        return SWS_ERROR;
    }
    if (strip->len) {
        memcpy(p, strip->data, strip->len);
    }
    strip->data = p;
    p += strip->len;
    for (i = 0; i < lcf->targets->nelts; i++) {
        p = sws_cpymem(p, t[i].data, t[i].len);
        *p++ = ',';
    }
    strip->len = (size_t) (p - strip->data);
    return SWS_OK;
}

const char *
sws_cache_storable(sws_http_request_t *r, sws_cache_loc_conf_t *lcf,
    sws_cache_file_header_t *fh, sws_str_t *vary, time_t delay, sws_str_t *strip, int update)
{
    u_char                   *p;
    static const sws_str_t    set_cookie = sws_string("set-cookie");
    const sws_array_t        *out = sws_http_headers_out(r);
    const sws_http_header_t  *h = out->elts;
    sws_cache_cc_t            cc;
    sws_uint_t                i, status = sws_http_status(r), vstatus;
    time_t                    now = sws_time_sec(), date = -1, expires = -1, age = -2;
    time_t                    lifetime = -1, apparent, t;
    int                       has_expires = 0, cookie = 0, targeted;
    sws_str_t                 tnames = sws_null_string;

    sws_cache_cc_init(&cc);
    targeted = sws_cache_targeted(r, lcf, &cc, &tnames);
    for (i = 0; i < out->nelts; i++) {
        const sws_str_t *n = &h[i].name;

        if (h[i].hash == 0) {
            continue;
        }
        if (n->len == 13 && sws_strncasecmp(n->data, (u_char *) "cache-control", 13) == 0) {
            /* RFC 9213: a targeted field decides, Cache-Control is
             * for the caches after this one */
            if (!(lcf->ignore & SWS_CACHE_IGN_CC) && !targeted) {
                sws_cache_cc_parse(&h[i].value, &cc);
            }
        } else if (n->len == 10
                   && sws_strncasecmp(n->data, (u_char *) "set-cookie", 10) == 0)
        {
            cookie = !(lcf->ignore & SWS_CACHE_IGN_SET_COOKIE);
        } else if (n->len == 7 && sws_strncasecmp(n->data, (u_char *) "expires", 7) == 0) {
            /* an invalid date means "already expired" (RFC 9111 5.3), and
             * so do two lines that differ (4.2.1: the first, or stale) */
            t = sws_cache_parse_date(h[i].value.data, h[i].value.len);
            expires = !has_expires || t == expires ? t : -1;
            has_expires = 1;
        } else if (n->len == 4 && sws_strncasecmp(n->data, (u_char *) "date", 4) == 0) {
            date = sws_parse_http_time(h[i].value.data, h[i].value.len);
        } else if (n->len == 3 && sws_strncasecmp(n->data, (u_char *) "age", 3) == 0) {
            /* the first line counts (RFC 9111 5.1), and of a list in
             * one line (the lines combined, RFC 9110 5.3) the first
             * member; one that is not delta-seconds makes the response
             * stale (1.2.2) */
            if (age == -2) {
                const u_char *comma = memchr(h[i].value.data, ',', h[i].value.len);

                age = sws_cache_delta(h[i].value.data,
                                      comma ? comma : h[i].value.data + h[i].value.len);
                if (age < 0) {
                    return "its Age is not a number: stale";
                }
            }
        }
    }
    if (targeted) {
        has_expires = 0;               /* nor does Expires count (RFC 9213 2.1) */
    }
    strip->len = 0;
    if (targeted) {
        *strip = tnames;
    } else if (cc.strip && sws_cache_strip_names(r, strip) != SWS_OK) {
        return "of no memory";
    }
    if (lcf->targeted_hide && lcf->targets->nelts
        && sws_cache_strip_targets(r, lcf, strip) != SWS_OK)
    {
        return "of no memory";
    }
    if (cookie && !sws_cache_strips(strip, &set_cookie)) {
        if (!update) {
            return "it sets a cookie"; /* unless no-cache="set-cookie" drops it */
        }
        /* an update (RFC 9111 3.2): the cookie is this client's, the
         * other fields update the entry */
        p = sws_pnalloc(sws_http_pool(r), strip->len + sizeof("set-cookie,") - 1);
        if (p == NULL) {
            return "of no memory";
        }
        memcpy(p, strip->data, strip->len);
        memcpy(p + strip->len, "set-cookie,", sizeof("set-cookie,") - 1);
        strip->data = p;
        strip->len += sizeof("set-cookie,") - 1;
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
    if (status == SWS_HTTP_NOT_MODIFIED) {
        /* the answer to the client's own If-None-Match: no representation */
        return "it is a 304 to the client's condition";
    }
    /* a part is stored as a part of its representation, valid as long as
     * the whole would be (proxy_cache_partial: sws_cache_partial.c) */
    vstatus = status;
    if (status == SWS_HTTP_PARTIAL_CONTENT && sws_cache_partial_on(r, lcf)) {
        vstatus = SWS_HTTP_OK;
    } else if (status == SWS_HTTP_PARTIAL_CONTENT && !sws_cache_valid_names(lcf, status)) {
        /* a part is never served as the whole (RFC 9111 3.3). Unless
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
    /* 4.2.3: corrected_age_value, the Age plus the time the answer took */
    age = (age < 0 ? 0 : age) + (delay > 0 ? delay : 0);
    if (lifetime < 0 && !cc.no_cache && sws_cache_valid_for(lcf, vstatus) < 0) {
        /* nothing explicit, nothing configured: a share of the time since
         * Last-Modified (RFC 9111 4.2.2) */
        lifetime = sws_cache_heuristic(r, lcf, status, cc.public_, date != -1 ? date : now);
    }
    if (lifetime < 0) {
        /* nothing explicit: proxy_cache_valid, counted from now */
        lifetime = sws_cache_valid_for(lcf, vstatus);
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
