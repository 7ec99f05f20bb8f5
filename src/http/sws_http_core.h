/*
 * The HTTP core's private structures: configuration of the http, server and
 * location levels, virtual hosts per address, and the request object. Only
 * the core includes this; modules use the accessors of <scalws/sws_http.h>.
 */
#ifndef SWS_HTTP_CORE_H
#define SWS_HTTP_CORE_H

#include <scalws/scalws.h>
#include "sws_cycle.h"
#include "sws_conf_internal.h"
#include "sws_palloc_internal.h"
#include "sws_event.h"
#include "sws_http_parse.h"
#include "sws_http_location_match.h"

typedef struct sws_http_core_srv_conf_s sws_http_core_srv_conf_t;
typedef struct sws_http_core_loc_conf_s sws_http_core_loc_conf_t;
typedef struct sws_http_session_s       sws_http_session_t;
typedef struct sws_http_protocol_s      sws_http_protocol_t;

/* ---- configuration ---- */

/* One step of a phase engine: a handler, the phase it belongs to (its
 * position in the core's order of phases) and its place in the order of
 * all handlers (key), by which a request that enters another location in
 * the middle of a phase (an "if" block) goes on at the same place there. */
typedef struct {
    sws_http_handler_pt   handler;      /* NULL: the end */
    uint32_t              key;          /* phase position << 16 | rank */
    uint16_t              next;         /* first step of the next phase */
    uint8_t               phase;        /* position in the order of phases */
    uint8_t               marks;        /* SWS_HTTP_STEP_*: what the runner does first */
} sws_http_phase_step_t;

#define SWS_HTTP_STEP_FIND_LOCATION  0x01   /* the core's: choose the location */
#define SWS_HTTP_STEP_ACCESS_START   0x02   /* the access phase starts here */
#define SWS_HTTP_STEP_ACCESS_END     0x04   /* the first step after it */
#define SWS_HTTP_STEP_CONTENT        0x08   /* the content phase starts here */
#define SWS_HTTP_STEP_END            0x10   /* no content handler answered */
/* The preaccess phase starts here, and it or the access phase has work:
 * a subrequest goes on after the access phase, as nginx's skip them */
#define SWS_HTTP_STEP_PREACCESS      0x20

/*
 * A location's phase engine: the handlers of every phase that have work
 * there, in order, compiled at configuration time (sws_http_phases.c).
 * Each location, server level, if block and limit_except block has one.
 */
typedef struct sws_http_phase_engine_s {
    sws_http_phase_step_t  *steps;
    sws_http_handler_pt    *log;          /* the LOG phase's, NULL-ended */
    uint16_t                server_rewrite_index; /* where internal redirects restart */
    uint16_t                find_location_index;  /* "rewrite ... last" goes on here */
    uint16_t                rewrite_index;        /* a named location starts here */
    uint16_t                access_end_index;     /* a subrequest skips to here */
} sws_http_phase_engine_t;

/* A registered phase handler (sws_http_register_phase_handler). */
typedef struct {
    sws_http_phase_handler_t  h;
    const char               *module_name;
    sws_uint_t                seq;          /* registration order: last tie-break */
} sws_http_phase_reg_t;

typedef struct {
    sws_array_t              servers;    /* sws_http_core_srv_conf_t * */
    sws_array_t              phase_handlers; /* sws_http_phase_reg_t, as registered */
    const sws_module_t      *postconf_module; /* whose postconfiguration runs */
    /* every handler, for a level no engine was built for */
    sws_http_phase_engine_t *engine;
    sws_array_t              addrs;      /* sws_http_addr_t * */
    sws_uint_t               nmodules;
    sws_uint_t               nvariables; /* per-request variable slots (set, map) */
    /* $limit_rate written by set (its slot) or declared by map (its
     * variable): the response's rate, as nginx's set $limit_rate */
    sws_uint_t               limit_rate_slot;
    unsigned                 limit_rate_settable:1;
    sws_uint_t               args_slot;        /* "set $args": its slot */
    unsigned                 args_settable:1;
    const void              *limit_rate_map;
    sws_http_handler_pt      directory_handler; /* a listing module's (autoindex) */
    sws_array_t             *caches;     /* sws_http_cache_purge_register's */
    sws_array_t             *protocols;  /* sws_http_protocol_t *, as registered */
} sws_http_core_main_conf_t;

typedef struct {
    sws_str_t  name;          /* lower-case; "*.x.com" kept as ".x.com" suffix,
                               * "mail.*" as "mail." prefix */
    unsigned   wildcard:1;
    unsigned   bare:1;        /* written ".x.com": matches "x.com" too */
    unsigned   trailing:1;    /* "mail.*" */
    sws_regex_t *regex;       /* "~RE": matched in configuration order */
    sws_http_core_srv_conf_t *server;
} sws_http_server_name_t;

typedef struct {
    struct sockaddr_storage   sockaddr;
    socklen_t                 socklen;
    sws_str_t                 addr_text;
    int                       backlog;
    unsigned                  default_server:1;
    unsigned                  reuseport:1;
    unsigned                  ssl:1;
    unsigned                  http2:1;
    unsigned                  proxy_protocol:1;
    unsigned                  quic:1;      /* "quic": UDP, HTTP/3 (v3/) */
    unsigned                  bind:1;      /* "bind", or a socket option */
    unsigned                  deferred:1;
    unsigned                  ipv6only_off:1;
    int                       rcvbuf;      /* 0: the system's */
    int                       sndbuf;
    int                       fastopen;
    int                       keepalive;   /* 1 on, -1 off, 0 the system's */
    const char               *file;
    sws_uint_t                line;
} sws_http_listen_t;

/* The virtual hosts of one listening address. An IP address with no
 * socket of its own (no "bind", and a wildcard address of its port) is
 * served through the wildcard's socket: its listening is not opened, the
 * wildcard's connections come to it by their local address. */
typedef struct sws_http_addr_s  sws_http_addr_t;

struct sws_http_addr_s {
    sws_listening_t           *listening;
    sws_http_core_srv_conf_t  *default_server;
    sws_array_t                names;    /* sws_http_server_name_t */
    sws_http_core_srv_conf_t  *no_host;  /* the first server named "": Host-less requests */
    sws_http_listen_t         *lsn;      /* the first listen of the address */
    sws_http_listen_t         *options;  /* the one that sets socket options */
    sws_http_addr_t          **via;      /* a wildcard: the addresses it serves */
    sws_uint_t                 nvia;
    sws_http_core_srv_conf_t  *first;    /* the first server on the address */
    unsigned                   explicit_default:1;
    /* more than one server on the address, or a regex name (captures):
     * else every request goes to the default server without a look at
     * the names */
    unsigned                   names_matter:1;
    unsigned                   ssl:1;      /* a "listen ... ssl" */
    unsigned                   http2:1;    /* a "listen ... http2" */
    unsigned                   proxy_protocol:1; /* a "listen ... proxy_protocol" */
    unsigned                   bind:1;     /* a socket of its own */
    /* "listen ... quic": a UDP address of its own beside the TCP one of
     * the same port; its socket is HTTP/3's (v3/sws_http_v3_module.c). */
    unsigned                   quic:1;
};

struct sws_http_core_srv_conf_s {
    sws_http_conf_ctx_t       *ctx;
    sws_http_loc_matcher_t    *locations;
    unsigned                   nested_locations:1;  /* a location has its own */
    sws_array_t                server_names;   /* sws_str_t as written */
    sws_array_t               *server_regexes; /* sws_regex_t *, the "~" names' in order */
    sws_str_t                  server_name;    /* the first one */
    size_t                     client_header_buffer_size;
    size_t                     large_client_header_buffer_size;
    sws_uint_t                 large_client_header_buffers;
    sws_msec_t                 client_header_timeout;
    sws_int_t                  merge_slashes;
    sws_int_t                  underscores_in_headers;
    sws_int_t                  ignore_invalid_headers;
    sws_array_t                location_list;  /* sws_http_core_loc_conf_t * while parsing */
    sws_array_t                listens;        /* sws_http_listen_t */
    unsigned                   listen:1;
    /* A module's server of its own (sws_http_conf_own_server): the
     * module's name; its addresses are its alone. */
    const char                *own;
    const char                *file;
    sws_uint_t                 line;
};

/* What a PROXY protocol header named (sws_http_proxy_protocol.c). */
typedef struct {
    struct sockaddr_storage  src;
    struct sockaddr_storage  dst;
    socklen_t                src_len;
    socklen_t                dst_len;
    sws_str_t                src_addr;      /* text, as $remote_addr writes them */
    sws_str_t                src_port;
    sws_str_t                dst_addr;
    sws_str_t                dst_port;
} sws_http_proxy_protocol_t;

typedef struct {
    sws_uint_t  status;
    sws_str_t   uri;          /* "/50x.html" or "@name" */
    sws_int_t   overwrite;    /* =CODE, -1 if none */
    sws_http_format_t *uri_fmt;   /* the URI has variables ($host ...), else NULL */
} sws_http_error_page_t;

struct sws_http_core_loc_conf_s {
    sws_str_t               name;          /* the location pattern */
    /* an exact location's: the extension of its name, which is the URI
     * of a request the matcher brings here (typing needs no scan then) */
    sws_str_t               exten;
    void                  **loc_conf;      /* this level's confs */
    sws_http_handler_pt     handler;       /* content handler, or NULL */
    const char             *handler_owner;
    struct sws_http_phase_engine_s *engine; /* this level's phase handlers */
    const char             *file;          /* where the location is */
    sws_uint_t              line;
    unsigned                exact:1;
    unsigned                regex:1;
    unsigned                noregex:1;
    unsigned                caseless:1;
    unsigned                alias:1;
    unsigned                named:1;       /* location @name: internal only */
    unsigned                noname:1;      /* an if block (nested) */
    sws_array_t            *nested;        /* its if blocks: sws_http_core_loc_conf_t * */
    /* limit_except: the methods listed (a mask, and names the core has no
     * constant for) and the block, which the others enter */
    sws_uint_t              limit_except;
    sws_array_t            *limit_except_names;
    sws_http_core_loc_conf_t *limit_except_loc;
    /* nested locations ("location /a/ { location /a/b/ { } }"): all of a
     * server's are in its location_list, each with its parent; a level's
     * own are matched by its children matcher, as nginx's */
    struct sws_http_core_loc_conf_s *parent_loc;
    sws_http_loc_matcher_t *children;

    sws_str_t               root;          /* root or alias, no trailing slash for root */
    sws_http_format_t      *root_format;   /* root or alias with variables ($1 ...) */
    unsigned                alias_whole:1; /* a regex location's alias: the whole path */
    sws_hash_t             *types;         /* extension -> sws_str_t * */
    /* The last extension (up to 8 bytes) this worker typed here and its
     * type in types: requests for the same kind of file come in runs, and
     * the memory is the worker's own after the fork, like the conf's life.
     * The extension is kept as one word (sws_http_exten_word): compared in
     * one instruction, not with memcmp. */
    struct {
        size_t              len;           /* 0: none yet */
        uint64_t            exten;
        const sws_str_t    *type;
    } types_memo;
    sws_array_t            *types_list;    /* while parsing: pairs (ext, type) */
    sws_str_t               default_type;
    sws_int_t               sendfile;
    sws_int_t               absolute_redirect;       /* a Location "/x" made absolute */
    sws_int_t               max_ranges;    /* 0: no ranges; more: Range ignored */
    size_t                  sendfile_max_chunk; /* most one send writes; 0: the transport's */
    sws_int_t               recursive_error_pages;
    sws_int_t               log_subrequest;  /* subrequests go to the access log */
    sws_log_t              *error_log;      /* NULL: the connection's (the main one) */
    sws_int_t               reset_timedout_connection;
    sws_msec_t              keepalive_time;      /* a connection's longest keep-alive life */
    sws_uint_t              keepalive_disable;   /* SWS_HTTP_KEEPALIVE_DISABLE_* */
    sws_uint_t              lingering_close;     /* SWS_HTTP_LINGERING_* */
    sws_int_t               server_name_in_redirect; /* with server_name, not Host */
    sws_int_t               port_in_redirect;
    sws_int_t               tcp_nopush;
    sws_int_t               tcp_nodelay;
    sws_int_t               server_tokens;
    sws_int_t               request_id;
    sws_int_t               chunked_transfer_encoding;
    sws_uint_t              satisfy;       /* SWS_HTTP_SATISFY_ALL / _ANY */
    sws_msec_t              keepalive_timeout;
    sws_uint_t              keepalive_requests;
    sws_msec_t              send_timeout;
    sws_msec_t              client_body_timeout;
    size_t                  client_max_body_size;  /* 0: unlimited */
    size_t                  client_body_buffer_size;
    sws_msec_t              lingering_timeout;
    sws_msec_t              lingering_time;
    /* limit_rate / limit_rate_after: a size, or a format with variables
     * evaluated per request (NULL: not set at this level) */
    sws_http_format_t      *limit_rate;
    sws_http_format_t      *limit_rate_after;
    sws_array_t            *error_pages;   /* sws_http_error_page_t */
    void                   *open_file_cache;        /* sws_http_ofc_conf_t, NULL: off */
    sws_msec_t              open_file_cache_valid;
    sws_int_t               open_file_cache_errors;
    sws_int_t               open_file_cache_min_uses;
    unsigned                open_file_cache_set:1;  /* "open_file_cache off" counts */
    sws_int_t               disable_symlinks;       /* SWS_HTTP_SYMLINKS_* */
    sws_str_t               disable_symlinks_from;  /* from=PATH: not checked */
    unsigned                disable_symlinks_root:1; /* from=$document_root */
    unsigned                internal:1;    /* "internal": reached by internal redirects only */
};

#define SWS_HTTP_SATISFY_ALL  0
#define SWS_HTTP_SATISFY_ANY  1

/* nginx's own codes for what went wrong with TLS: each is answered "400
 * Bad Request" with a page of its own (sws_http_special.c), and error_page
 * may name it. */
#define SWS_HTTP_MISDIRECTED_REQUEST  421   /* RFC 9110 15.5.20 */
#define SWS_HTTP_SSL_CERT_ERROR  495   /* the client's certificate did not verify */
#define SWS_HTTP_SSL_NO_CERT     496   /* a certificate was required, none came */
#define SWS_HTTP_TO_HTTPS        497   /* plain HTTP on a TLS port */

extern sws_module_t sws_http_module;
extern sws_module_t sws_http_core_module;

#define sws_http_core_main(r) \
    ((sws_http_core_main_conf_t *) (r)->main_conf[sws_http_core_module.index])
#define sws_http_core_srv(r) \
    ((sws_http_core_srv_conf_t *) (r)->srv_conf[sws_http_core_module.index])
#define sws_http_core_loc(r) \
    ((sws_http_core_loc_conf_t *) (r)->loc_conf[sws_http_core_module.index])

/* ---- the client session ---- */

/*
 * What the transport under a session answers, whatever it is: TCP under
 * HTTP/1 and HTTP/2 (sws_http_session.c), later QUIC under HTTP/3. Asked
 * by variables and rarely: indirect calls cost nothing per request.
 */
typedef struct {
    uint32_t   rtt;            /* smoothed round-trip time, µs */
    uint32_t   rttvar;         /* its variation, µs */
    uint32_t   snd_cwnd;       /* congestion window, packets */
    uint32_t   rcv_space;      /* receive window, bytes */
} sws_http_transport_info_t;

typedef struct {
    const char *name;          /* "tcp" */
    /* $tcpinfo_*: the round-trip estimate and windows now. SWS_OK, or
     * SWS_DECLINED (none: a unix socket). */
    sws_int_t (*info)(sws_http_session_t *s, sws_http_transport_info_t *ti);
    /* The local address the client reached ($server_addr of a wildcard
     * listener). SWS_OK or SWS_ERROR. */
    sws_int_t (*local_addr)(sws_http_session_t *s, struct sockaddr_storage *sa);
    /* Is the session still in TLS early data (0-RTT), its handshake not
     * over? (Asked only where s->ssl is set.) */
    int       (*tls_early)(sws_http_session_t *s);
} sws_http_transport_t;

struct ssl_st;

/*
 * What a client is, whatever protocol it speaks: its transport and what
 * the transport knows (addresses, log, TLS state, the connection's
 * number), the listening address whose virtual hosts it may reach, the
 * server chosen so far (the address's default, or the one SNI named), and
 * what it served. Requests and variables see the client only through
 * this (r->session), never through a socket: a QUIC stream has none of
 * its own. HTTP/1 keeps its own state (header buffers, request pool,
 * lingering) beside it (v1/sws_http_h1.h), HTTP/2 its session
 * (v2/sws_http_v2.h). It lives in the connection's pool.
 */
struct sws_http_session_s {
    sws_connection_t          *connection;   /* the transport's: protocols only */
    const sws_http_transport_t *transport;
    sws_http_addr_t           *addr;
    sws_listening_t           *listening;
    sws_log_t                 *log;
    struct sockaddr           *sockaddr;     /* the client's (before realip) */
    socklen_t                  socklen;
    sws_str_t                  addr_text;
    /* The TLS state once the handshake is done (TLS over TCP; QUIC's own
     * handshake), NULL: none. $ssl_* read it. */
    struct ssl_st             *ssl;
    sws_uint_t                 number;       /* $connection */
    sws_http_core_srv_conf_t  *cscf;         /* the address's default server, or SNI's */
    sws_uint_t                 requests;     /* requests started ($connection_requests) */
    uint32_t                   requests_now; /* in progress (stub_status's busy) */
    /* What a PROXY protocol header said (listen ... proxy_protocol), or
     * NULL (none, or a LOCAL / UNKNOWN one). */
    sws_http_proxy_protocol_t *proxy;
    void                      *pp_state;       /* the parser, while reading it */
    sws_msec_t                 start_msec;     /* accepted ($connection_time) */
    /* A protocol the client may still choose by its preface (HTTP/2's
     * prior knowledge), while the fallback reads the first bytes; NULL:
     * none (ALPN chose, or the first bytes were something else). */
    const sws_http_protocol_t *prior;
    unsigned                   plain_on_tls:1; /* plain HTTP sent to a TLS port */
};

/* ---- the protocols a session may speak (sws_http_protocol.c) ---- */

#define SWS_HTTP_LISTENER_TCP   0x01     /* plain TCP */
#define SWS_HTTP_LISTENER_TLS   0x02     /* TLS over TCP */
#define SWS_HTTP_LISTENER_QUIC  0x04     /* QUIC (UDP) */

struct sws_http_protocol_s {
    const char  *name;
    sws_str_t    alpn;          /* its ALPN id ("h2"); empty: none */
    sws_uint_t   alpn_rank;     /* ALPN: the higher is preferred */
    sws_uint_t   listeners;     /* SWS_HTTP_LISTENER_*: where it runs */
    /* Chosen on its listeners when ALPN chose none (HTTP/1). */
    unsigned     fallback:1;
    /* What a client starts with to choose it without ALPN (HTTP/2's
     * connection preface); the fallback protocol looks for it. */
    sws_str_t    preface;
    /* May session s speak it (HTTP/2: "listen ... http2" or "http2 on")?
     * NULL: always. */
    int        (*enabled)(sws_http_session_t *s);
    /* Take the session's connection over; pre: bytes read already (the
     * preface and what followed it), len 0: none. */
    void       (*start)(sws_http_session_t *s, const u_char *pre, size_t len);
    /* The client began the preface, then sent something else: answer as
     * the protocol wants (HTTP/2: GOAWAY), then close. NULL: close. */
    void       (*bad_preface)(sws_http_session_t *s);
};

/* At configuration time (a module's postconfiguration). SWS_ERROR when a
 * protocol holds the ALPN id, or the fallback, on the same listener type. */
sws_int_t sws_http_protocol_register(sws_conf_t *cf, const sws_http_protocol_t *p);
/* The usable protocol with ALPN id alpn (NULL or empty: the fallback) on
 * a listener of type listener, or NULL. */
const sws_http_protocol_t *sws_http_protocol_find(sws_http_session_t *s, sws_uint_t listener,
    const sws_str_t *alpn);
/* Hand the session to the protocol ALPN chose (alpn, NULL or empty: none),
 * else to the listener's fallback (s->prior set: a preface may still
 * choose another). Closes the connection when none is registered. */
void      sws_http_protocol_start(sws_http_session_t *s, sws_uint_t listener,
    const sws_str_t *alpn);
/* The TLS ALPN callback's choice: our preferred protocol among those the
 * client offers (in, wire format). 1 (*out, *outlen set) or 0: none. */
int       sws_http_protocol_alpn_select(sws_http_session_t *s, sws_uint_t listener,
    const unsigned char **out, unsigned char *outlen, const unsigned char *in, unsigned inlen);

/* ---- the protocol behind a request ---- */

/*
 * What a protocol (HTTP/1.x connection, HTTP/2 stream, later HTTP/3 stream)
 * does for the request it carries. Phases, modules and filters only ever go
 * through these, so they never ask which protocol they are on.
 */
typedef struct {
    const char *name;
    /* The protocol's own rules on a complete head, called by
     * sws_http_process_request_headers once the server is chosen and
     * Content-Length parsed: how the body is framed (h1: Transfer-Encoding;
     * h2: DATA frames until END_STREAM), keep-alive, the request line of
     * h2's pseudo-header fields. SWS_OK or an HTTP status. */
    sws_int_t (*process_head)(sws_http_request_t *r);
    /* Queue the response head built from r's response fields. */
    sws_int_t (*send_header)(sws_http_request_t *r);
    /* Queue and send body data (NULL: just flush what is queued). Returns
     * SWS_OK (all sent), SWS_AGAIN (rest pending), SWS_ERROR. */
    sws_int_t (*send_body)(sws_http_request_t *r, sws_chain_t *in);
    /* The response is produced (SWS_OK: send what is queued, then end it)
     * or failed (SWS_ERROR: cut it, so that the client cannot take a part
     * for the whole). Transport only: once the client's side is over (now
     * or later) the protocol says so with sws_http_request_ended, and the
     * core logs and releases the request (sws_http_request_end.c). */
    void      (*finish)(sws_http_request_t *r, sws_int_t rc);
    /* The core is done with r (both sides ended, logged): the protocol
     * lets go of what carried it. h1: drop an unread body, then keep the
     * connection for the next request or close it (at once when r->cut);
     * h2: free the stream. r is gone after it. */
    void      (*release)(sws_http_request_t *r);
    /* Start reading the body into r->body (created, not finished), then call
     * r->body->done: SWS_OK (done called now or later) or an HTTP status /
     * SWS_ERROR. With r->body->stream set, only get ready: the consumer pulls the data
     * with read_body_data, and body->done is called when some may be there. */
    sws_int_t (*read_body)(sws_http_request_t *r);
    /* Streaming: copy up to size dechunked body bytes into buf (*n). SWS_OK
     * (*n > 0), SWS_DONE (body complete, *n may be > 0), SWS_AGAIN (*n is
     * 0), or an HTTP status / SWS_ERROR. */
    sws_int_t (*read_body_data)(sws_http_request_t *r, u_char *buf, size_t size, size_t *n);
    /* Drop the body (r->body created with discard set, not finished): what
     * arrived now, the rest as it comes. SWS_OK, or an HTTP status when the
     * body is already known to be malformed or too large. */
    sws_int_t (*discard_body)(sws_http_request_t *r);
    /* Bytes of the response sent so far, head included ($bytes_sent). */
    off_t     (*bytes_sent)(sws_http_request_t *r);
    /* Queue (and start sending) an interim 1xx response; see
     * sws_http_send_interim, which has checked when one may go. */
    sws_int_t (*send_interim)(sws_http_request_t *r, sws_uint_t status,
                              const sws_http_header_t *h, sws_uint_t n);
    /* Has the client gone away while the response is produced (asked when
     * r->read_event_handler runs)? h1: its connection was closed or reset;
     * h2: the stream was reset or the connection is ending. */
    int       (*aborted)(sws_http_request_t *r);
    /* Upgrade: once the 101 head is queued, the client side becomes a byte
     * tunnel, *bytes (its recv and send_chain; an HTTP/1 connection
     * itself, a stream of a multiplexed one). *pending gets what the
     * client sent after the request (consumed), and from then on every
     * event of the byte stream calls r->read_event_handler. SWS_OK, or
     * SWS_DECLINED when the protocol cannot (h2: no extended CONNECT).
     * pending NULL: only say whether it could. */
    sws_int_t (*tunnel)(sws_http_request_t *r, sws_str_t *pending, sws_connection_t **bytes);
    /* Can the file data of the response go with sendfile() (h1 on a plain
     * socket or kernel TLS)? h2 copies DATA frames from files: no. */
    int       (*sendfile)(sws_http_request_t *r);
    /* A fixed response formatted at configuration time, in one write
     * (sws_http_fixed.c, when no filter may change it), or NULL: the
     * protocol has no such fast path (h2). type: a Content-Type that
     * goes before the fields (the URI's, of a typed response), or NULL. */
    sws_int_t (*send_fixed)(sws_http_request_t *r, const sws_str_t *status_line,
                            const sws_str_t *type, const sws_str_t *fields,
                            const sws_str_t *body, sws_uint_t status);
} sws_http_proto_t;

/* ---- the request ---- */

/* The value of an indexed variable in one request (sws_http_variables.c). */
typedef struct {
    sws_str_t   value;
    unsigned    valid:1;       /* written (set), or evaluated (map) */
    unsigned    busy:1;        /* being evaluated: reading it now is a cycle */
} sws_http_var_slot_t;

typedef struct {
    sws_chain_t                 *bufs;       /* the body read so far */
    sws_chain_t                **last;
    off_t                        rest;       /* content-length bytes left, -1 chunked */
    off_t                        received;
    sws_http_chunked_t           chunked;
    sws_http_event_handler_pt    done;
    sws_buf_t                   *buf;        /* current buffer being filled */
    sws_buf_t                   *rbuf;       /* h1: body bytes from the socket */
    u_char                      *sink;       /* streaming: where data goes now */
    u_char                      *sink_end;
    /* Beyond client_body_buffer_size the body goes to a temporary file:
     * bufs is then one file buffer (file_link) and, while reading, the
     * memory buffer being filled (buf, kept as spare once written out). */
    void                        *file;       /* sws_http_temp_file_t */
    sws_chain_t                 *file_link;
    sws_buf_t                   *spare;
    sws_http_event_handler_pt    read_done;  /* sws_http_read_body's caller */
    unsigned                     discard:1;
    unsigned                     finished:1;
    unsigned                     stream:1;   /* pulled by the consumer */
    unsigned                     timedout:1;
} sws_http_request_body_t;

/* Bits of a request's buffered mark (filter_buffered). */
#define SWS_HTTP_BUFFERED_BITS  8

struct sws_http_request_s {
    sws_connection_t          *connection;
    sws_http_session_t        *session;        /* the client session */
    /* The protocol's state for this request, known only to r->proto: the
     * HTTP/1 connection, an HTTP/2 stream. */
    void                      *stream;
    sws_pool_t                *pool;
    sws_log_t                 *log;
    const sws_http_proto_t    *proto;

    void                     **main_conf;
    void                     **srv_conf;
    void                     **loc_conf;
    void                     **ctx;

    /* request line */
    sws_uint_t                 method;
    sws_str_t                  method_name;
    sws_uint_t                 http_version;
    sws_str_t                  request_line;   /* HTTP/2, HTTP/3: made when asked for
                                                * (sws_http_request_line) */
    sws_str_t                  line_method;    /* HTTP/2, HTTP/3: the method it shows */
    sws_str_t                  unparsed_uri;
    sws_str_t                  raw_path;       /* the target's path, still encoded */
    sws_str_t                  uri;
    sws_str_t                  args;
    sws_str_t                  exten;
    sws_str_t                  host;           /* lower-case, no port */
    sws_str_t                  schema;         /* "http" or "https" */
    sws_str_t                  authority;      /* without Host: the target's, as sent */

    /* the captures of the last regex match ($1..$9, named groups):
     * offsets into captures_data, see sws_http_regex_exec() */
    const sws_regex_t         *captures_re;
    const u_char              *captures_data;
    size_t                    *captures;
    sws_uint_t                 ncaptures;      /* pairs set */
    sws_uint_t                 captures_size;  /* pairs allocated */

    /* the values of the indexed variables (set's, and the module variables
     * evaluated once per request: map), cmcf->nvariables of them; NULL
     * until one is used. Kept across internal redirects, as in nginx. */
    sws_http_var_slot_t       *vars;

    /* request headers; names lower-case */
    sws_array_t                headers_in;
    sws_str_t                 *h_host;
    sws_str_t                 *h_connection;
    sws_str_t                 *h_content_length;
    sws_str_t                 *h_transfer_encoding;
    sws_str_t                 *h_expect;
    sws_str_t                 *h_request_id;
    sws_str_t                 *h_authorization;
    off_t                      content_length_n;   /* -1 none */
    /* The subrequests r started that still run (sws_http_subrequest.c;
     * NULL for requests that never start one). A subrequest's own record
     * is its r->stream (r->proto is sws_http_subreq_proto). */
    struct sws_http_subreqs_s *subreqs;

    /* response */
    sws_uint_t                 status;
    sws_uint_t                 err_status;     /* error_page: the status to send */
    sws_array_t                headers_out;
    /* Trailer fields (sws_http_trailer_out_add), sent after the body:
     * HTTP/1.1 chunked, HTTP/2 a HEADERS frame; NULL: none. */
    sws_array_t               *trailers_out;
    /* The challenges of a 401 (WWW-Authenticate), kept for the page an
     * error_page serves in its place; NULL: none. */
    sws_array_t               *err_headers_out;
    sws_uint_t                 access_code;    /* satisfy any: 401/403 so far */
    off_t                      out_content_length; /* -1 unknown */
    sws_str_t                  content_type;
    time_t                     last_modified;
    /* The response's own Date (a stored response's, exactly an HTTP date),
     * written instead of the time now; len 0: now. */
    sws_str_t                  date;
    sws_str_t                  etag;
    sws_str_t                  location;
    sws_str_t                  request_id;
    u_char                     request_id_buf[32];
    size_t                     header_size;        /* bytes of the response head */

    sws_http_request_body_t   *body;
    sws_chain_t               *out;                /* queued, not yet sent */
    sws_chain_t               *out_free;           /* sent framing, for reuse */

    /* Hooks of a handler that produces the response over time (upstream):
     * read: something happened on the client side while the response is
     * being produced (input, or the client went away); write: queued output
     * was (partly) sent and the request is not finished. */
    sws_http_event_handler_pt  read_event_handler;
    sws_http_event_handler_pt  write_event_handler;
    void                      *upstream;           /* sws_http_upstream_t */
    void                      *timer;              /* sws_http_set_timer's */

    sws_uint_t                 phase_handler;  /* a step of phase_engine */
    const struct sws_http_phase_engine_s *phase_engine;
    sws_uint_t                 uri_changes;
    sws_msec_t                 start_msec;
    time_t                     start_sec;
    off_t                      sent_start;         /* c->sent at request start */
    off_t                      head_length;        /* bytes of the request head ($request_length) */

    /* The client as this request sees it: the connection's peer, or the
     * address realip found (sws_http_set_remote_addr). $remote_addr, the
     * access log, allow/deny and limit keys read these. */
    struct sockaddr           *sockaddr;
    socklen_t                  socklen;
    /* A body of unknown length follows: chunked (h1), or DATA frames
     * without content-length (h2). (Here, beside socklen: a word of its
     * own where there was room.) */
    unsigned                   chunked_in:1;
    sws_str_t                  addr_text;

    /* limit_rate (bytes/s of the response, 0: none) and limit_rate_after,
     * taken from the location when the body starts, unless a module set
     * them first (sws_http_set_limit_rate: rewrite's set $limit_rate). */
    off_t                      limit_rate;
    off_t                      limit_rate_after;
    sws_event_t               *sleep_event;        /* sws_http_sleep */

    unsigned                   complex_uri:1;
    unsigned                   encoded_slash:1;    /* the client's path has %2F */
    unsigned                   asterisk:1;     /* OPTIONS * */
    unsigned                   internal:1;
    unsigned                   args_set:1;      /* "set $args" changed r->args */
    unsigned                   header_sent:1;
    unsigned                   header_only:1;
    unsigned                   allow_ranges:1;
    unsigned                   single_range:1;     /* ... one range at most */
    unsigned                   location_as_is:1;   /* an upstream's (or a cached)
                                                      Location: not made absolute */
    unsigned                   chunked_out:1;
    unsigned                   keepalive:1;
    unsigned                   expect_continue:1;
    /* the head has If-Match or If-None-Match (sws_http_request_field):
     * a fixed response takes the path with the conditional check */
    unsigned                   etag_conditional:1;
    /* ... If-Modified-Since or If-Unmodified-Since; and a Range field (the
     * not-modified and range filters look for them only then) */
    unsigned                   date_conditional:1;
    unsigned                   range_in:1;
    unsigned                   continue_sent:1;
    unsigned                   lingering_close:1;
    unsigned                   done:1;
    unsigned                   logged:1;
    unsigned                   error_page:1;
    unsigned                   stat_writing:1;  /* counted as writing, no longer reading */
    unsigned                   last_sent:1;
    unsigned                   reading_body:1;
    unsigned                   filter_finalize:1;
    unsigned                   upgrade:1;          /* a 101: "Connection: upgrade" */
    unsigned                   ssl_early:1;        /* head came in TLS early data,
                                                    * before the handshake ended */
    /* A body filter holds data until output is sent (sws_http_set_buffered):
     * the writers run the filters again, and the response is not over.
     * Bit 0 is sws_http_set_buffered()'s, the others the body transforms'
     * (sws_http_transform.c), one each, so that several in one chain do
     * not clear each other's mark. */
    unsigned                   filter_buffered:SWS_HTTP_BUFFERED_BITS;
    unsigned                   transforms:4;       /* body transforms made */
    /* The response varies on Accept-Encoding for a filter that acted or
     * not by it (gunzip): gzip_vary says so (sws_http_set_gzip_vary). */
    unsigned                   gzip_vary:1;
    /* Trailer fields will follow the body (sws_http_expect_trailers):
     * HTTP/1.1 frames it chunked even when its length is known. */
    unsigned                   expect_trailers:1;
    unsigned                   limit_rate_set:1;
    unsigned                   limit_rate_after_set:1;
    unsigned                   pipelined:1;        /* its head was read with the last one's ($pipe) */
    /* The client has its whole response, and the request goes on for the
     * server alone (a cache update, sws_http_upstream_cache_background):
     * the protocol keeps it until it is finalized, past its stream's end. */
    unsigned                   background:1;
    /* The client's side is over (sws_http_request_ended): logged; cut:
     * the response did not reach it whole. */
    unsigned                   client_ended:1;
    unsigned                   cut:1;
    /* r waits for the end of a background subrequest (a mirror) before
     * it is released: its client has the response. */
    unsigned                   subreq_wait:1;
    /* last_modified is an end-to-end field the producer passed on (an
     * upstream's, a stored response's): it goes out whatever the status,
     * as nginx's copied field; one the server made (a file's) goes out
     * with 200, 206 and 304 only. */
    unsigned                   last_modified_passed:1;
    /* r's response goes on in OUTPUT subrequests (sws_http_subrequest.c):
     * output_subreqs once one was started; output_held while r is
     * finalized but its response waits for the last of them. */
    unsigned                   output_subreqs:1;
    unsigned                   output_held:1;
    /* Out of stub_status's counters when the request's pool goes: the
     * pool's cleanup record, carried here rather than allocated. */
    sws_pool_cleanup_t         uncount;
};

#define SWS_HTTP_TOO_EARLY  425                    /* RFC 8470 */
#define SWS_HTTP_MAX_HEADERS  100                  /* fields in a request head */
#define SWS_HTTP_RANGE_MAX    16                   /* most ranges of a Range (max_ranges) */
#define SWS_HTTP_LINGERING_OFF     0
#define SWS_HTTP_LINGERING_ON      1
#define SWS_HTTP_LINGERING_ALWAYS  2
#define SWS_HTTP_KEEPALIVE_DISABLE_MSIE6   0x1
#define SWS_HTTP_KEEPALIVE_DISABLE_SAFARI  0x2

/* ---- core functions shared between the http files ---- */

/* sws_http_limit_except.c: the directive; the location a request in clcf
 * is served by: the limit_except block's when its method is not listed. */
char *sws_http_core_limit_except(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

static inline sws_http_core_loc_conf_t *
sws_http_limit_except(sws_http_request_t *r, sws_http_core_loc_conf_t *clcf)
{
    const sws_str_t  *names;
    sws_uint_t        i;

    if (clcf->limit_except_loc == NULL || (r->method & clcf->limit_except)) {
        return clcf;
    }
    if (r->method == SWS_HTTP_UNKNOWN && clcf->limit_except_names) {
        names = clcf->limit_except_names->elts;
        for (i = 0; i < clcf->limit_except_names->nelts; i++) {
            if (names[i].len == r->method_name.len
                && memcmp(names[i].data, r->method_name.data, names[i].len) == 0)
            {
                return clcf;
            }
        }
    }
    return clcf->limit_except_loc;
}

/* sws_http_session.c: a new client connection becomes a session (then
 * TLS, HTTP/1 or HTTP/2); closing one whatever its protocol. */
void      sws_http_init_connection(sws_connection_t *c);
void      sws_http_close_connection(sws_connection_t *c);
/* After the PROXY header (if any): TLS or HTTP/1 on the connection. */
void      sws_http_session_start(sws_connection_t *c);
/* sws_http_proxy_protocol.c: read the PROXY header of a new connection
 * ("listen ... proxy_protocol"), then sws_http_session_start. */
void      sws_http_proxy_protocol_start(sws_connection_t *c);
/* sws_http_listen.c: the listening addresses of the servers (cmcf->addrs)
 * and their sockets. */
sws_int_t sws_http_build_addrs(sws_conf_t *cf, sws_http_core_main_conf_t *cmcf);
/* sws_http_phases.c; the log phase runs from sws_http_request_ended only. */
void      sws_http_core_run_phases(sws_http_request_t *r);
void      sws_http_log_request(sws_http_request_t *r);
/* sws_http_request_end.c: the protocol's word that the client's side of r
 * is over: its response went out whole (SWS_OK), or never will (SWS_ERROR:
 * cut, reset, the client gone; an HTTP status: the client left while
 * sending the head, logged with that status). The core sets 499 where the
 * client left a request being served, logs r and, once r is finalized
 * too, calls r->proto->release (r is gone then): SWS_OK. SWS_AGAIN: a
 * background request goes on; sws_http_finalize releases it later. */
sws_int_t sws_http_request_ended_other(sws_http_request_t *r, sws_int_t rc);

static inline sws_int_t
sws_http_request_ended(sws_http_request_t *r, sws_int_t rc)
{
    /* Inline, the common case: a response sent whole, then at once the
     * log (a response has a status) and the release. */
    if (sws_unlikely(rc != SWS_OK || r->background || r->subreq_wait)) {
        return sws_http_request_ended_other(r, rc);
    }
    sws_http_log_request(r);
    r->done = 1;
    r->proto->release(r);
    return SWS_OK;
}
sws_int_t sws_http_phase_engine_init(sws_conf_t *cf, sws_http_core_main_conf_t *cmcf);
/* Run the phases of r's location from the start of phase (POST_READ,
 * SERVER_REWRITE, FIND_LOCATION or REWRITE). */
void      sws_http_run_phases_from(sws_http_request_t *r, sws_http_phase_t phase);
/* Is phase one of the core's phases (in its order of phases)? */
int       sws_http_phase_known(sws_http_phase_t phase);
/* sws_http_request.c: a new request of session s, served (until the Host
 * is known) by the session's server, allocated in pool (which the caller
 * owns). */
sws_http_request_t *sws_http_create_request(sws_http_session_t *s, sws_pool_t *pool);
void sws_http_request_count_head(sws_http_request_t *r);   /* stub_status: head complete */
/* (sws_http_request_head.h: sws_http_request_header, for every field.) */
/* sws_http_request_fields.c: heads made of fields (HTTP/2, HTTP/3). The
 * request line HTTP/1 would have sent for method and path, parsed as
 * HTTP/1's; $request shows it with version ("3.0"), made when it is
 * asked for (sws_http_request_line): SWS_OK or an HTTP status. */
sws_int_t sws_http_request_line_of_fields(sws_http_request_t *r, const sws_str_t *method,
    const sws_str_t *path, const char *version);
/* The request line ($request): HTTP/1's as it came; HTTP/2's and HTTP/3's
 * made of the method and target they sent on the first call (most requests
 * never show it). Empty for CONNECT and a request without one. */
const sws_str_t *sws_http_request_line(sws_http_request_t *r);
/* What HTTP/2 and HTTP/3 make of a head of fields once it is whole: the
 * refusals noted while reading it (too large: 431; a field's status), the
 * cookie crumbs joined, the request line from method and path (CONNECT has
 * none), and a body of unknown length if more than the head will come
 * (in_closed 0). SWS_OK or an HTTP status. */
sws_int_t sws_http_request_head_of_fields(sws_http_request_t *r, const sws_str_t *method,
    const sws_str_t *path, const sws_array_t *cookies, const char *version,
    int too_large, sws_uint_t field_error, int in_closed);
/* The crumbs of a cookie (sws_str_t) as one Cookie field of r: SWS_OK or
 * SWS_ERROR. */
sws_int_t sws_http_request_cookie_join(sws_http_request_t *r, const sws_array_t *crumbs);
/* Is name (any case) one of HTTP/1's connection fields, which HTTP/2 and
 * HTTP/3 responses do not carry? */
int       sws_http_connection_field(const sws_str_t *name);
/* sws_http_output_queue.c: r->out of a protocol that frames the body
 * itself. Queue in's data buffers (*last set at last_buf): SWS_OK or
 * SWS_ERROR. */
sws_int_t sws_http_out_queue(sws_http_request_t *r, sws_chain_t *in, unsigned *last);
/* Bytes queued, counted up to max at least. */
size_t    sws_http_out_size(sws_http_request_t *r, size_t max);
/* Copy the first n queued bytes (n <= what is queued) to p and take them
 * off: SWS_OK, or SWS_ERROR (a file read failed, logged). */
sws_int_t sws_http_out_take(sws_http_request_t *r, u_char *p, size_t n);
/* Copy up to size bytes from a chain of memory buffers, advancing *chain
 * past the buffers emptied; returns the bytes copied. */
size_t    sws_http_chain_copy_out(sws_chain_t **chain, u_char *buf, size_t size);
/* sws_http_request_body.c: the protocol-independent side of bodies. */
sws_http_request_body_t *sws_http_body_create(sws_http_request_t *r);
/* Append n body bytes to r->body's buffers (one of client_body_buffer_size,
 * written to a temporary file when more comes), or to the streaming
 * consumer's buffer (rb->sink: n must fit there);
 * SWS_OK or SWS_HTTP_INTERNAL_SERVER_ERROR. */
sws_int_t sws_http_body_store(sws_http_request_t *r, const u_char *p, size_t n);
/* sws_http_request.c: the head is complete (any protocol; r->host is the
 * target's authority if it had one: absolute-form, :authority): the rules
 * of RFC 9110 every protocol shares (authority and Host, virtual server,
 * Content-Length, Expect, CONNECT, OPTIONS *), with r->proto->process_head
 * for the protocol's own. SWS_OK: the phases may run; SWS_DONE: OPTIONS *
 * (answered by sws_http_start_request); else an HTTP status. */
sws_int_t sws_http_process_request_headers(sws_http_request_t *r);
/* Process the head and go on: run the phases, or answer OPTIONS * or the
 * error. The one request start of all protocols. */
void      sws_http_start_request(sws_http_request_t *r);
sws_int_t sws_http_find_virtual_server(sws_http_request_t *r, sws_http_addr_t *addr);
/* The server for a lower-case host name on addr (default if none). */
sws_http_core_srv_conf_t *sws_http_find_server(sws_http_addr_t *addr, const sws_str_t *host);
/* The same; *re: the regex name that chose it (for its captures), or NULL. */
sws_http_core_srv_conf_t *sws_http_find_server_re(sws_http_addr_t *addr,
    const sws_str_t *host, const sws_regex_t **re);
sws_int_t sws_http_set_uri(sws_http_request_t *r, const sws_str_t *raw_path, int complex);
/* Validate a Host (or absolute-form authority): lower-cased, port removed. */
sws_int_t sws_http_validate_host(sws_http_request_t *r, const sws_str_t *in, sws_str_t *out);
void      sws_http_handler(sws_http_request_t *r);
sws_int_t sws_http_update_location(sws_http_request_t *r);
/* sws_http_special.c: generated error responses */
sws_int_t sws_http_special_response(sws_http_request_t *r, sws_uint_t status);
const sws_str_t *sws_http_status_line(sws_uint_t status);
/* sws_http_not_modified_filter.c: conditional requests decided (the
 * response may become a 304 or a 412) before the header filters run.
 * SWS_OK or SWS_ERROR. */
sws_int_t sws_http_not_modified_check(sws_http_request_t *r);
/* sws_http_response.c: the ends of the filter chains */
sws_int_t sws_http_header_filter_init(sws_conf_t *cf);
extern sws_http_header_filter_pt sws_http_top_header_filter;
extern sws_http_body_filter_pt   sws_http_top_body_filter;
/* The protocol sent some output: filters that hold data (filter_buffered)
 * go on, through the whole body filter chain, with no new input. */
sws_int_t sws_http_output_resume(sws_http_request_t *r);
extern sws_http_header_filter_pt sws_http_builtin_top_header_filter;
extern sws_http_body_filter_pt   sws_http_builtin_top_body_filter;
/* The postconfiguration loop (sws_http_module.c): a module's turn starts
 * and ends; at its end, filters it inserted are recorded with the acts()
 * it gave (sws_http_filters_act_when), or as acting on everything. */
void sws_http_fixed_filters_reset(void);
void sws_http_fixed_module_begin(void);
sws_int_t sws_http_fixed_module_end(sws_conf_t *cf, int inserted);
/* A built-in module's turn ends: the acts() it gave (sws_http_filters_act_when,
 * for a filter it installs only where configured) are asked of every fixed
 * response too. */
sws_int_t sws_http_fixed_builtin_end(sws_conf_t *cf);
/* sws_http_stored.c: a received or stored header put on the response
 * (Content-Type, ETag, Last-Modified, Location set as such); lcname: the
 * name in lower case when known (NULL: compared ignoring case) */
sws_int_t sws_http_response_header_set(sws_http_request_t *r, const sws_str_t *name,
    const u_char *lcname, const sws_str_t *value);
/* sws_http_subrequest.c: 1 while r is kept for a background subrequest
 * that still runs (r->subreq_wait); r is then released when the last
 * one ends. The protocol under every subrequest. */
int       sws_http_subrequest_waits(sws_http_request_t *r);
/* sws_http_finalize of a request whose response goes on in OUTPUT
 * subrequests (r->output_subreqs): 1 when it is held until the last ends
 * (the core finalizes it again then), 0 when its end was sent (go on). */
int       sws_http_subrequest_output_hold(sws_http_request_t *r, sws_int_t rc);
extern const sws_http_proto_t sws_http_subreq_proto;
#define sws_http_is_subrequest(r)  ((r)->proto == &sws_http_subreq_proto)
/* sws_http_request_id.c */
void      sws_http_request_id_init(sws_http_request_t *r);
/* sws_http_variables.c (access log) */

#endif
