/*
 * The upstream framework's internals (the public part is
 * <scalws/sws_upstream.h>). Files:
 *   sws_http_upstream_conf.c     upstream { }, the registry, per-worker set-up
 *   sws_http_upstream_resolve.c  resolving the servers into peers
 *   sws_http_upstream_target.c   a target chosen per request (variables)
 *   sws_http_upstream_ssl_conf.c TLS to the servers: directives, contexts
 *   sws_http_upstream_ssl.c      TLS to the servers: handshakes, sessions
 *   sws_http_upstream_loc.c      the location's part and its shared directives
 *   sws_http_upstream_balance.c  choosing a server: round robin, least_conn,
 *                                hash, random; passive health
 *   sws_http_upstream_conn.c     connecting, the per-worker keep-alive pools
 *   sws_http_upstream.c          the request driver: body, connect, send,
 *                                timeouts, the client going away, the end
 *   sws_http_upstream_head.c     the response head, retries on the next server
 *   sws_http_upstream_response.c the response body: buffers, back-pressure
 *   sws_http_upstream_tunnel.c   Upgrade (WebSocket): bytes both ways
 *   sws_http_upstream_spill.c    buffering: a response the buffers cannot
 *                                hold goes on in a temporary file
 *   sws_http_upstream_cache.c    the hooks of a response cache
 *   sws_http_upstream_h1_request.c  HTTP/1.x as the client protocol: the request
 *   sws_http_upstream_h1.c       HTTP/1.x: the response head and body
 *   sws_http_upstream_health.c   active health checks
 *   sws_http_upstream_stats.c    the shared state and metrics (one shm zone)
 *   sws_http_upstream_dynamic.c  server lists that change at run time (a slab zone)
 *   sws_http_upstream_vars.c     the $upstream_* variables
 */
#ifndef SWS_HTTP_UPSTREAM_H
#define SWS_HTTP_UPSTREAM_H

#include <sys/socket.h>
#include "sws_http_core.h"
#include "sws_http_variables.h"
#include "sws_http_temp_file.h"
#include "sws_ssl.h"
#include "sws_hash_internal.h"
#include <scalws/sws_shm.h>
#include <scalws/sws_resolver.h>

/* next_upstream conditions (a mask). */
#define SWS_UPS_FT_ERROR           0x0001
#define SWS_UPS_FT_TIMEOUT         0x0002
#define SWS_UPS_FT_INVALID_HEADER  0x0004
#define SWS_UPS_FT_HTTP_500        0x0008
#define SWS_UPS_FT_HTTP_502        0x0010
#define SWS_UPS_FT_HTTP_503        0x0020
#define SWS_UPS_FT_HTTP_504        0x0040
#define SWS_UPS_FT_HTTP_403        0x0080
#define SWS_UPS_FT_HTTP_404        0x0100
#define SWS_UPS_FT_HTTP_429        0x0200
#define SWS_UPS_FT_NON_IDEMPOTENT  0x0400
#define SWS_UPS_FT_OFF             0x0800
#define SWS_UPS_FT_NOLIVE          0x1000   /* internal: no server left */

/* Run-time servers an upstream { } block has room for, unless told. */
#define SWS_UPS_DEFAULT_DYNAMIC  8

/* Balancing methods. */
#define SWS_UPS_RR          0
#define SWS_UPS_LEAST_CONN  1
#define SWS_UPS_HASH        2
#define SWS_UPS_RANDOM      3
#define SWS_UPS_IP_HASH     4

/* $upstream_* (the order of the names in sws_http_variables.c). */
#define SWS_UPS_VAR_ADDR           0
#define SWS_UPS_VAR_STATUS         1
#define SWS_UPS_VAR_RESPONSE_TIME  2
#define SWS_UPS_VAR_CONNECT_TIME   3
#define SWS_UPS_VAR_HEADER_TIME    4
#define SWS_UPS_VAR_BYTES_RECEIVED 5
#define SWS_UPS_VAR_RESPONSE_LENGTH 6
#define SWS_UPS_VAR_BYTES_SENT     7

typedef struct sws_http_upstream_srv_s  sws_http_upstream_srv_t;
typedef struct sws_ups_list_s           sws_ups_list_t;

/* The longest address text of a server added at run time. */
#define SWS_UPS_NAME_LEN  120

/* A server's state shared by every worker (in the "upstream" zone).
 * Updated with atomic operations, without a lock: counters and states that
 * tolerate a lost race. Times are monotonic milliseconds (the same clock
 * in every process). */
typedef struct {
    uint32_t   fails;          /* passive: failures in the current window */
    uint32_t   unhealthy;      /* active: failed `fails` probes in a row */
    int64_t    fail_start;     /* passive: when the window started */
    int64_t    down_until;     /* passive: unavailable until then */
    int64_t    hc_next;        /* active: when the next probe is due */
    uint32_t   hc_fails;       /* active: consecutive failed probes */
    uint32_t   hc_passes;      /* active: consecutive passed probes */
    uint64_t   requests;
    uint64_t   responses;
    uint64_t   failures;
    uint64_t   response_ms;
    uint64_t   status[5];
    uint64_t   hc_checks;
    uint64_t   hc_failed;
    /* responses by time to their head: [k] within sws_ups_time_bounds[k]
     * ms and above the bound before (the admin module's histogram) */
    uint64_t   time_buckets[SWS_HTTP_UPSTREAM_TIME_BUCKETS];
    /* Last: the gauges, which a run-time slot's new server keeps (the
     * workers count the last one's connections off them as they go). */
    uint64_t   active;         /* connections in use now */
    uint64_t   idle;           /* in the workers' keep-alive pools now */
} sws_ups_shared_t;

typedef struct {
    struct sockaddr_storage   sockaddr;
    socklen_t                 socklen;
    sws_str_t                 name;        /* "127.0.0.1:8080", "unix:/p" */
    sws_str_t                 server;      /* as written in "server" */
    sws_str_t                 host;        /* the Host of a health probe */
    sws_int_t                 weight;
    sws_int_t                 effective_weight;   /* worker */
    sws_int_t                 current_weight;     /* worker: smooth round robin */
    sws_uint_t                max_fails;
    sws_msec_t                fail_timeout;
    sws_uint_t                conns;       /* worker: connections in use */
    sws_uint_t                max_conns;   /* in use + idle, per worker (0: no cap) */
    sws_uint_t                idle;        /* worker: kept idle connections */
    sws_uint_t                index;       /* in us->peers */
    sws_http_upstream_srv_t  *us;
    sws_ups_shared_t         *sh;
    unsigned                  backup:1;
    unsigned                  down:1;      /* not chosen (down, drained, removed) */
    unsigned                  dynamic:1;   /* a slot for servers added at run time */
    uint32_t                  gen;         /* worker: the slot's address generation */
    u_char                    text[SWS_UPS_NAME_LEN];   /* a dynamic one's name */
} sws_http_upstream_peer_t;

/* A "server" line as written; resolved into peers at the end of http { }. */
typedef struct {
    sws_str_t    addr;
    sws_uint_t   weight;
    sws_uint_t   max_fails;
    sws_msec_t   fail_timeout;
    sws_uint_t   max_conns;
    unsigned     backup:1;
    unsigned     down:1;
    unsigned     resolve:1;    /* a name followed at run time */
    const char  *file;
    sws_uint_t   line;
} sws_http_upstream_server_t;

/* An idle keep-alive connection in its upstream's per-worker cache. */
typedef struct {
    sws_queue_t                queue;
    sws_connection_t          *c;
    sws_http_upstream_peer_t  *peer;
    sws_http_upstream_srv_t   *us;
} sws_http_upstream_ka_t;

/* A point of the consistent hash ring. */
typedef struct {
    uint32_t    hash;
    uint32_t    peer;
} sws_ups_point_t;

struct sws_http_upstream_srv_s {
    sws_str_t                   name;
    sws_uint_t                  port;          /* implicit: the default port */
    const char                 *file;          /* where first named */
    sws_uint_t                  line;
    sws_array_t                 servers;       /* sws_http_upstream_server_t */
    sws_http_upstream_peer_t   *peers;         /* primary, backup, then the
                                                  run-time slots */
    sws_uint_t                  npeers;        /* configured */
    sws_uint_t                  nprimary;
    sws_uint_t                  nall;          /* npeers + ndynamic: iterate these */
    sws_uint_t                  ndynamic;      /* dynamic_servers N */
    sws_uint_t                  nused;         /* worker: [0, nused) may be in use:
                                                  what the balancer walks */
    sws_uint_t                  nlive;         /* worker: not removed */
    sws_ups_list_t             *list;          /* the shared list (NULL: fixed) */
    uint64_t                    list_version;  /* worker: the one synced */

    sws_uint_t                  method;
    sws_http_format_t          *hash_key;
    sws_ups_point_t            *ring;
    sws_uint_t                  nring;
    unsigned                    defined:1;     /* an upstream { } block */
    unsigned                    unix_sock:1;   /* named unix:/... */
    unsigned                    consistent:1;
    unsigned                    random_two:1;
    unsigned                    method_set:1;
    unsigned                    app:1;         /* an application's (sws_http_app.c):
                                                  run-time servers only */
    const char                 *app_protocol;  /* app: what its processes speak */
    const char                 *app_pass;      /* app: the directive reaching it */

    sws_uint_t                  keepalive;     /* idle connections per worker */
    sws_msec_t                  keepalive_timeout;
    sws_uint_t                  keepalive_requests;
    sws_queue_t                 ka_cache;      /* worker: idle, newest first */
    sws_queue_t                 ka_free;
    sws_http_upstream_ka_t     *ka_items;

    /* queue N [timeout=T]: requests waiting while every server is at its
     * max_conns (sws_http_upstream_queue.c) */
    sws_uint_t                  queue_max;     /* 0: none, a 502 at once */
    sws_msec_t                  queue_timeout;
    sws_queue_t                 waiters;       /* worker: oldest first */
    sws_uint_t                  nwaiting;      /* worker */
    sws_uint_t                  wakes;         /* worker: woken, not yet run */

    sws_msec_t                  hc_interval;   /* 0: no active checks */
    sws_str_t                   hc_uri;
    sws_uint_t                  hc_fails;
    sws_uint_t                  hc_passes;
    sws_msec_t                  hc_timeout;
    sws_event_t                *hc_timer;      /* worker */
    /* TLS probes: the settings of the first location that proxies to the
     * group over TLS (NULL: plain probes), the name for SNI and
     * verification, whether SNI is sent. */
    struct sws_ups_ssl_conf_s  *hc_ssl;
    sws_str_t                   hc_ssl_name;
    unsigned                    hc_ssl_sni:1;
    unsigned                    hc_tls_used:1;     /* some location: https:// */
    unsigned                    hc_plain_used:1;   /* some location: http:// */
    unsigned                    hc_warned:1;
    /* The probe's protocol: that of the first location naming the group
     * (sws_http_upstream_conf_set_probe; NULL: HTTP). */
    const sws_http_upstream_probe_t *hc_probe;
    void                       *hc_probe_data;
    unsigned                    hc_probe_set:1;
    unsigned                    hc_probe_warned:1;
    unsigned                    ndynamic_set:1;
    unsigned                    ring_heap:1;   /* worker: ring rebuilt, malloc()ed */
    unsigned                    zone:1;        /* "zone" (run-time lists need it) */
    /* "server NAME resolve" lines: their addresses live in the run-time
     * slots, kept up to date by worker 0 (sws_http_upstream_dns.c) */
    sws_array_t                *resolving;     /* sws_http_upstream_server_t, or NULL */
    sws_resolver_t             *resolver;
    sws_msec_t                  resolver_timeout;
};

/* A location's pass to a group that may be an application's
 * (sws_app_expect_protocol): checked once every application is known. */
typedef struct {
    sws_str_t          name;         /* the group's */
    const char        *protocol;     /* what the pass speaks */
    sws_str_t          directive;    /* "python_pass" */
    const char        *file;
    sws_uint_t         line;
} sws_app_pass_t;

typedef struct {
    sws_array_t        upstreams;    /* sws_http_upstream_srv_t * */
    sws_shm_zone_t    *zone;
    sws_uint_t         npeers;       /* all groups */
    sws_log_t         *log;
    unsigned           keep_headers:1;   /* some format uses $upstream_http_ */
    sws_array_t        temp_paths;   /* sws_http_temp_path_t *: for the master */
    sws_array_t        app_passes;   /* sws_app_pass_t: sws_app_expect_protocol's */
} sws_http_upstream_main_conf_t;

/* TLS to the servers: a level's settings (shared by the levels below that
 * set none) and the client context made from them. */
typedef struct sws_ups_ssl_conf_s {
    sws_int_t             server_name;     /* send SNI */
    sws_http_format_t    *name_fmt;        /* ssl_name, NULL: the target's host */
    sws_int_t             verify;
    sws_uint_t            verify_depth;
    sws_uint_t            protocols;
    sws_str_t             ciphers;
    sws_str_t             trusted;         /* C strings */
    sws_str_t             certificate;
    sws_str_t             certificate_key;
    sws_str_t             password_file;   /* passphrases of certificate_key */
    sws_int_t             session_reuse;
    sws_ssl_t            *ssl;             /* made when a location needs it */
    unsigned              merged:1;
} sws_ups_ssl_conf_t;

struct sws_http_upstream_conf_s {
    sws_http_upstream_srv_t  *upstream;          /* the target, NULL: none */
    sws_msec_t                connect_timeout;
    sws_msec_t                send_timeout;
    sws_msec_t                read_timeout;
    sws_msec_t                next_upstream_timeout;
    sws_uint_t                next_upstream;
    sws_uint_t                next_upstream_tries;
    sws_int_t                 buffering;
    sws_int_t                 request_buffering;
    sws_int_t                 pass_request_body;
    sws_int_t                 ignore_client_abort;
    sws_int_t                 intercept_errors;
    sws_int_t                 upgrade;           /* 0: off; else upgrade_list */
    sws_array_t              *upgrade_list;      /* sws_str_t protocol names, lower case */
    sws_uint_t                nbuffers;
    size_t                    buffer_size;
    size_t                    head_buffer_size;
    sws_http_temp_path_t     *temp_path;         /* merged: never NULL */
    off_t                     max_temp_file_size; /* 0: no temporary files */
    size_t                    temp_file_write_size;
    sws_array_t              *hide_list;         /* sws_str_t, lower case */
    sws_array_t              *pass_list;
    sws_hash_t               *hide;              /* merged: names not passed */
    uint64_t                  hide_lens;         /* bit min(len, 63): a name of
                                                    hide may have that length */
    unsigned                  hide_default:1;    /* hide is the default names
                                                    (sws_ups_hidden_by_default) */
    sws_ups_ssl_conf_t       *ssl;               /* merged: never NULL */
    unsigned                  ssl_wanted:1;      /* TLS possible here */
    unsigned                  recv_fds:1;        /* take passed descriptors
                                                    (sws_http_upstream_conf_set_recv_fds) */
    const sws_http_upstream_probe_t *probe;      /* the target's probes (NULL: HTTP) */
    void                     *probe_data;
    /* the socket (sws_http_upstream_bind.c) */
    sws_int_t                 socket_keepalive;  /* SO_KEEPALIVE */
    sws_int_t                 bind;              /* 1: bind_fmt or bind_sa; 0: off */
    sws_http_format_t        *bind_fmt;          /* an address with variables */
    struct sockaddr_storage   bind_sa;
    socklen_t                 bind_socklen;
    size_t                    busy_buffers_size; /* checked against the buffers only */
    const char               *busy_name;         /* the directive, for its messages */
    size_t                    limit_rate;        /* bytes/s of reading the response; 0: none */
};

/* What a connection's socket gets before connect(). */
typedef struct {
    const struct sockaddr    *local;             /* bind to it; NULL: no */
    socklen_t                 local_len;
    struct sockaddr_storage   sa;                /* an address from variables */
    unsigned                  keepalive:1;
    unsigned                  recv_fds:1;        /* a unix socket read with recvmsg() */
} sws_ups_socket_opts_t;

/* The http_upstream module's location conf: what every protocol module's
 * upstream requests of the location share. */
typedef struct {
    const sws_http_upstream_cache_t  *cache;     /* NULL: none */
    void                             *cache_data;
    unsigned                          cache_set:1;
    /* run-time DNS (sws_http_upstream_dns.c) */
    sws_resolver_t                   *resolver;  /* NULL: none (inherited) */
    sws_msec_t                        resolver_timeout;
} sws_http_upstream_loc_conf_t;

/* A buffer of the response body. Data in it goes downstream as "shadow"
 * buffers (busy counts those not yet sent); empty again, it starts over. */
typedef struct {
    u_char      *start;
    u_char      *end;
    u_char      *last;
    sws_uint_t   busy;
} sws_http_upstream_slot_t;

/* One attempt, for $upstream_* and the metrics. */
typedef struct {
    const sws_str_t  *addr;
    sws_uint_t        status;          /* 0: no response */
    sws_msec_t        connect_ms;      /* -1: not reached */
    sws_msec_t        header_ms;
    sws_msec_t        response_ms;
    off_t             received;
    off_t             body;      /* response body bytes, decoded ($upstream_response_length) */
    off_t             sent;      /* request bytes sent ($upstream_bytes_sent) */
} sws_http_upstream_attempt_t;

/* Where a buffer of the request started, to send it again on a retry. */
typedef struct {
    u_char           *pos;
    off_t             file_pos;
} sws_ups_saved_pos_t;

#define SWS_UPS_ATTEMPTS_MAX  16

/* How the response body is delimited. */
#define SWS_UPS_H1_BODY_NONE     0
#define SWS_UPS_H1_BODY_LENGTH   1
#define SWS_UPS_H1_BODY_CHUNKED  2
#define SWS_UPS_H1_BODY_CLOSE    3

/* HTTP/1 as the protocol: one request's state (u->h1). */
struct sws_ups_h1_s {
    /* the request */
    unsigned                        http10:1;
    unsigned                        upgrade:1;        /* asked for, passed on */
    unsigned                        chunked_body:1;   /* streamed, length unknown */
    sws_http_upstream_h1_header_pt  hook;
    void                           *hook_data;
    /* the response head */
    sws_uint_t                      state;            /* 0: status line, 1: fields */
    sws_uint_t                      status;
    sws_uint_t                      version;
    off_t                           length;           /* Content-Length, -1 none */
    sws_array_t                    *conn_tokens;      /* fields Connection names */
    sws_array_t                    *interim;          /* the fields of a 1xx */
    sws_uint_t                      ninterim;
    sws_str_t                       upgrade_value;
    unsigned                        te_chunked:1;
    unsigned                        conn_close:1;
    unsigned                        conn_keepalive:1;
    /* the response body */
    sws_uint_t                      body;
    off_t                           rest;
    sws_http_chunked_t              chunked;
};
typedef struct sws_ups_h1_s  sws_ups_h1_t;

struct sws_http_upstream_s {
    sws_http_request_t               *r;
    const sws_http_upstream_proto_t  *proto;
    void                             *ctx;
    sws_http_upstream_conf_t         *conf;
    sws_http_upstream_srv_t          *us;

    /* the server */
    sws_http_upstream_peer_t         *peer;
    uint64_t                         *tried;       /* bitmap of peers */
    uint64_t                          tried_one;   /* tried for up to 64 peers */
    sws_uint_t                        tries;       /* attempts left */
    sws_msec_t                        start_msec;  /* of the first attempt */
    sws_msec_t                        attempt_msec;
    sws_msec_t                        rate_start;      /* limit_rate: the body's first read */
    off_t                             rate_read;       /* body bytes read since */
    sws_connection_t                 *c;
    sws_http_upstream_attempt_t      *attempts;    /* attempts_small, or grown */
    sws_http_upstream_attempt_t       attempts_small[2];
    sws_uint_t                        nattempts;
    sws_uint_t                        attempts_max;

    /* the request */
    sws_chain_t                      *request;     /* as built */
    sws_ups_saved_pos_t              *saved;       /* where its buffers start */
    sws_ups_saved_pos_t               saved_small[4];
    sws_uint_t                        stale_retries;
    sws_chain_t                      *out;         /* left to send */
    sws_buf_t                        *body_buf;    /* streaming: one framed piece */
    sws_chain_t                       body_link;
    sws_uint_t                        body_mode;
    size_t                            body_piece;  /* 0: client_body_buffer_size */
    sws_str_t                         redirect_uri;   /* a local redirect (CGI) */
    sws_str_t                         redirect_args;
    off_t                             sent_start;  /* c->sent at the attempt */

    /* the response */
    sws_buf_t                         head;        /* the head, then body slot 0 */
    sws_http_upstream_slot_t         *slots;
    sws_uint_t                        nslots;
    sws_uint_t                        cur;         /* the slot being filled */
    sws_chain_t                      *pending;     /* shadows not passed yet */
    sws_chain_t                     **pending_tail;
    sws_chain_t                      *busy;        /* passed, maybe not sent */
    sws_chain_t                     **busy_tail;
    sws_chain_t                      *free;        /* spare links with shadows */
    sws_int_t                         status;      /* final status (finalize) */

    /* buffering, the buffers full: the rest through a temporary file */
    sws_http_upstream_slot_t          spill;       /* read into, then written out */
    sws_http_temp_file_t             *tf;
    off_t                             file_queued; /* of tf, passed on as file buffers */
    /* the slot input_filter decodes into (sws_http_upstream_body_file) */
    sws_http_upstream_slot_t         *in_slot;

    /* the response headers as received ($upstream_http_NAME), when kept */
    sws_array_t                      *headers_in;  /* sws_http_header_t */

    /* TLS (ssl set): the name for SNI and verification */
    sws_str_t                         ssl_name;

    /* tunnel */
    sws_buf_t                        *t_down;      /* upstream -> client */
    sws_buf_t                        *t_up;        /* client -> upstream */
    sws_connection_t                 *t_client;    /* the client's byte stream (proto->tunnel) */

    unsigned                          started:1;
    unsigned                          attempt_open:1;  /* counted in the stats */
    unsigned                          streaming:1;     /* body pulled as it comes */
    unsigned                          body_eof:1;      /* the client body is all read */
    unsigned                          body_pulled:1;   /* some body left the client */
    unsigned                          buffering_forced:1;
    unsigned                          pass_body_off:1;
    unsigned                          connecting:1;
    unsigned                          request_sent:1;
    unsigned                          sent_any:1;      /* some request byte went */
    unsigned                          header_done:1;
    unsigned                          body_done:1;
    unsigned                          keepalive:1;
    unsigned                          upgrade:1;
    unsigned                          reused:1;        /* from the keep-alive pool */
    unsigned                          paused:1;        /* no room: not reading */
    unsigned                          rate_delayed:1;  /* limit_rate: the read timer waits */
    unsigned                          buffering:1;
    unsigned                          finished:1;
    unsigned                          tunnel:1;
    unsigned                          t_up_eof:1;
    unsigned                          t_down_eof:1;
    unsigned                          keep_headers:1;  /* record headers_in */
    unsigned                          ssl:1;           /* TLS to the server */
    unsigned                          ssl_sni:1;       /* send ssl_name as SNI */
    unsigned                          redirect:1;      /* redirect_uri is set */
    unsigned                          noted:1;         /* the last one came by
                                                          header_received */

    /* a name to resolve first (sws_http_upstream_dns.c) */
    sws_str_t                         rname;       /* the host, without the port */
    sws_str_t                         raddr;       /* as given: "host[:port]" */
    sws_uint_t                        rport;
    sws_resolver_query_t             *rquery;      /* asked, not answered */
    sws_int_t                         rrc;         /* answered at once: the outcome */
    unsigned                          rsync:1;     /* in sws_resolver_resolve() */

    /* waiting in the group's queue (sws_http_upstream_queue.c) */
    sws_queue_t                       wait_link;
    sws_event_t                       wait_ev;     /* the wake (posted), the timeout */
    unsigned                          waiting:1;   /* in us->waiters */
    unsigned                          woken:1;     /* choosing after a wake */
    unsigned                          full:1;      /* a server was skipped: max_conns */

    /* a response cache in front (sws_http_upstream_cache.c) */
    const sws_http_upstream_cache_t  *cache;       /* lookup ran, not answered */
    void                             *cache_data;
    sws_str_t                         cond_etag;   /* revalidation's validators */
    time_t                            cond_lm;
    time_t                            date;        /* the response's Date (for the
                                                      cache: -1 else) */
    sws_uint_t                        client_status;   /* background: what the client
                                                          got (for the log) */
    unsigned                          cache_offer:1;   /* MISS or REVALIDATE */
    unsigned                          cache_watch:1;   /* WATCH: the head only */
    unsigned                          cache_pass_inm:1; /* a MISS sends the client's
                                                           If-None-Match */
    unsigned                          cache_pass_range:1; /* ... and its Range */
    unsigned                          cache_waiting:1; /* lookup said SWS_BUSY */
    unsigned                          background:1;    /* the client was answered: the
                                                          response goes to the cache only */
    unsigned                          revalidate:1;
    unsigned                          refetched:1;     /* a 304 of no use: asked again,
                                                          unconditionally */
    unsigned                          head_as_get:1;   /* the cache asks: HEAD as GET */
    unsigned                          sent_as_get:1;   /* ... and the protocol did it */
    unsigned                          tee:1;           /* store_body is fed */
    unsigned                          body_complete:1; /* the framing ended it */
    unsigned                          spilling:1;      /* reading into the file */
    unsigned                          spill_done:1;    /* no (more) file for this one */
    unsigned                          spill_failed:1;  /* a write to it failed */

    /* HTTP/1 as the protocol (sws_http_upstream_h1.c), when used: h1_state
     * (zeroed with the rest, no allocation of its own) */
    struct sws_ups_h1_s              *h1;
    sws_ups_h1_t                      h1_state;
};

extern sws_module_t sws_http_upstream_module;

/* conf->hide_lens: a field whose length has no bit there is not hidden,
 * and its name is looked up in no hash (most fields a server sends). */
#define SWS_UPS_HIDE_LEN_BIT(len)  ((uint64_t) 1 << ((len) < 63 ? (len) : 63))
#define sws_ups_may_hide(conf, len) \
    ((conf)->hide != NULL && ((conf)->hide_lens & SWS_UPS_HIDE_LEN_BIT(len)) != 0)
/* The name's hash is needed to look it up in conf->hide: not when the
 * names are the defaults, compared directly. */
#define sws_ups_hide_needs_hash(conf, len) \
    (sws_ups_may_hide(conf, len) && !(conf)->hide_default)
/* sws_http_upstream_loc.c: is the lower-case name one that is hidden by
 * default (Date, Server, X-Pad, X-Accel-*)? */
int sws_ups_hidden_by_default(const u_char *lcname, size_t len);

/* sws_http_upstream_conf.c */
sws_http_upstream_main_conf_t *sws_http_upstream_main(void);
/* The group of application name (sws_http_app.c): no configured server,
 * room for room run-time ones. NULL after logging (an upstream { } block
 * or another application has the name). */
sws_http_upstream_srv_t *sws_http_upstream_app_group(sws_conf_t *cf, const sws_str_t *name,
    sws_uint_t room);
sws_http_upstream_srv_t *sws_ups_lookup(sws_conf_t *cf, const sws_str_t *name,
    sws_uint_t port, int create);
/* sws_http_app.c: the passes to applications (sws_app_expect_protocol)
 * checked against what each application speaks, once the http block is
 * read. SWS_OK, or SWS_ERROR (logged, naming the pass's file and line). */
sws_int_t sws_app_check_passes(sws_conf_t *cf, sws_http_upstream_main_conf_t *umcf);

/* sws_http_upstream_resolve.c: the "server" lines (or the implicit name)
 * into peers. SWS_CONF_OK or SWS_CONF_ERROR (logged). */
char      *sws_ups_init_peers(sws_conf_t *cf, sws_http_upstream_srv_t *us);
/* An address that needs no resolver ("unix:/p", "[v6][:port]",
 * "a.b.c.d[:port]"): 1, 0 (a name), -1 (malformed: *err). */
sws_int_t  sws_ups_parse_literal(const sws_str_t *text, sws_uint_t default_port,
    struct sockaddr_storage *sa, socklen_t *salen, sws_str_t *host, const char **err);
/* "1.2.3.4:80", "[::1]:80", "unix:/p" */
/* The text of an address ("127.0.0.1:80", "[::1]:80", "unix:/p") into
 * buf; its length (cut to size - 1). */
size_t     sws_ups_addr_format(const struct sockaddr_storage *ss, char *buf, size_t size);
sws_int_t  sws_ups_addr_text(sws_pool_t *pool, const struct sockaddr_storage *ss,
    sws_str_t *out);

/* sws_http_upstream_balance.c */
sws_int_t  sws_ups_balancer_init(sws_conf_t *cf, sws_http_upstream_srv_t *us);
/* The consistent hash ring of the servers not removed: its points, and
 * filling ring (that many) to make it us->ring. */
size_t     sws_ups_ring_size(sws_http_upstream_srv_t *us);
void       sws_ups_ring_fill(sws_http_upstream_srv_t *us, sws_ups_point_t *ring);
void       sws_ups_balancer_init_worker(sws_http_upstream_srv_t *us);
sws_http_upstream_peer_t *sws_ups_get_peer(sws_http_upstream_t *u);
int        sws_ups_peer_available(sws_http_upstream_peer_t *peer, sws_msec_t now);
/* An attempt on peer ended: failed or not (passive health). */
void       sws_ups_peer_done(sws_http_upstream_peer_t *peer, int failed, sws_log_t *log);
const char *sws_ups_peer_state(sws_http_upstream_peer_t *peer);
/* sws_http_upstream_stats.c: a server's statistics as the SDK gives them. */
/* sws_http_upstream_stats.c: st gets no more than size bytes of out. */
void        sws_ups_stats_copy(sws_http_upstream_stats_t *st, sws_http_upstream_stats_t *out,
    size_t size);
void        sws_ups_peer_stats(sws_http_upstream_stats_t *st, const sws_str_t *upstream,
    sws_http_upstream_peer_t *p);

/* sws_http_upstream_conn.c */
/* Connect to peer: SWS_OK (connected), SWS_AGAIN (in progress: the write
 * event tells), SWS_ERROR (the server: logged), SWS_BUSY (no socket or
 * connection slot here: not the server's fault). *cp is the connection. */
sws_int_t  sws_ups_connect(sws_http_upstream_peer_t *peer, const sws_ups_socket_opts_t *opts,
    sws_log_t *log, sws_connection_t **cp);
/* sws_http_upstream_bind.c: proxy_bind, proxy_socket_keepalive */
char      *sws_ups_set_bind(sws_conf_t *cf, sws_http_upstream_conf_t *uc);
sws_int_t  sws_ups_socket_opts(sws_http_upstream_t *u, sws_ups_socket_opts_t *opts);
sws_int_t  sws_ups_socket_apply(int fd, const sws_ups_socket_opts_t *opts, sws_log_t *log);
/* After SWS_AGAIN: did it connect? SWS_OK or SWS_ERROR (logged). */
sws_int_t  sws_ups_connect_test(sws_connection_t *c, sws_http_upstream_peer_t *peer);
/* An idle connection to peer that may serve u (plain, or TLS of u's
 * settings and name), NULL if none. */
sws_connection_t *sws_ups_ka_get(sws_http_upstream_t *u, sws_http_upstream_peer_t *peer);
/* Close an upstream connection (and the pool a TLS one has). */
void       sws_ups_close_conn(sws_connection_t *c);
/* Keep c for reuse (it is closed if it cannot be kept). */
void       sws_ups_ka_put(sws_http_upstream_srv_t *us, sws_http_upstream_peer_t *peer,
    sws_connection_t *c);
sws_int_t  sws_ups_ka_init_worker(sws_cycle_t *cycle, sws_http_upstream_srv_t *us);
/* Close the idle connections to peer (its slot got another server). */
void       sws_ups_ka_drop_peer(sws_http_upstream_srv_t *us, sws_http_upstream_peer_t *peer);
/* Close the least recently used idle connection to peer, if any. */
void       sws_ups_ka_drop_one(sws_http_upstream_srv_t *us, sws_http_upstream_peer_t *peer);
/* Response buffers: a per-worker cache of equal-sized blocks. */
u_char    *sws_ups_buf_alloc(size_t size, sws_log_t *log);
void       sws_ups_buf_free(u_char *p, size_t size);

/* sws_http_upstream.c */
void       sws_ups_finalize(sws_http_upstream_t *u, sws_int_t rc);
/* Choose a server, connect (or take a kept connection), send. */
void       sws_ups_connect_peer(sws_http_upstream_t *u);
/* Connected (and TLS done, if any): record the time, send the request. */
void       sws_ups_connected(sws_http_upstream_t *u);
void       sws_ups_close_connection(sws_http_upstream_t *u);
void       sws_ups_event_handler(sws_event_t *ev);

/* sws_http_upstream_head.c */
void       sws_ups_read_header(sws_http_upstream_t *u);
/* Something failed on the current attempt (ft: SWS_UPS_FT_*): another
 * server, or the end with 502/504. */
void       sws_ups_next(sws_http_upstream_t *u, sws_uint_t ft);
/* A kept connection failed before any response byte: retried on a fresh
 * one without counting (1), or not (0). */
int        sws_ups_stale(sws_http_upstream_t *u);

/* sws_http_upstream_response.c */
/* The head is done and sent: stream the body from what is in u->head. */
void       sws_ups_response_start(sws_http_upstream_t *u);
sws_chain_t *sws_ups_shadow(sws_http_upstream_t *u);
sws_int_t  sws_ups_add_file(sws_http_upstream_t *u, int fd, off_t pos, off_t last);
/* sws_http_upstream_spill.c */
int        sws_ups_spill_possible(sws_http_upstream_t *u);
sws_int_t  sws_ups_spill_begin(sws_http_upstream_t *u);
sws_int_t  sws_ups_spill_write(sws_http_upstream_t *u, u_char *from, u_char *to);
sws_int_t  sws_ups_spill_queue(sws_http_upstream_t *u);
void       sws_ups_spill_cleanup(sws_http_upstream_t *u);
void       sws_ups_response_read(sws_http_upstream_t *u);
void       sws_ups_response_write_handler(sws_http_request_t *r);
void       sws_ups_response_cleanup(sws_http_upstream_t *u);

/* sws_http_upstream_tunnel.c */
void       sws_ups_tunnel_start(sws_http_upstream_t *u);
void       sws_ups_tunnel_event(sws_http_upstream_t *u, int from_upstream);

/* sws_http_upstream_cache.c */
void      *sws_ups_create_loc_conf(sws_conf_t *cf);
/* sws_http_upstream_dns.c: resolver and resolver_timeout */
char      *sws_ups_resolver_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
void       sws_ups_resolver_merge(sws_http_upstream_loc_conf_t *prev,
    sws_http_upstream_loc_conf_t *conf);
/* A name target (set_target): remembered, or refused without a resolver.
 * SWS_OK, or SWS_DECLINED (logged). */
sws_int_t  sws_ups_resolve_later(sws_http_upstream_t *u, const sws_str_t *addr,
    sws_uint_t default_port);
/* From sws_ups_start_servers (after the cache's lookup): ask, go on there
 * when answered. */
sws_int_t  sws_ups_resolve_start(sws_http_upstream_t *u);
/* At the end of http { }: the resolver of a group with "server ... resolve"
 * (SWS_CONF_OK or an error, logged); in worker 0: start following them. */
char      *sws_ups_resolving_conf(sws_conf_t *cf, sws_http_upstream_srv_t *us);
sws_int_t  sws_ups_resolving_init_worker(sws_cycle_t *cycle, sws_http_upstream_srv_t *us);
char      *sws_ups_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
/* SWS_DECLINED: go on to a server; else the content handler's result. */
sws_int_t  sws_ups_cache_lookup(sws_http_upstream_t *u);
void       sws_ups_cache_header(sws_http_upstream_t *u);
void       sws_ups_cache_body(sws_http_upstream_t *u, const u_char *p, size_t n);
void       sws_ups_cache_end(sws_http_upstream_t *u, int complete);
void       sws_ups_cache_only(sws_http_upstream_t *u);
void       sws_ups_cache_not_modified(sws_http_upstream_t *u);
sws_int_t  sws_ups_cache_failed(sws_http_upstream_t *u, sws_int_t rc);
/* The request is for the cache, and the client's Range goes on with it
 * (sws_http_upstream_cache_pass_range). */
int        sws_ups_cache_passes_range(sws_http_upstream_t *u);
/* sws_http_upstream.c: the start after the cache's lookup */
sws_int_t  sws_ups_start_servers(sws_http_upstream_t *u);
/* The request built (create_request) and sent to a server chosen anew. */
void       sws_ups_init_request(sws_http_upstream_t *u);

/* sws_http_upstream_h1_request.c: u->h1 (u->h1_state), set up when first needed */
sws_ups_h1_t *sws_ups_h1(sws_http_upstream_t *u);

/* sws_http_upstream_dynamic.c: the shared server lists */
sws_int_t  sws_ups_dyn_init(sws_conf_t *cf, sws_http_upstream_main_conf_t *umcf);
/* Bring the worker's peers up to date with the list (cheap when unchanged). */
void       sws_ups_dyn_sync(sws_http_upstream_srv_t *us);
/* Add a server to the run-time list (sws_http_upstream_server_add);
 * resolved: the Nth "server NAME resolve" line's address (1-based), 0: a
 * server added by hand. A reload keeps the addresses of the lines it still
 * has; sws_ups_dyn_resolved gives those of line owner (their number, at
 * most max), for the new configuration's worker 0 to go on from. */
sws_int_t  sws_ups_dyn_add(sws_http_upstream_srv_t *us, const sws_str_t *addr,
    sws_uint_t weight, int resolved);
/* The same address and port (the same path for unix:). */
int        sws_ups_same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b);
sws_uint_t sws_ups_dyn_resolved(sws_http_upstream_srv_t *us, sws_uint_t owner,
    struct sockaddr_storage *out, sws_uint_t max);
/* A new running configuration in this process (init_master, init_worker):
 * the SDK's list handles follow their groups into it. */
void       sws_ups_dyn_handles_update(sws_http_upstream_main_conf_t *umcf);

/* sws_http_upstream_queue.c */
/* Must u wait behind requests already waiting for a connection? */
int        sws_ups_queue_behind(sws_http_upstream_t *u);
/* Wait (at the head after a wake that found no room): SWS_OK, or
 * SWS_DECLINED when the queue is full or the group has none. */
sws_int_t  sws_ups_queue_wait(sws_http_upstream_t *u, int head);
/* An attempt on one of us's servers ended: the oldest waiter chooses again
 * (posted, so that the connection is back in the pool first). */
void       sws_ups_queue_wake(sws_http_upstream_srv_t *us);
/* u ends: out of the queue, a wake it did not use passed on. */
void       sws_ups_queue_leave(sws_http_upstream_t *u);

/* sws_http_upstream_health.c */
sws_int_t  sws_ups_health_init_worker(sws_cycle_t *cycle, sws_http_upstream_srv_t *us);
/* At merge, a location of conf: the first one naming a group gives its
 * probes their protocol. */
void       sws_ups_health_probe_conf(sws_conf_t *cf, sws_http_upstream_conf_t *conf);

/* sws_http_upstream_stats.c */
sws_int_t  sws_ups_zone_init(sws_conf_t *cf, sws_http_upstream_main_conf_t *umcf);
void       sws_ups_stats_attempt_start(sws_http_upstream_t *u);
void       sws_ups_stats_attempt_end(sws_http_upstream_t *u, int failed);
void       sws_http_upstream_variable(sws_http_request_t *r, sws_uint_t which, sws_str_t *v);
void       sws_ups_stats_set_main(sws_http_upstream_main_conf_t *umcf);

/* sws_http_upstream_ssl_conf.c */
char      *sws_ups_ssl_directive(sws_conf_t *cf, const sws_command_t *cmd,
    sws_http_upstream_conf_t *uc);
sws_int_t  sws_ups_ssl_merge(sws_conf_t *cf, sws_http_upstream_conf_t *prev,
    sws_http_upstream_conf_t *conf);

/* sws_http_upstream_ssl.c */
/* Session reuse on a new context (its callbacks). */
sws_int_t  sws_ups_ssl_sessions_init(sws_ups_ssl_conf_t *sc);
/* Connected (TCP): begin the handshake; when it is over (done or failed,
 * timed out) the framework goes on (send, or the next server). */
void       sws_ups_ssl_handshake(sws_http_upstream_t *u);
/* Begin TLS as a client on the connected c to peer: sc's settings, name
 * for verification (and SNI if sni); the caller drives sws_ssl_handshake.
 * The TLS state lives in c->pool (made if none): close with
 * sws_ups_close_conn. SWS_OK or SWS_ERROR. */
sws_int_t  sws_ups_ssl_client(sws_connection_t *c, sws_ups_ssl_conf_t *sc,
    const sws_str_t *name, int sni, sws_http_upstream_peer_t *peer);
/* A handshake on c failed: its cached session is dropped; returns the
 * verification result (X509_V_OK: the failure was something else). */
long       sws_ups_ssl_forget(sws_connection_t *c);
/* At merge, a location of conf (merged, its context made): the first one
 * that goes to a group over TLS gives the group's probes their TLS (a
 * warning if other locations use the group in plain HTTP). */
sws_int_t  sws_ups_ssl_probe_conf(sws_conf_t *cf, sws_http_upstream_conf_t *conf);
/* May the kept connection c serve u (same TLS settings and name)? */
int        sws_ups_ssl_match(sws_connection_t *c, sws_http_upstream_t *u);

/* sws_http_upstream_vars.c: the received headers ($upstream_http_NAME). */
/* The upstreams of the configuration being read; one of its formats uses
 * $upstream_http_. */
void       sws_ups_set_configuring(sws_http_upstream_main_conf_t *umcf);
sws_http_upstream_main_conf_t *sws_ups_configuring_main(void);
void       sws_ups_headers_wanted(void);
/* sws_http_upstream_header with the name's hash known (sws_hash_key of
 * lcname: the parser's sws_http_header_t.hash), not computed again. */
sws_int_t  sws_ups_header_hashed(sws_http_upstream_t *u, const sws_str_t *name,
    const u_char *lcname, uint32_t hash, const sws_str_t *value);
/* The two halves of sws_ups_header_hashed after the recording: is the
 * field hidden (proxy_hide_header and the defaults; X-Accel-Buffering and,
 * for a cache, Date read first: value is not kept), and passing one that
 * is not (value kept: pool memory). */
int        sws_ups_header_hidden(sws_http_upstream_t *u, const u_char *lcname, size_t len,
    uint32_t hash, const sws_str_t *value);
sws_int_t  sws_ups_header_pass(sws_http_upstream_t *u, const sws_str_t *name,
    const u_char *lcname, const sws_str_t *value);
/* Record a header (copy: into the pool first). */
sws_int_t  sws_ups_header_record(sws_http_upstream_t *u, const sws_str_t *name,
    const sws_str_t *value, int copy);
/* The recorded headers of r's upstream, NULL if none. */
const sws_array_t *sws_http_upstream_headers_in(sws_http_request_t *r);

#define sws_ups_atomic_add(p, n)  __atomic_add_fetch((p), (n), __ATOMIC_RELAXED)
#define sws_ups_atomic_sub(p, n)  __atomic_sub_fetch((p), (n), __ATOMIC_RELAXED)
#define sws_ups_atomic_load(p)    __atomic_load_n((p), __ATOMIC_RELAXED)
#define sws_ups_atomic_store(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

#endif
