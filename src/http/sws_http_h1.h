/* HTTP/1.x connections: shared by the h1 files. */
#ifndef SWS_HTTP_H1_H
#define SWS_HTTP_H1_H

#include "sws_http_core.h"

struct sws_http_conn_s {
    sws_http_addr_t           *addr;
    sws_http_core_srv_conf_t  *cscf;      /* the address's default server */
    sws_buf_t                 *buf;       /* where the head is being read */
    sws_buf_t                 *small;     /* client_header_buffer_size */
    sws_pool_t                *rpool;     /* the request pool, reset per request */
    sws_http_request_t        *r;         /* the request being read or served */
    sws_uint_t                 nlarge;    /* large header buffers in use */
    sws_uint_t                 empty_lines;
    unsigned                   request_line_done:1;
    unsigned                   header_timer:1;  /* the read timer is the header one */
    unsigned                   lingering:1;
    unsigned                   plain_on_tls:1;  /* plain HTTP sent to a TLS port */
    unsigned                   h2_allowed:1;    /* an HTTP/2 preface may come */
    sws_msec_t                 lingering_deadline;
};

void      sws_http1_close_connection(sws_connection_t *c);
/* Start reading request heads on a connection set up by
 * sws_http_init_connection (after the TLS handshake, if any). */
void      sws_http1_start(sws_connection_t *c);
void      sws_http1_block_reading_handler(sws_event_t *rev);
void      sws_http1_request_done(sws_http_request_t *r);
sws_int_t sws_http1_send_body(sws_http_request_t *r, sws_chain_t *in);
sws_int_t sws_http1_read_body(sws_http_request_t *r);
sws_int_t sws_http1_discard_body(sws_http_request_t *r);
sws_int_t sws_http1_read_body_data(sws_http_request_t *r, u_char *buf, size_t size, size_t *n);
/* Consume what the buffer and socket hold of a body being discarded;
 * SWS_OK when all of it is gone, SWS_AGAIN if more is to come, SWS_ERROR. */
sws_int_t sws_http1_discard_some(sws_http_request_t *r);

/* Idle connections (sws_http_h1_idle.c): give back the request pool and
 * the header buffer; take them again. take_buffer gives hc->small fresh
 * memory of size bytes (what it had goes back). */
void        sws_http1_release(sws_connection_t *c);
sws_pool_t *sws_http1_take_pool(sws_connection_t *c);
sws_int_t   sws_http1_take_buffer(sws_connection_t *c, size_t size);

#endif
