/*
 * What happens to a request once its head is known, whatever the protocol:
 * virtual server, URI normalisation, location, phases, internal redirects,
 * finalisation; and the request accessors of the SDK.
 */
#include "sws_http_core.h"
#include "sws_ssl.h"
#include "sws_conn_stats.h"
#include "sws_times_internal.h"
#include "sws_swar.h"

#define SWS_HTTP_MAX_URI_CHANGES  10

static void sws_http_clear_ctx(sws_http_request_t *r);

/* ---- creation ---- */

/* The request's pool goes (reset for the next request, or destroyed,
 * always before its connection): out of the status counters. */
static void
sws_http_request_uncount(void *data)
{
    sws_http_request_t *r = data;

    if (r->stat_writing) {
        sws_conn_stat(writing, -1);
    } else {
        sws_conn_stat(reading, -1);
    }
    if (--r->session->requests_now == 0) {
        sws_conn_stat(busy, -1);
    }
}

/* The head is complete: reading -> writing (stub_status). */
void
sws_http_request_count_head(sws_http_request_t *r)
{
    if (!r->stat_writing) {
        r->stat_writing = 1;
        sws_conn_stat(reading, -1);
        sws_conn_stat(writing, 1);
    }
}

/* An empty array of n fields at elts (the request is zeroed: nelts 0). */
static inline void
sws_http_request_headers_init(sws_array_t *a, sws_pool_t *pool, sws_http_header_t *elts,
    sws_uint_t n)
{
    a->elts = elts;
    a->size = sizeof(sws_http_header_t);
    a->nalloc = n;
    a->pool = pool;
}

sws_http_request_t *
sws_http_create_request(sws_http_session_t *s, sws_pool_t *pool)
{
    sws_http_core_srv_conf_t  *cscf = s->cscf;
    sws_http_request_t        *r;
    sws_http_header_t         *h;

    r = sws_pcalloc(pool, sizeof(sws_http_request_t));
    if (r == NULL) {
        return NULL;
    }
    r->session = s;
    r->pool = pool;
    r->log = s->log;
    r->main_conf = cscf->ctx->main_conf;
    r->srv_conf = cscf->ctx->srv_conf;
    r->loc_conf = cscf->ctx->loc_conf;
    if (sws_http_core_loc(r)->error_log) {
        r->log = sws_http_core_loc(r)->error_log;     /* the default server's */
    }
    /* r->ctx: allocated when a module first sets a context (most
     * requests meet no module that keeps one) */
    /* headers_in (16) and headers_out (8) in one allocation: headers_out
     * last, so that it still grows in place while it is the pool's latest */
    h = sws_palloc(pool, (16 + 8) * sizeof(sws_http_header_t));
    if (h == NULL) {
        return NULL;
    }
    sws_http_request_headers_init(&r->headers_in, pool, h, 16);
    sws_http_request_headers_init(&r->headers_out, pool, h + 16, 8);
    r->uncount.handler = sws_http_request_uncount;
    r->uncount.data = r;
    sws_pool_cleanup_link(pool, &r->uncount);
    sws_conn_stat(requests, 1);
    sws_conn_stat(reading, 1);
    if (s->requests_now++ == 0) {
        sws_conn_stat(busy, 1);
    }
    r->content_length_n = -1;
    r->out_content_length = -1;
    r->last_modified = -1;
    r->start_msec = sws_now_msec();
    r->start_sec = sws_now_sec();
    r->sockaddr = s->sockaddr;
    r->socklen = s->socklen;
    r->addr_text = s->addr_text;
    if (s->ssl) {
        sws_str_set(&r->schema, "https");
    } else {
        sws_str_set(&r->schema, "http");
    }
    s->requests++;
    return r;
}

/* ---- virtual servers ---- */

/* Host characters: 1 kept as is, 2 upper case (to lower), 3 '.', 0 bad.
 * reg-name per RFC 3986 restricted to what DNS names and nginx accept. */
/* Bytes of a host name: 1 lower-case letter, digit, '-', '_', '~';
 * 2 upper-case letter; 3 '.'; 4 ':' (the port follows); 0 none of them. */
static const u_char sws_http_host_chars[256] = {
    ['-'] = 1, ['_'] = 1, ['~'] = 1, ['.'] = 3, [':'] = 4,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1,
    ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1,
    ['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1,
    ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1,
    ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
    ['A'] = 2, ['B'] = 2, ['C'] = 2, ['D'] = 2, ['E'] = 2, ['F'] = 2, ['G'] = 2,
    ['H'] = 2, ['I'] = 2, ['J'] = 2, ['K'] = 2, ['L'] = 2, ['M'] = 2, ['N'] = 2,
    ['O'] = 2, ['P'] = 2, ['Q'] = 2, ['R'] = 2, ['S'] = 2, ['T'] = 2, ['U'] = 2,
    ['V'] = 2, ['W'] = 2, ['X'] = 2, ['Y'] = 2, ['Z'] = 2,
};

/* Validate a Host value (or an absolute-form authority): host names,
 * IPv4 and [IPv6] literals, an optional numeric port. The result is the
 * lower-case host without port and trailing dot; it points into the value
 * unless it had upper-case letters. SWS_ERROR if it is not a valid host. */
/* The last Host this worker found valid with no upper-case letter, as it
 * came and the length of its result (no port, no trailing dot): keep-alive
 * clients send the same Host on every request, and whether a Host is
 * valid depends on its bytes alone. */
#define SWS_HTTP_HOST_MEMO  48

static struct {
    size_t  len;                        /* 0: none yet */
    size_t  out_len;
    u_char  data[SWS_HTTP_HOST_MEMO];
} sws_http_host_memo;

static sws_int_t sws_http_validate_host_bytes(sws_http_request_t *r, const sws_str_t *in,
    sws_str_t *out) __attribute__((noinline));

sws_int_t
sws_http_validate_host(sws_http_request_t *r, const sws_str_t *in, sws_str_t *out)
{
    if (in->len == sws_http_host_memo.len
        && sws_swar_eq(in->data, sws_http_host_memo.data, in->len))
    {
        out->data = in->data;
        out->len = sws_http_host_memo.out_len;
        return SWS_OK;
    }
    if (sws_http_validate_host_bytes(r, in, out) != SWS_OK) {
        return SWS_ERROR;
    }
    /* the result is the value's own bytes: no upper-case letter */
    if (out->data == in->data && in->len && in->len <= SWS_HTTP_HOST_MEMO) {
        sws_http_host_memo.len = in->len;
        sws_http_host_memo.out_len = out->len;
        memcpy(sws_http_host_memo.data, in->data, in->len);
    }
    return SWS_OK;
}

static sws_int_t
sws_http_validate_host_bytes(sws_http_request_t *r, const sws_str_t *in, sws_str_t *out)
{
    u_char  *p = in->data, *last = in->data + in->len, *end, *q, c;
    sws_uint_t cls, upper = 0;

    if (p < last && *p == '[') {
        end = memchr(p, ']', in->len);
        if (end == NULL) {
            return SWS_ERROR;
        }
        for (q = p + 1; q < end; q++) {
            c = *q;
            if (!((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
                  || c == ':' || c == '.'))
            {
                return SWS_ERROR;
            }
            upper |= (c >= 'A' && c <= 'F');
        }
        end++;
    } else {
        /* One look-up per byte; only bytes other than lower-case letters,
         * digits and '-' '_' '~' take a branch, '.' first (a Host is
         * checked on every request). */
        for (end = p; end < last; end++) {
            cls = sws_http_host_chars[*end];
            if (sws_likely(cls == 1)) {
                continue;
            }
            if (cls == 3) {
                if (end > p && end[-1] == '.') {
                    return SWS_ERROR;       /* ".." */
                }
                continue;
            }
            if (cls == 2) {
                upper = 1;
                continue;
            }
            if (cls == 4) {
                break;                      /* ":port" */
            }
            return SWS_ERROR;               /* a bad byte */
        }
    }
    if (end < last) {                       /* ":port" */
        if (*end != ':') {                  /* an empty port is valid */
            return SWS_ERROR;
        }
        for (q = end + 1; q < last; q++) {
            if ((u_char) (*q - '0') > 9) {
                return SWS_ERROR;
            }
        }
    }
    if (end > p && end[-1] == '.' && *p != '[') {
        end--;
    }
    out->len = end - p;
    out->data = p;
    if (upper) {
        out->data = sws_pnalloc(r->pool, out->len);
        if (out->data == NULL) {
            return SWS_ERROR;
        }
        sws_strlow(out->data, p, out->len);
    }
    return SWS_OK;
}

/*
 * nginx's order: the exact name; the longest "*.x.com" (or ".x.com") that
 * matches; the longest "mail.*"; the first regex in configuration order;
 * else the address's default server.
 */
sws_http_core_srv_conf_t *
sws_http_find_server_re(sws_http_addr_t *addr, const sws_str_t *host, const sws_regex_t **re)
{
    sws_http_server_name_t   *sn = addr->names.elts;
    sws_http_core_srv_conf_t *found = NULL, *trailing = NULL, *regex = NULL;
    const sws_regex_t        *regex_re = NULL;
    sws_uint_t                i;
    size_t                    best = 0, best_trailing = 0;

    *re = NULL;
    if (!addr->names_matter) {
        return addr->default_server;       /* the only server there is */
    }
    if (host->len == 0) {
        return addr->no_host ? addr->no_host : addr->default_server;
    }
    for (i = 0; i < addr->names.nelts; i++) {
        if (sn[i].regex) {
            if (regex == NULL
                && sws_regex_exec(sn[i].regex, host->data, host->len, NULL, 0, NULL) > 0)
            {
                regex = sn[i].server;
                regex_re = sn[i].regex;
            }
            continue;
        }
        if (sn[i].trailing) {
            if (host->len > sn[i].name.len && sn[i].name.len > best_trailing
                && memcmp(host->data, sn[i].name.data, sn[i].name.len) == 0)
            {
                best_trailing = sn[i].name.len;
                trailing = sn[i].server;
            }
            continue;
        }
        if (!sn[i].wildcard) {
            if (sn[i].name.len == host->len
                && memcmp(sn[i].name.data, host->data, host->len) == 0)
            {
                return sn[i].server;
            }
            continue;
        }
        /* ".x.com" matches "a.x.com"; written as ".x.com" it matches
         * "x.com" too. The longest wildcard wins. */
        if (host->len > sn[i].name.len
            && memcmp(host->data + host->len - sn[i].name.len, sn[i].name.data,
                      sn[i].name.len) == 0)
        {
            if (sn[i].name.len > best) {
                best = sn[i].name.len;
                found = sn[i].server;
            }
        } else if (sn[i].bare && host->len + 1 == sn[i].name.len
                   && memcmp(host->data, sn[i].name.data + 1, host->len) == 0
                   && best == 0)
        {
            found = sn[i].server;
        }
    }
    if (found || trailing) {
        return found ? found : trailing;
    }
    if (regex) {
        *re = regex_re;
        return regex;
    }
    return addr->default_server;
}

sws_http_core_srv_conf_t *
sws_http_find_server(sws_http_addr_t *addr, const sws_str_t *host)
{
    const sws_regex_t  *re;

    return sws_http_find_server_re(addr, host, &re);
}

sws_int_t
sws_http_find_virtual_server(sws_http_request_t *r, sws_http_addr_t *addr)
{
    const sws_regex_t        *re;
    sws_http_core_srv_conf_t *found;

    if (!addr->names_matter) {
        return SWS_OK;        /* the address's only server, the request's already */
    }
    found = sws_http_find_server_re(addr, &r->host, &re);
    if (r->srv_conf != found->ctx->srv_conf) {
        /* not the default server the request started in */
        r->srv_conf = found->ctx->srv_conf;
        r->loc_conf = found->ctx->loc_conf;
        if (sws_http_core_loc(r)->error_log) {
            r->log = sws_http_core_loc(r)->error_log;     /* the server's error_log */
        }
    }
    /* a regex name's captures ($1, named groups) are the request's */
    if (re && sws_regex_captures(re) && sws_http_regex_exec(r, re, &r->host) == SWS_ERROR) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return SWS_OK;
}

/* ---- URI and location ---- */

sws_int_t
sws_http_set_uri(sws_http_request_t *r, const sws_str_t *raw, int complex)
{
    sws_http_core_srv_conf_t *cscf = sws_http_core_srv(r);
    size_t                    len;

    if (!complex) {
        r->uri = *raw;
    } else {
        r->uri.data = sws_pnalloc(r->pool, raw->len + 1);
        if (r->uri.data == NULL) {
            return SWS_HTTP_INTERNAL_SERVER_ERROR;
        }
        if (sws_http_normalize_path(raw->data, raw->len, r->uri.data, &len,
                                    (int) cscf->merge_slashes) != SWS_OK)
        {
            return SWS_HTTP_BAD_REQUEST;
        }
        r->uri.len = len;
    }
    r->exten.data = NULL;         /* found on first use: sws_http_exten() */
    r->exten.len = 0;
    return SWS_OK;
}

/* inlined: every request passes there on its way to its location */
static inline sws_int_t sws_http_location_entered(sws_http_request_t *r)
    __attribute__((always_inline));
static int sws_http_uri_cycle(sws_http_request_t *r, const char *what, const sws_str_t *uri);

/*
 * nginx's order over nested locations: a level's exact location ends the
 * search; its longest prefix is searched further inside; then the level's
 * regexes are tried (innermost level first, unless that level's prefix is
 * ^~), a match ending the search after its own nested locations. *final:
 * an exact or regex location was chosen; *re: the last regex that matched.
 */
static sws_http_core_loc_conf_t *
sws_http_find_location(sws_http_loc_matcher_t *m, const sws_str_t *uri,
    const sws_regex_t **re, int *final)
{
    sws_http_core_loc_conf_t *p, *inner, *rx;
    sws_http_loc_kind_t       kind = SWS_LOC_PREFIX;
    const sws_regex_t        *matched = NULL;

    p = sws_http_loc_matcher_static(m, uri->data, uri->len, &kind);
    if (p && kind == SWS_LOC_EXACT) {
        *final = 1;
        return p;
    }
    if (p && p->children) {
        inner = sws_http_find_location(p->children, uri, re, final);
        if (*final) {
            return inner;
        }
        if (inner) {
            p = inner;
        }
    }
    if (p && kind == SWS_LOC_PREFIX_NOREGEX) {
        return p;
    }
    rx = sws_http_loc_matcher_regex(m, uri->data, uri->len, &matched);
    if (rx == NULL) {
        return p;
    }
    if (sws_regex_captures(matched)) {
        *re = matched;               /* one without groups keeps the outer's */
    }
    *final = 1;
    if (rx->children) {
        int  ignored = 0;

        inner = sws_http_find_location(rx->children, uri, re, &ignored);
        if (inner) {
            return inner;
        }
    }
    return rx;
}

sws_int_t
sws_http_update_location(sws_http_request_t *r)
{
    sws_http_core_srv_conf_t *cscf = sws_http_core_srv(r);
    sws_http_core_loc_conf_t *clcf;
    const sws_regex_t        *re = NULL;
    int                       final = 0;

    if (sws_likely(!cscf->nested_locations)) {
        clcf = sws_http_loc_matcher_match(cscf->locations, r->uri.data, r->uri.len, &re);
    } else {
        clcf = sws_http_find_location(cscf->locations, &r->uri, &re, &final);
    }
    if (re && sws_regex_captures(re) && sws_http_regex_exec(r, re, &r->uri) == SWS_ERROR) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (clcf) {
        if (clcf->exact && r->uri.len == clcf->name.len) {
            r->exten = clcf->exten;       /* the URI is the location's name */
        }
        r->loc_conf = sws_http_limit_except(r, clcf)->loc_conf;
    } else {
        r->loc_conf = cscf->ctx->loc_conf;
    }
    return sws_http_location_entered(r);
}

/* What a request's new location decides at once: its request id, and a
 * declared body over client_max_body_size. */
static inline sws_int_t
sws_http_location_entered(sws_http_request_t *r)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);

    r->log = clcf->error_log ? clcf->error_log : r->session->log;
    if (clcf->request_id && r->request_id.len == 0) {
        sws_http_request_id_init(r);
    }

    if (clcf->client_max_body_size && r->content_length_n > 0
        && (size_t) r->content_length_n > clcf->client_max_body_size)
    {
        sws_log_error(SWS_LOG_ERR, r->log, 0,
                      "client intended to send too large body: %lld bytes",
                      (long long) r->content_length_n);
        r->keepalive = 0;
        return SWS_HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    return SWS_OK;
}

/* Start the phases for a request whose head is complete. */
void
sws_http_handler(sws_http_request_t *r)
{
    sws_http_session_t *s = r->session;

    if (s->transport->tls_early(s)) {
        /* TLS early data, the handshake not over: this may be a replay
         * (RFC 8470). Marked ($ssl_early_data); only safe methods are
         * served now, the others get 425 and the client sends them again
         * after the handshake. */
        r->ssl_early = 1;
        if (!(r->method & (SWS_HTTP_GET | SWS_HTTP_HEAD | SWS_HTTP_OPTIONS | SWS_HTTP_TRACE))) {
            sws_log_error(SWS_LOG_INFO, r->log, 0, "\"%.*s\" request in TLS early data: 425",
                          (int) r->method_name.len, r->method_name.data);
            sws_http_finalize(r, SWS_HTTP_TOO_EARLY);
            return;
        }
    }
    sws_http_run_phases_from(r, SWS_HTTP_POST_READ_PHASE);
}

sws_int_t
sws_http_internal_redirect(sws_http_request_t *r, const sws_str_t *uri, const sws_str_t *args)
{
    if (sws_http_uri_cycle(r, "internally redirecting to", uri)) {
        return SWS_DONE;
    }
    r->uri = *uri;
    if (args) {
        r->args = *args;
    }
    r->exten.data = NULL;
    r->exten.len = 0;
    r->internal = 1;
    /* Modules start afresh in the new location. */
    sws_http_clear_ctx(r);
    sws_http_clear_response(r);
    r->loc_conf = ((sws_http_core_srv_conf_t *) sws_http_core_srv(r))->ctx->loc_conf;
    sws_http_run_phases_from(r, SWS_HTTP_SERVER_REWRITE_PHASE);
    return SWS_DONE;
}

static int
sws_http_uri_cycle(sws_http_request_t *r, const char *what, const sws_str_t *uri)
{
    if (++r->uri_changes <= SWS_HTTP_MAX_URI_CHANGES) {
        return 0;
    }
    sws_log_error(SWS_LOG_ERR, r->log, 0, "rewrite or internal redirection cycle "
                  "while %s \"%.*s\"", what, (int) uri->len, uri->data);
    sws_http_finalize(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
    return 1;
}

/*
 * Dot segments of a rewritten URI ("/a/../b", made of a client's argument
 * by "rewrite ^ /files/$arg_f"), removed as RFC 3986 5.2.4 says, without
 * decoding anything (the URI is decoded already). One that climbs above
 * "/" is refused: it could name a file outside the root. nginx takes the
 * URI as it is.
 */
static sws_int_t
sws_http_uri_dots(sws_http_request_t *r, const sws_str_t *in, sws_str_t *out)
{
    const u_char  *p = in->data, *end = p + in->len, *seg;
    u_char        *d, *start;
    size_t         n;

    if (in->data[0] != '/') {
        *out = *in;                  /* not a path: no location will match */
        return SWS_OK;
    }
    for (seg = p; seg + 1 < end; seg++) {
        if (seg[0] == '/' && seg[1] == '.') {
            break;
        }
    }
    if (seg + 1 >= end) {
        *out = *in;                  /* the usual case: no "/." at all */
        return SWS_OK;
    }
    start = d = sws_pnalloc(r->pool, in->len + 1);
    if (d == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    while (p < end) {
        /* p is at a '/': the segment runs to the next one */
        seg = p + 1;
        while (seg < end && *seg != '/') {
            seg++;
        }
        n = (size_t) (seg - p - 1);
        if (n == 1 && p[1] == '.') {
            if (seg == end) {
                *d++ = '/';
            }
        } else if (n == 2 && p[1] == '.' && p[2] == '.') {
            if (d == start) {
                return SWS_HTTP_BAD_REQUEST;
            }
            while (d > start && *--d != '/') { /* back to the parent */ }
            if (seg == end) {
                *d++ = '/';
            }
        } else {
            d = sws_cpymem(d, p, (size_t) (seg - p));
        }
        p = seg;
    }
    if (d == start) {
        *d++ = '/';
    }
    out->data = start;
    out->len = (size_t) (d - start);
    return SWS_OK;
}

sws_int_t
sws_http_rewrite_uri(sws_http_request_t *r, const sws_str_t *uri, const sws_str_t *args)
{
    sws_str_t  clean;
    sws_int_t  rc;

    if (uri->len == 0) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "the rewritten URI has a zero length");
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    rc = sws_http_uri_dots(r, uri, &clean);
    if (rc != SWS_OK) {
        sws_log_error(SWS_LOG_INFO, r->log, 0, "the rewritten URI \"%.*s\" climbs above "
                      "the root", (int) uri->len, uri->data);
        return rc;
    }
    r->uri = clean;
    if (args) {
        r->args = *args;
    }
    r->exten.data = NULL;
    r->exten.len = 0;
    r->internal = 1;
    return SWS_OK;
}

sws_int_t
sws_http_relocate(sws_http_request_t *r)
{
    if (sws_http_uri_cycle(r, "processing", &r->uri)) {
        return SWS_DONE;
    }
    sws_http_run_phases_from(r, SWS_HTTP_FIND_LOCATION_PHASE);
    return SWS_DONE;
}

sws_int_t
sws_http_enter_location(sws_http_request_t *r, sws_http_location_t *loc)
{
    r->loc_conf = ((sws_http_core_loc_conf_t *) loc)->loc_conf;
    return sws_http_location_entered(r);
}

sws_int_t
sws_http_named_location(sws_http_request_t *r, const sws_str_t *name)
{
    sws_http_core_srv_conf_t  *cscf = sws_http_core_srv(r);
    sws_http_core_loc_conf_t **locs = cscf->location_list.elts, *clcf = NULL;
    sws_uint_t                 i;
    sws_int_t                  rc;

    for (i = 0; i < cscf->location_list.nelts; i++) {
        if (locs[i]->named && locs[i]->name.len == name->len
            && memcmp(locs[i]->name.data, name->data, name->len) == 0)
        {
            clcf = locs[i];
            break;
        }
    }
    if (clcf == NULL) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "could not find named location \"%.*s\"",
                      (int) name->len, name->data);
        sws_http_finalize(r, SWS_HTTP_INTERNAL_SERVER_ERROR);
        return SWS_DONE;
    }
    if (sws_http_uri_cycle(r, "redirecting to named location", name)) {
        return SWS_DONE;
    }
    r->internal = 1;
    sws_http_clear_ctx(r);
    sws_http_clear_response(r);
    r->loc_conf = sws_http_limit_except(r, clcf)->loc_conf;
    rc = sws_http_location_entered(r);
    if (rc != SWS_OK) {
        sws_http_finalize(r, rc);
        return SWS_DONE;
    }
    /* the location's own rewrites on: the server's ran already */
    sws_http_run_phases_from(r, SWS_HTTP_REWRITE_PHASE);
    return SWS_DONE;
}

/* ---- SDK accessors ---- */

sws_pool_t *sws_http_pool(sws_http_request_t *r) { return r->pool; }
sws_log_t *sws_http_log(sws_http_request_t *r) { return r->log; }
sws_uint_t sws_http_method(sws_http_request_t *r) { return r->method; }
const sws_str_t *sws_http_method_name(sws_http_request_t *r) { return &r->method_name; }
sws_uint_t sws_http_version(sws_http_request_t *r) { return r->http_version; }
const sws_str_t *sws_http_uri(sws_http_request_t *r) { return &r->uri; }
const sws_str_t *sws_http_args(sws_http_request_t *r) { return &r->args; }
const sws_str_t *sws_http_unparsed_uri(sws_http_request_t *r) { return &r->unparsed_uri; }
const sws_str_t *
sws_http_exten(sws_http_request_t *r)
{
    static u_char none[1];

    if (r->exten.data == NULL) {
        sws_http_path_exten(&r->uri, &r->exten);
        if (r->exten.data == NULL) {
            r->exten.data = none;     /* known to have none */
        }
    }
    return &r->exten;
}
const sws_str_t *sws_http_host(sws_http_request_t *r) { return &r->host; }
const sws_str_t *sws_http_scheme(sws_http_request_t *r) { return &r->schema; }
const sws_str_t *sws_http_request_id(sws_http_request_t *r) { return &r->request_id; }
const sws_str_t *sws_http_remote_addr(sws_http_request_t *r) { return &r->addr_text; }
int sws_http_is_internal(sws_http_request_t *r) { return r->internal; }
int sws_http_unparsed_uri_valid(sws_http_request_t *r) { return !r->internal && !r->args_set; }
int sws_http_encoded_slash(sws_http_request_t *r) { return r->encoded_slash; }
const sws_array_t *sws_http_headers_in(sws_http_request_t *r) { return &r->headers_in; }
off_t sws_http_content_length_in(sws_http_request_t *r) { return r->content_length_n; }
int sws_http_has_body(sws_http_request_t *r) { return r->content_length_n > 0 || r->chunked_in; }

const sws_str_t *
sws_http_header_in(sws_http_request_t *r, const char *lcname, size_t len)
{
    sws_http_header_t *h = r->headers_in.elts;
    sws_uint_t         i;

    for (i = 0; i < r->headers_in.nelts; i++) {
        if (h[i].name.len == len && memcmp(h[i].name.data, lcname, len) == 0) {
            return &h[i].value;
        }
    }
    return NULL;
}

void *
sws_http_get_ctx(sws_http_request_t *r, const sws_module_t *m)
{
    return r->ctx ? r->ctx[m->index] : NULL;
}

void
sws_http_set_ctx(sws_http_request_t *r, const sws_module_t *m, void *ctx)
{
    if (r->ctx == NULL) {
        if (ctx == NULL) {
            return;                       /* none to clear */
        }
        r->ctx = sws_pcalloc(r->pool, sizeof(void *) * sws_http_core_main(r)->nmodules);
        if (r->ctx == NULL) {
            /* out of memory: the module finds no context, as before it
             * set one (its own allocation failed the same way) */
            sws_log_error(SWS_LOG_ALERT, r->log, 0, "no memory for a module's request context");
            return;
        }
    }
    r->ctx[m->index] = ctx;
}

/* Every module's context of r gone (a new location after a redirect). */
static void
sws_http_clear_ctx(sws_http_request_t *r)
{
    if (r->ctx) {
        sws_memzero(r->ctx, sizeof(void *) * sws_http_core_main(r)->nmodules);
    }
}

void *sws_http_main_conf(sws_http_request_t *r, const sws_module_t *m) { return r->main_conf[m->index]; }
void *sws_http_srv_conf(sws_http_request_t *r, const sws_module_t *m) { return r->srv_conf[m->index]; }
void *sws_http_loc_conf(sws_http_request_t *r, const sws_module_t *m) { return r->loc_conf[m->index]; }

int
sws_http_sendfile_enabled(sws_http_request_t *r)
{
    return sws_http_core_loc(r)->sendfile && r->proto->sendfile(r);
}

sws_int_t
sws_http_map_uri_to_path(sws_http_request_t *r, sws_str_t *path, size_t *root_len,
    size_t reserve)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    const u_char             *rest = r->uri.data;
    size_t                    rest_len = r->uri.len, root_n = clcf->root.len;
    u_char                   *p;

    if (clcf->alias_whole) {
        rest_len = 0;               /* a regex location's alias: the path */
    } else if (clcf->alias) {
        /* alias replaces the location's prefix; an exact location's whole
         * URI. */
        size_t skip = clcf->exact ? r->uri.len : sws_min(clcf->name.len, r->uri.len);
        rest += skip;
        rest_len -= skip;
    }
    if (clcf->root_format) {
        /* the root, then room for the rest of the path */
        if (sws_http_format_string(clcf->root_format, r, r->pool, rest_len + reserve + 1,
                                   NULL, 0, path) != SWS_OK)
        {
            return SWS_ERROR;
        }
        root_n = path->len;
        if (!clcf->alias) {
            while (root_n > 1 && path->data[root_n - 1] == '/') {
                root_n--;           /* the URI brings its own */
            }
        }
        p = path->data + root_n;
    } else {
        path->data = sws_pnalloc(r->pool, root_n + rest_len + reserve + 1);
        if (path->data == NULL) {
            return SWS_ERROR;
        }
        p = sws_cpymem(path->data, clcf->root.data, clcf->root.len);
    }
    p = sws_swar_copy(p, rest, rest_len);   /* (a short URI: no call) */
    *p = '\0';
    path->len = root_n + rest_len;
    if (root_len) {
        *root_len = root_n;
    }
    return SWS_OK;
}

/* An extension of 1 to 8 bytes as one word with every byte of it in (for
 * a given length, different extensions make different words): two
 * overlapping loads, or three bytes. */
static inline uint64_t
sws_http_exten_word(const u_char *p, size_t n)
{
    if (n >= 4) {
        return sws_load32(p) | (uint64_t) sws_load32(p + n - 4) << 32;
    }
    return p[0] | (uint64_t) p[n >> 1] << 8 | (uint64_t) p[n - 1] << 16;
}

const sws_str_t *
sws_http_mime_type(sws_http_request_t *r, const sws_str_t *exten)
{
    sws_http_core_loc_conf_t *clcf = sws_http_core_loc(r);
    const sws_str_t          *type;
    uint64_t                  word;

    if (exten->len == 0 || clcf->types == NULL) {
        return &clcf->default_type;
    }
    if (exten->len > 8) {
        type = sws_hash_find(clcf->types, exten->data, exten->len);
        return type ? type : &clcf->default_type;
    }
    word = sws_http_exten_word(exten->data, exten->len);
    if (exten->len == clcf->types_memo.len && word == clcf->types_memo.exten) {
        return clcf->types_memo.type;
    }
    type = sws_hash_find(clcf->types, exten->data, exten->len);
    if (type == NULL) {
        type = &clcf->default_type;
    }
    clcf->types_memo.len = exten->len;
    clcf->types_memo.exten = word;
    clcf->types_memo.type = type;
    return type;
}
