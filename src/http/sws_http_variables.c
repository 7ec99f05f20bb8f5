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
#include <stdlib.h>
#include <limits.h>
#include <arpa/inet.h>
#include "sws_http_core.h"
#include "sws_http_limit_rate.h"
#include "sws_http_variables.h"
#include "sws_http_cookie.h"
#include "sws_ssl.h"
#include "sws_http_upstream.h"

typedef struct {
    const char           *name;
    sws_http_var_get_pt   get;
} sws_http_var_t;

static sws_int_t sws_http_var_resolve_core(sws_pool_t *pool, sws_http_fop_t *op,
    const u_char *name, size_t len);


/* ---- getters of simple variables ---- */

/* $remote_user: the user of Basic credentials; empty for none, another
 * scheme or a malformed value. */
static void
sws_http_var_remote_user(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    const sws_str_t  *auth = r->h_authorization;
    sws_str_t         user, password;
    u_char           *buf;

    (void) op;
    v->len = 0;
    if (auth == NULL || auth->len == 0) {
        return;
    }
    buf = sws_pnalloc(r->pool, auth->len);   /* what is decoded is shorter */
    if (buf == NULL) {
        return;
    }
    if (sws_http_parse_basic_credentials(auth->data, auth->len, buf, &user, &password)
        == SWS_OK)
    {
        sws_memzero(password.data, password.len);    /* no copy of a password left */
        *v = user;
    }
}

/* $nginx_version: the ScalWS version, for configurations written for nginx. */
static void
sws_http_var_nginx_version(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) r; (void) op;
    sws_http_var_set(v, SCALWS_VERSION);
}

void
sws_http_var_uint(sws_http_fop_t *op, sws_str_t *v, uint64_t n)
{
    v->data = op->scratch;
    v->len = (size_t) (sws_sprint_uint(op->scratch, n) - op->scratch);
}

/* "seconds.millis" of a millisecond count. */
void
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
    } else if (r->session) {
        *v = r->session->addr_text;        /* a request not made by the core */
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
    *v = *sws_http_request_line(r);
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
    sws_http_session_t *s = r->session;

    (void) op;
    if (s && (s->ssl || s->addr->ssl)) {
        sws_http_var_set(v, "https");
    } else {
        sws_http_var_set(v, "http");
    }
}

/* $request_scheme (nginx's name for $scheme) and $https: "on" over TLS. */
static void
sws_http_var_https(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_scheme(r, op, v);
    if (v->len == 5) {
        sws_http_var_set(v, "on");
    } else {
        v->len = 0;
    }
}

/* ---- addresses and the document root (the CGI variables need them) ---- */

static sws_uint_t
sws_http_sockaddr_port(const struct sockaddr_storage *sa)
{
    if (sa->ss_family == AF_INET) {
        return ntohs(((const struct sockaddr_in *) sa)->sin_port);
    }
    if (sa->ss_family == AF_INET6) {
        return ntohs(((const struct sockaddr_in6 *) sa)->sin6_port);
    }
    return 0;
}

/* The address the connection came to: the listening one, or, for a
 * wildcard listener, the socket's own (one getsockname per use). */
static int
sws_http_local_sockaddr(sws_http_request_t *r, struct sockaddr_storage *sa)
{
    sws_http_session_t *s = r->session;

    if (s == NULL || s->listening == NULL) {
        return 0;
    }
    *sa = s->listening->sockaddr;
    if ((sa->ss_family == AF_INET
         && ((struct sockaddr_in *) sa)->sin_addr.s_addr == htonl(INADDR_ANY))
        || (sa->ss_family == AF_INET6
            && IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *) sa)->sin6_addr)))
    {
        if (s->transport->local_addr(s, sa) != SWS_OK) {
            return 0;
        }
    }
    return 1;
}

static void
sws_http_var_server_port(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    struct sockaddr_storage sa;
    sws_uint_t              port;

    v->len = 0;
    if (r->session && r->session->listening) {
        port = sws_http_sockaddr_port(&r->session->listening->sockaddr);
        if (port == 0 && sws_http_local_sockaddr(r, &sa)) {
            port = sws_http_sockaddr_port(&sa);
        }
        if (port) {
            sws_http_var_uint(op, v, port);
        }
    }
}

static void
sws_http_var_server_addr(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    struct sockaddr_storage sa;
    char                    text[INET6_ADDRSTRLEN];
    const void             *a;

    (void) op;
    v->len = 0;
    if (!sws_http_local_sockaddr(r, &sa)) {
        return;
    }
    if (sa.ss_family == AF_INET) {
        /* Dotted quad by hand: inet_ntop's printf cost 1,700 instructions
         * a request (the CGI parameters ask for it every time). */
        const u_char *q = (const u_char *) &((struct sockaddr_in *) &sa)->sin_addr;
        u_char       *p = (u_char *) text;
        int           i;

        for (i = 0; i < 4; i++) {
            p = sws_sprint_uint(p, q[i]);
            *p++ = i < 3 ? '.' : '\0';
        }
    } else {
        a = sa.ss_family == AF_INET6
            ? (const void *) &((struct sockaddr_in6 *) &sa)->sin6_addr : NULL;
        if (a == NULL || inet_ntop(sa.ss_family, a, text, sizeof(text)) == NULL) {
            return;
        }
    }
    v->len = strlen(text);
    v->data = sws_pnalloc(r->pool, v->len);
    if (v->data == NULL) {
        v->len = 0;
        return;
    }
    memcpy(v->data, text, v->len);
}

/* $document_root: the location's root (or alias) as configured;
 * $realpath_root: the same with symbolic links resolved. */
static void
sws_http_var_document_root(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    v->len = 0;
    if (r->loc_conf) {
        *v = sws_http_core_loc(r)->root;
    }
}

static void
sws_http_var_realpath_root(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_str_t  root;
    char      *path, real[PATH_MAX];

    sws_http_var_document_root(r, op, &root);
    v->len = 0;
    if (root.len == 0 || (path = sws_pnalloc(r->pool, root.len + 1)) == NULL) {
        return;
    }
    memcpy(path, root.data, root.len);
    path[root.len] = '\0';
    if (realpath(path, real) == NULL) {
        return;
    }
    v->len = strlen(real);
    v->data = sws_pnalloc(r->pool, v->len);
    if (v->data == NULL) {
        v->len = 0;
        return;
    }
    memcpy(v->data, real, v->len);
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

    if (r->proto == NULL) {
        return 0;                          /* a request not made by the core */
    }
    /* HTTP/1: the connection's count since the request began; a stream
     * of a multiplexed connection keeps its own. */
    n = r->proto->bytes_sent(r);
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
    if (r->session) {
        sws_http_var_uint(op, v, r->session->number);
    } else {
        v->len = 0;
    }
}

static void
sws_http_var_connection_requests(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->session) {
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


/* The file the URI maps to (root or alias + URI), as the static module
 * opens it. */
static void
sws_http_var_request_filename(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    v->len = 0;
    if (r->loc_conf == NULL || sws_http_map_uri_to_path(r, v, NULL, 0) != SWS_OK) {
        v->len = 0;
    }
}


/* ---- headers ---- */

/*
 * Whether a field's name is the one op->text names. exact: op->text is the
 * field's name in lower case (the fields nginx keeps apart: $http_host,
 * $http_user_agent, $http_x_forwarded_for ... read only their own spelling).
 * Else op->text is a variable's suffix ("x_foo") and a name matches when,
 * lower-cased and with each '-' read as '_', it is that suffix: "X-Foo" and
 * "X_Foo" (let in by underscores_in_headers) are both $http_x_foo, as in nginx.
 */
static int
sws_http_var_field_is(const sws_str_t *name, const sws_str_t *text, int exact)
{
    size_t  i;
    u_char  c;

    if (name->len != text->len) {
        return 0;
    }
    if (exact) {
        return sws_strncasecmp(name->data, text->data, text->len) == 0;
    }
    for (i = 0; i < text->len; i++) {
        c = sws_tolower(name->data[i]);
        if ((c == '-' ? '_' : c) != text->data[i]) {
            return 0;
        }
    }
    return 1;
}

/*
 * The value of the first live field op->text names (sws_http_var_field_is),
 * joined with sep to the values of the later lines of that same field (RFC
 * 9110 5.3); the lines of another spelling ("X_Foo" after "X-Foo") are
 * another field and stay out (sep NULL: the first line only). The join is
 * the only allocation of a getter.
 */
static void
sws_http_var_header(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v,
    const sws_array_t *headers, const char *sep, int exact)
{
    sws_http_header_t  *h = headers->elts;
    sws_uint_t          i, first, n = 0;
    size_t              len = 0, seplen;
    sws_str_t           name;
    u_char             *p;

    v->len = 0;
    for (first = 0; first < headers->nelts; first++) {
        if (h[first].hash != 0 && sws_http_var_field_is(&h[first].name, &op->text, exact)) {
            break;
        }
    }
    if (first == headers->nelts) {
        return;
    }
    *v = h[first].value;
    if (sep == NULL) {
        return;
    }
    seplen = strlen(sep);
    name = h[first].name;
    for (i = first; i < headers->nelts; i++) {
        if (h[i].hash != 0 && sws_http_var_field_is(&h[i].name, &name, 1)) {
            n++;
            len += h[i].value.len;
        }
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
        if (h[i].hash == 0 || !sws_http_var_field_is(&h[i].name, &name, 1)) {
            continue;
        }
        if (p != v->data) {
            p = sws_cpymem(p, sep, seplen);
        }
        p = sws_cpymem(p, h[i].value.data, h[i].value.len);
    }
}

/* $http_NAME: a request field, either spelling (sws_http_var_field_is). */
static void
sws_http_var_http(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_header(r, op, v, &r->headers_in, ", ", 0);
}

/* $http_NAME of a field nginx keeps apart (sws_http_http_fields): that
 * spelling only, so that a client's "X_Forwarded_For" is never read as the
 * "X-Forwarded-For" a proxy in front appended to; Cookie's lines joined
 * with "; ". */
static void
sws_http_var_http_field(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    const char  *sep = (op->text.len == 6 && memcmp(op->text.data, "cookie", 6) == 0)
                       ? "; " : ", ";

    sws_http_var_header(r, op, v, &r->headers_in, sep, 1);
}

/* $http_host, $http_user_agent, $http_referer: fields of one value (RFC
 * 9110 7.2, 10.1.5, 10.1.3), not lists: the first line, as nginx's. */
static void
sws_http_var_http_first(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_header(r, op, v, &r->headers_in, NULL, 1);
}

/* $http_host: over HTTP/2 and 3 without a Host field, the :authority as
 * the client sent it (port included), as nginx's. */
static void
sws_http_var_http_host(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_header(r, op, v, &r->headers_in, NULL, 1);
    if (v->len == 0 && r->h_host == NULL && r->http_version >= SWS_HTTP_VERSION_20) {
        *v = r->authority;
    }
}

static void
sws_http_var_content_type(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_header(r, op, v, &r->headers_in, ", ", 1);
}

static void
sws_http_var_sent_http(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_header(r, op, v, &r->headers_out, ", ", 0);
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

/* The session's TLS state once its handshake is done (TLS over TCP,
 * later QUIC's): the same answers over every protocol. */
static SSL *
sws_http_var_ssl(sws_http_request_t *r)
{
    return r->session ? r->session->ssl : NULL;
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
    SSL                 *ssl = sws_http_var_ssl(r);
    const unsigned char *data = NULL;
    unsigned int         len = 0;

    (void) op;
    if (ssl) {
        SSL_get0_alpn_selected(ssl, &data, &len);
    }
    v->data = (u_char *) data;
    v->len = data ? len : 0;
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

/* $ssl_client_NAME: op->text.len is the SWS_SSL_PEER_* fact
 * (sws_ssl_verify.c). Empty without TLS. */
static void
sws_http_var_ssl_client(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    SSL *ssl = sws_http_var_ssl(r);

    v->len = 0;
    if (ssl) {
        (void) sws_ssl_peer_fact(ssl, op->text.len, r->pool, v);
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
    sws_http_var_header(r, op, v, headers, ", ", 0);
}

/* $upstream_trailer_NAME: the trailer fields of the server's response.
 * None of our upstream protocols (HTTP/1 proxy, FastCGI, uwsgi, SCGI) keeps
 * them, as nginx keeps them for gRPC only: empty, as nginx's with these. */
static void
sws_http_var_upstream_trailer(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    v->len = 0;
}


/* $0..$9: the captures of the request's last regex match */
static void
sws_http_var_capture(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_regex_capture(r, op->text.len, v);
}


/* ---- $cookie_NAME ---- */

/* The value of cookie op->text in the Cookie fields: "a=1; b=2", possibly
 * several fields (HTTP/2 splits them); sws_http_cookie.c parses one. */
static void
sws_http_var_cookie(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_header_t  *h = r->headers_in.elts;
    sws_uint_t          i;

    v->len = 0;
    v->data = NULL;
    for (i = 0; i < r->headers_in.nelts; i++) {
        if (h[i].hash != 0 && h[i].name.len == 6 && memcmp(h[i].name.data, "cookie", 6) == 0
            && sws_http_cookie_find(h[i].value.data, h[i].value.len, op->text.data,
                                    op->text.len, v))
        {
            return;
        }
    }
}


/* ---- variables declared by modules, and those handlers write ---- */

/*
 * One registry per configuration (reset when an http block starts), in
 * the configuration's pool. A variable with a slot (index >= 0) keeps its
 * value per request in r->vars: the writable ones (get NULL: rewrite's
 * set), and the module variables evaluated once per request (map). A
 * format refers to its entry by a copy (the array may move as it grows).
 */
typedef struct {
    sws_str_t              name;
    sws_http_variable_pt   get;        /* NULL: writable */
    void                  *data;
    sws_int_t              index;      /* slot, or -1: evaluated on every read */
    unsigned               volatile_:1;/* a slot only against cycles */
} sws_http_ext_var_t;

/* A name no variable had when a format was compiled during the http
 * block: resolved when the block ends (a map or set further down may
 * declare it), else an error at its line. */
typedef struct {
    sws_str_t              name;
    sws_http_fop_t        *op;
    const char            *file;
    sws_uint_t             line;
} sws_http_pending_var_t;

static sws_array_t  *sws_http_ext_vars;     /* sws_http_ext_var_t */
static sws_array_t  *sws_http_pending;      /* sws_http_pending_var_t */
static sws_conf_t   *sws_http_vars_cf;      /* the http block being read */
static sws_uint_t    sws_http_nslots;
static sws_http_ext_var_t *sws_http_limit_rate_var;  /* set's or map's $limit_rate */
static sws_int_t     sws_http_args_slot = -1;  /* set's $args */

void
sws_http_variables_reset(void)
{
    sws_http_ext_vars = NULL;
    sws_http_pending = NULL;
    sws_http_vars_cf = NULL;
    sws_http_nslots = 0;
    sws_http_limit_rate_var = NULL;
    sws_http_args_slot = -1;
}

void
sws_http_variables_begin(sws_conf_t *cf)
{
    sws_http_variables_reset();
    sws_http_vars_cf = cf;
}

static sws_http_ext_var_t *
sws_http_ext_find(const u_char *name, size_t len)
{
    sws_http_ext_var_t  *x;
    sws_uint_t           i;

    if (sws_http_ext_vars == NULL) {
        return NULL;
    }
    x = sws_http_ext_vars->elts;
    for (i = 0; i < sws_http_ext_vars->nelts; i++) {
        if (x[i].name.len == len && sws_strncasecmp(x[i].name.data, name, len) == 0) {
            return &x[i];
        }
    }
    return NULL;
}

static sws_http_ext_var_t *
sws_http_ext_push(sws_conf_t *cf, const u_char *name, size_t len)
{
    sws_http_ext_var_t  *x;
    u_char              *copy;

    if (sws_http_ext_vars == NULL) {
        sws_http_ext_vars = sws_array_create(sws_conf_pool(cf), 16, sizeof(sws_http_ext_var_t));
        if (sws_http_ext_vars == NULL) {
            return NULL;
        }
    }
    copy = sws_pnalloc(sws_conf_pool(cf), len + 1);
    x = sws_array_push(sws_http_ext_vars);
    if (copy == NULL || x == NULL) {
        return NULL;
    }
    sws_strlow(copy, name, len);             /* names are case-insensitive */
    copy[len] = '\0';
    sws_memzero(x, sizeof(*x));
    x->name.data = copy;
    x->name.len = len;
    x->index = -1;
    return x;
}

sws_int_t
sws_http_variable_add(sws_conf_t *cf, const char *name, sws_http_variable_pt get, void *data)
{
    sws_http_ext_var_t  *x;
    size_t               len = strlen(name);

    x = sws_http_ext_find((const u_char *) name, len);
    if (x != NULL && x->get != NULL && x->index < 0) {
        x->get = get;                /* a configuration declares it again */
        x->data = data;
        return SWS_OK;
    }
    if (x != NULL) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "duplicate variable \"$%s\"", name);
        return SWS_ERROR;
    }
    x = sws_http_ext_push(cf, (const u_char *) name, len);
    if (x == NULL) {
        return SWS_ERROR;
    }
    x->get = get;
    x->data = data;
    return SWS_OK;
}

/* Is name a variable of the core ($uri, $http_x, $1 ...)? */
static int
sws_http_var_is_core(const u_char *name, size_t len)
{
    sws_http_fop_t  op;
    sws_pool_t     *pool;
    sws_int_t       rc;

    if (sws_http_vars_cf == NULL) {
        return 0;
    }
    pool = sws_conf_pool(sws_http_vars_cf);
    sws_memzero(&op, sizeof(op));
    rc = sws_http_var_resolve_core(pool, &op, name, len);
    return rc == SWS_OK;
}

static sws_int_t
sws_http_variable_slot(sws_conf_t *cf, const u_char *name, size_t len,
    sws_http_variable_pt get, void *data, sws_uint_t flags)
{
    sws_http_ext_var_t  *x;

    if (len == 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "empty variable name");
        return SWS_ERROR;
    }
    /* $limit_rate is the server's, but writable (nginx's set $limit_rate
     * and map ... $limit_rate pace the response); so is $args by "set"
     * (the request's query: $args, $arg_*, $is_args and a proxied
     * request's target follow it; $request_uri stays the client's) */
    if (!(len == 10 && sws_strncasecmp(name, (u_char *) "limit_rate", 10) == 0)
        && !(len == 4 && sws_strncasecmp(name, (u_char *) "args", 4) == 0 && get == NULL)
        && sws_http_var_is_core(name, len))
    {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0,
                           "variable \"$%.*s\" is the server's: it cannot be %s",
                           (int) len, name, get ? "defined again" : "set");
        return SWS_ERROR;
    }
    x = sws_http_ext_find(name, len);
    if (x != NULL && x == sws_http_ext_find((const u_char *) "limit_rate", 10)) {
        /* a map and a set both on $limit_rate: the set's value is the
         * rate from then on, the map's until then */
        if (get != NULL && x->get == NULL) {
            x->get = get;
            x->data = data;
            *sws_http_limit_rate_var = *x;
            return x->index;
        }
        if (get == NULL) {
            return x->index;
        }
    }
    if (x != NULL) {
        if (get == NULL && x->get == NULL) {
            return x->index;         /* set again: the same variable */
        }
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "duplicate variable \"$%.*s\"%s",
                           (int) len, name,
                           x->get == NULL ? ": it is written by \"set\""
                           : get == NULL ? ": it is a module's and cannot be set" : "");
        return SWS_ERROR;
    }
    x = sws_http_ext_push(cf, name, len);
    if (x == NULL) {
        return SWS_ERROR;
    }
    x->get = get;
    x->data = data;
    x->index = (sws_int_t) sws_http_nslots++;
    x->volatile_ = (flags & SWS_HTTP_VAR_VOLATILE) != 0;
    if (len == 4 && sws_strncasecmp(name, (u_char *) "args", 4) == 0) {
        sws_http_args_slot = x->index;
    }
    if (len == 10 && sws_strncasecmp(name, (u_char *) "limit_rate", 10) == 0) {
        x = sws_palloc(sws_conf_pool(cf), sizeof(sws_http_ext_var_t));
        if (x == NULL) {
            return SWS_ERROR;
        }
        *x = ((sws_http_ext_var_t *) sws_http_ext_vars->elts)[sws_http_ext_vars->nelts - 1];
        sws_http_limit_rate_var = x;   /* a copy: the array moves as it grows */
    }
    return x->index;
}

static void sws_http_var_ext(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v);

int
sws_http_variables_args(sws_uint_t *slot)
{
    if (sws_http_args_slot < 0) {
        return 0;
    }
    *slot = (sws_uint_t) sws_http_args_slot;
    return 1;
}

int
sws_http_variables_limit_rate(sws_uint_t *slot, const void **map)
{
    const sws_http_ext_var_t  *x = sws_http_limit_rate_var;

    *map = NULL;
    if (x == NULL) {
        return 0;
    }
    *slot = (sws_uint_t) x->index;
    *map = x->get ? x : NULL;
    return 1;
}

void
sws_http_variable_ext_value(sws_http_request_t *r, const void *ext, sws_str_t *v)
{
    sws_http_fop_t  op;

    sws_memzero(&op, sizeof(op));
    op.ext = ext;
    sws_http_var_ext(r, &op, v);
}

sws_int_t
sws_http_variable_add_cached(sws_conf_t *cf, const char *name, sws_http_variable_pt get,
    void *data, sws_uint_t flags)
{
    if (get == NULL) {
        return SWS_ERROR;
    }
    return sws_http_variable_slot(cf, (const u_char *) name, strlen(name), get, data, flags)
           >= 0 ? SWS_OK : SWS_ERROR;
}

sws_int_t
sws_http_variable_writable(sws_conf_t *cf, const sws_str_t *name)
{
    return sws_http_variable_slot(cf, name->data, name->len, NULL, NULL, 0);
}

static sws_http_var_slot_t *
sws_http_var_slots(sws_http_request_t *r)
{
    sws_uint_t  n;

    if (r->vars == NULL && r->main_conf) {
        n = sws_http_core_main(r)->nvariables;
        if (n) {
            r->vars = sws_pcalloc(r->pool, n * sizeof(sws_http_var_slot_t));
        }
    }
    return r->vars;
}

sws_int_t
sws_http_variable_set(sws_http_request_t *r, sws_uint_t index, const sws_str_t *value)
{
    sws_http_var_slot_t  *slots = sws_http_var_slots(r);

    if (slots == NULL || index >= sws_http_core_main(r)->nvariables) {
        return SWS_ERROR;
    }
    slots[index].value = *value;
    slots[index].valid = 1;
    if (sws_http_core_main(r)->limit_rate_settable
        && index == sws_http_core_main(r)->limit_rate_slot)
    {
        sws_http_limit_rate_set_text(r, value);
    }
    if (sws_http_core_main(r)->args_settable && index == sws_http_core_main(r)->args_slot) {
        r->args = *value;
        r->args_set = 1;
    }
    return SWS_OK;
}

static void
sws_http_var_ext(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    const sws_http_ext_var_t  *x = op->ext;
    sws_http_var_slot_t       *slot;

    v->len = 0;
    v->data = NULL;
    if (x->index < 0) {
        x->get(r, x->data, v);
        return;
    }
    slot = sws_http_var_slots(r);
    if (slot == NULL || (sws_uint_t) x->index >= sws_http_core_main(r)->nvariables) {
        return;                      /* out of memory, or not of this configuration */
    }
    slot += x->index;
    if (x->get == NULL || (slot->valid && !x->volatile_)) {
        if (slot->valid) {
            *v = slot->value;        /* written by set, or evaluated before */
        }
        return;
    }
    if (slot->busy) {
        sws_log_error(SWS_LOG_ERR, r->log, 0, "cycle while evaluating variable \"$%.*s\"",
                      (int) x->name.len, x->name.data);
        return;
    }
    slot->busy = 1;
    x->get(r, x->data, v);
    slot->busy = 0;
    slot->value = *v;
    slot->valid = 1;
}

static void
sws_http_var_pending(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) r; (void) op;
    v->len = 0;                      /* never reached: the configuration failed */
    v->data = NULL;
}

static sws_int_t
sws_http_var_bind_ext(sws_pool_t *pool, sws_http_fop_t *op, const sws_http_ext_var_t *x)
{
    /* Copied: the array moves as it grows, and goes with the configuration. */
    sws_http_ext_var_t *copy = sws_palloc(pool, sizeof(sws_http_ext_var_t));

    if (copy == NULL) {
        return SWS_ERROR;
    }
    *copy = *x;
    op->get = sws_http_var_ext;
    op->ext = copy;
    return SWS_OK;
}

static sws_int_t
sws_http_var_defer(sws_pool_t *pool, sws_http_fop_t *op, const u_char *name, size_t len)
{
    sws_http_pending_var_t  *pv;
    sws_conf_t              *cf = sws_http_vars_cf;

    if (sws_http_pending == NULL) {
        sws_http_pending = sws_array_create(sws_conf_pool(cf), 8,
                                            sizeof(sws_http_pending_var_t));
        if (sws_http_pending == NULL) {
            return SWS_ERROR;
        }
    }
    pv = sws_array_push(sws_http_pending);
    if (pv == NULL) {
        return SWS_ERROR;
    }
    pv->name.data = sws_pnalloc(pool, len);
    if (pv->name.data == NULL) {
        return SWS_ERROR;
    }
    memcpy(pv->name.data, name, len);
    pv->name.len = len;
    pv->op = op;
    pv->file = sws_conf_file(cf);
    pv->line = sws_conf_line(cf);
    op->get = sws_http_var_pending;
    return SWS_OK;
}

sws_int_t
sws_http_variables_end(sws_conf_t *cf, sws_uint_t *nslots)
{
    sws_http_pending_var_t  *pv;
    sws_http_ext_var_t      *x;
    sws_uint_t               i;

    *nslots = sws_http_nslots;
    sws_http_vars_cf = NULL;
    if (sws_http_pending == NULL) {
        return SWS_OK;
    }
    pv = sws_http_pending->elts;
    for (i = 0; i < sws_http_pending->nelts; i++) {
        x = sws_http_ext_find(pv[i].name.data, pv[i].name.len);
        if (x == NULL) {
            sws_log_error(SWS_LOG_EMERG, sws_conf_log(cf), 0,
                          "unknown variable \"$%.*s\" in %s:%lu", (int) pv[i].name.len,
                          pv[i].name.data, pv[i].file, (unsigned long) pv[i].line);
            return SWS_ERROR;
        }
        if (sws_http_var_bind_ext(sws_conf_pool(cf), pv[i].op, x) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    sws_http_pending = NULL;
    return SWS_OK;
}


/* ---- the variable tables ---- */

static const sws_http_var_t  sws_http_vars[] = {
    { "remote_addr",          sws_http_var_remote_addr },
    { "binary_remote_addr",   sws_http_var_binary_remote_addr },
    { "remote_port",          sws_http_var_remote_port },
    { "limit_rate",           sws_http_var_limit_rate },
    { "remote_user",          sws_http_var_remote_user },
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
    { "request_scheme",       sws_http_var_scheme },
    { "https",                sws_http_var_https },
    { "server_addr",          sws_http_var_server_addr },
    { "server_port",          sws_http_var_server_port },
    { "document_root",        sws_http_var_document_root },
    { "realpath_root",        sws_http_var_realpath_root },
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
    { "request_filename",     sws_http_var_request_filename },
    { "content_type",         sws_http_var_content_type },   /* arg "content-type" */
    { "ssl_protocol",         sws_http_var_ssl_protocol },
    { "ssl_cipher",           sws_http_var_ssl_cipher },
    { "ssl_server_name",      sws_http_var_ssl_server_name },
    { "ssl_session_reused",   sws_http_var_ssl_session_reused },
    { "ssl_alpn_protocol",    sws_http_var_ssl_alpn_protocol },
    { "ssl_early_data",       sws_http_var_ssl_early_data },
    { "request_length",       sws_http_var_request_length },
    { "request_body",         sws_http_var_request_body },
    { "request_body_file",    sws_http_var_request_body_file },
    { "request_completion",   sws_http_var_request_completion },
    { "pipe",                 sws_http_var_pipe },
    { "connection_time",      sws_http_var_connection_time },
    { "http2",                sws_http_var_http2 },
    { "http3",                sws_http_var_http3 },
    { "hostname",             sws_http_var_hostname },
    { "nginx_version",        sws_http_var_nginx_version },
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

/* The request fields nginx reads through fields of its own, not by name:
 * their $http_ variable reads that spelling only (sws_http_var_http_field). */
static const sws_http_var_t  sws_http_http_fields[] = {
    { "host",                 sws_http_var_http_host },
    { "user_agent",           sws_http_var_http_first },
    { "referer",              sws_http_var_http_first },
    { "via",                  sws_http_var_http_field },
    { "x_forwarded_for",      sws_http_var_http_field },
    { "cookie",               sws_http_var_http_field },
    { NULL, NULL }
};

/* A field variable's suffix ("X_Foo" of $http_X_Foo) as op->text: lower
 * case; with dash, each '_' made '-' (a field's own name, for an exact
 * comparison), else '_' kept (sws_http_var_field_is maps the fields). */
static sws_int_t
sws_http_var_field_text(sws_pool_t *pool, const u_char *name, size_t len, int dash,
    sws_str_t *out)
{
    size_t  i;

    out->data = sws_pnalloc(pool, len);
    if (out->data == NULL) {
        return SWS_ERROR;
    }
    for (i = 0; i < len; i++) {
        out->data[i] = (dash && name[i] == '_') ? '-' : sws_tolower(name[i]);
    }
    out->len = len;
    return SWS_OK;
}

static sws_int_t
sws_http_var_http_resolve(sws_pool_t *pool, sws_http_fop_t *op, const u_char *name, size_t len)
{
    const sws_http_var_t  *f;

    for (f = sws_http_http_fields; f->name; f++) {
        if (sws_http_name_is(name, len, f->name)) {
            op->get = f->get;
            return sws_http_var_field_text(pool, name, len, 1, &op->text);
        }
    }
    op->get = sws_http_var_http;
    return sws_http_var_field_text(pool, name, len, 0, &op->text);
}

/* The families whose getter takes which one as op->text.len (in the order
 * of the names): $proxy_protocol_*, $upstream_*, $tcpinfo_*. */
static const char *const  sws_http_pp_names[] = {
    "addr", "port", "server_addr", "server_port", NULL
};
static const char *const  sws_http_ups_names[] = {       /* SWS_UPS_VAR_* */
    "addr", "status", "response_time", "connect_time", "header_time",
    "bytes_received", "response_length", "bytes_sent", NULL
};
static const char *const  sws_http_ssl_client_names[] = {    /* SWS_SSL_PEER_* */
    "verify", "s_dn", "i_dn", "s_dn_legacy", "i_dn_legacy", "serial", "fingerprint",
    "cert", "raw_cert", "escaped_cert", "v_start", "v_end", "v_remain", NULL
};
static const char *const  sws_http_tcpinfo_names[] = {
    "rtt", "rttvar", "snd_cwnd", "rcv_space", NULL
};

static int
sws_http_var_family(sws_http_fop_t *op, const u_char *name, size_t len, const char *prefix,
    const char *const *names, sws_http_var_get_pt get)
{
    size_t      plen = strlen(prefix);
    sws_uint_t  i;

    if (len <= plen || memcmp(name, prefix, plen) != 0) {
        return 0;
    }
    for (i = 0; names[i]; i++) {
        if (sws_http_name_is(name + plen, len - plen, names[i])) {
            op->get = get;
            op->text.len = i;              /* which (no text: never printed) */
            op->text.data = NULL;
            return 1;
        }
    }
    return 0;
}

static sws_int_t
sws_http_var_resolve_core(sws_pool_t *pool, sws_http_fop_t *op, const u_char *name, size_t len)
{
    const sws_http_var_t  *v;
    u_char                *low;
    size_t                 i;

    /* Variable names are case-insensitive ($HTTP_X_FOO is $http_x_foo, as
     * in nginx): the rare name with an upper-case letter is read lowered. */
    for (i = 0; i < len && !(name[i] >= 'A' && name[i] <= 'Z'); i++) { /* void */ }
    if (i < len) {
        low = sws_pnalloc(pool, len);
        if (low == NULL) {
            return SWS_ERROR;
        }
        sws_strlow(low, name, len);
        name = low;
    }

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
        return sws_http_var_http_resolve(pool, op, name + 5, len - 5);
    }

    if (len > 10 && memcmp(name, "sent_http_", 10) == 0) {
        op->get = sws_http_var_sent_http;
        for (v = sws_http_sent_vars; v->name; v++) {
            if (sws_http_name_is(name + 10, len - 10, v->name)) {
                op->get = v->get;
                break;
            }
        }
        return sws_http_var_field_text(pool, name + 10, len - 10, 0, &op->text);
    }

    if (sws_http_var_family(op, name, len, "proxy_protocol_", sws_http_pp_names,
                            sws_http_var_proxy_protocol))
    {
        return SWS_OK;
    }

    if (len > 14 && memcmp(name, "upstream_http_", 14) == 0) {
        op->get = sws_http_var_upstream_http;
        sws_ups_headers_wanted();           /* the framework keeps them */
        return sws_http_var_field_text(pool, name + 14, len - 14, 0, &op->text);
    }

    if (len > 17 && memcmp(name, "upstream_trailer_", 17) == 0) {
        op->get = sws_http_var_upstream_trailer;
        return SWS_OK;
    }

    if (sws_http_var_family(op, name, len, "upstream_", sws_http_ups_names,
                            sws_http_var_upstream)
        || sws_http_var_family(op, name, len, "tcpinfo_", sws_http_tcpinfo_names,
                               sws_http_var_tcpinfo)
        || sws_http_var_family(op, name, len, "ssl_client_", sws_http_ssl_client_names,
                               sws_http_var_ssl_client))
    {
        return SWS_OK;
    }

    if (len > 4 && memcmp(name, "arg_", 4) == 0) {
        op->get = sws_http_var_arg;
        op->text.len = len - 4;
        op->text.data = (u_char *) name + 4;
        return SWS_OK;
    }

    if (len > 7 && memcmp(name, "cookie_", 7) == 0) {
        op->get = sws_http_var_cookie;
        op->text.len = len - 7;
        op->text.data = sws_pnalloc(pool, len - 7);
        if (op->text.data == NULL) {
            return SWS_ERROR;
        }
        memcpy(op->text.data, name + 7, len - 7);
        return SWS_OK;
    }

    return SWS_DECLINED;
}

/* A module's variable goes before the $arg_ and $cookie_ families (as the
 * table order was), the core's names before both. Unknown while an http
 * block is read: resolved at its end (sws_http_variables_end). */
sws_int_t
sws_http_var_resolve(sws_pool_t *pool, sws_http_fop_t *op, const u_char *name, size_t len)
{
    const sws_http_ext_var_t  *x;
    sws_int_t                  rc;
    int                        family;

    family = (len > 4 && sws_strncasecmp(name, (u_char *) "arg_", 4) == 0)
             || (len > 7 && sws_strncasecmp(name, (u_char *) "cookie_", 7) == 0);

    if (!family) {
        rc = sws_http_var_resolve_core(pool, op, name, len);
        if (rc != SWS_DECLINED) {
            return rc;
        }
    }
    x = sws_http_ext_find(name, len);
    if (x != NULL) {
        return sws_http_var_bind_ext(pool, op, x);
    }
    if (family) {
        return sws_http_var_resolve_core(pool, op, name, len);
    }
    if (sws_http_vars_cf != NULL) {
        return sws_http_var_defer(pool, op, name, len);
    }
    return SWS_DECLINED;
}
