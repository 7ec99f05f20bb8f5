/*
 * CGI-style parameters (<scalws/sws_upstream_cgi.h>): the *_param
 * directives of fastcgi, uwsgi and scgi, compiled per level with the
 * module's pair codec (constant pairs encoded once; the order is the
 * configuration's: a program that gets a name twice keeps the last one, as
 * behind nginx), and rendered per
 * request with the client's header fields as HTTP_* in one pass to measure
 * and one to write, into a buffer the module sizes exactly.
 */
#include "sws_http_upstream.h"
#include <scalws/sws_upstream_cgi.h>

/* A *_param, as recorded, then compiled. */
typedef struct {
    sws_str_t            name;
    sws_str_t            text;
    sws_http_format_t   *value;        /* NULL: the value is constant */
    unsigned             if_not_empty:1;
    unsigned             content_length:1;   /* CONTENT_LENGTH */
} sws_cgi_param_t;

struct sws_http_cgi_params_s {
    sws_array_t                 *list;          /* sws_cgi_param_t, as written */
    const sws_http_cgi_pairs_t  *pairs;         /* NULL until compiled */
    sws_str_t                    static_pairs;  /* the constant ones, encoded */
    sws_str_t                   *runs;          /* runs[i]: the constant pairs
                                                   before dynamic[i] (in
                                                   static_pairs), runs[n]: after
                                                   the last: the order is kept */
    sws_cgi_param_t            **dynamic;
    sws_uint_t                   ndynamic;
    sws_hash_t                  *http_names;    /* HTTP_* set by a *_param: the
                                                   client's field is not sent too */
};

struct sws_http_cgi_render_s {
    sws_http_request_t           *r;
    const sws_http_cgi_params_t  *ps;
    size_t                       *lens;         /* per dynamic param; the top bit:
                                                   CONTENT_LENGTH is the body's */
    off_t                         body_len;
    sws_str_t                     inm, ims;     /* a cache's revalidation */
    unsigned                      headers:1;
    unsigned                      for_cache:2;  /* 2: the client's Range passes */
};

#define SWS_CGI_LEN_BODY  ((size_t) 1 << (sizeof(size_t) * 8 - 1))

/* ---- one pair, through the codec ---- */

static u_char *
sws_cgi_pair_open(const sws_http_cgi_pairs_t *c, u_char *p, size_t nlen, size_t vlen)
{
    return c->before_name ? c->before_name(p, nlen, vlen) : p;
}

static u_char *
sws_cgi_pair(const sws_http_cgi_pairs_t *c, u_char *p, const u_char *name, size_t nlen,
    const u_char *value, size_t vlen)
{
    p = sws_cgi_pair_open(c, p, nlen, vlen);
    p = sws_cpymem(p, name, nlen);
    if (c->before_value) {
        p = c->before_value(p, nlen, vlen);
    }
    if (vlen) {
        p = sws_cpymem(p, value, vlen);
    }
    return c->after_value ? c->after_value(p, nlen, vlen) : p;
}

/* ---- configuration ---- */

char *
sws_http_cgi_param_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_http_cgi_params_t **psp = (sws_http_cgi_params_t **) ((u_char *) conf + cmd->offset);
    sws_pool_t             *pool = sws_conf_pool(cf);
    sws_str_t              *name = sws_conf_arg(cf, 1), *value = sws_conf_arg(cf, 2);
    sws_cgi_param_t        *p;
    const char             *err;
    size_t                  i;

    if (name->len == 0) {
        return "has an empty name";
    }
    for (i = 0; i < name->len; i++) {
        if (name->data[i] <= ' ' || name->data[i] >= 0x7f || name->data[i] == '=') {
            return "has an invalid name";
        }
    }
    if (sws_conf_nargs(cf) == 4 && !sws_str_eq_cstr(sws_conf_arg(cf, 3), "if_not_empty")) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid parameter \"%.*s\"",
                           (int) sws_conf_arg(cf, 3)->len, sws_conf_arg(cf, 3)->data);
        return SWS_CONF_ERROR;
    }
    if (*psp == NULL) {
        *psp = sws_pcalloc(pool, sizeof(sws_http_cgi_params_t));
        if (*psp == NULL) {
            return SWS_CONF_ERROR;
        }
        (*psp)->list = sws_array_create(pool, 24, sizeof(sws_cgi_param_t));
        if ((*psp)->list == NULL) {
            return SWS_CONF_ERROR;
        }
    }
    p = sws_array_push((*psp)->list);
    if (p == NULL) {
        return SWS_CONF_ERROR;
    }
    sws_memzero(p, sizeof(*p));
    p->name = *name;
    p->text = *value;
    p->if_not_empty = sws_conf_nargs(cf) == 4;
    p->content_length = sws_str_eq_cstr(name, "CONTENT_LENGTH");
    if (p->if_not_empty || memchr(value->data, '$', value->len)) {
        p->value = sws_http_format_compile(pool, value, SWS_HTTP_ESCAPE_NONE, &err);
        if (p->value == NULL) {
            sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s %.*s: %s", cmd->name,
                               (int) name->len, name->data, err);
            return SWS_CONF_ERROR;
        }
    }
    return SWS_CONF_OK;
}

static char *
sws_cgi_params_compile(sws_pool_t *pool, sws_http_cgi_params_t *ps,
    const sws_http_cgi_pairs_t *pairs)
{
    static int        marker;
    sws_cgi_param_t  *t = ps->list ? ps->list->elts : NULL;
    sws_uint_t        i, n = ps->list ? ps->list->nelts : 0;
    size_t            len = 0;
    u_char           *p;

    ps->pairs = pairs;
    ps->http_names = sws_hash_create(pool, 8, 0);
    ps->dynamic = sws_palloc(pool, (n ? n : 1) * sizeof(sws_cgi_param_t *));
    ps->runs = sws_pcalloc(pool, (n + 1) * sizeof(sws_str_t));
    if (ps->http_names == NULL || ps->dynamic == NULL || ps->runs == NULL) {
        return SWS_CONF_ERROR;
    }
    for (i = 0; i < n; i++) {
        if (t[i].value == NULL) {
            len += pairs->size(t[i].name.len, t[i].text.len);
        }
    }
    p = sws_pnalloc(pool, len + 1);
    if (p == NULL) {
        return SWS_CONF_ERROR;
    }
    ps->static_pairs.data = p;
    ps->runs[0].data = p;
    for (i = 0; i < n; i++) {
        if (t[i].name.len > 5 && memcmp(t[i].name.data, "HTTP_", 5) == 0
            && sws_hash_add(ps->http_names, &t[i].name, &marker) == SWS_ERROR)
        {
            return SWS_CONF_ERROR;
        }
        if (t[i].value == NULL) {
            p = sws_cgi_pair(pairs, p, t[i].name.data, t[i].name.len, t[i].text.data,
                             t[i].text.len);
            continue;
        }
        ps->runs[ps->ndynamic].len = (size_t) (p - ps->runs[ps->ndynamic].data);
        ps->dynamic[ps->ndynamic++] = &t[i];
        ps->runs[ps->ndynamic].data = p;
    }
    ps->runs[ps->ndynamic].len = (size_t) (p - ps->runs[ps->ndynamic].data);
    ps->static_pairs.len = (size_t) (p - ps->static_pairs.data);
    return SWS_CONF_OK;
}

char *
sws_http_cgi_params_merge(sws_conf_t *cf, sws_http_cgi_params_t **prev,
    sws_http_cgi_params_t **conf, const sws_http_cgi_pairs_t *pairs)
{
    sws_pool_t *pool = sws_conf_pool(cf);

    if (*conf == NULL) {
        if (*prev == NULL) {
            /* None above either: one empty set, shared from here down. */
            *prev = sws_pcalloc(pool, sizeof(sws_http_cgi_params_t));
            if (*prev == NULL) {
                return SWS_CONF_ERROR;
            }
        }
        *conf = *prev;
    }
    if ((*conf)->pairs == NULL) {
        return sws_cgi_params_compile(pool, *conf, pairs);
    }
    return SWS_CONF_OK;
}

int
sws_http_cgi_params_has(const sws_http_cgi_params_t *ps, const char *name)
{
    sws_cgi_param_t *t;
    sws_uint_t       i;

    if (ps == NULL || ps->list == NULL) {
        return 0;
    }
    t = ps->list->elts;
    for (i = 0; i < ps->list->nelts; i++) {
        if (sws_str_eq_cstr(&t[i].name, name)) {
            return 1;
        }
    }
    return 0;
}

/* ---- the client's fields as HTTP_* ---- */

/* A field a CGI program gets as HTTP_NAME: names made only of letters,
 * digits and '-' (with '_' a client could pose as another field, "X_Foo"
 * for "X-Foo"), never Proxy (HTTP_PROXY would set a CGI program's proxy:
 * "httpoxy"), nor Transfer-Encoding: the body a program gets is never
 * chunked (one of unknown length is read whole, CONTENT_LENGTH counts it),
 * and WSGI servers read no body at all when told it is. */
static int
sws_cgi_header_ok(const sws_http_header_t *h)
{
    size_t i;

    if (h->hash == 0 || h->name.len == 0
        || (h->name.len == 5 && memcmp(h->name.data, "proxy", 5) == 0)
        || (h->name.len == 17 && memcmp(h->name.data, "transfer-encoding", 17) == 0))
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
sws_cgi_http_name(u_char *p, const sws_str_t *name)
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

/* Whether field i is the first of its name (later ones are joined to it). */
static int
sws_cgi_first_of_name(const sws_http_header_t *hs, sws_uint_t i)
{
    sws_uint_t j;

    for (j = 0; j < i; j++) {
        if (hs[j].hash == hs[i].hash && sws_str_eq(&hs[j].name, &hs[i].name)
            && sws_cgi_header_ok(&hs[j]))
        {
            return 0;
        }
    }
    return 1;
}

/* The joined value of every field named as hs[i]: ", " between them
 * (RFC 9110 5.3), "; " for Cookie (RFC 6265 5.4). Returns its length;
 * writes it at out when out is not NULL. */
static size_t
sws_cgi_joined(const sws_http_header_t *hs, sws_uint_t n, sws_uint_t i, u_char *out)
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
sws_cgi_cache_drops(const sws_str_t *name)
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

/* Is the client's field h sent as HTTP_*: not when a *_param set it, nor
 * a conditional one when the response is for a cache. */
static int
sws_cgi_header_sent(const sws_http_cgi_params_t *ps, const sws_http_header_t *h,
    u_char *scratch, int for_cache)
{
    u_char *e;

    if (!sws_cgi_header_ok(h)
        || (for_cache && sws_cgi_cache_drops(&h->name)
            && !(for_cache == 2 && h->name.len == 5)))     /* "range", passed on */
    {
        return 0;
    }
    if (ps->http_names == NULL || h->name.len > 250) {
        return 1;
    }
    e = sws_cgi_http_name(scratch, &h->name);
    return sws_hash_find(ps->http_names, scratch, (size_t) (e - scratch)) == NULL;
}

/* ---- one request ---- */

sws_http_cgi_render_t *
sws_http_cgi_params_measure(sws_http_request_t *r, sws_http_upstream_t *u,
    const sws_http_cgi_params_t *ps, sws_uint_t flags, size_t *len)
{
    const sws_http_cgi_pairs_t *c = ps->pairs;
    const sws_array_t          *hdrs = sws_http_headers_in(r);
    const sws_http_header_t    *hs = hdrs ? hdrs->elts : NULL;
    sws_uint_t                  nh = hdrs ? hdrs->nelts : 0, i;
    sws_http_cgi_render_t      *rd;
    sws_cgi_param_t            *fp;
    u_char                      scratch[256], numbuf[24];
    size_t                      plen, vlen;
    int                         for_cache;

    rd = sws_palloc(r->pool, sizeof(sws_http_cgi_render_t)
                             + ps->ndynamic * sizeof(size_t));
    if (rd == NULL) {
        return NULL;
    }
    rd->r = r;
    rd->ps = ps;
    rd->lens = (size_t *) (rd + 1);
    rd->body_len = sws_http_upstream_body_length(u);
    /* For a cache: the client's conditionals stay out, the cache's
     * validators go in on a revalidation, as HTTP_IF_* parameters. */
    for_cache = sws_http_upstream_cache_request(u, &rd->inm, &rd->ims);
    if (for_cache < 0) {
        return NULL;
    }
    rd->for_cache = for_cache == 0 ? 0 : sws_ups_cache_passes_range(u) ? 2 : 1;
    rd->headers = (flags & SWS_HTTP_CGI_PASS_HEADERS) != 0;

    plen = ps->static_pairs.len;
    for (i = 0; i < ps->ndynamic; i++) {
        fp = ps->dynamic[i];
        vlen = sws_http_format_len(fp->value, r);
        if (vlen == 0 && fp->content_length && rd->body_len > 0) {
            /* A chunked body, read whole: its length is known now. */
            vlen = (size_t) (sws_sprint_uint(numbuf, (uint64_t) rd->body_len) - numbuf);
            rd->lens[i] = vlen | SWS_CGI_LEN_BODY;
        } else {
            rd->lens[i] = vlen;
        }
        if (vlen || !fp->if_not_empty) {
            plen += c->size(fp->name.len, vlen);
        }
    }
    if (rd->headers) {
        for (i = 0; i < nh; i++) {
            if (sws_cgi_header_sent(ps, &hs[i], scratch, rd->for_cache)
                && sws_cgi_first_of_name(hs, i))
            {
                plen += c->size(5 + hs[i].name.len, sws_cgi_joined(hs, nh, i, NULL));
            }
        }
    }
    if (rd->inm.len) {
        plen += c->size(sizeof("HTTP_IF_NONE_MATCH") - 1, rd->inm.len);
    }
    if (rd->ims.len) {
        plen += c->size(sizeof("HTTP_IF_MODIFIED_SINCE") - 1, rd->ims.len);
    }
    *len = plen;
    return rd;
}

sws_int_t
sws_http_cgi_request_chain(sws_http_upstream_t *u, u_char *start, u_char *last,
    sws_chain_t **out)
{
    sws_buf_t   *b = sws_calloc_buf(u->r->pool);
    sws_chain_t *cl = sws_alloc_chain_link(u->r->pool);

    if (b == NULL || cl == NULL) {
        return SWS_ERROR;
    }
    b->start = b->pos = start;
    b->end = b->last = last;
    b->temporary = 1;
    b->fd = -1;
    cl->buf = b;
    cl->next = NULL;
    *out = cl;
    return sws_http_upstream_body_chain(u, &cl->next) ? SWS_OK : SWS_ERROR;
}

u_char *
sws_http_cgi_params_write(sws_http_cgi_render_t *rd, u_char *e)
{
    const sws_http_cgi_params_t *ps = rd->ps;
    const sws_http_cgi_pairs_t  *c = ps->pairs;
    sws_http_request_t          *r = rd->r;
    const sws_array_t           *hdrs = sws_http_headers_in(r);
    const sws_http_header_t     *hs = hdrs ? hdrs->elts : NULL;
    sws_uint_t                   nh = hdrs ? hdrs->nelts : 0, i;
    sws_cgi_param_t             *fp;
    u_char                       scratch[256], numbuf[24];
    size_t                       vlen;

    for (i = 0; i < ps->ndynamic; i++) {
        fp = ps->dynamic[i];
        e = sws_cpymem(e, ps->runs[i].data, ps->runs[i].len);
        vlen = rd->lens[i] & ~SWS_CGI_LEN_BODY;
        if (vlen == 0 && fp->if_not_empty) {
            continue;
        }
        if (rd->lens[i] != vlen) {
            sws_sprint_uint(numbuf, (uint64_t) rd->body_len);
            e = sws_cgi_pair(c, e, fp->name.data, fp->name.len, numbuf, vlen);
            continue;
        }
        e = sws_cgi_pair_open(c, e, fp->name.len, vlen);
        e = sws_cpymem(e, fp->name.data, fp->name.len);
        if (c->before_value) {
            e = c->before_value(e, fp->name.len, vlen);
        }
        e = sws_http_format_render(fp->value, r, e);
        if (c->after_value) {
            e = c->after_value(e, fp->name.len, vlen);
        }
    }
    if (ps->runs) {
        e = sws_cpymem(e, ps->runs[ps->ndynamic].data, ps->runs[ps->ndynamic].len);
    }
    if (rd->headers) {
        for (i = 0; i < nh; i++) {
            if (!sws_cgi_header_sent(ps, &hs[i], scratch, rd->for_cache)
                || !sws_cgi_first_of_name(hs, i))
            {
                continue;
            }
            vlen = sws_cgi_joined(hs, nh, i, NULL);
            e = sws_cgi_pair_open(c, e, 5 + hs[i].name.len, vlen);
            e = sws_cgi_http_name(e, &hs[i].name);
            if (c->before_value) {
                e = c->before_value(e, 5 + hs[i].name.len, vlen);
            }
            e += sws_cgi_joined(hs, nh, i, e);
            if (c->after_value) {
                e = c->after_value(e, 5 + hs[i].name.len, vlen);
            }
        }
    }
    if (rd->inm.len) {
        e = sws_cgi_pair(c, e, (u_char *) "HTTP_IF_NONE_MATCH",
                         sizeof("HTTP_IF_NONE_MATCH") - 1, rd->inm.data, rd->inm.len);
    }
    if (rd->ims.len) {
        e = sws_cgi_pair(c, e, (u_char *) "HTTP_IF_MODIFIED_SINCE",
                         sizeof("HTTP_IF_MODIFIED_SINCE") - 1, rd->ims.data, rd->ims.len);
    }
    return e;
}
