/*
 * Request variables and compiled formats (see sws_http_variables.h).
 *
 * A format is an array of operations: literal text, or a variable getter
 * with its argument (the header name of $http_NAME ...). Getters return a
 * value pointing into the request, the time cache or the operation's own
 * scratch space (numbers), so evaluating a variable allocates nothing except
 * when several headers of one name have to be joined.
 */
#include <time.h>
#include <unistd.h>
#include "sws_http_core.h"
#include "sws_http_variables.h"
#include "sws_ssl.h"
#include "sws_http_upstream.h"

#define SWS_HTTP_VAR_SCRATCH  32      /* an int64, "S.mmm", an HTTP date */

typedef struct sws_http_fop_s sws_http_fop_t;
typedef void (*sws_http_var_get_pt)(sws_http_request_t *r, sws_http_fop_t *op,
    sws_str_t *v);

struct sws_http_fop_s {
    sws_http_var_get_pt  get;          /* NULL: literal text */
    const void          *ext;          /* a module's variable */
    sws_str_t            text;         /* the literal, or the getter's argument */
    sws_str_t            value;        /* the last evaluated value */
    u_char               scratch[SWS_HTTP_VAR_SCRATCH];
};

struct sws_http_format_s {
    sws_http_fop_t      *ops;
    sws_uint_t           nops;
    sws_uint_t           nvars;
    int                  escape;
    sws_http_request_t  *primed;       /* values in ops are those of this request */
};

typedef struct {
    const char           *name;
    sws_http_var_get_pt   get;
} sws_http_var_t;


/* ---- getters of simple variables ---- */

#define sws_http_var_set(v, s)  do { (v)->len = sizeof(s) - 1; (v)->data = (u_char *) (s); } while (0)

static void
sws_http_var_empty(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) r; (void) op;
    v->len = 0;
    v->data = NULL;
}

static void
sws_http_var_uint(sws_http_fop_t *op, sws_str_t *v, uint64_t n)
{
    v->data = op->scratch;
    v->len = (size_t) (sws_sprint_uint(op->scratch, n) - op->scratch);
}

/* "seconds.millis" of a millisecond count. */
static void
sws_http_var_msec_text(sws_http_fop_t *op, sws_str_t *v, uint64_t ms)
{
    u_char    *p;
    unsigned   frac = (unsigned) (ms % 1000);

    p = sws_sprint_uint(op->scratch, ms / 1000);
    *p++ = '.';
    *p++ = (u_char) ('0' + frac / 100);
    *p++ = (u_char) ('0' + frac / 10 % 10);
    *p++ = (u_char) ('0' + frac % 10);
    v->data = op->scratch;
    v->len = (size_t) (p - op->scratch);
}

static void
sws_http_var_remote_addr(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    if (r->connection) {
        *v = r->connection->addr_text;
    } else {
        v->len = 0;
    }
}

static void
sws_http_var_cached_time(sws_str_t *v, const sws_str_t *t)
{
    if (t->data) {
        *v = *t;
    } else {
        v->len = 0;
    }
}

static void
sws_http_var_time_local(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) r; (void) op;
    sws_http_var_cached_time(v, sws_cached_log_time());
}

static void
sws_http_var_time_iso8601(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) r; (void) op;
    sws_http_var_cached_time(v, sws_cached_iso8601_time());
}

static void
sws_http_var_msec(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    struct timespec  ts;

    (void) r;
    clock_gettime(CLOCK_REALTIME, &ts);
    sws_http_var_msec_text(op, v, (uint64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void
sws_http_var_request(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    *v = r->request_line;
}

static void
sws_http_var_request_method(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    *v = r->method_name;
}

static void
sws_http_var_request_uri(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    *v = r->unparsed_uri;
}

static void
sws_http_var_uri(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    *v = r->uri;
}

static void
sws_http_var_args(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    *v = r->args;
}

static void
sws_http_var_is_args(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    if (r->args.len) {
        sws_http_var_set(v, "?");
    } else {
        v->len = 0;
    }
}

static void
sws_http_var_server_name(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_core_srv_conf_t  *cscf;

    (void) op;
    v->len = 0;
    if (r->srv_conf) {
        cscf = sws_http_core_srv(r);
        if (cscf) {
            *v = cscf->server_name;
        }
    }
}

static void
sws_http_var_host(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->host.len) {
        *v = r->host;
    } else {
        sws_http_var_server_name(r, op, v);
    }
}

static void
sws_http_var_scheme(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_connection_t  *c = r->connection;

    (void) op;
    if (c && (c->ssl || (c->listening && c->listening->ssl))) {
        sws_http_var_set(v, "https");
    } else {
        sws_http_var_set(v, "http");
    }
}

static void
sws_http_var_server_protocol(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    switch (r->http_version) {
    case SWS_HTTP_VERSION_10: sws_http_var_set(v, "HTTP/1.0"); break;
    case SWS_HTTP_VERSION_11: sws_http_var_set(v, "HTTP/1.1"); break;
    case SWS_HTTP_VERSION_20: sws_http_var_set(v, "HTTP/2.0"); break;
    case SWS_HTTP_VERSION_30: sws_http_var_set(v, "HTTP/3.0"); break;
    default: v->len = 0; break;
    }
}

static void
sws_http_var_status(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_uint_t  s = r->status;

    if (s >= 1000) {
        sws_http_var_uint(op, v, s);
        return;
    }
    op->scratch[0] = (u_char) ('0' + s / 100);
    op->scratch[1] = (u_char) ('0' + s / 10 % 10);
    op->scratch[2] = (u_char) ('0' + s % 10);
    v->data = op->scratch;
    v->len = 3;
}

static off_t
sws_http_var_sent(sws_http_request_t *r)
{
    off_t  n;

    if (r->connection == NULL) {
        return 0;
    }
    /* HTTP/1: the connection's count since the request began; a stream
     * of a multiplexed connection keeps its own. */
    n = (r->proto && r->proto->bytes_sent) ? r->proto->bytes_sent(r)
                                           : r->connection->sent - r->sent_start;
    return n > 0 ? n : 0;
}

static void
sws_http_var_bytes_sent(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_uint(op, v, (uint64_t) sws_http_var_sent(r));
}

static void
sws_http_var_body_bytes_sent(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    off_t  n = sws_http_var_sent(r) - (off_t) r->header_size;

    sws_http_var_uint(op, v, n > 0 ? (uint64_t) n : 0);
}

static void
sws_http_var_request_time(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_msec_t  ms = sws_current_msec() - r->start_msec;

    sws_http_var_msec_text(op, v, ms > 0 ? (uint64_t) ms : 0);
}

static void
sws_http_var_request_id(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    *v = r->request_id;
}

static void
sws_http_var_connection(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->connection) {
        sws_http_var_uint(op, v, r->connection->number);
    } else {
        v->len = 0;
    }
}

static void
sws_http_var_connection_requests(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->connection) {
        sws_http_var_uint(op, v, r->session->requests);
    } else {
        v->len = 0;
    }
}

/* The worker's pid. */
static void
sws_http_var_pid(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) r;
    sws_http_var_uint(op, v, (sws_uint_t) getpid());
}

static void
sws_http_var_content_length(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    if (r->h_content_length) {
        *v = *r->h_content_length;
    } else {
        v->len = 0;
    }
}


/* ---- headers ---- */

/*
 * The value of every live header named op->text (lower case, compared
 * case-insensitively when the names may not be), joined with sep when
 * there are several; the join is the only allocation of a getter.
 */
static void
sws_http_var_header(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v,
    const sws_array_t *headers, const char *sep)
{
    sws_http_header_t  *h = headers->elts;
    sws_uint_t          i, first = 0, n = 0;
    size_t              len = 0, seplen = strlen(sep);
    u_char             *p;

    v->len = 0;
    for (i = 0; i < headers->nelts; i++) {
        if (h[i].hash == 0 || h[i].name.len != op->text.len
            || sws_strncasecmp(h[i].name.data, op->text.data, op->text.len) != 0)
        {
            continue;
        }
        if (n++ == 0) {
            first = i;
            *v = h[i].value;
        }
        len += h[i].value.len;
    }
    if (n < 2) {
        return;
    }

    /* Several: join them (on failure the first one stays). */
    len += (n - 1) * seplen;
    p = sws_pnalloc(r->pool, len);
    if (p == NULL) {
        return;
    }
    v->data = p;
    v->len = len;
    for (i = first; i < headers->nelts; i++) {
        if (h[i].hash == 0 || h[i].name.len != op->text.len
            || sws_strncasecmp(h[i].name.data, op->text.data, op->text.len) != 0)
        {
            continue;
        }
        if (p != v->data) {
            p = sws_cpymem(p, sep, seplen);
        }
        p = sws_cpymem(p, h[i].value.data, h[i].value.len);
    }
}

static void
sws_http_var_http(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    const char  *sep = (op->text.len == 6 && memcmp(op->text.data, "cookie", 6) == 0)
                       ? "; " : ", ";

    sws_http_var_header(r, op, v, &r->headers_in, sep);
}

static void
sws_http_var_content_type(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_header(r, op, v, &r->headers_in, ", ");
}

static void
sws_http_var_sent_http(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_header(r, op, v, &r->headers_out, ", ");
}

/* Response fields the core keeps apart from headers_out: the field when it
 * is set, else whatever headers_out has under that name. */
static void
sws_http_var_sent_content_type(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->content_type.len) {
        *v = r->content_type;
        return;
    }
    sws_http_var_sent_http(r, op, v);
}

static void
sws_http_var_sent_content_length(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->out_content_length >= 0) {
        sws_http_var_uint(op, v, (uint64_t) r->out_content_length);
        return;
    }
    sws_http_var_sent_http(r, op, v);
}

static void
sws_http_var_sent_location(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->location.len) {
        *v = r->location;
        return;
    }
    sws_http_var_sent_http(r, op, v);
}

static void
sws_http_var_sent_last_modified(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->last_modified >= 0) {
        v->data = op->scratch;
        v->len = (size_t) (sws_http_time(op->scratch, r->last_modified) - op->scratch);
        return;
    }
    sws_http_var_sent_http(r, op, v);
}

static void
sws_http_var_sent_etag(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->etag.len) {
        *v = r->etag;
        return;
    }
    sws_http_var_sent_http(r, op, v);
}

static void
sws_http_var_sent_transfer_encoding(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->chunked_out) {
        sws_http_var_set(v, "chunked");
        return;
    }
    sws_http_var_sent_http(r, op, v);
}

/* ---- TLS ---- */

static SSL *
sws_http_var_ssl(sws_http_request_t *r)
{
    sws_connection_t *c = r->connection;

    return (c && c->ssl && c->ssl->handshaked) ? c->ssl->connection : NULL;
}

static void
sws_http_var_cstr(sws_str_t *v, const char *s)
{
    v->data = (u_char *) s;
    v->len = s ? strlen(s) : 0;
}

static void
sws_http_var_ssl_protocol(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    SSL *ssl = sws_http_var_ssl(r);

    (void) op;
    sws_http_var_cstr(v, ssl ? SSL_get_version(ssl) : NULL);
}

static void
sws_http_var_ssl_cipher(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    SSL *ssl = sws_http_var_ssl(r);

    (void) op;
    sws_http_var_cstr(v, ssl ? SSL_get_cipher_name(ssl) : NULL);
}

static void
sws_http_var_ssl_server_name(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    SSL *ssl = sws_http_var_ssl(r);

    (void) op;
    sws_http_var_cstr(v, ssl ? SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) : NULL);
}

static void
sws_http_var_ssl_session_reused(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    SSL *ssl = sws_http_var_ssl(r);

    (void) op;
    if (ssl && SSL_session_reused(ssl)) {
        sws_http_var_set(v, "r");
    } else {
        sws_http_var_set(v, ".");
    }
}

static void
sws_http_var_ssl_alpn_protocol(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    v->len = 0;
    if (sws_http_var_ssl(r)) {
        sws_ssl_alpn(r->connection, v);
    }
}

/* "1" when the request's head came in TLS early data and the handshake
 * was not over yet (RFC 8470: a possible replay), else empty. */
static void
sws_http_var_ssl_early_data(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    if (r->ssl_early) {
        sws_http_var_set(v, "1");
    } else {
        v->len = 0;
    }
}

/* $arg_NAME: the raw value of the first query argument NAME (any case). */
static void
sws_http_var_arg(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    u_char  *p = r->args.data, *end = p + r->args.len, *amp, *eq;

    v->len = 0;
    while (p < end) {
        amp = memchr(p, '&', (size_t) (end - p));
        if (amp == NULL) {
            amp = end;
        }
        eq = memchr(p, '=', (size_t) (amp - p));
        if (eq == NULL) {
            eq = amp;
        }
        if ((size_t) (eq - p) == op->text.len
            && sws_strncasecmp(p, op->text.data, op->text.len) == 0)
        {
            v->data = eq < amp ? eq + 1 : amp;
            v->len = eq < amp ? (size_t) (amp - eq - 1) : 0;
            return;
        }
        p = amp + 1;
    }
}


/* ---- the upstream's variables ---- */

static void
sws_http_var_upstream(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_upstream_variable(r, (sws_uint_t) op->text.len, v);
}

/* $upstream_http_NAME: the last response's header as the server sent it. */
static void
sws_http_var_upstream_http(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    const sws_array_t *headers = sws_http_upstream_headers_in(r);

    if (headers == NULL) {
        v->len = 0;
        return;
    }
    sws_http_var_header(r, op, v, headers, ", ");
}


/* ---- variables declared by modules ---- */

typedef struct {
    sws_str_t              name;
    sws_http_variable_pt   get;
    void                  *data;
} sws_http_ext_var_t;

#define SWS_HTTP_EXT_VARS_MAX  64

static sws_http_ext_var_t  sws_http_ext_vars[SWS_HTTP_EXT_VARS_MAX];
static sws_uint_t          sws_http_ext_vars_n;

void
sws_http_variables_reset(void)
{
    sws_http_ext_vars_n = 0;
}

sws_int_t
sws_http_variable_add(sws_conf_t *cf, const char *name, sws_http_variable_pt get, void *data)
{
    sws_http_ext_var_t  *x;
    size_t               len = strlen(name);
    sws_uint_t           i;

    for (i = 0; i < sws_http_ext_vars_n; i++) {
        x = &sws_http_ext_vars[i];
        if (x->name.len == len && memcmp(x->name.data, name, len) == 0) {
            x->get = get;            /* a configuration declares it again */
            x->data = data;
            return SWS_OK;
        }
    }
    if (sws_http_ext_vars_n == SWS_HTTP_EXT_VARS_MAX) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "too many module variables (at \"$%s\")",
                           name);
        return SWS_ERROR;
    }
    x = &sws_http_ext_vars[sws_http_ext_vars_n++];
    x->name.data = (u_char *) name;
    x->name.len = len;
    x->get = get;
    x->data = data;
    return SWS_OK;
}

static void
sws_http_var_ext(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    const sws_http_ext_var_t *x = op->ext;

    v->len = 0;
    v->data = NULL;
    x->get(r, x->data, v);
}


/* ---- the variable tables ---- */

static const sws_http_var_t  sws_http_vars[] = {
    { "remote_addr",          sws_http_var_remote_addr },
    { "remote_user",          sws_http_var_empty },
    { "time_local",           sws_http_var_time_local },
    { "time_iso8601",         sws_http_var_time_iso8601 },
    { "msec",                 sws_http_var_msec },
    { "request",              sws_http_var_request },
    { "request_method",       sws_http_var_request_method },
    { "request_uri",          sws_http_var_request_uri },
    { "uri",                  sws_http_var_uri },
    { "document_uri",         sws_http_var_uri },
    { "args",                 sws_http_var_args },
    { "query_string",         sws_http_var_args },
    { "is_args",              sws_http_var_is_args },
    { "host",                 sws_http_var_host },
    { "server_name",          sws_http_var_server_name },
    { "scheme",               sws_http_var_scheme },
    { "server_protocol",      sws_http_var_server_protocol },
    { "status",               sws_http_var_status },
    { "body_bytes_sent",      sws_http_var_body_bytes_sent },
    { "bytes_sent",           sws_http_var_bytes_sent },
    { "request_time",         sws_http_var_request_time },
    { "request_id",           sws_http_var_request_id },
    { "connection",           sws_http_var_connection },
    { "connection_requests",  sws_http_var_connection_requests },
    { "pid",                  sws_http_var_pid },
    { "content_length",       sws_http_var_content_length },
    { "content_type",         sws_http_var_content_type },   /* arg "content-type" */
    { "ssl_protocol",         sws_http_var_ssl_protocol },
    { "ssl_cipher",           sws_http_var_ssl_cipher },
    { "ssl_server_name",      sws_http_var_ssl_server_name },
    { "ssl_session_reused",   sws_http_var_ssl_session_reused },
    { "ssl_alpn_protocol",    sws_http_var_ssl_alpn_protocol },
    { "ssl_early_data",       sws_http_var_ssl_early_data },
    { NULL, NULL }
};

/* $sent_http_NAME with a dedicated response field (NAME as written). */
static const sws_http_var_t  sws_http_sent_vars[] = {
    { "content_type",         sws_http_var_sent_content_type },
    { "content_length",       sws_http_var_sent_content_length },
    { "location",             sws_http_var_sent_location },
    { "last_modified",        sws_http_var_sent_last_modified },
    { "etag",                 sws_http_var_sent_etag },
    { "transfer_encoding",    sws_http_var_sent_transfer_encoding },
    { NULL, NULL }
};


static int
sws_http_name_is(const u_char *name, size_t len, const char *s)
{
    return strlen(s) == len && memcmp(name, s, len) == 0;
}

/* The header name of a variable suffix: lower case, '_' meaning '-'. */
static sws_int_t
sws_http_var_header_name(sws_pool_t *pool, const u_char *name, size_t len, sws_str_t *out)
{
    size_t  i;

    out->data = sws_pnalloc(pool, len);
    if (out->data == NULL) {
        return SWS_ERROR;
    }
    for (i = 0; i < len; i++) {
        out->data[i] = name[i] == '_' ? '-' : sws_tolower(name[i]);
    }
    out->len = len;
    return SWS_OK;
}

/* Fill op's getter and argument for the variable name; SWS_DECLINED if
 * there is no such variable. */
static sws_int_t
sws_http_var_resolve(sws_pool_t *pool, sws_http_fop_t *op, const u_char *name, size_t len)
{
    const sws_http_var_t  *v;

    for (v = sws_http_vars; v->name; v++) {
        if (sws_http_name_is(name, len, v->name)) {
            op->get = v->get;
            if (v->get == sws_http_var_content_type) {
                sws_str_set(&op->text, "content-type");
            }
            return SWS_OK;
        }
    }

    if (len > 5 && memcmp(name, "http_", 5) == 0) {
        op->get = sws_http_var_http;
        return sws_http_var_header_name(pool, name + 5, len - 5, &op->text);
    }

    if (len > 10 && memcmp(name, "sent_http_", 10) == 0) {
        op->get = sws_http_var_sent_http;
        for (v = sws_http_sent_vars; v->name; v++) {
            if (sws_http_name_is(name + 10, len - 10, v->name)) {
                op->get = v->get;
                break;
            }
        }
        return sws_http_var_header_name(pool, name + 10, len - 10, &op->text);
    }

    if (len > 14 && memcmp(name, "upstream_http_", 14) == 0) {
        op->get = sws_http_var_upstream_http;
        sws_ups_headers_wanted();           /* the framework keeps them */
        return sws_http_var_header_name(pool, name + 14, len - 14, &op->text);
    }

    if (len > 9 && memcmp(name, "upstream_", 9) == 0) {
        static const char *const  ups[] = {
            "addr", "status", "response_time", "connect_time", "header_time",
            "bytes_received", NULL
        };
        sws_uint_t                i;

        for (i = 0; ups[i]; i++) {
            if (sws_http_name_is(name + 9, len - 9, ups[i])) {
                op->get = sws_http_var_upstream;
                op->text.len = i;          /* which (no text: never printed) */
                op->text.data = NULL;
                return SWS_OK;
            }
        }
    }

    for (sws_uint_t i = 0; i < sws_http_ext_vars_n; i++) {
        const sws_http_ext_var_t *x = &sws_http_ext_vars[i];
        if (x->name.len == len && memcmp(x->name.data, name, len) == 0) {
            /* Copied: the table is reset by the next configuration. */
            sws_http_ext_var_t *copy = sws_palloc(pool, sizeof(sws_http_ext_var_t));
            if (copy == NULL) {
                return SWS_ERROR;
            }
            *copy = *x;
            op->get = sws_http_var_ext;
            op->ext = copy;
            return SWS_OK;
        }
    }

    if (len > 4 && memcmp(name, "arg_", 4) == 0) {
        op->get = sws_http_var_arg;
        op->text.len = len - 4;
        op->text.data = (u_char *) name + 4;
        return SWS_OK;
    }

    return SWS_DECLINED;
}


/* ---- compiling ---- */

static int
sws_http_var_char(u_char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || c == '_';
}

static const char *
sws_http_format_error(sws_pool_t *pool, const char *fmt, const u_char *name, size_t len)
{
    size_t   size = strlen(fmt) + len + 1;
    u_char  *buf = sws_pnalloc(pool, size);

    if (buf == NULL) {
        return "out of memory";
    }
    *sws_slprintf(buf, buf + size - 1, fmt, (int) len, name) = '\0';
    return (const char *) buf;
}

sws_http_format_t *
sws_http_format_compile(sws_pool_t *pool, const sws_str_t *text, int escape,
    const char **err)
{
    sws_http_format_t  *f;
    sws_http_fop_t     *op;
    u_char             *p, *end, *name, *lit;
    size_t              n, len;
    sws_uint_t          dollars = 0;
    int                 braced;
    sws_int_t           rc;

    if (escape < SWS_HTTP_ESCAPE_DEFAULT || escape > SWS_HTTP_ESCAPE_NONE) {
        *err = "invalid escape mode";
        return NULL;
    }

    f = sws_pcalloc(pool, sizeof(sws_http_format_t));
    p = sws_pnalloc(pool, text->len ? text->len : 1);
    if (f == NULL || p == NULL) {
        *err = "out of memory";
        return NULL;
    }
    if (text->len) {
        sws_memcpy(p, text->data, text->len);
    }
    end = p + text->len;
    f->escape = escape;

    for (n = 0; n < text->len; n++) {
        dollars += (p[n] == '$');
    }
    /* at most a literal before each variable, and one after the last */
    f->ops = sws_pcalloc(pool, (2 * dollars + 1) * sizeof(sws_http_fop_t));
    if (f->ops == NULL) {
        *err = "out of memory";
        return NULL;
    }

    lit = p;
    while (p < end) {
        if (*p != '$') {
            p++;
            continue;
        }

        if (p > lit) {
            op = &f->ops[f->nops++];
            op->text.data = lit;
            op->text.len = (size_t) (p - lit);
        }

        p++;
        braced = (p < end && *p == '{');
        if (braced) {
            p++;
        }
        name = p;
        while (p < end && sws_http_var_char(*p)) {
            p++;
        }
        len = (size_t) (p - name);

        if (braced) {
            if (p == end || *p != '}') {
                if (p == end) {
                    *err = sws_http_format_error(pool, "missing \"}\" after \"${%.*s\"",
                                                 name, len);
                } else {
                    *err = sws_http_format_error(pool,
                                                 "invalid variable name in \"${%.*s\"",
                                                 name, len + 1);
                }
                return NULL;
            }
        }
        if (len == 0) {
            *err = braced ? "empty variable name \"${}\""
                          : "invalid variable name: \"$\" must be followed by a name";
            return NULL;
        }

        op = &f->ops[f->nops++];
        rc = sws_http_var_resolve(pool, op, name, len);
        if (rc == SWS_DECLINED) {
            *err = sws_http_format_error(pool, "unknown variable \"$%.*s\"", name, len);
            return NULL;
        }
        if (rc != SWS_OK) {
            *err = "out of memory";
            return NULL;
        }
        f->nvars++;

        if (braced) {
            p++;     /* '}' */
        }
        lit = p;
    }

    if (p > lit) {
        op = &f->ops[f->nops++];
        op->text.data = lit;
        op->text.len = (size_t) (p - lit);
    }

    return f;
}


int
sws_http_format_is_static(const sws_http_format_t *f)
{
    return f->nvars == 0;
}


/* ---- escaping ---- */

/* Default mode: 1 for the bytes written as \xHH. */
static const uint8_t  sws_http_esc_default[256] = {
    [0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x7f ... 0xff] = 1
};

/* JSON: extra bytes each byte needs (\" \\ \n ..: 1, \u00XX: 5). */
static const uint8_t  sws_http_esc_json[256] = {
    [0x00 ... 0x07] = 5, ['\b'] = 1, ['\t'] = 1, ['\n'] = 1, [0x0b] = 5,
    ['\f'] = 1, ['\r'] = 1, [0x0e ... 0x1f] = 5, ['"'] = 1, ['\\'] = 1
};

static const u_char  sws_http_hex[] = "0123456789ABCDEF";

static size_t
sws_http_escaped_len(const sws_str_t *v, int escape)
{
    size_t  n = v->len, i;

    switch (escape) {
    case SWS_HTTP_ESCAPE_DEFAULT:
        if (v->len == 0) {
            return 1;                       /* "-" */
        }
        for (i = 0; i < v->len; i++) {
            n += 3 * sws_http_esc_default[v->data[i]];
        }
        return n;

    case SWS_HTTP_ESCAPE_JSON:
        for (i = 0; i < v->len; i++) {
            n += sws_http_esc_json[v->data[i]];
        }
        return n;

    default:
        return n;
    }
}

static u_char *
sws_http_escape(u_char *p, const sws_str_t *v, int escape)
{
    size_t  i;
    u_char  c;

    switch (escape) {
    case SWS_HTTP_ESCAPE_DEFAULT:
        if (v->len == 0) {
            *p++ = '-';
            return p;
        }
        for (i = 0; i < v->len; i++) {
            c = v->data[i];
            if (sws_http_esc_default[c]) {
                *p++ = '\\';
                *p++ = 'x';
                *p++ = sws_http_hex[c >> 4];
                *p++ = sws_http_hex[c & 0xf];
            } else {
                *p++ = c;
            }
        }
        return p;

    case SWS_HTTP_ESCAPE_JSON:
        for (i = 0; i < v->len; i++) {
            c = v->data[i];
            switch (sws_http_esc_json[c]) {
            case 0:
                *p++ = c;
                break;
            case 1:
                *p++ = '\\';
                *p++ = c == '\b' ? 'b' : c == '\t' ? 't' : c == '\n' ? 'n'
                     : c == '\f' ? 'f' : c == '\r' ? 'r' : c;
                break;
            default:
                p = sws_cpymem(p, "\\u00", 4);
                *p++ = sws_http_hex[c >> 4];
                *p++ = sws_http_hex[c & 0xf];
                break;
            }
        }
        return p;

    default:
        return v->len ? sws_cpymem(p, v->data, v->len) : p;
    }
}


/* ---- rendering ---- */

static void
sws_http_format_eval(sws_http_format_t *f, sws_http_request_t *r)
{
    sws_http_fop_t  *op = f->ops, *last = f->ops + f->nops;

    for ( ; op < last; op++) {
        if (op->get) {
            op->get(r, op, &op->value);
        }
    }
}

size_t
sws_http_format_len(sws_http_format_t *f, sws_http_request_t *r)
{
    sws_http_fop_t  *op = f->ops, *last = f->ops + f->nops;
    size_t           n = 0;

    sws_http_format_eval(f, r);
    f->primed = r;

    for ( ; op < last; op++) {
        n += op->get ? sws_http_escaped_len(&op->value, f->escape) : op->text.len;
    }
    return n;
}

u_char *
sws_http_format_render(sws_http_format_t *f, sws_http_request_t *r, u_char *buf)
{
    sws_http_fop_t  *op = f->ops, *last = f->ops + f->nops;

    if (f->primed != r) {
        sws_http_format_eval(f, r);
    }
    f->primed = NULL;

    for ( ; op < last; op++) {
        if (op->get) {
            buf = sws_http_escape(buf, &op->value, f->escape);
        } else {
            buf = sws_cpymem(buf, op->text.data, op->text.len);
        }
    }
    return buf;
}
