/*
 * Location matching. Built once at configuration time, then read-only:
 *
 *  - exact locations: a sorted array, binary search;
 *  - prefix locations (plain and ^~): one sorted array where each entry
 *    knows its parent, the longest other prefix location that is a prefix
 *    of it. The longest prefix of a URI is found by a binary search for the
 *    greatest entry <= URI, then by walking up the parents to the first one
 *    no longer than the common prefix of that entry and the URI (every
 *    location that is a prefix of the URI sorts between itself and the URI,
 *    so it is an ancestor of that entry). O(log n * len + depth);
 *  - regexes: sws_regex (PCRE2, JIT when available), tried in
 *    configuration order; the one that matched is told to the caller, whose
 *    request takes its captures ($1 ...).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sws_http_location_match.h"
#include "sws_swar.h"

typedef struct sws_loc_item_s sws_loc_item_t;
struct sws_loc_item_s {
    sws_str_t        name;
    void            *data;
    sws_int_t        parent;     /* index into the prefix array, or -1 */
    unsigned         exact:1;
    unsigned         noregex:1;
    sws_loc_item_t  *next;       /* collection list, until finalize */
};

typedef struct sws_loc_regex_s sws_loc_regex_t;
struct sws_loc_regex_s {
    sws_regex_t      *re;
    void             *data;
    sws_loc_regex_t  *next;
};

struct sws_http_loc_matcher_s {
    sws_pool_t        *pool;

    sws_loc_item_t    *items;        /* exact and prefix, as added */
    sws_uint_t         nexact;
    sws_uint_t         nprefix;

    sws_loc_item_t    *exact;        /* sorted arrays, after finalize */
    sws_loc_item_t    *prefix;

    sws_loc_regex_t   *regex;        /* in configuration order */
    sws_loc_regex_t  **regex_last;
    sws_uint_t         nregex;

    unsigned           finalized:1;
};


sws_http_loc_matcher_t *
sws_http_loc_matcher_create(sws_pool_t *pool)
{
    sws_http_loc_matcher_t  *m;

    m = sws_pcalloc(pool, sizeof(sws_http_loc_matcher_t));
    if (m == NULL) {
        return NULL;
    }

    m->pool = pool;
    m->regex_last = &m->regex;

    return m;
}


static const char *
sws_http_loc_errf(sws_pool_t *pool, const char *fmt, ...) SWS_PRINTF(2, 3);

static const char *
sws_http_loc_errf(sws_pool_t *pool, const char *fmt, ...)
{
    va_list  args;
    int      n;
    char    *s;

    va_start(args, fmt);
    n = vsnprintf(NULL, 0, fmt, args);
    va_end(args);

    if (n < 0 || (s = sws_pnalloc(pool, n + 1)) == NULL) {
        return "out of memory";
    }

    va_start(args, fmt);
    vsnprintf(s, n + 1, fmt, args);
    va_end(args);

    return s;
}


static sws_int_t
sws_http_loc_add_regex(sws_http_loc_matcher_t *m, sws_http_loc_kind_t kind,
    const sws_str_t *pattern, void *data, const char **err)
{
    sws_regex_t      *code;
    sws_loc_regex_t  *re;

    code = sws_regex_compile(m->pool, pattern,
                             kind == SWS_LOC_REGEX_CASELESS ? SWS_REGEX_CASELESS : 0, err);
    if (code == NULL) {
        return SWS_ERROR;
    }

    re = sws_palloc(m->pool, sizeof(sws_loc_regex_t));
    if (re == NULL) {
        *err = "out of memory";
        return SWS_ERROR;
    }

    re->re = code;
    re->data = data;
    re->next = NULL;
    *m->regex_last = re;
    m->regex_last = &re->next;
    m->nregex++;

    return SWS_OK;
}


sws_int_t
sws_http_loc_matcher_add(sws_http_loc_matcher_t *m, sws_http_loc_kind_t kind,
    const sws_str_t *pattern, void *data, const char **err)
{
    int              exact;
    sws_loc_item_t  *it;

    switch (kind) {
    case SWS_LOC_REGEX:
    case SWS_LOC_REGEX_CASELESS:
        m->finalized = 0;
        return sws_http_loc_add_regex(m, kind, pattern, data, err);
    case SWS_LOC_EXACT:
    case SWS_LOC_PREFIX:
    case SWS_LOC_PREFIX_NOREGEX:
        break;
    default:
        *err = "invalid location kind";
        return SWS_ERROR;
    }

    exact = (kind == SWS_LOC_EXACT);

    /* plain and ^~ prefixes share one namespace; exact ones have their own */
    for (it = m->items; it; it = it->next) {
        if ((int) it->exact == exact && it->name.len == pattern->len
            && (pattern->len == 0
                || memcmp(it->name.data, pattern->data, pattern->len) == 0))
        {
            *err = sws_http_loc_errf(m->pool, "duplicate location \"%.*s\"",
                                     (int) pattern->len, (char *) pattern->data);
            return SWS_ERROR;
        }
    }

    it = sws_palloc(m->pool, sizeof(sws_loc_item_t));
    if (it == NULL) {
        *err = "out of memory";
        return SWS_ERROR;
    }

    it->name.len = pattern->len;
    it->name.data = sws_pnalloc(m->pool, pattern->len + 1);
    if (it->name.data == NULL) {
        *err = "out of memory";
        return SWS_ERROR;
    }
    if (pattern->len) {
        memcpy(it->name.data, pattern->data, pattern->len);
    }
    it->name.data[pattern->len] = '\0';

    it->data = data;
    it->parent = -1;
    it->exact = exact;
    it->noregex = (kind == SWS_LOC_PREFIX_NOREGEX);
    it->next = m->items;
    m->items = it;

    if (exact) {
        m->nexact++;
    } else {
        m->nprefix++;
    }
    m->finalized = 0;

    return SWS_OK;
}


/* Byte order, a prefix before its extensions. */
static int
sws_http_loc_cmp(const u_char *a, size_t alen, const u_char *b, size_t blen)
{
    int     rc;
    size_t  n = sws_min(alen, blen);

    /* (by words: an exact location is found in a few of these a request) */
    rc = sws_swar_cmp(a, b, n);
    if (rc != 0) {
        return rc;
    }
    return (alen > blen) - (alen < blen);
}


static int
sws_http_loc_qsort_cmp(const void *one, const void *two)
{
    const sws_loc_item_t  *a = one, *b = two;

    return sws_http_loc_cmp(a->name.data, a->name.len, b->name.data, b->name.len);
}


sws_int_t
sws_http_loc_matcher_finalize(sws_http_loc_matcher_t *m)
{
    sws_uint_t       ie, ip, i, depth;
    sws_int_t       *stack;
    sws_loc_item_t  *it, *e;

    m->exact = NULL;
    m->prefix = NULL;

    if (m->nexact) {
        m->exact = sws_palloc(m->pool, m->nexact * sizeof(sws_loc_item_t));
        if (m->exact == NULL) {
            return SWS_ERROR;
        }
    }
    if (m->nprefix) {
        m->prefix = sws_palloc(m->pool, m->nprefix * sizeof(sws_loc_item_t));
        stack = sws_palloc(m->pool, m->nprefix * sizeof(sws_int_t));
        if (m->prefix == NULL || stack == NULL) {
            return SWS_ERROR;
        }
    } else {
        stack = NULL;
    }

    ie = 0;
    ip = 0;
    for (it = m->items; it; it = it->next) {
        if (it->exact) {
            m->exact[ie++] = *it;
        } else {
            m->prefix[ip++] = *it;
        }
    }

    if (ie > 1) {
        qsort(m->exact, ie, sizeof(sws_loc_item_t), sws_http_loc_qsort_cmp);
    }
    if (ip > 1) {
        qsort(m->prefix, ip, sizeof(sws_loc_item_t), sws_http_loc_qsort_cmp);
    }

    /* parents: a stack of the chain of prefixes of the current entry */
    depth = 0;
    for (i = 0; i < ip; i++) {
        e = &m->prefix[i];
        while (depth) {
            it = &m->prefix[stack[depth - 1]];
            if (it->name.len < e->name.len
                && memcmp(it->name.data, e->name.data, it->name.len) == 0)
            {
                break;
            }
            depth--;
        }
        e->parent = depth ? stack[depth - 1] : -1;
        stack[depth++] = i;
    }

    m->finalized = 1;
    return SWS_OK;
}


void *
sws_http_loc_matcher_find(sws_http_loc_matcher_t *m, const u_char *uri, size_t len)
{
    const sws_regex_t  *matched;

    return sws_http_loc_matcher_match(m, uri, len, &matched);
}


/* The exact and prefix locations (the bodies are inlined into
 * sws_http_loc_matcher_match, run on every request). */
static inline void *
sws_loc_static(sws_http_loc_matcher_t *m, const u_char *uri, size_t len,
    sws_http_loc_kind_t *kind)
{
    int               rc, is_prefix;
    size_t            lcp, n;
    sws_uint_t        lo, hi, mid;
    sws_loc_item_t   *e, *best;

    if (sws_unlikely(!m->finalized)) {
        return NULL;
    }

    /* exact */
    lo = 0;
    hi = m->nexact;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        e = &m->exact[mid];
        rc = sws_http_loc_cmp(e->name.data, e->name.len, uri, len);
        if (rc == 0) {
            *kind = SWS_LOC_EXACT;
            return e->data;
        }
        if (rc < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }

    /* longest prefix: the last entry <= uri, then up its parents */
    best = NULL;
    lo = 0;
    hi = m->nprefix;
    is_prefix = 0;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        e = &m->prefix[mid];
        n = sws_min(e->name.len, len);
        rc = n ? memcmp(e->name.data, uri, n) : 0;
        if (rc < 0 || (rc == 0 && e->name.len <= len)) {
            lo = mid + 1;
            is_prefix = rc == 0;       /* of this entry, which may be the last */
        } else {
            hi = mid;
        }
    }

    if (lo > 0 && is_prefix) {
        /* the usual case: that entry is a prefix of the URI itself (a
         * longer one would sort between it and the URI) */
        best = &m->prefix[lo - 1];
    } else if (lo > 0) {
        e = &m->prefix[lo - 1];
        n = sws_min(e->name.len, len);
        for (lcp = 0; lcp < n && e->name.data[lcp] == uri[lcp]; lcp++) { /* void */ }

        for ( ;; ) {
            if (e->name.len <= lcp) {
                best = e;
                break;
            }
            if (e->parent < 0) {
                break;
            }
            e = &m->prefix[e->parent];
        }
    }
    if (best == NULL) {
        return NULL;
    }
    *kind = best->noregex ? SWS_LOC_PREFIX_NOREGEX : SWS_LOC_PREFIX;
    return best->data;
}


static inline void *
sws_loc_regex(sws_http_loc_matcher_t *m, const u_char *uri, size_t len,
    const sws_regex_t **matched)
{
    sws_loc_regex_t  *re;

    if (sws_unlikely(!m->finalized)) {
        return NULL;
    }
    for (re = m->regex; re; re = re->next) {
        if (sws_regex_exec(re->re, uri, len, NULL, 0, NULL) > 0) {
            *matched = re->re;
            return re->data;
        }
        /* no match, or a match error (limits): try the next */
    }
    return NULL;
}


void *
sws_http_loc_matcher_static(sws_http_loc_matcher_t *m, const u_char *uri, size_t len,
    sws_http_loc_kind_t *kind)
{
    return sws_loc_static(m, uri, len, kind);
}


void *
sws_http_loc_matcher_regex(sws_http_loc_matcher_t *m, const u_char *uri, size_t len,
    const sws_regex_t **matched)
{
    return sws_loc_regex(m, uri, len, matched);
}


void *
sws_http_loc_matcher_match(sws_http_loc_matcher_t *m, const u_char *uri, size_t len,
    const sws_regex_t **matched)
{
    sws_http_loc_kind_t  kind;
    void                *data, *re;

    *matched = NULL;
    data = sws_loc_static(m, uri, len, &kind);
    if (data && (kind == SWS_LOC_EXACT || kind == SWS_LOC_PREFIX_NOREGEX)) {
        return data;
    }
    re = sws_loc_regex(m, uri, len, matched);
    return re ? re : data;
}
