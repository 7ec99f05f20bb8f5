/*
 * The parsers of the fields a cache reads from outside: Cache-Control
 * (with no-cache="f" and private="f" field lists), Age's delta-seconds,
 * and Expires' dates in any letter case. No request or shared state here:
 * tests/fuzz/fuzz_cache_parse.c drives them with any bytes.
 */
#include "sws_cache.h"

/* delta-seconds: digits only, saturating; -1 if none or anything else
 * follows ("12abc" is invalid, RFC 9111 1.2.2). max-age="60" is tolerated. */
time_t
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

/* The next directive of a Cache-Control value at *pp: its name and its
 * value as written (quotes kept; NULL data: none). 0 at the end. */
static int
sws_cache_cc_next(const u_char **pp, const u_char *last, const u_char **name, size_t *n,
    const u_char **val, const u_char **end)
{
    const u_char *p = *pp;

    for ( ;; ) {
        while (p < last && (*p == ' ' || *p == '\t' || *p == ',')) {
            p++;
        }
        if (p >= last) {
            *pp = p;
            return 0;
        }
        *name = p;
        while (p < last && *p != '=' && *p != ',' && *p != ' ' && *p != '\t') {
            p++;
        }
        *n = (size_t) (p - *name);
        *val = *end = NULL;
        if (p < last && *p == '=') {
            *val = ++p;
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
            *end = p;
        }
        if (*n) {
            *pp = p;
            return 1;
        }
        if (p < last) {
            p++;
        }
    }
}

/* A no-cache or private value names fields (one, or a quoted list): not
 * an empty one. */
static int
sws_cache_cc_names_fields(const u_char *val, const u_char *end)
{
    for ( ; val && val < end; val++) {
        if (*val != '"' && *val != ' ' && *val != '\t' && *val != ',') {
            return 1;
        }
    }
    return 0;
}

void
sws_cache_cc_parse(const sws_str_t *v, sws_cache_cc_t *cc)
{
    const u_char  *p = v->data, *last = v->data + v->len, *name, *val, *end;
    size_t         n;
    time_t         t;

    while (sws_cache_cc_next(&p, last, &name, &n, &val, &end)) {
        t = val ? sws_cache_delta(val, end) : -1;
        if (sws_cache_token_is(name, n, "no-store")) {
            cc->no_store = 1;
        } else if (sws_cache_token_is(name, n, "no-cache")) {
            /* no-cache="field": stored and reused without those fields
             * (RFC 9111 5.2.2.4); sws_cache_strip_names lists them */
            if (sws_cache_cc_names_fields(val, end)) {
                cc->strip = 1;
            } else {
                cc->no_cache = 1;
            }
        } else if (sws_cache_token_is(name, n, "private")) {
            /* private="field": those fields are not stored (5.2.2.7) */
            if (sws_cache_cc_names_fields(val, end)) {
                cc->strip = 1;
            } else {
                cc->private_ = 1;
            }
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

void
sws_cache_cc_init(sws_cache_cc_t *cc)
{
    sws_memzero(cc, sizeof(*cc));
    cc->max_age = cc->s_maxage = cc->swr = cc->sie = cc->min_fresh = cc->max_stale = -1;
}

/*
 * The field names of one Cache-Control value's no-cache="..." and
 * private="..." (lower case, each followed by ','), written at w (NULL:
 * measured only). Returns how many bytes.
 */
size_t
sws_cache_cc_field_names(const sws_str_t *v, u_char *w)
{
    const u_char  *p = v->data, *last = v->data + v->len, *name, *val, *end;
    size_t         n, len = 0;
    int            in = 0;

    while (sws_cache_cc_next(&p, last, &name, &n, &val, &end)) {
        if (val == NULL || !(sws_cache_token_is(name, n, "no-cache")
                             || sws_cache_token_is(name, n, "private")))
        {
            continue;
        }
        /* "a, b" or a: names split at ',' and whitespace */
        for ( ; val < end; val++) {
            if (*val == '"' || *val == ' ' || *val == '\t' || *val == ',') {
                if (in) {
                    if (w) {
                        w[len] = ',';
                    }
                    len++;
                    in = 0;
                }
                continue;
            }
            if (w) {
                w[len] = sws_tolower(*val);
            }
            len++;
            in = 1;
        }
        if (in) {
            if (w) {
                w[len] = ',';
            }
            len++;
            in = 0;
        }
    }
    return len;
}

int
sws_cache_strips(const sws_str_t *names, const sws_str_t *name)
{
    const u_char *p = names->data, *last = names->data + names->len, *comma;

    for ( ; p < last; p = comma + 1) {
        comma = memchr(p, ',', (size_t) (last - p));
        if (comma == NULL) {
            return 0;
        }
        if ((size_t) (comma - p) == name->len
            && sws_strncasecmp((u_char *) p, name->data, name->len) == 0)
        {
            return 1;
        }
    }
    return 0;
}

/*
 * An HTTP date in any letter case ("sun, 06 NOV 2044 08:49:37 gmt"), as
 * the best caches read Expires: each word's first letter upper case, the
 * rest lower, "GMT" whole. -1 if not a date.
 */
time_t
sws_cache_parse_date(const u_char *p, size_t len)
{
    u_char  buf[64];
    size_t  i;
    int     first = 1;

    if (len >= sizeof(buf)) {
        return -1;
    }
    for (i = 0; i < len; i++) {
        u_char c = p[i];

        if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
            buf[i] = first ? (u_char) (c & ~0x20) : (u_char) (c | 0x20);
            first = 0;
        } else {
            buf[i] = c;
            first = 1;
        }
    }
    if (len >= 3 && sws_strncasecmp(buf + len - 3, (u_char *) "gmt", 3) == 0) {
        memcpy(buf + len - 3, "GMT", 3);
    }
    return sws_parse_http_time(buf, len);
}
