/*
 * HTTP/2 on nghttp2: a connection (sws_http_v2.c) multiplexes streams, each
 * stream carries one ordinary request (sws_http_v2_stream.c builds it from
 * the HEADERS), and the protocol methods of sws_http_proto_t send its
 * response as HEADERS and DATA frames within the flow-control windows
 * (sws_http_v2_response.c).
 */
#ifndef SWS_HTTP_V2_H
#define SWS_HTTP_V2_H

#include <nghttp2/nghttp2.h>
#include "../sws_http_core.h"

typedef struct sws_http_v2_conn_s   sws_http_v2_conn_t;
typedef struct sws_http_v2_stream_s sws_http_v2_stream_t;
typedef struct sws_http_v2_out_s    sws_http_v2_out_t;

/* ---- configuration (sws_http_v2_module.c) ---- */

typedef struct {
    size_t      recv_buffer_size;     /* http2_recv_buffer_size: per worker */
} sws_http_v2_main_conf_t;

typedef struct {
    sws_int_t   enable;               /* http2 on|off */
    sws_uint_t  concurrent_streams;   /* http2_max_concurrent_streams */
    size_t      preread_size;         /* http2_body_preread_size: stream window */
    sws_msec_t  idle_timeout;         /* http2_idle_timeout (else keepalive_timeout) */
    size_t      max_field_size;       /* http2_max_field_size (else from */
    size_t      max_header_size;      /* http2_max_header_size  large_client_header_buffers) */
    sws_uint_t  max_requests;         /* http2_max_requests (else keepalive_requests) */
} sws_http_v2_srv_conf_t;

typedef struct {
    size_t      chunk_size;           /* http2_chunk_size: DATA frame size */
} sws_http_v2_loc_conf_t;

extern sws_module_t sws_http_v2_module;

/* ---- the connection ---- */

/* Output waiting for the socket: frames copied into blocks. */
struct sws_http_v2_out_s {
    sws_http_v2_out_t  *next;
    sws_buf_t           buf;
    sws_chain_t         cl;
    u_char              data[];
};

struct sws_http_v2_conn_s {
    sws_connection_t          *connection;
    sws_http_session_t        *client;      /* the client session: address, server (SNI) */
    nghttp2_session           *session;
    sws_http_v2_srv_conf_t    *conf;
    sws_queue_t                streams;     /* sws_http_v2_stream_t, open */
    /* Streams closed whose request goes on (r->background), until it is
     * finalized (sws_http_v2_background.c). */
    sws_queue_t                background;
    sws_uint_t                 nstreams;
    sws_uint_t                 processed;   /* requests started */

    sws_http_v2_out_t         *out;         /* queued output, in order */
    sws_http_v2_out_t         *out_tail;
    size_t                     out_bytes;
    size_t                     max_field_size;   /* name + value of one field */
    size_t                     max_header_size;  /* a decoded header list */

    /* abuse accounting */
    sws_msec_t                 flood_start;
    sws_uint_t                 flood_frames;  /* control frames this second */
    sws_uint_t                 bad_streams;   /* header blocks refused */
    size_t                     block_bytes;   /* of the header block being read */
    sws_uint_t                 calm;          /* error code to GOAWAY with, 0 none */
    int32_t                    last_stream_id; /* the highest stream the client opened */
    int32_t                    peer_window;   /* its SETTINGS_INITIAL_WINDOW_SIZE so far */
    int64_t                    peer_window_max; /* the largest send window of a stream */
    sws_uint_t                 rst_burst;     /* client resets: a token bucket */
    sws_uint_t                 rst_tokens;    /* in thousandths */
    sws_msec_t                 rst_last;
    sws_msec_t                 linger_deadline;
    /* The stream whose header block is being read (one at a time: a block
     * is never interleaved), given its client_header_timeout only if the
     * block did not end within the read that began it. */
    sws_http_v2_stream_t      *headers_st;
    /* The stream last looked up: a request's callbacks come for one
     * stream in a row, and nghttp2's lookup is a hash probe each. */
    sws_http_v2_stream_t      *last_st;

    unsigned                   in_recv:1;     /* inside nghttp2_session_mem_recv */
    unsigned                   in_send:1;
    unsigned                   goaway:1;      /* GOAWAY submitted */
    unsigned                   draining:1;    /* shutdown: notice and PING sent,
                                               * the final GOAWAY after the ack */
    unsigned                   closing:1;     /* close once output is flushed */
    unsigned                   refused:1;     /* a stream was refused (never opened) */
    unsigned                   goaway_seen:1; /* a GOAWAY went out or came in: the
                                               * session may want nothing more */
    unsigned                   send_blocked:1; /* the output queue stopped nghttp2 */
    unsigned                   send_pending:1; /* frames submitted: run the session */
    unsigned                   creating:1;    /* inside nghttp2_session_server_new3 */
    unsigned                   fb_dirty:1;    /* fb_pages may be resident */
    unsigned                   gone:1;        /* closed for the client: the memory
                                               * waits for background requests */

    /* nghttp2's frame buffer, made by the session's allocator, and the
     * pages of it that an idle connection gives back (sws_http_v2.c);
     * NULL if it was not recognised. */
    void                      *fb;
    u_char                    *fb_pages;
    u_char                    *fb_pages_end;
};

/* Take over the session's connection (the protocol's start, by the
 * registry: sws_http_v2_module.c): data/len are bytes read already (the
 * client preface of prior knowledge), or NULL. */
void      sws_http_v2_init(sws_http_session_t *s, const u_char *data, size_t len);
/* Have the connection's output go out (from the event loop, not from
 * within nghttp2's callbacks). */
void      sws_http_v2_post_send(sws_http_v2_conn_t *h2c);
/* Stop taking new streams; finish the ones open (GOAWAY NO_ERROR). */
void      sws_http_v2_goaway(sws_http_v2_conn_t *h2c, uint32_t error);
/* The PING of the graceful shutdown came back: the final GOAWAY. */
void      sws_http_v2_drain_ack(sws_http_v2_conn_t *h2c, const uint8_t *opaque);

/* ---- streams (sws_http_v2_stream.c) ---- */

/* The open stream id of h2c, or NULL. */
sws_http_v2_stream_t *sws_http_v2_find_stream(sws_http_v2_conn_t *h2c, int32_t id);

struct sws_http_v2_stream_s {
    sws_http_v2_conn_t        *h2c;
    int32_t                    id;
    sws_http_request_t        *r;
    sws_pool_t                *pool;
    sws_queue_t                queue;       /* in h2c->streams (h2c->background) */
    sws_event_t                rev;         /* header / body timeout */
    sws_event_t                wev;         /* send timeout */
    sws_event_t                pace;        /* limit_rate: DATA resumes then */

    size_t                     header_bytes;  /* decoded, RFC 9113 6.5.2 sizes */
    sws_str_t                  method, path, scheme, authority;
    sws_array_t               *cookies;       /* sws_str_t, joined at the end */

    sws_chain_t               *preread;       /* DATA before the body was asked for */
    sws_chain_t              **preread_last;
    size_t                     unconsumed;    /* received, window not given back */
    off_t                      received;      /* body bytes */
    off_t                      sent;          /* frame bytes of this stream */

    unsigned                   started:1;     /* the request is being served */
    unsigned                   in_closed:1;   /* END_STREAM received */
    unsigned                   out_closed:1;  /* END_STREAM sent */
    unsigned                   submitted:1;   /* response HEADERS submitted */
    unsigned                   data:1;        /* with a data provider */
    unsigned                   deferred:1;    /* provider waits for data */
    unsigned                   paced:1;       /* provider waits for limit_rate */
    unsigned                   out_last:1;    /* no more body will come */
    unsigned                   reading:1;     /* body being read into r->body */
    unsigned                   streaming:1;   /* body pulled by read_body_data */
    unsigned                   drained:1;     /* DATA sent: call the write hook */
    unsigned                   too_large:1;   /* header list over the limit */
    unsigned                   body_error:1;  /* body refused (413) */
    unsigned                   reset:1;       /* RST_STREAM submitted */
    unsigned                   background:1;  /* closed, its request goes on */
    sws_uint_t                 field_error;   /* a field the core refused: the status */
};

/* The protocol's part of the request start (sws_http_proto_t process_head). */
sws_int_t sws_http_v2_process_head(sws_http_request_t *r);
/* nghttp2 callbacks of the receiving side. */
void      sws_http_v2_stream_callbacks(nghttp2_session_callbacks *cb);
/* The request body (sws_http_proto_t read_body / discard_body). */
sws_int_t sws_http_v2_read_body(sws_http_request_t *r);
sws_int_t sws_http_v2_discard_body(sws_http_request_t *r);
sws_int_t sws_http_v2_read_body_data(sws_http_request_t *r, u_char *buf, size_t size,
    size_t *n);
/* The stream is gone (nghttp2 closed it, or the connection ends): the
 * client's side of its request is over (sws_http_request_ended). */
void      sws_http_v2_stream_close(sws_http_v2_stream_t *st, uint32_t error);

/* ---- requests that outlive their stream (sws_http_v2_background.c) ---- */

/* The stream closed (st->background set: its request goes on, st is in
 * h2c->background) while r->background asks to finish the request later. */
void      sws_http_v2_background_keep(sws_http_v2_stream_t *st);
/* Its request was finalized: its pool goes, from the event loop. */
void      sws_http_v2_background_done(sws_http_v2_stream_t *st);
/* The connection ends: 1 if background requests still use it (the client
 * side is closed now, the memory is freed after the last of them), else 0
 * (close it). */
int       sws_http_v2_background_wait(sws_http_v2_conn_t *h2c);

/* ---- the response (sws_http_v2_response.c) ---- */

extern const sws_http_proto_t sws_http_v2_proto;
void      sws_http_v2_response_callbacks(nghttp2_session_callbacks *cb);
/* Queue n bytes of frames for the socket (the caller checked the room):
 * SWS_OK or SWS_ERROR. */
sws_int_t sws_http_v2_queue(sws_http_v2_conn_t *h2c, const u_char *data, size_t n);
/* Room left in the queue before the high water mark. */
size_t    sws_http_v2_queue_room(sws_http_v2_conn_t *h2c);
/* Reset a stream with an error code (no-op when already closed/reset). */
void      sws_http_v2_reset(sws_http_v2_stream_t *st, uint32_t error);
/* The pace timer of a stream (limit_rate): its DATA may go on. */
void      sws_http_v2_paced(sws_event_t *ev);
/* After a send round: call the write hooks of streams whose output moved. */
void      sws_http_v2_write_hooks(sws_http_v2_conn_t *h2c);

#endif
