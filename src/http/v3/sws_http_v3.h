/*
 * HTTP/3: QUIC connections (ngtcp2, with GnuTLS for the handshake) on the
 * workers' UDP sockets (sws_udp.c), HTTP/3 framing and QPACK (nghttp3) on
 * top, and each request stream a core request like any other.
 *
 *   sws_http_v3_module.c    directives, the QUIC listeners, Alt-Svc
 *   sws_http_v3_tls.c       the certificates in GnuTLS, the TLS sessions
 *   sws_http_v3_conn.c      datagrams in and out, connection IDs, timers
 *   sws_http_v3_stream.c    nghttp3's side: request heads and bodies
 *   sws_http_v3_response.c  sws_http_proto_t of a request stream
 *
 * Server connection IDs (SWS_H3_CID_LEN bytes) carry the worker that owns
 * the connection, so that a reuseport BPF program can steer a datagram to
 * it whatever the client's address is now:
 *
 *   byte 0      SWS_H3_CID_MAGIC (0x5c): ours, of this layout
 *   bytes 1-2   the worker's number, big-endian (sws_worker)
 *   bytes 3-15  random
 *
 * (docs/http3.md has the same.) An Initial's connection ID is the
 * client's choice and names nobody: the kernel's hash of the addresses
 * picks the worker for it, as for the rest of the handshake.
 */
#ifndef SWS_HTTP_V3_H
#define SWS_HTTP_V3_H

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>
#include <nghttp3/nghttp3.h>
#include "sws_http_core.h"
#include "sws_udp.h"

#define SWS_H3_CID_LEN        16
#define SWS_H3_CID_MAGIC      0x5c
#define SWS_H3_KEY_LEN        32          /* stateless reset / Retry secret */
#define SWS_H3_MAX_UDP        1452        /* datagrams we send, at most */
#define SWS_H3_TRAIN          32          /* datagrams per write round (one GSO train) */
#define SWS_H3_ROUNDS         2           /* write rounds of a connection, then others' turn */
#define SWS_H3_CHUNK          65536       /* response data read (one pread) per read_data */
/* Unacknowledged response data of a stream: twice the congestion window,
 * within these (sws_http_v3_response.c). */
#define SWS_H3_INFLIGHT_MIN   (256 * 1024)
#define SWS_H3_INFLIGHT_MAX   (16 * 1024 * 1024)
#define SWS_H3_SPARE          1           /* acknowledged chunks a stream keeps */

typedef struct sws_http_v3_conn_s    sws_http_v3_conn_t;
typedef struct sws_http_v3_stream_s  sws_http_v3_stream_t;

typedef struct {
    sws_int_t        enable;              /* http3 on|off */
    sws_uint_t       max_concurrent_streams;
    size_t           stream_buffer_size;
    sws_int_t        retry;               /* quic_retry */
    sws_int_t        gso;                 /* quic_gso */
    sws_str_t        host_key;            /* quic_host_key: a file */
    sws_str_t        alt_svc;             /* the Alt-Svc value over TCP; empty: none */
    sws_uint_t       max_handshakes;      /* quic_max_handshakes: a worker's */
    sws_uint_t       max_handshakes_addr; /* quic_max_handshakes_per_address */
} sws_http_v3_srv_conf_t;

/* One "listen ... quic" address: its socket's protocol data
 * (ls->servers), made at configuration time. */
typedef struct {
    sws_http_addr_t                  *addr;
    sws_http_v3_srv_conf_t           *conf;     /* the default server's */
    gnutls_certificate_credentials_t  creds;
    u_char                            key[SWS_H3_KEY_LEN];
    /* Resumption and 0-RTT (the default server's ssl_session_tickets,
     * ssl_session_ticket_key, ssl_session_timeout, ssl_early_data) */
    gnutls_datum_t                    ticket_key;   /* empty: no tickets */
    unsigned                          ticket_lifetime;
    gnutls_anti_replay_t              anti_replay;  /* NULL: no 0-RTT */
    sws_shm_zone_t                   *replay;       /* ClientHellos seen (sws_ssl_replay.c) */
    sws_log_t                        *log;          /* the worker's socket's */
    /* the worker's (each has its copy): its connections on the address,
     * and its socket's pseudo connection once the worker stops */
    sws_uint_t                        nconns;
    sws_uint_t                        nhandshakes;  /* of nconns, half-open */
    sws_connection_t                 *stopping;
    sws_event_t                       goaway;   /* the final GOAWAYs are due */
} sws_http_v3_addr_t;

/* A server connection ID, found by its hash in the worker's table. */
typedef struct {
    sws_rbtree_node_t    node;
    sws_queue_t          queue;               /* the connection's IDs */
    ngtcp2_cid           cid;
    sws_http_v3_conn_t  *qc;
} sws_http_v3_cid_t;

struct sws_http_v3_conn_s {
    ngtcp2_conn             *conn;
    nghttp3_conn            *h3;
    gnutls_session_t         tls;
    ngtcp2_crypto_conn_ref   ref;
    sws_udp_socket_t        *us;
    sws_http_v3_addr_t      *qa;
    sws_pool_t              *pool;
    sws_http_session_t       session;
    struct sockaddr_storage  local;
    struct sockaddr_storage  peer;
    socklen_t                locallen;
    socklen_t                peerlen;
    sws_event_t              timer;
    sws_event_t              post;            /* posted: write what is due */
    sws_queue_t              queue;           /* the worker's connections */
    sws_queue_t              streams;         /* request streams */
    sws_queue_t              cids;            /* sws_http_v3_cid_t */
    sws_queue_t              cid_free;        /* retired ones, for reuse */
    sws_uint_t               nstreams;
    /* Requests that outlive their stream (a cache update, a mirror's
     * wait): they refer to the session, so the pool stays until the last
     * is released (gone: the connection itself is closed). */
    sws_uint_t               background;
    uint64_t                 number;
    uint64_t                 app_error;       /* the HTTP/3 error to close with */
    unsigned                 handshake:1;     /* done: HTTP/3 runs */
    unsigned                 closing:1;       /* gone as soon as it can */
    unsigned                 in_read:1;       /* inside ngtcp2_conn_read_pkt */
    unsigned                 app_error_set:1;
    unsigned                 gone:1;
    unsigned                 draining:1;      /* the worker stops: GOAWAY notice sent */
    unsigned                 goaway:1;        /* final GOAWAY sent: ends with its streams */
    unsigned                 more:1;          /* its turn ended with more to send */
    sws_queue_t              half_open;       /* the worker's handshakes in progress */
};

/* A chunk of response data handed to nghttp3, kept until acknowledged
 * (heap memory: a stream's chunks come and go with its window, and the
 * pool would keep the most it ever had). */
typedef struct sws_http_v3_chunk_s  sws_http_v3_chunk_t;
struct sws_http_v3_chunk_s {
    sws_http_v3_chunk_t *next;
    size_t               len;
    size_t               acked;
    u_char               data[SWS_H3_CHUNK];
};

struct sws_http_v3_stream_s {
    sws_http_v3_conn_t  *qc;                  /* NULL once the stream is over */
    sws_http_v3_conn_t  *background;          /* the connection it outlives */
    sws_http_request_t  *r;
    sws_pool_t          *pool;
    int64_t              id;
    sws_queue_t          queue;
    sws_str_t            method;
    sws_str_t            path;
    sws_str_t            scheme;
    sws_str_t            authority;
    sws_array_t         *cookies;
    off_t                content_length;      /* -1: none */
    off_t                received;
    size_t               header_bytes;
    sws_uint_t           field_error;         /* an HTTP status for the head */
    /* Body data kept before the handler asks (and while streaming): its
     * flow control not given back, so the stream window bounds it. */
    sws_chain_t         *preread;
    sws_chain_t        **preread_last;
    size_t               unconsumed;
    /* Response data out, not acknowledged yet, and spare chunks. */
    sws_http_v3_chunk_t *inflight;
    sws_http_v3_chunk_t **inflight_last;
    sws_http_v3_chunk_t *free;
    sws_uint_t           nfree;
    size_t               inflight_bytes;
    off_t                sent;                /* body bytes handed over */
    size_t               head_size;
    sws_event_t          pace;                /* limit_rate: when more may go */
    unsigned             regular:1;           /* a regular field came */
    unsigned             host:1;
    unsigned             malformed:1;
    unsigned             too_large:1;
    unsigned             started:1;
    unsigned             in_closed:1;         /* the client's side is over */
    unsigned             reading:1;           /* read_body, whole */
    unsigned             streaming:1;         /* read_body, pulled */
    unsigned             body_error:1;        /* too large */
    unsigned             submitted:1;         /* the head is out */
    unsigned             data:1;              /* a body follows the head */
    unsigned             out_last:1;          /* all of the body is in r->out */
    unsigned             eof:1;               /* its end given to nghttp3 */
    unsigned             blocked:1;           /* read_data said WOULDBLOCK */
    unsigned             drained:1;           /* room made: the producer may go on */
    unsigned             reset:1;             /* cut by either side */
    unsigned             closed:1;            /* nghttp3 closed it */
    unsigned             chunks:1;            /* its pool frees its chunks */
};

extern sws_module_t           sws_http_v3_module;
extern const sws_http_proto_t sws_http_v3_proto;

/* sws_http_v3_tls.c */
sws_int_t sws_http_v3_tls_credentials(sws_conf_t *cf, sws_http_v3_addr_t *qa);
sws_int_t sws_http_v3_tls_session(sws_http_v3_conn_t *qc);
/* The handshake is complete: a session ticket, where they are on. */
sws_int_t sws_http_v3_tls_ticket(sws_http_v3_conn_t *qc);
/* The client's 0-RTT data was accepted. */
int       sws_http_v3_tls_early(sws_http_v3_conn_t *qc);
/* sws_http_v3_conn.c */
void      sws_http_v3_read_handler(sws_udp_socket_t *us, sws_udp_dgram_t *d, sws_uint_t n);
void      sws_http_v3_udp_shutdown(sws_connection_t *c);
/* A request stream of a draining connection ended. */
void      sws_http_v3_drained(sws_http_v3_conn_t *qc);
/* A background request of qc was released: the last frees a gone qc. */
void      sws_http_v3_background_done(sws_http_v3_conn_t *qc);
/* Close every connection of us (CONNECTION_CLOSE, H3_NO_ERROR). */
void      sws_http_v3_close_all(sws_udp_socket_t *us);
void      sws_http_v3_post_write(sws_http_v3_conn_t *qc);
/* An HTTP/3 or QPACK error: the connection is closed with it. */
void      sws_http_v3_conn_error(sws_http_v3_conn_t *qc, uint64_t code, const char *why);
ngtcp2_tstamp sws_http_v3_now(void);
/* sws_http_v3_stream.c */
sws_int_t sws_http_v3_h3_start(sws_http_v3_conn_t *qc);
/* The protocol's start (registered by sws_http_v3_module.c). */
void      sws_http_v3_start(sws_http_session_t *s, const u_char *pre, size_t len);
/* Give back flow control for n bytes of stream id the request took. */
void      sws_http_v3_consume(sws_http_v3_conn_t *qc, int64_t id, size_t n);
void      sws_http_v3_streams_gone(sws_http_v3_conn_t *qc);
void      sws_http_v3_write_hooks(sws_http_v3_conn_t *qc);
/* sws_http_v3_response.c */
nghttp3_ssize sws_http_v3_read_data(nghttp3_conn *conn, int64_t id, nghttp3_vec *vec,
    size_t veccnt, uint32_t *pflags, void *conn_data, void *stream_data);
void      sws_http_v3_acked(sws_http_v3_stream_t *st, uint64_t n);
void      sws_http_v3_paced(sws_event_t *ev);
sws_int_t sws_http_v3_process_head(sws_http_request_t *r);
sws_int_t sws_http_v3_read_body(sws_http_request_t *r);
sws_int_t sws_http_v3_read_body_data(sws_http_request_t *r, u_char *buf, size_t size,
    size_t *n);
sws_int_t sws_http_v3_discard_body(sws_http_request_t *r);

#endif
