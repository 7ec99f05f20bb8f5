/* HTTP/1.x connections: shared by the h1 files. */
#ifndef SWS_HTTP_H1_H
#define SWS_HTTP_H1_H

#include "sws_http_core.h"

/* The HTTP/1 state of a client session (c->data once HTTP/1 is spoken;
 * r->stream of its requests). */
typedef struct {
    sws_http_session_t        *session;
    sws_buf_t                 *buf;       /* where the head is being read */
    sws_buf_t                 *small;     /* client_header_buffer_size */
    sws_pool_t                *rpool;     /* the request pool, reset per request */
    sws_http_request_t        *r;         /* the request being read or served */
    sws_uint_t                 nlarge;    /* large header buffers in use */
    sws_uint_t                 empty_lines;
    unsigned                   request_line_done:1;
    unsigned                   header_timer:1;  /* the read timer is the header one */
    unsigned                   lingering:1;
    unsigned                   pipelined:1; /* the next request's bytes came with the last */
    sws_msec_t                 lingering_deadline;
    sws_msec_t                 idle_since; /* accepted, or the last response ended */
} sws_http1_conn_t;

extern const sws_http_proto_t sws_http1_proto;

void      sws_http1_close_connection(sws_connection_t *c);
/* HTTP/1 takes over the session's connection (the protocol's start, by
 * the registry: sws_http_v1_module.c). */
void      sws_http1_start(sws_http_session_t *s, const u_char *pre, size_t len);
void      sws_http1_block_reading_handler(sws_event_t *rev);
sws_int_t sws_http1_send_body(sws_http_request_t *r, sws_chain_t *in);
sws_int_t sws_http1_read_body(sws_http_request_t *r);
sws_int_t sws_http1_discard_body(sws_http_request_t *r);
sws_int_t sws_http1_read_body_data(sws_http_request_t *r, u_char *buf, size_t size, size_t *n);
/* Consume what the buffer and socket hold of a body being discarded;
 * SWS_OK when all of it is gone, SWS_AGAIN if more is to come, SWS_ERROR. */
sws_int_t sws_http1_discard_some(sws_http_request_t *r);
/* sws_http_h1_head.c: the HTTP/1 response head */
sws_buf_t *sws_http1_build_head(sws_http_request_t *r);
/* Whether the connection stays open after this response (sets r->keepalive). */
void       sws_http1_decide_keepalive(sws_http_request_t *r);
/* The preformatted fast path of fixed responses (sws_http_proto_t send_fixed). */
sws_int_t  sws_http1_send_fixed(sws_http_request_t *r, const sws_str_t *status_line,
    const sws_str_t *type, const sws_str_t *fields, const sws_str_t *body, sws_uint_t status);

/* Idle connections (sws_http_h1_idle.c): give back the request pool and
 * the header buffer; take them again. take_buffer gives hc->small fresh
 * memory of size bytes (what it had goes back). */
void        sws_http1_release(sws_connection_t *c);
sws_pool_t *sws_http1_take_pool(sws_connection_t *c);
sws_int_t   sws_http1_take_buffer(sws_connection_t *c, size_t size);

#endif
