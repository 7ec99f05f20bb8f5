/*
 * HTTP/2 (RFC 9113) of our own, with our HPACK decoder and encoder
 * (sws_hpack_decoder.c, sws_hpack_encoder.c): a connection
 * (sws_http_v2.c) reads frames (sws_http_v2_frame.c: framing, stream states,
 * settings, flow control, abuse limits) and multiplexes streams; each stream
 * carries one ordinary request (sws_http_v2_stream.c builds it from the
 * header block and the DATA frames), and the protocol methods of
 * sws_http_proto_t send its response as HEADERS and DATA frames within the
 * flow-control windows (sws_http_v2_response.c).
 */
#ifndef SWS_HTTP_V2_H
#define SWS_HTTP_V2_H

#include <stdlib.h>
#include "../sws_http_core.h"
#include "../sws_hpack_decoder.h"
#include "../sws_hpack_encoder.h"

typedef struct sws_http_v2_conn_s   sws_http_v2_conn_t;
typedef struct sws_http_v2_stream_s sws_http_v2_stream_t;
typedef struct sws_http_v2_out_s    sws_http_v2_out_t;

/* ---- RFC 9113 numbers ---- */

#define SWS_H2_DATA             0x0
#define SWS_H2_HEADERS          0x1
#define SWS_H2_PRIORITY         0x2
#define SWS_H2_RST_STREAM       0x3
#define SWS_H2_SETTINGS         0x4
#define SWS_H2_PUSH_PROMISE     0x5
#define SWS_H2_PING             0x6
#define SWS_H2_GOAWAY           0x7
#define SWS_H2_WINDOW_UPDATE    0x8
#define SWS_H2_CONTINUATION     0x9
#define SWS_H2_PRIORITY_UPDATE  0x10     /* RFC 9218 7.1 */

#define SWS_H2_FLAG_END_STREAM  0x01
#define SWS_H2_FLAG_ACK         0x01
#define SWS_H2_FLAG_END_HEADERS 0x04
#define SWS_H2_FLAG_PADDED      0x08
#define SWS_H2_FLAG_PRIORITY    0x20

#define SWS_H2_NO_ERROR            0x0
#define SWS_H2_PROTOCOL_ERROR      0x1
#define SWS_H2_INTERNAL_ERROR      0x2
#define SWS_H2_FLOW_CONTROL_ERROR  0x3
#define SWS_H2_SETTINGS_TIMEOUT    0x4
#define SWS_H2_STREAM_CLOSED       0x5
#define SWS_H2_FRAME_SIZE_ERROR    0x6
#define SWS_H2_REFUSED_STREAM      0x7
#define SWS_H2_CANCEL              0x8
#define SWS_H2_COMPRESSION_ERROR   0x9
#define SWS_H2_ENHANCE_YOUR_CALM   0xb

#define SWS_H2_SET_HEADER_TABLE_SIZE       0x1
#define SWS_H2_SET_ENABLE_PUSH             0x2
#define SWS_H2_SET_MAX_CONCURRENT_STREAMS  0x3
#define SWS_H2_SET_INITIAL_WINDOW_SIZE     0x4
#define SWS_H2_SET_MAX_FRAME_SIZE          0x5
#define SWS_H2_SET_MAX_HEADER_LIST_SIZE    0x6

#define SWS_H2_FRAME_HEADER     9
#define SWS_H2_DEFAULT_FRAME    16384          /* SETTINGS_MAX_FRAME_SIZE's default */
#define SWS_H2_MAX_FRAME        16777215
#define SWS_H2_DEFAULT_WINDOW   65535
#define SWS_H2_MAX_WINDOW       0x7fffffff
#define SWS_H2_CONN_WINDOW      (16 << 20)     /* our connection receive window */
#define SWS_H2_BODY_WINDOW      (8 << 20)      /* a stream's, for a body the core stores */

/* Streams recently closed, remembered to tell a late frame on one from a
 * frame on a stream never opened (RFC 9113 5.1). */
#define SWS_H2_CLOSED_RING      32
/* In a remembered id: we reset the stream (frames in flight are ignored)
 * rather than it closing normally or by the client's reset. */
#define SWS_H2_CLOSED_IGNORE    0x80000000u

/* RFC 9218 7.1: a PRIORITY_UPDATE for a stream not open yet, kept for its
 * HEADERS (at most SWS_H2_PRIO_IDLE per connection; more are dropped, the
 * request's own priority field then says). */
#define SWS_H2_PRIO_IDLE        8

typedef struct {
    int32_t     sid;
    u_char      urgency;
    u_char      incremental;
} sws_http_v2_prio_idle_t;

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

/* What the header block being read is for. */
typedef enum {
    SWS_H2_BLOCK_NONE = 0,
    SWS_H2_BLOCK_REQUEST,             /* a new stream's request head */
    SWS_H2_BLOCK_TRAILERS,            /* the trailer fields of an open stream */
    SWS_H2_BLOCK_DISCARD              /* decoded for the HPACK state only */
} sws_http_v2_block_e;

struct sws_http_v2_conn_s {
    sws_connection_t          *connection;
    sws_http_session_t        *client;      /* the client session: address, server (SNI) */
    sws_http_v2_srv_conf_t    *conf;
    sws_hpack_decoder_t        hdec;        /* the client's header blocks' */
    sws_hpack_encoder_t        hpack;       /* our responses' */
    sws_queue_t                streams;     /* sws_http_v2_stream_t, open */
    sws_rbtree_t               stream_ids;  /* the same, found by id */
    /* Streams closed whose request goes on (r->background), until it is
     * finalized (sws_http_v2_background.c). */
    sws_queue_t                background;
    sws_uint_t                 nstreams;
    sws_uint_t                 processed;   /* requests started */

    sws_http_v2_out_t         *out;         /* queued output, in order */
    sws_http_v2_out_t         *out_tail;
    size_t                     out_bytes;

    /* An incomplete frame kept from one read to the next (malloc'd, freed
     * once it is whole), and what of the preface is still to come. */
    u_char                    *hold;
    size_t                     hold_len;
    sws_uint_t                 preface_left;

    /* The header block being read: one at a time, never interleaved. */
    sws_http_v2_block_e        block;
    int32_t                    block_sid;
    sws_uint_t                 block_frames;  /* CONTINUATIONs so far */
    size_t                     block_bytes;
    sws_http_v2_stream_t      *headers_st;    /* its stream (REQUEST, TRAILERS) */
    /* A representation the fragment's end cut (malloc'd): decoded with
     * the next fragment's octets after it. */
    u_char                    *hpack_rest;
    size_t                     hpack_rest_len;
    unsigned                   block_end_stream:1;

    /* the peer's settings and the windows */
    uint32_t                   peer_initial_window;
    uint32_t                   peer_max_frame;
    int64_t                    send_window;   /* the connection's, for our DATA */
    int64_t                    recv_window;   /* the connection's, for the client's */
    size_t                     recv_consumed; /* taken, not yet given back */
    int32_t                    local_window;  /* a new stream's receive window now */

    size_t                     max_field_size;   /* name + value of one field */
    size_t                     max_header_size;  /* a decoded header list */

    /* RFC 9218 7.1: PRIORITY_UPDATEs of streams still idle, kept (malloc'd
     * when the first comes) until their HEADERS open them */
    sws_http_v2_prio_idle_t   *prio_idle;
    sws_uint_t                 nprio_idle;

    int32_t                    last_stream_id;   /* the highest the client opened */
    int32_t                    goaway_last;      /* our final GOAWAY's last stream */
    uint32_t                   closed[SWS_H2_CLOSED_RING];
    sws_uint_t                 closed_next;
    sws_uint_t                 rr;               /* round-robin clock of DATA */

    /* abuse accounting */
    sws_msec_t                 flood_start;
    sws_uint_t                 flood_frames;  /* control frames this second */
    sws_uint_t                 bad_streams;   /* header blocks refused */
    sws_uint_t                 rst_burst;     /* client resets: a token bucket */
    sws_uint_t                 rst_tokens;    /* in thousandths */
    sws_msec_t                 rst_last;
    sws_msec_t                 linger_deadline;

    unsigned                   in_recv:1;     /* processing frames */
    unsigned                   goaway:1;      /* our GOAWAY queued */
    unsigned                   draining:1;    /* shutdown: notice and PING sent,
                                               * the final GOAWAY after the ack */
    unsigned                   closing:1;     /* close once output is flushed */
    unsigned                   goaway_seen:1; /* the client sent GOAWAY */
    unsigned                   send_pending:1; /* output to produce: run */
    unsigned                   settings_seen:1; /* the client's first SETTINGS */
    unsigned                   settings_acked:1; /* ours acknowledged */
    unsigned                   gone:1;        /* closed for the client: the memory
                                               * waits for background requests */
    unsigned                   trimming:1;    /* the read timer: HPACK tables go */
    unsigned                   tls_buffers:1; /* TLS record buffers kept between
                                               * requests (sws_ssl_keep_buffers) */
};

/* Take over the session's connection (the protocol's start, by the
 * registry: sws_http_v2_module.c): data/len are bytes read already (the
 * client preface of prior knowledge), or NULL. */
void      sws_http_v2_init(sws_http_session_t *s, const u_char *data, size_t len);
/* Have the connection's output go out (from the event loop, not from
 * within frame processing or a request handler). */
void      sws_http_v2_post_send(sws_http_v2_conn_t *h2c);
/* Stop taking new streams: GOAWAY NO_ERROR (finish the streams open), or
 * with an error code (the connection ends once it is out). */
void      sws_http_v2_goaway(sws_http_v2_conn_t *h2c, uint32_t error);
/* The PING of the graceful shutdown came back: the final GOAWAY. */
void      sws_http_v2_drain_ack(sws_http_v2_conn_t *h2c, const u_char *opaque);

/* ---- output (sws_http_v2.c) ---- */

/* Queue n bytes of frames for the socket: SWS_OK or SWS_ERROR. */
sws_int_t sws_http_v2_queue(sws_http_v2_conn_t *h2c, const u_char *data, size_t n);
/* Queue a frame header. */
sws_int_t sws_http_v2_queue_head(sws_http_v2_conn_t *h2c, size_t len, u_char type,
    u_char flags, uint32_t sid);
/* Queue n bytes of buffer b (memory, or a file read with pread) from its
 * position on, which it does not move: SWS_OK or SWS_ERROR. */
sws_int_t sws_http_v2_queue_buf(sws_http_v2_conn_t *h2c, sws_buf_t *b, size_t n);
/* Room left in the queue before the high water mark. */
size_t    sws_http_v2_queue_room(sws_http_v2_conn_t *h2c);
/* A RST_STREAM, WINDOW_UPDATE frame queued. */
sws_int_t sws_http_v2_queue_rst(sws_http_v2_conn_t *h2c, uint32_t sid, uint32_t error);
sws_int_t sws_http_v2_queue_window(sws_http_v2_conn_t *h2c, uint32_t sid, uint32_t inc);

/* ---- frames in (sws_http_v2_frame.c) ---- */

/* Process the frames whole in p[0..len): the bytes taken (an incomplete
 * frame at the end is left), or -1: a connection error (GOAWAY queued,
 * h2c->closing set). */
ssize_t   sws_http_v2_frames(sws_http_v2_conn_t *h2c, u_char *p, size_t len);
/* A connection error: GOAWAY with code (said once), then the close. */
void      sws_http_v2_conn_error(sws_http_v2_conn_t *h2c, uint32_t code, const char *what);
/* Remember a stream closed (SWS_H2_CLOSED_IGNORE: we reset it). */
void      sws_http_v2_remember_closed(sws_http_v2_conn_t *h2c, uint32_t id);

/* ---- streams (sws_http_v2_stream.c) ---- */

/* The tree of open streams by id, empty. */
void      sws_http_v2_stream_ids_init(sws_http_v2_conn_t *h2c);
/* The open stream id of h2c, or NULL (O(log n)). */
sws_http_v2_stream_t *sws_http_v2_find_stream(sws_http_v2_conn_t *h2c, int32_t id);

struct sws_http_v2_stream_s {
    sws_http_v2_conn_t        *h2c;
    int32_t                    id;
    sws_http_request_t        *r;
    sws_pool_t                *pool;
    sws_queue_t                queue;       /* in h2c->streams (h2c->background) */
    sws_rbtree_node_t          id_node;     /* in h2c->stream_ids while open */
    sws_event_t                rev;         /* header / body timeout */
    sws_event_t                wev;         /* send timeout */
    sws_event_t                pace;        /* limit_rate: DATA resumes then */

    int64_t                    send_window;   /* ours to send (may go negative) */
    int64_t                    recv_window;   /* the client's to send */
    size_t                     recv_consumed; /* taken, not yet given back */
    int64_t                    recv_target;   /* the window given back to; 0: local_window */
    off_t                      content_length; /* the request's, -1: none */
    sws_uint_t                 served;        /* the DATA round-robin clock then */
    u_char                     urgency;       /* RFC 9218: 0 (first) .. 7 */

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
    unsigned                   out_closed:1;  /* END_STREAM queued */
    unsigned                   submitted:1;   /* response HEADERS queued */
    unsigned                   data:1;        /* a body follows the HEADERS */
    unsigned                   paced:1;       /* waits for limit_rate */
    unsigned                   out_last:1;    /* no more body will come */
    unsigned                   reading:1;     /* body being read into r->body */
    unsigned                   streaming:1;   /* body pulled by read_body_data */
    unsigned                   drained:1;     /* DATA sent: call the write hook */
    unsigned                   too_large:1;   /* header list over the limit */
    unsigned                   body_error:1;  /* body refused (413) */
    unsigned                   reset:1;       /* RST_STREAM queued: closes in run */
    unsigned                   background:1;  /* closed, its request goes on */
    unsigned                   malformed:1;   /* RFC 9113 8.1.1: reset it */
    unsigned                   regular:1;     /* a regular field came (no more
                                               * pseudo-header fields) */
    unsigned                   incremental:1; /* RFC 9218 */
    unsigned                   host:1;        /* a host field came */
    unsigned                   prio_updated:1; /* a PRIORITY_UPDATE came before
                                               * its HEADERS: it overrides the
                                               * priority field */
    sws_uint_t                 field_error;   /* a field the core refused: the status */
};

/* A new stream id (its HEADERS began): NULL when out of memory. */
sws_http_v2_stream_t *sws_http_v2_stream_open(sws_http_v2_conn_t *h2c, int32_t id);
/* A decoded field of the block (h2c->block says what for): 0, or -1 when
 * the connection cannot go on. */
int       sws_http_v2_field(sws_http_v2_conn_t *h2c, sws_http_v2_stream_t *st,
    const sws_hpack_field_t *f);
/* What RFC 9113 8.2.1 says of a field (sws_hpack_classify_pt): the HPACK
 * decoder's classifier, for the entries of its tables. */
u_char    sws_http_v2_classify(const u_char *name, size_t nlen, const u_char *value,
    size_t vlen);
/* The request head's block ended: start the request (or reset the
 * stream when it is malformed). */
void      sws_http_v2_head_done(sws_http_v2_stream_t *st);
/* The trailers' block ended (END_STREAM with it). */
void      sws_http_v2_trailers_done(sws_http_v2_stream_t *st);
/* len bytes of DATA for st (padding taken off); end: END_STREAM. */
void      sws_http_v2_data(sws_http_v2_stream_t *st, const u_char *data, size_t len, int end);
/* n bytes of the client's were taken (or dropped): windows given back as
 * they drain; st NULL: the connection's only. */
void      sws_http_v2_consume(sws_http_v2_conn_t *h2c, sws_http_v2_stream_t *st, size_t n);
/* The value of a priority field (RFC 9218 4) into urgency (0..7) and
 * incremental (0 or 1); what it does not say is left as it was. */
void      sws_http_v2_priority_parse(const u_char *p, size_t len, u_char *urgency,
    u_char *incremental);
/* The value of a priority field (RFC 9218 4), as urgency and incremental. */
void      sws_http_v2_priority(sws_http_v2_stream_t *st, const u_char *p, size_t len);
/* The protocol's part of the request start (sws_http_proto_t process_head). */
sws_int_t sws_http_v2_process_head(sws_http_request_t *r);
/* The request body (sws_http_proto_t read_body / discard_body). */
sws_int_t sws_http_v2_read_body(sws_http_request_t *r);
sws_int_t sws_http_v2_discard_body(sws_http_request_t *r);
sws_int_t sws_http_v2_read_body_data(sws_http_request_t *r, u_char *buf, size_t size,
    size_t *n);
/* The stream is gone: the client's side of its request is over
 * (sws_http_request_ended). Only from the event loop's handlers. */
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
/* Reset a stream with an error code (no-op when already closed/reset):
 * RST_STREAM queued, the stream closes in the next run. */
void      sws_http_v2_reset(sws_http_v2_stream_t *st, uint32_t error);
/* A 100 (Continue) interim response on st. */
sws_int_t sws_http_v2_send_continue(sws_http_v2_stream_t *st);
/* The pace timer of a stream (limit_rate): its DATA may go on. */
void      sws_http_v2_paced(sws_event_t *ev);
/* Produce DATA frames of the streams that may send, up to the queue's
 * mark: 1 if any was produced or the mark stopped it (more may go once the
 * queue is written), 0 if none may send. */
int       sws_http_v2_send_data(sws_http_v2_conn_t *h2c);
/* Close the streams that are over both ways (or reset). */
void      sws_http_v2_close_streams(sws_http_v2_conn_t *h2c);
/* After a send round: call the write hooks of streams whose output moved. */
void      sws_http_v2_write_hooks(sws_http_v2_conn_t *h2c);

#endif
