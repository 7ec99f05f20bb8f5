/*
 * Variables of the request's transfer, as nginx has them: $request_length,
 * $request_body, $request_body_file, $request_completion, $pipe,
 * $connection_time, $tcpinfo_*, $http2, $hostname. Registered in the
 * table of sws_http_variables.c.
 */
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include "sws_http_core.h"
#include "sws_http_variables.h"
#include "sws_http_temp_file.h"

/* The bytes of the head (HTTP/2: as HTTP/1 would write it) and of the body
 * read so far. */
void
sws_http_var_request_length(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_var_uint(op, v, (uint64_t) r->head_length
                              + (uint64_t) (r->body ? r->body->received : 0));
}

/* The body when it was read into memory (empty when it went to a file, or
 * was not read: a location with a handler that reads it, as in nginx). */
void
sws_http_var_request_body(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_chain_t  *cl;
    size_t        len = 0;
    u_char       *p;

    (void) op;
    v->len = 0;
    if (r->body == NULL || !r->body->finished || r->body->discard || r->body->file) {
        return;
    }
    for (cl = r->body->bufs; cl; cl = cl->next) {
        if (cl->buf->in_file) {
            return;
        }
        len += (size_t) (cl->buf->last - cl->buf->pos);
    }
    cl = r->body->bufs;
    if (cl && cl->next == NULL) {
        v->data = cl->buf->pos;              /* one buffer: no copy */
        v->len = len;
        return;
    }
    p = len ? sws_pnalloc(r->pool, len) : NULL;
    if (p == NULL) {
        return;
    }
    v->data = p;
    for (cl = r->body->bufs; cl; cl = cl->next) {
        p = sws_cpymem(p, cl->buf->pos, cl->buf->last - cl->buf->pos);
    }
    v->len = len;
}

/* The temporary file the body is in, if it is in one. */
void
sws_http_var_request_body_file(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_temp_file_t  *tf = r->body ? r->body->file : NULL;

    (void) op;
    v->len = 0;
    if (tf && tf->name && tf->linked) {
        v->data = (u_char *) tf->name;
        v->len = strlen(tf->name);
    }
}

/* "OK" once the response went out whole, else empty (for the access log). */
void
sws_http_var_request_completion(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    if (r->done && !r->cut && r->status != SWS_HTTP_CLIENT_CLOSED_REQUEST) {
        sws_http_var_set(v, "OK");
    } else {
        v->len = 0;
    }
}

/* "p" for a request whose head came with the last one's, else ".". */
void
sws_http_var_pipe(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    if (r->pipelined) {
        sws_http_var_set(v, "p");
    } else {
        sws_http_var_set(v, ".");
    }
}

/* Seconds (with milliseconds) since the connection was accepted. */
void
sws_http_var_connection_time(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    if (r->session == NULL) {
        v->len = 0;
        return;
    }
    sws_http_var_msec_text(op, v, sws_current_msec() - r->session->start_msec);
}

/* $tcpinfo_rtt, _rttvar (µs), _snd_cwnd, _rcv_space: what the session's
 * transport knows now (TCP_INFO over TCP, whichever protocol is on it);
 * op->text.len says which. Empty on a unix socket. */
void
sws_http_var_tcpinfo(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    sws_http_session_t        *s = r->session;
    sws_http_transport_info_t  ti;
    uint32_t                   n;

    if (s == NULL || s->transport->info(s, &ti) != SWS_OK) {
        v->len = 0;
        return;
    }
    switch (op->text.len) {
    case 0:  n = ti.rtt; break;
    case 1:  n = ti.rttvar; break;
    case 2:  n = ti.snd_cwnd; break;
    default: n = ti.rcv_space; break;
    }
    sws_http_var_uint(op, v, n);
}

/* "h3" over HTTP/3 (QUIC), or empty. */
void
sws_http_var_http3(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    if (r->http_version == SWS_HTTP_VERSION_30) {
        sws_http_var_set(v, "h3");
    } else {
        v->len = 0;
    }
}

/* "h2" (over TLS), "h2c" (cleartext), or empty. */
void
sws_http_var_http2(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    (void) op;
    if (r->http_version != SWS_HTTP_VERSION_20) {
        v->len = 0;
    } else if (r->session && r->session->ssl) {
        sws_http_var_set(v, "h2");
    } else {
        sws_http_var_set(v, "h2c");
    }
}

/* The host name, read once per process. */
void
sws_http_var_hostname(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v)
{
    static char    name[256];
    static size_t  len;

    (void) r; (void) op;
    if (len == 0) {
        if (gethostname(name, sizeof(name) - 1) != 0) {
            name[0] = '\0';
        }
        name[sizeof(name) - 1] = '\0';
        len = strlen(name);
    }
    v->data = (u_char *) name;
    v->len = len;
}
