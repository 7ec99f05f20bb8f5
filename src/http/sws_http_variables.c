/*
 * The request variables (see sws_http_variables.h): their getters, the
 * tables of names, the variables modules declare, and the lookup of a name
 * for the format compiler (sws_http_format.c).
 *
 * Getters return a value pointing into the request, the time cache or the
 * operation's own scratch space (numbers), so evaluating a variable
 * allocates nothing except when several headers of one name have to be
 * joined.
 */
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include "sws_http_core.h"
#include "sws_http_variables.h"
#include "sws_ssl.h"
#include "sws_http_upstream.h"

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
    if (r->addr_text.data) {
        *v = r->addr_text;
    } else if (r->connection) {
        *v = r->connection->addr_text;     /* a request not made by the core */
    } else {
        v->len = 0;
    }
}

/* The client address in 4 or 16 bytes, a key for limit zones ("unix:"
 * for every unix-socket client). */
static void
sws_http_var_binary_remote_addr(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    if (r->sockaddr == NULL) {
        v->len = 0;
    } else if (r->sockaddr->sa_family == AF_INET) {
        v->data = (u_char *) &((struct sockaddr_in *) r->sockaddr)->sin_addr;
        v->len = 4;
    } else if (r->sockaddr->sa_family == AF_INET6) {
        v->data = (u_char *) &((struct sockaddr_in6 *) r->sockaddr)->sin6_addr;
        v->len = 16;
    } else {
        sws_http_var_set(v, "unix:");
    }
}

static void
sws_http_var_remote_port(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->sockaddr && r->sockaddr->sa_family == AF_INET) {
        sws_http_var_uint(op, v, ntohs(((struct sockaddr_in *) r->sockaddr)->sin_port));
    } else if (r->sockaddr && r->sockaddr->sa_family == AF_INET6) {
        sws_http_var_uint(op, v, ntohs(((struct sockaddr_in6 *) r->sockaddr)->sin6_port));
    } else {
        v->len = 0;
    }
}

/* $proxy_protocol_addr, _port, _server_addr, _server_port: op->text.len
 * says which. */
static void
sws_http_var_proxy_protocol(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_proxy_protocol_t *pp = r->session ? r->session->proxy : NULL;

    if (pp == NULL) {
        v->len = 0;
        return;
    }
    switch (op->text.len) {
    case 0:  *v = pp->src_addr; break;
    case 1:  *v = pp->src_port; break;
    case 2:  *v = pp->dst_addr; break;
    default: *v = pp->dst_port; break;
    }
}

static void
sws_http_var_limit_rate(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_uint(op, v, (uint64_t) sws_http_limit_rate(r));
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


/* $0..$9: the captures of the request's last regex match */
static void
sws_http_var_capture(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_regex_capture(r, op->text.len, v);
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
    { "binary_remote_addr",   sws_http_var_binary_remote_addr },
    { "remote_port",          sws_http_var_remote_port },
    { "limit_rate",           sws_http_var_limit_rate },
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

sws_int_t
sws_http_var_resolve(sws_pool_t *pool, sws_http_fop_t *op, const u_char *name, size_t len)
{
    const sws_http_var_t  *v;

    if (len == 1 && name[0] >= '0' && name[0] <= '9') {
        op->get = sws_http_var_capture;
        op->text.len = name[0] - '0';      /* which (no text: never printed) */
        op->text.data = NULL;
        return SWS_OK;
    }

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

    if (len > 15 && memcmp(name, "proxy_protocol_", 15) == 0) {
        static const char *const  pp[] = { "addr", "port", "server_addr", "server_port",
                                           NULL };
        sws_uint_t                i;

        for (i = 0; pp[i]; i++) {
            if (sws_http_name_is(name + 15, len - 15, pp[i])) {
                op->get = sws_http_var_proxy_protocol;
                op->text.len = i;          /* which (no text: never printed) */
                op->text.data = NULL;
                return SWS_OK;
            }
        }
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
