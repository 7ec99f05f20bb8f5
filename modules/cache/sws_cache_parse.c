/*
 * The parsers of the fields a cache reads from outside: Cache-Control
 * (with no-cache="f" and private="f" field lists), Age's delta-seconds,
 * Expires' dates in any letter case, and targeted fields such as
 * CDN-Cache-Control (RFC 9213: Structured Field Dictionaries, RFC 8941). No request or shared state here:
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

/* A lifetime directive's value t (-1: invalid) where it may already have
 * one (was, -1: none): an invalid one, or a second one that differs, is 0. */
static time_t
sws_cache_cc_once(time_t was, time_t t)
{
    if (t < 0) {
        return 0;
    }
    return was == -1 || was == t ? t : 0;
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
            /* an invalid value counts as stale (RFC 9111 4.2.1), and so
             * do two that differ (4.2.1 lets a cache take the first or
             * count the response stale: the safe way) */
            cc->max_age = sws_cache_cc_once(cc->max_age, t);
        } else if (sws_cache_token_is(name, n, "s-maxage")) {
            cc->s_maxage = sws_cache_cc_once(cc->s_maxage, t);
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

/* ---- references relative to a target (RFC 3986 5.2) -------------------- */

/* RFC 3986 5.2.4: the dot segments of the path at [p, p + len) (which
 * starts with '/') removed in place (the output never passes the input).
 * Its new length. */
static size_t
sws_cache_remove_dots(u_char *p, size_t len)
{
    u_char  *in = p, *end = p + len, *o = p, *seg;
    size_t   n;

    while (in < end) {
        seg = ++in;                            /* past the '/' */
        while (in < end && *in != '/') {
            in++;
        }
        n = (size_t) (in - seg);
        if (n == 1 && seg[0] == '.') {
            if (in == end) {
                *o++ = '/';
            }
            continue;
        }
        if (n == 2 && seg[0] == '.' && seg[1] == '.') {
            while (o > p && *--o != '/') { /* the last segment goes */ }
            if (in == end) {
                *o++ = '/';
            }
            continue;
        }
        *o++ = '/';
        memmove(o, seg, n);
        o += n;
    }
    if (o == p) {
        *o++ = '/';
    }
    return (size_t) (o - p);
}

size_t
sws_cache_ref_resolve(const u_char *target, size_t tlen, const u_char *ref, size_t len,
    u_char *out)
{
    const u_char  *q, *dir;
    size_t         base, rlen, plen;

    if (tlen == 0 || target[0] != '/') {
        return 0;
    }
    q = memchr(target, '?', tlen);
    base = q ? (size_t) (q - target) : tlen;   /* the target's path */
    if (len == 0 || ref[0] == '?') {
        memcpy(out, target, base);
        if (len) {
            memcpy(out + base, ref, len);
        }
        return base + len;
    }
    dir = target + base;
    while (dir[-1] != '/') {                   /* the target's path starts with '/' */
        dir--;
    }
    q = memchr(ref, '?', len);
    rlen = q ? (size_t) (q - ref) : len;       /* the reference's path */
    memcpy(out, target, (size_t) (dir - target));
    memcpy(out + (dir - target), ref, rlen);
    plen = sws_cache_remove_dots(out, (size_t) (dir - target) + rlen);
    if (len > rlen) {
        memcpy(out + plen, ref + rlen, len - rlen);
    }
    return plen + len - rlen;
}

/* ---- targeted fields (RFC 9213): a Structured Field Dictionary ---------- */

/*
 * RFC 8941's Dictionary, strictly: a member's key, then a value (an Item or
 * an Inner List, with parameters), or parameters alone (the value true).
 * Only what RFC 9213 needs of the value is kept: its type, an Integer's
 * value, a String's span. Any syntax error fails the whole field.
 */
enum {
    SWS_SF_TRUE = 1,
    SWS_SF_FALSE,
    SWS_SF_INTEGER,
    SWS_SF_DECIMAL,
    SWS_SF_STRING,
    SWS_SF_TOKEN,
    SWS_SF_BYTES,
    SWS_SF_INNER_LIST
};

typedef struct {
    const u_char  *p;
    const u_char  *last;
} sws_sf_t;

typedef struct {
    int            type;
    int64_t        integer;
    const u_char  *str;            /* a String's bytes between its quotes */
    const u_char  *str_end;
} sws_sf_item_t;

static int
sws_sf_lcalpha(u_char c)
{
    return c >= 'a' && c <= 'z';
}

static int
sws_sf_alpha(u_char c)
{
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static int
sws_sf_digit(u_char c)
{
    return c >= '0' && c <= '9';
}

static int
sws_sf_tchar(u_char c)
{
    return sws_sf_alpha(c) || sws_sf_digit(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static void
sws_sf_sp(sws_sf_t *s)
{
    while (s->p < s->last && *s->p == ' ') {
        s->p++;
    }
}

static void
sws_sf_ows(sws_sf_t *s)
{
    while (s->p < s->last && (*s->p == ' ' || *s->p == '\t')) {
        s->p++;
    }
}

/* key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" ) */
static int
sws_sf_key(sws_sf_t *s, const u_char **key, size_t *len)
{
    const u_char *k = s->p;

    if (s->p >= s->last || !(sws_sf_lcalpha(*s->p) || *s->p == '*')) {
        return 0;
    }
    for (s->p++; s->p < s->last; s->p++) {
        u_char c = *s->p;

        if (!(sws_sf_lcalpha(c) || sws_sf_digit(c) || c == '_' || c == '-' || c == '.'
              || c == '*'))
        {
            break;
        }
    }
    *key = k;
    *len = (size_t) (s->p - k);
    return 1;
}

static int
sws_sf_number(sws_sf_t *s, sws_sf_item_t *it)
{
    int64_t  n = 0;
    int      neg = 0, digits = 0, frac = -1;

    if (*s->p == '-') {
        neg = 1;
        s->p++;
    }
    if (s->p >= s->last || !sws_sf_digit(*s->p)) {
        return 0;
    }
    for ( ; s->p < s->last; s->p++) {
        u_char c = *s->p;

        if (sws_sf_digit(c)) {
            if (frac >= 0) {
                frac++;
            } else {
                n = n * 10 + (c - '0');
            }
            digits++;
        } else if (c == '.' && frac < 0) {
            if (digits > 12) {
                return 0;
            }
            frac = 0;
        } else {
            break;
        }
        if ((frac < 0 && digits > 15) || (frac >= 0 && digits > 15)) {
            return 0;
        }
    }
    if (frac == 0 || frac > 3) {
        return 0;                      /* "1." or more than 3 decimals */
    }
    it->type = frac > 0 ? SWS_SF_DECIMAL : SWS_SF_INTEGER;
    it->integer = neg ? -n : n;
    return 1;
}

static int
sws_sf_string(sws_sf_t *s, sws_sf_item_t *it)
{
    it->str = ++s->p;
    for ( ; s->p < s->last; s->p++) {
        u_char c = *s->p;

        if (c == '\\') {
            if (++s->p >= s->last || (*s->p != '"' && *s->p != '\\')) {
                return 0;
            }
        } else if (c == '"') {
            it->str_end = s->p++;
            it->type = SWS_SF_STRING;
            return 1;
        } else if (c < 0x20 || c > 0x7e) {
            return 0;
        }
    }
    return 0;                          /* no closing quote */
}

static int
sws_sf_bare_item(sws_sf_t *s, sws_sf_item_t *it)
{
    u_char c;

    if (s->p >= s->last) {
        return 0;
    }
    c = *s->p;
    if (c == '-' || sws_sf_digit(c)) {
        return sws_sf_number(s, it);
    }
    if (c == '"') {
        return sws_sf_string(s, it);
    }
    if (sws_sf_alpha(c) || c == '*') {
        for (s->p++; s->p < s->last && (sws_sf_tchar(*s->p) || *s->p == ':' || *s->p == '/');
             s->p++)
        {
            /* void */
        }
        it->type = SWS_SF_TOKEN;
        return 1;
    }
    if (c == ':') {
        for (s->p++; s->p < s->last && *s->p != ':'; s->p++) {
            if (!(sws_sf_alpha(*s->p) || sws_sf_digit(*s->p) || *s->p == '+' || *s->p == '/'
                  || *s->p == '='))
            {
                return 0;
            }
        }
        if (s->p >= s->last) {
            return 0;
        }
        s->p++;
        it->type = SWS_SF_BYTES;
        return 1;
    }
    if (c == '?') {
        if (s->p + 1 >= s->last || (s->p[1] != '0' && s->p[1] != '1')) {
            return 0;
        }
        it->type = s->p[1] == '1' ? SWS_SF_TRUE : SWS_SF_FALSE;
        s->p += 2;
        return 1;
    }
    return 0;
}

/* *( ";" *SP key [ "=" bare-item ] ): checked, and ignored (RFC 9213 2.2) */
static int
sws_sf_parameters(sws_sf_t *s)
{
    sws_sf_item_t  v;
    const u_char  *key;
    size_t         len;

    while (s->p < s->last && *s->p == ';') {
        s->p++;
        sws_sf_sp(s);
        if (!sws_sf_key(s, &key, &len)) {
            return 0;
        }
        if (s->p < s->last && *s->p == '=') {
            s->p++;
            if (!sws_sf_bare_item(s, &v)) {
                return 0;
            }
        }
    }
    return 1;
}

static int
sws_sf_item_or_inner_list(sws_sf_t *s, sws_sf_item_t *it)
{
    sws_sf_item_t  inner;

    if (s->p < s->last && *s->p == '(') {
        s->p++;
        for ( ;; ) {
            sws_sf_sp(s);
            if (s->p >= s->last) {
                return 0;
            }
            if (*s->p == ')') {
                s->p++;
                it->type = SWS_SF_INNER_LIST;
                return sws_sf_parameters(s);
            }
            if (!sws_sf_bare_item(s, &inner) || !sws_sf_parameters(s)) {
                return 0;
            }
            if (s->p >= s->last || (*s->p != ' ' && *s->p != ')')) {
                return 0;
            }
        }
    }
    return sws_sf_bare_item(s, it) && sws_sf_parameters(s);
}

/* The field names of a String value ("a, b") as "a,b," at w; the bytes. */
static size_t
sws_cache_sf_names(const u_char *p, const u_char *last, u_char *w)
{
    size_t  len = 0;
    int     in = 0;

    for ( ; p < last; p++) {
        if (*p == ' ' || *p == '\t' || *p == ',' || *p == '\\') {
            /* an escaped '"' or '\\' is in no field name: a separator */
            p += *p == '\\' && p + 1 < last;
            if (in) {
                w[len++] = ',';
                in = 0;
            }
            continue;
        }
        w[len++] = sws_tolower(*p);
        in = 1;
    }
    if (in) {
        w[len++] = ',';
    }
    return len;
}

/* A String's bytes (else none) */
static void
sws_cache_sf_span(const sws_sf_item_t *v, sws_str_t *span)
{
    span->data = v->type == SWS_SF_STRING ? (u_char *) v->str : NULL;
    span->len = v->type == SWS_SF_STRING ? (size_t) (v->str_end - v->str) : 0;
}

/* The directive key says, as the dictionary's last member of that key
 * (a later one replaces an earlier one, RFC 8941 4.2.2). Values of a type
 * the directive cannot have are not used (RFC 9213 2.2): as if absent. */
static void
sws_cache_targeted_member(const u_char *key, size_t n, const sws_sf_item_t *v,
    sws_cache_cc_t *cc, sws_str_t *no_cache, sws_str_t *private_)
{
    static const char *const seconds[] = { "max-age", "s-maxage", "stale-while-revalidate",
                                           "stale-if-error", NULL };
    time_t  *slot[4];
    time_t   t;
    int      set = v->type == SWS_SF_TRUE;
    int      i;

    slot[0] = &cc->max_age;
    slot[1] = &cc->s_maxage;
    slot[2] = &cc->swr;
    slot[3] = &cc->sie;
    for (i = 0; seconds[i]; i++) {
        if (sws_cache_token_is(key, n, seconds[i])) {
            t = v->type == SWS_SF_INTEGER && v->integer >= 0 ? (time_t) v->integer : -1;
            *slot[i] = t > SWS_CACHE_ANY_STALE ? SWS_CACHE_ANY_STALE : t;
            return;
        }
    }
    if (sws_cache_token_is(key, n, "no-store")) {
        cc->no_store = set;
    } else if (sws_cache_token_is(key, n, "must-revalidate")) {
        cc->must_revalidate = set;
    } else if (sws_cache_token_is(key, n, "proxy-revalidate")) {
        cc->proxy_revalidate = set;
    } else if (sws_cache_token_is(key, n, "public")) {
        cc->public_ = set;
    } else if (sws_cache_token_is(key, n, "must-understand")) {
        cc->must_understand = set;
    } else if (sws_cache_token_is(key, n, "no-cache")) {
        /* true, or a String of field names (RFC 9111 5.2.2.4) */
        sws_cache_sf_span(v, no_cache);
        cc->no_cache = set || (v->type == SWS_SF_STRING
                               && !sws_cache_cc_names_fields(no_cache->data,
                                                             no_cache->data + no_cache->len));
    } else if (sws_cache_token_is(key, n, "private")) {
        sws_cache_sf_span(v, private_);
        cc->private_ = set || (v->type == SWS_SF_STRING
                               && !sws_cache_cc_names_fields(private_->data,
                                                             private_->data + private_->len));
    }
}

sws_int_t
sws_cache_targeted_parse(const sws_str_t *v, sws_cache_cc_t *cc, u_char *names,
    size_t *names_len)
{
    sws_str_t       no_cache = sws_null_string, private_ = sws_null_string;
    sws_sf_item_t   it;
    sws_sf_t        s;
    const u_char   *key;
    size_t          n;
    sws_cache_cc_t  out;

    s.p = v->data;
    s.last = v->data + v->len;
    sws_sf_sp(&s);
    while (s.last > s.p && s.last[-1] == ' ') {
        s.last--;
    }
    if (s.p == s.last) {
        return SWS_DECLINED;           /* empty: as if absent (RFC 9213 2.2) */
    }
    sws_cache_cc_init(&out);
    for ( ;; ) {
        sws_memzero(&it, sizeof(it));
        if (!sws_sf_key(&s, &key, &n)) {
            return SWS_DECLINED;
        }
        if (s.p < s.last && *s.p == '=') {
            s.p++;
            if (!sws_sf_item_or_inner_list(&s, &it)) {
                return SWS_DECLINED;
            }
        } else {
            it.type = SWS_SF_TRUE;
            if (!sws_sf_parameters(&s)) {
                return SWS_DECLINED;
            }
        }
        sws_cache_targeted_member(key, n, &it, &out, &no_cache, &private_);
        sws_sf_ows(&s);
        if (s.p == s.last) {
            break;
        }
        if (*s.p++ != ',') {
            return SWS_DECLINED;
        }
        sws_sf_ows(&s);
        if (s.p == s.last) {
            return SWS_DECLINED;       /* a trailing comma */
        }
    }
    /* the fields no-cache="..." and private="..." name: not stored */
    *names_len = sws_cache_sf_names(no_cache.data, no_cache.data + no_cache.len, names);
    *names_len += sws_cache_sf_names(private_.data, private_.data + private_.len,
                                     names + *names_len);
    out.strip = *names_len != 0;
    *cc = out;
    return SWS_OK;
}
