/*
 * The upstream framework: what proxy, fastcgi, node and python share. A
 * protocol module supplies how to write a request and how to read a
 * response (sws_http_upstream_proto_t); the framework owns the rest:
 * choosing a server of an upstream { } group, connecting, keep-alive
 * pools, timeouts, retries on the next server, passive and active health,
 * streaming both ways with back-pressure, the 502/504 answers, metrics.
 *
 * A content handler does:
 *
 *     u = sws_http_upstream_create(r, &my_proto, my_ctx, lcf->upstream);
 *     return sws_http_upstream_start(r);
 *
 * and the framework finishes the request itself.
 */
#ifndef SWS_UPSTREAM_H
#define SWS_UPSTREAM_H

#include <scalws/sws_types.h>
#include <scalws/sws_buf.h>
#include <scalws/sws_conf.h>
#include <scalws/sws_http.h>

typedef struct sws_http_upstream_s       sws_http_upstream_t;
typedef struct sws_http_upstream_conf_s  sws_http_upstream_conf_t;

/* What process_header and input_filter return for a response that is not
 * valid: a 502 (or the next server with "next_upstream invalid_header"). */
#define SWS_UPSTREAM_INVALID  -100

/*
 * Response body bytes, decoded in place. The filter reads the raw bytes
 * [pos, last) the upstream sent, writes the body bytes they carry at out
 * (out <= pos always: decoding only removes framing, so a memmove is
 * enough) and advances pos and out. Returns:
 *   SWS_OK      all input consumed (pos == last), more is expected;
 *   SWS_DONE    the body is complete; pos is after its end (bytes left
 *               after it mean the connection cannot be reused);
 *   SWS_UPSTREAM_INVALID / SWS_ERROR  malformed, or cut (eof too early).
 * With eof set the upstream closed the connection (pos == last): SWS_DONE
 * if that ends the body (a response delimited by the close), else an error.
 */
typedef struct {
    u_char     *pos;
    u_char     *last;
    u_char     *out;
    unsigned    eof:1;
} sws_http_upstream_input_t;

typedef struct {
    const char  *name;           /* "proxy": for log messages */

    /* The request to send, in pool memory, into *out. Called once (a retry
     * resends the same bytes); the body, when buffered, is in
     * sws_http_request_body(r) and belongs in the chain too (see
     * sws_http_upstream_body_mode). */
    sws_int_t  (*create_request)(sws_http_request_t *r, void *ctx, sws_chain_t **out);

    /* Another attempt starts (the next server): reset the response parser. */
    void       (*reinit)(sws_http_request_t *r, void *ctx);

    /* Parse the response head from [b->pos, b->last), consuming complete
     * units (lines) and advancing b->pos; nothing kept may point into b
     * (copy what is needed into the pool). Set the response on r through
     * sws_http_set_status and sws_http_upstream_header. Returns SWS_AGAIN
     * (need more), SWS_OK (head complete: an interim 1xx is skipped by the
     * protocol itself), SWS_UPSTREAM_INVALID or SWS_ERROR. */
    sws_int_t  (*process_header)(sws_http_request_t *r, void *ctx, sws_buf_t *b);

    /* The response body (see sws_http_upstream_input_t). Called once right
     * after the head, possibly with no bytes (pos == last): a response
     * without a body answers SWS_DONE there. */
    sws_int_t  (*input_filter)(sws_http_request_t *r, void *ctx,
                               sws_http_upstream_input_t *in);

    /* Streaming request bodies (sws_http_upstream_body_mode() says
     * SWS_UPSTREAM_BODY_STREAM): the framework puts body bytes at
     * [b->pos, b->last) with at least frame_head bytes free before pos and
     * frame_tail after last; frame_body moves pos back and last forward
     * over its framing. last: the body ends (the data may be empty).
     * NULL: the bytes go as they are. */
    size_t       frame_head;
    size_t       frame_tail;
    void       (*frame_body)(sws_http_request_t *r, void *ctx, sws_buf_t *b, int last);

    /* The request is over (rc: the status sent or SWS_OK/SWS_ERROR). May be NULL. */
    void       (*finalize)(sws_http_request_t *r, void *ctx, sws_int_t rc);
} sws_http_upstream_proto_t;

/* ---- the request ------------------------------------------------------ */

/* Attach an upstream to r (before sws_http_upstream_start). conf is the
 * location's (from sws_http_upstream_conf_create + a target). */
sws_http_upstream_t *sws_http_upstream_create(sws_http_request_t *r,
    const sws_http_upstream_proto_t *proto, void *ctx, sws_http_upstream_conf_t *conf);
/* Read the body as configured, connect, send, stream the response back.
 * Returns what the content handler returns (SWS_DONE). */
sws_int_t sws_http_upstream_start(sws_http_request_t *r);
sws_http_upstream_t *sws_http_upstream_get(sws_http_request_t *r);

/* How the request body goes (decided at start, from the configuration
 * and the request; create_request asks): */
#define SWS_UPSTREAM_BODY_NONE      0   /* no body, or not passed */
#define SWS_UPSTREAM_BODY_BUFFERED  1   /* whole, in sws_http_request_body() */
#define SWS_UPSTREAM_BODY_STREAM    2   /* after the head, through frame_body */
sws_uint_t sws_http_upstream_body_mode(sws_http_upstream_t *u);

/*
 * Before start, for a target known only per request (conf has none, e.g.
 * "proxy_pass http://$backend"): addr is the name of an upstream the
 * configuration knows (an upstream { } block or another proxy_pass's
 * "host[:port]"), else "a.b.c.d[:port]", "[v6][:port]" or "unix:/path";
 * default_port for an address without one. Names that would need DNS are
 * refused (there is no resolver; a worker never blocks on one). SWS_OK;
 * SWS_DECLINED (logged: answer 502); SWS_ERROR (memory: 500).
 */
sws_int_t  sws_http_upstream_set_target(sws_http_upstream_t *u, const sws_str_t *addr,
    sws_uint_t default_port);

/*
 * Before start: this request goes over TLS (its location called
 * sws_http_upstream_conf_set_ssl). host: the target's host as written (a
 * ":port" is dropped), the default name for SNI and verification
 * (ssl_name overrides it; no SNI for an IP address). The handshake is
 * part of connecting (connect_timeout); kept connections keep their TLS
 * state and only serve requests of the same settings and name. SWS_OK, or
 * SWS_ERROR (no TLS context here: 500, logged).
 */
sws_int_t  sws_http_upstream_set_ssl(sws_http_upstream_t *u, const sws_str_t *host);
/* Before start: force buffering (e.g. the backend cannot take a body of
 * unknown length) or pass no body at all. */
void       sws_http_upstream_set_request_buffering(sws_http_upstream_t *u, int on);
void       sws_http_upstream_set_pass_body(sws_http_upstream_t *u, int on);
/* Before start: a streamed body is pulled in pieces of at most max bytes
 * (a protocol whose frames have a size limit: FastCGI records carry 65535
 * bytes at most); 0: client_body_buffer_size, the default. */
void       sws_http_upstream_set_body_piece(sws_http_upstream_t *u, size_t max);
/*
 * From process_header: the response is a local redirect (CGI, RFC 3875
 * 6.2.2: a Location that is a path, without a status). Once the head is
 * complete the server's connection is let go and the request starts again
 * at uri (args: the query, NULL for none) as sws_http_internal_redirect()
 * does; nothing of this response reaches the client. Copied. SWS_OK or
 * SWS_ERROR.
 */
sws_int_t  sws_http_upstream_set_redirect(sws_http_upstream_t *u, const sws_str_t *uri,
    const sws_str_t *args);
/* The length of the body as it will be sent: -1 if unknown (streamed
 * chunked), 0 if none. */
off_t      sws_http_upstream_body_length(sws_http_upstream_t *u);

/* ABI 1.8. For create_request, with a buffered body (else nothing is
 * done): copies of the body's buffers (memory or file) linked at *tail, as
 * they are. Returns the new tail, NULL on error (memory). */
sws_chain_t **sws_http_upstream_body_chain(sws_http_upstream_t *u, sws_chain_t **tail);

/*
 * ABI 1.10: a body the server passes as a file. At configuration time,
 * sws_http_upstream_conf_set_recv_fds(conf): the requests of conf read
 * their unix-socket connections with recvmsg() and keep the descriptors
 * the server passes with its bytes (SCM_RIGHTS; at most 2 not yet taken,
 * more are closed); sws_http_upstream_take_fd(u) gives the oldest one
 * (the caller's from then on), or -1. Those not taken are closed with the
 * connection. From input_filter, sws_http_upstream_body_file(u, in, fd,
 * offset, length): the body goes on with length bytes of file fd from
 * offset, sent from the file (sendfile where the connection can), after
 * what the filter decoded at in->out so far; fd belongs to the request
 * from the call on, whatever it returns, and is closed when the request
 * ends. A cache that stores the response reads the bytes. SWS_OK,
 * SWS_DECLINED (the response is being written to a temporary file:
 * buffering's overflow; the order could not be kept) or SWS_ERROR.
 */
void       sws_http_upstream_conf_set_recv_fds(sws_http_upstream_conf_t *conf);
int        sws_http_upstream_take_fd(sws_http_upstream_t *u);
sws_int_t  sws_http_upstream_body_file(sws_http_upstream_t *u, sws_http_upstream_input_t *in,
    int fd, off_t offset, off_t length);

/* Whether the upstream keeps connections (keepalive > 0): if not, the
 * protocol should ask the server to close ("Connection: close"). */
int        sws_http_upstream_can_keepalive(sws_http_upstream_t *u);
/* From process_header: the connection may be reused after this response. */
void       sws_http_upstream_set_keepalive(sws_http_upstream_t *u, int on);
/* From process_header: a 101 answered an upgrade: tunnel the bytes. */
void       sws_http_upstream_set_upgrade(sws_http_upstream_t *u);
/* Whether the client asked for an upgrade the location allows. */
int        sws_http_upstream_upgrade_allowed(sws_http_upstream_t *u);

/*
 * From process_header: a response header (name as received, lcname its
 * lower-case form, same length; value). Applies the hide/pass rules and
 * sets Content-Type, Last-Modified, ETag and Location on r; the others are
 * added as they are. Framing headers (Content-Length, Transfer-Encoding,
 * Connection, Keep-Alive ...) are the protocol's: don't pass them here.
 * Strings must live as long as the request. SWS_OK or SWS_ERROR.
 */
sws_int_t  sws_http_upstream_header(sws_http_upstream_t *u, const sws_str_t *name,
    const u_char *lcname, const sws_str_t *value);

/*
 * $upstream_http_NAME: the headers of the final response as the server
 * sent them. sws_http_upstream_header records those it is given; a
 * protocol records the ones it does not pass there (framing headers:
 * Content-Length, Transfer-Encoding, Connection ...) with this, and, for a
 * header whose value it changes before passing it on (Location rewritten),
 * calls this with the original just before sws_http_upstream_header (which
 * then records nothing). Copied (value may point into the head buffer);
 * nothing is done when the configuration uses no $upstream_http_*.
 * SWS_OK or SWS_ERROR.
 */
sws_int_t  sws_http_upstream_header_received(sws_http_upstream_t *u, const sws_str_t *name,
    const sws_str_t *value);

/* The upstream's name as configured ("backend", "127.0.0.1:8080",
 * "unix:/tmp/app.sock"), and whether it names a unix socket. */
const sws_str_t *sws_http_upstream_name(sws_http_upstream_conf_t *conf);
int              sws_http_upstream_is_unix(sws_http_upstream_conf_t *conf);
/* The server of the current attempt ("127.0.0.1:8080"), empty before. */
const sws_str_t *sws_http_upstream_peer_name(sws_http_upstream_t *u);

/* ---- HTTP/1.x to the servers: the client protocol, for any module ------ */

/*
 * What proxy speaks, for the modules that talk HTTP/1 to their servers
 * too (node, python): the request head built from the client's request,
 * the response head parsed, the body's framing decoded. A module's proto
 * table takes sws_http_upstream_h1_reinit, _process_header, _input_filter,
 * _frame_body and the frame sizes as they are, and its create_request
 * calls sws_http_upstream_h1_create_request with what is its own.
 *
 * The request: the request line, Host, then the module's fields and text,
 * then Connection ("close" for HTTP/1.0 or a group without keep-alive,
 * "upgrade" with the client's Upgrade when upgrade is set), the body's
 * framing (Content-Length, or chunked for a streamed body of unknown
 * length), a cache's revalidation fields (sws_http_upstream_cache_request),
 * then the client's fields except: the hop-by-hop ones (RFC 9110 7.6.1:
 * Connection and every field it names, Keep-Alive, Proxy-Connection, TE,
 * Transfer-Encoding, Upgrade; also Trailer and Proxy-Authorization), Host,
 * Content-Length, Expect (answered here), the conditional and range
 * fields when a cache takes the response, and those the module replaces.
 * Zero the struct and fill what is needed.
 */
typedef struct {
    sws_str_t                 method;     /* empty: the client's */
    sws_str_t                 target;     /* the request-target ("/x?y") */
    sws_str_t                 host;       /* empty: no Host line from here */
    const sws_http_header_t  *fields;     /* the module's (an empty value: not sent) */
    sws_uint_t                nfields;
    sws_str_t                 text;       /* more lines, "Name: value\r\n" each */
    /* 1 if the module replaces the client's field h (h->name lower case).
     * NULL: those named in fields are replaced. */
    int                     (*replaces)(void *data, const sws_http_header_t *h);
    void                     *data;
    unsigned                  http10:1;          /* HTTP/1.0 (else 1.1) */
    unsigned                  upgrade:1;         /* pass the client's Upgrade */
    unsigned                  own_connection:1;  /* no Connection line from here */
    unsigned                  own_upgrade:1;     /* no Upgrade line from here */
    unsigned                  no_client_fields:1;
    /* ABI 1.8: no "Content-Length: 0" for a client's request whose body
     * is not sent (the module removed the field: nginx's
     * proxy_set_header Content-Length "") */
    unsigned                  own_length:1;
    unsigned                  reserved_bits:26;
    /* ABI 1.6: the body to send instead of the client's (proxy_set_body;
     * NULL: none), with its Content-Length. Call
     * sws_http_upstream_set_pass_body(u, 0) before start, so that the
     * client's body is not read for the server. */
    const sws_str_t          *body;
    void                     *reserved[3];
} sws_http_upstream_h1_request_t;

/* The head (and the buffered body) into *out; sets up the response parser
 * for the same attempt. SWS_OK or SWS_ERROR. */
sws_int_t  sws_http_upstream_h1_create_request(sws_http_upstream_t *u,
    const sws_http_upstream_h1_request_t *rq, sws_chain_t **out);

/*
 * The response (proto table entries; ctx is not looked at): the status
 * line, interim responses passed on (1xx other than 100, at most 8, their
 * hop-by-hop fields removed), 101 for an upgrade asked for, the fields
 * (hop-by-hop and framing ones kept back, Connection's tokens removed, the
 * others to sws_http_upstream_header), the body's framing (Content-Length,
 * chunked, or the end of the connection; none for HEAD, 204, 304; both
 * Content-Length and Transfer-Encoding is invalid) and whether the
 * connection may be kept.
 */
void       sws_http_upstream_h1_reinit(sws_http_request_t *r, void *ctx);
sws_int_t  sws_http_upstream_h1_process_header(sws_http_request_t *r, void *ctx, sws_buf_t *b);
sws_int_t  sws_http_upstream_h1_input_filter(sws_http_request_t *r, void *ctx,
    sws_http_upstream_input_t *in);
/* A streamed body of unknown length goes chunked. */
void       sws_http_upstream_h1_frame_body(sws_http_request_t *r, void *ctx, sws_buf_t *b,
    int last);
#define SWS_UPSTREAM_H1_FRAME_HEAD  18    /* 16 hex digits and CRLF */
#define SWS_UPSTREAM_H1_FRAME_TAIL  7     /* CRLF, and "0" CRLF CRLF at the end */

/* Before the response: each end-to-end response field (name as received,
 * lcname lower case) goes through hook first, which may change value (in
 * pool memory: proxy_redirect rewrites Location). SWS_OK or SWS_ERROR. */
typedef sws_int_t (*sws_http_upstream_h1_header_pt)(sws_http_request_t *r, void *data,
    const sws_str_t *name, const u_char *lcname, sws_str_t *value);
void       sws_http_upstream_h1_set_header_hook(sws_http_upstream_t *u,
    sws_http_upstream_h1_header_pt hook, void *data);

/* ---- active health probes in the protocol's own terms ----------------- */

/*
 * How "health_check" in an upstream { } block probes its servers. Without
 * one, a probe is HTTP: "GET uri HTTP/1.1" with Connection: close, passed
 * by a 2xx or 3xx status. A protocol module that talks something else to
 * its servers (FastCGI records, an application's own protocol) gives its
 * own, for the groups its locations reach. data is the module's.
 *
 *   create  the probe request for one server into [out->last, out->end)
 *           (advance out->last; 2 kB): uri is health_check's uri=, host the
 *           server as a Host value. SWS_OK, or SWS_ERROR (the probe fails).
 *   judge   the response so far, [in->pos, in->last): consume what is
 *           judged by moving in->pos (the rest is kept; 2 kB at most);
 *           eof: the server closed. SWS_AGAIN (more is needed), SWS_OK (the
 *           server passes), SWS_DECLINED (it fails; *why, a static string,
 *           says why in the log).
 */
typedef struct {
    const char  *name;
    sws_int_t  (*create)(void *data, const sws_str_t *uri, const sws_str_t *host,
                         sws_buf_t *out);
    sws_int_t  (*judge)(void *data, sws_buf_t *in, int eof, const char **why);
    void        *reserved[4];    /* zero */
} sws_http_upstream_probe_t;

/* At configuration time, with the location's target: the group it names is
 * probed with probe (NULL: HTTP). A group reached by locations of two
 * different probes is probed by the first one's (a warning says so). */
void  sws_http_upstream_conf_set_probe(sws_http_upstream_conf_t *conf,
    const sws_http_upstream_probe_t *probe, void *data);

/* ---- a response cache in front of the servers ------------------------- */

/*
 * A module that stores responses (modules/cache, or any other) registers
 * these hooks for a location with sws_http_upstream_cache_set() from a
 * directive setter; every upstream request of the location (proxy,
 * fastcgi, node, python alike) then goes through them. data is the
 * module's, given back to each hook (its location conf, say); per-request
 * state goes in the module's request context (sws_http_set_ctx).
 *
 *   lookup        before the body is read and before any server is chosen.
 *                 Returns SWS_DECLINED (not for the cache: the request goes
 *                 on and nothing is offered to store), SWS_UPSTREAM_CACHE_MISS
 *                 (go to a server, offer the response), SWS_UPSTREAM_CACHE_
 *                 REVALIDATE (the same, conditionally: the validators were set
 *                 with sws_http_upstream_cache_validators), or anything a
 *                 content handler returns: the hook answered the request
 *                 itself (sws_http_send_stored) and no server is contacted.
 *   store_header  the final response head is on r (status, headers, after
 *                 the hide rules), before the header filters: SWS_OK to see
 *                 the body, SWS_DECLINED not to. Not called for an upgrade,
 *                 an intercepted error, or a retried attempt. For a HEAD
 *                 (not asked as GET), since ABI 1.8: the head only (to
 *                 update a stored response's fields); store_end(0) follows
 *                 an SWS_OK at once.
 *   store_body    n decoded body bytes as they come from the server (before
 *                 the client gets them; the memory is reused afterwards: copy
 *                 or write it). SWS_OK, or anything else to stop storing
 *                 (store_end follows with complete 0).
 *   store_end     once per accepted store_header: complete 1 when the whole
 *                 body came (its framing said so), 0 when it was cut, the
 *                 server failed or timed out, the client went away first, or
 *                 the body was not read (HEAD, a 304 made by a filter).
 *   not_modified  a revalidation got a 304: the client does not see it. The
 *                 304's headers are on r (update the stored entry from them);
 *                 return what a content handler returns, normally
 *                 sws_http_send_stored() of the stored response. ABI 1.9:
 *                 or SWS_UPSTREAM_CACHE_MISS when the 304 names no stored
 *                 response (RFC 9111 4.3.4; r left as it was): the request
 *                 is sent again, once, without the validators, as a miss
 *                 (sws_http_upstream_cache_pass_if_none_match() before it:
 *                 with the client's own If-None-Match); a request with a
 *                 body to send gets 502 instead.
 */
#define SWS_UPSTREAM_CACHE_MISS        -110
#define SWS_UPSTREAM_CACHE_REVALIDATE  -111
/*
 * ABI 1.8. lookup may also return SWS_UPSTREAM_CACHE_WATCH: go to a server
 * as without a cache (the request is sent as it is, nothing is stored, no
 * failed hook), but store_header still sees the final response head,
 * whatever its status (a HEAD's too), to act on it: RFC 9111 4.4's
 * invalidation after an unsafe method. store_header returns SWS_DECLINED.
 */
#define SWS_UPSTREAM_CACHE_WATCH       -112

typedef struct {
    const char  *name;           /* for log messages */
    sws_int_t  (*lookup)(sws_http_request_t *r, void *data);
    sws_int_t  (*store_header)(sws_http_request_t *r, void *data);
    sws_int_t  (*store_body)(sws_http_request_t *r, void *data, const u_char *p, size_t n);
    void       (*store_end)(sws_http_request_t *r, void *data, int complete);
    sws_int_t  (*not_modified)(sws_http_request_t *r, void *data);
    /* ABI 1.2 (was reserved[0]): the response failed before its head went
     * to the client: rc is the 502/504 about to be sent, or the server's
     * own 5xx (its head is on r). SWS_DECLINED: go on with rc; anything a
     * content handler returns: the hook answered instead (a stale entry:
     * proxy_cache_use_stale). Only for MISS and REVALIDATE lookups. */
    sws_int_t  (*failed)(sws_http_request_t *r, void *data, sws_int_t rc);
    /* ABI 1.4 (was reserved[0]): a fresh hit before anything else, called
     * by sws_http_upstream_cache_hit() from a protocol module's handler
     * before it makes its upstream request. Answer the request (what a
     * content handler returns) or SWS_DECLINED (lookup runs later as
     * always); it must change nothing lookup will judge. NULL: none. */
    sws_int_t  (*hit)(sws_http_request_t *r, void *data);
    void        *reserved[2];    /* zero: hooks of later minor versions */
} sws_http_upstream_cache_t;

/* At configuration time, for the level being parsed (http, server or
 * location; inherited by the levels below that set none): its upstream
 * requests go through cache. cache NULL: none at this level (a location
 * turning its parent's off). SWS_OK, or SWS_ERROR if the level has one. */
sws_int_t  sws_http_upstream_cache_set(sws_conf_t *cf, const sws_http_upstream_cache_t *cache,
    void *data);

/* From lookup, before returning SWS_UPSTREAM_CACHE_REVALIDATE: the stored
 * response's ETag (NULL: none) and Last-Modified (-1: none); at least one
 * is needed. Copied. SWS_OK or SWS_ERROR. */
sws_int_t  sws_http_upstream_cache_validators(sws_http_upstream_t *u, const sws_str_t *etag,
    time_t last_modified);

/*
 * For the protocol's create_request: 1 if the response goes to a cache
 * (lookup said MISS or REVALIDATE). Then the client's own conditional and
 * range fields (If-None-Match, If-Modified-Since, If-Match,
 * If-Unmodified-Since, If-Range, Range) are not to be sent: the server
 * answers with the whole response, and the filters judge the client's
 * conditions on what the client gets. if_none_match and if_modified_since
 * (an HTTP date), when not empty, are to be sent instead: a revalidation.
 * 0: nothing changes.
 */
int        sws_http_upstream_cache_request(sws_http_upstream_t *u, sws_str_t *if_none_match,
    sws_str_t *if_modified_since);

/*
 * ABI 1.8. From lookup, before it returns SWS_UPSTREAM_CACHE_MISS: the
 * client's If-None-Match is sent as it came (RFC 9111 4.3.1: a server's
 * 304 then reaches the client; the cache is not to store it). Not for a
 * background update.
 */
void       sws_http_upstream_cache_pass_if_none_match(sws_http_upstream_t *u);

/*
 * ABI 1.9. From lookup, before it returns SWS_UPSTREAM_CACHE_MISS: the
 * client's Range is sent as it came (its If-Range is not): the server may
 * answer 206 with a part, which the cache stores beside the parts it has
 * (RFC 9111 3.4). Not for a background update.
 */
void       sws_http_upstream_cache_pass_range(sws_http_upstream_t *u);

/*
 * ABI 1.2. lookup may also return SWS_BUSY: the cache decides later (it
 * waits for another request's fill of the same key, say, with
 * sws_http_set_timer). It then calls this with what lookup would have
 * returned (SWS_DECLINED, SWS_UPSTREAM_CACHE_MISS, _REVALIDATE, or what it
 * answered with), and the request goes on from there. Call it once.
 */
void       sws_http_upstream_cache_resume(sws_http_request_t *r, sws_int_t rc);

/* ABI 1.4. The directory of the location's *_temp_path (proxy_temp_path,
 * fastcgi_temp_path): absolute, made by the master, no trailing slash.
 * For a module that writes its own temporary files there (a cache with
 * use_temp_path=on). */
const sws_str_t *sws_http_upstream_temp_dir(sws_http_upstream_t *u);

/*
 * ABI 1.4. First thing in a protocol module's content handler, before
 * sws_http_upstream_create(): the location's cache may answer a fresh hit
 * at once (its hit hook), and the module then returns what this returns.
 * SWS_DECLINED: go on as usual. Only where the cache key cannot depend on
 * what the handler would compute first (a target given with variables).
 */
sws_int_t  sws_http_upstream_cache_hit(sws_http_request_t *r);

/*
 * ABI 1.2. From lookup, after it answered the client (a stale entry, with
 * sws_http_send_stored) and before it returns SWS_UPSTREAM_CACHE_MISS or
 * _REVALIDATE: the server is asked all the same, and its response goes to
 * the cache's hooks only, never to the client (proxy_cache_background_update).
 * The request ends when that response does; not_modified and failed must
 * not answer then (return SWS_OK / SWS_DECLINED).
 */
void       sws_http_upstream_cache_background(sws_http_upstream_t *u);

/*
 * ABI 1.5. For a cache's store_header: the Date of the server's response
 * (hidden from the client unless passed, as nginx's proxy_hide_header
 * default), for the age and the Expires of RFC 9111 4.2; -1 if none or not
 * a valid date. Known only where the location has a cache.
 */
time_t     sws_http_upstream_date(sws_http_upstream_t *u);

/*
 * ABI 1.5. From lookup, for a HEAD request it returns SWS_UPSTREAM_CACHE_MISS
 * or _REVALIDATE for: ask the server with GET instead, so that the whole
 * response can be stored (proxy_cache_convert_head). The client still gets
 * the head only; the body is read for the cache alone. Done by the
 * protocols on sws_http_upstream_h1_create_request (proxy); for the others
 * the request stays a HEAD and nothing is stored.
 */
void       sws_http_upstream_cache_convert_head(sws_http_upstream_t *u);

/* ---- configuration ------------------------------------------------------ */

/* The framework's part of a location's configuration. A module keeps a
 * pointer to it as the FIRST member of its location conf, so that the
 * generic directive setter below finds it. */
sws_http_upstream_conf_t *sws_http_upstream_conf_create(sws_conf_t *cf);
char *sws_http_upstream_conf_merge(sws_conf_t *cf, sws_http_upstream_conf_t *prev,
    sws_http_upstream_conf_t *conf);

/* The target: "NAME" of an upstream { } block (which may come later in the
 * configuration), "host[:port]" (resolved at start-up), "[v6][:port]",
 * "unix:/path". default_port for names without a port. NULL (SWS_CONF_OK)
 * or an error message. */
char *sws_http_upstream_conf_set_target(sws_conf_t *cf, sws_http_upstream_conf_t *conf,
    const sws_str_t *addr, sws_uint_t default_port);
int   sws_http_upstream_conf_has_target(sws_http_upstream_conf_t *conf);

/*
 * One setter for the framework's directives, named as the module likes
 * ("proxy_read_timeout", "fastcgi_read_timeout" ...): cmd->offset says
 * which one, cmd->conf is SWS_HTTP_LOC_CONF_OFFSET and the location conf
 * starts with the sws_http_upstream_conf_t pointer.
 */
char *sws_http_upstream_conf_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

#define SWS_UPSTREAM_CONF_CONNECT_TIMEOUT       1   /* T */
#define SWS_UPSTREAM_CONF_SEND_TIMEOUT          2   /* T */
#define SWS_UPSTREAM_CONF_READ_TIMEOUT          3   /* T */
#define SWS_UPSTREAM_CONF_NEXT_UPSTREAM         4   /* error timeout invalid_header http_500 ... | off */
#define SWS_UPSTREAM_CONF_NEXT_UPSTREAM_TRIES   5   /* N (0: all servers) */
#define SWS_UPSTREAM_CONF_NEXT_UPSTREAM_TIMEOUT 6   /* T (0: none) */
#define SWS_UPSTREAM_CONF_BUFFERING             7   /* on|off */
#define SWS_UPSTREAM_CONF_BUFFERS               8   /* N SIZE */
#define SWS_UPSTREAM_CONF_BUFFER_SIZE           9   /* SIZE: the response head */
#define SWS_UPSTREAM_CONF_REQUEST_BUFFERING     10  /* on|off */
#define SWS_UPSTREAM_CONF_PASS_REQUEST_BODY     11  /* on|off */
#define SWS_UPSTREAM_CONF_IGNORE_CLIENT_ABORT   12  /* on|off */
#define SWS_UPSTREAM_CONF_HIDE_HEADER           13  /* NAME */
#define SWS_UPSTREAM_CONF_PASS_HEADER           14  /* NAME */
#define SWS_UPSTREAM_CONF_INTERCEPT_ERRORS      15  /* on|off */
#define SWS_UPSTREAM_CONF_UPGRADE               16  /* off|on|PROTOCOL...: the Upgrade requests
                                                       tunnelled (on: websocket; never h2c) */
/* TLS to the servers (when the location may use it: see
 * sws_http_upstream_conf_set_ssl). */
#define SWS_UPSTREAM_CONF_SSL_SERVER_NAME       17  /* on|off: send SNI (off) */
#define SWS_UPSTREAM_CONF_SSL_NAME              18  /* NAME (variables): SNI and verification */
#define SWS_UPSTREAM_CONF_SSL_VERIFY            19  /* on|off (off) */
#define SWS_UPSTREAM_CONF_SSL_TRUSTED_CERTIFICATE 20 /* FILE (PEM CAs) */
#define SWS_UPSTREAM_CONF_SSL_VERIFY_DEPTH      21  /* N (1) */
#define SWS_UPSTREAM_CONF_SSL_PROTOCOLS         22  /* TLSv1.2 TLSv1.3 ... */
#define SWS_UPSTREAM_CONF_SSL_CIPHERS           23  /* OpenSSL list (DEFAULT) */
#define SWS_UPSTREAM_CONF_SSL_CERTIFICATE       24  /* FILE: a client certificate */
#define SWS_UPSTREAM_CONF_SSL_CERTIFICATE_KEY   25  /* FILE: its key */
#define SWS_UPSTREAM_CONF_SSL_SESSION_REUSE     26  /* on|off (on) */
/* ABI 1.8 */
#define SWS_UPSTREAM_CONF_SSL_PASSWORD_FILE     27  /* FILE: passphrases of the key */
/* Buffering on: what the buffers cannot hold goes on in a temporary file,
 * so that the server's connection ends early (a gap in the numbers: room
 * for the slots above). */
#define SWS_UPSTREAM_CONF_TEMP_PATH             40  /* DIR [l1 [l2 [l3]]] (proxy_temp) */
#define SWS_UPSTREAM_CONF_MAX_TEMP_FILE_SIZE    41  /* SIZE (1024m; 0: no file) */
#define SWS_UPSTREAM_CONF_TEMP_FILE_WRITE_SIZE  42  /* SIZE: read and written at a time */
/* ABI 1.6 (nginx compatibility) */
#define SWS_UPSTREAM_CONF_BIND                  43  /* ADDRESS[:PORT] (variables) | off */
#define SWS_UPSTREAM_CONF_SOCKET_KEEPALIVE      44  /* on|off: SO_KEEPALIVE (off) */
#define SWS_UPSTREAM_CONF_BUSY_BUFFERS_SIZE     45  /* SIZE: nginx's checks against the
                                                       buffers; no effect (docs/proxy.md) */
#define SWS_UPSTREAM_CONF_LIMIT_RATE            46  /* RATE (bytes/s) of reading each
                                                       response (0: no limit) */

/* From the module's target directive: requests of this location may go
 * over TLS (an https:// target, or a target with variables). The client
 * context is made from the merged SSL directives. */
void  sws_http_upstream_conf_set_ssl(sws_http_upstream_conf_t *conf, int on);

/* ---- servers that change at run time (admin API, application processes) */

/*
 * A group's servers, changed while it runs and seen by every worker at its
 * next choice of a server: the list is in shared memory. upstream: the
 * group's name ("backend", or an implicit "host:port"); addr: an address
 * that needs no resolver ("127.0.0.1:8080", "[::1]:8080", "unix:/path").
 * A group has room for dynamic_servers N added ones (8 by default for an
 * upstream { } block, 0 for an implicit group). A reload keeps what was
 * added (see the handles below). Callable from a worker or the master.
 *
 *   add     a new server (weight 1..1000), or a drained or removed one back;
 *           SWS_BUSY: no room left
 *   drain   no new requests; those in flight finish
 *   down    (ABI 1.9) no new requests either; the server stays listed as
 *           "down", with its weight and counters (and across reloads, as
 *           an added server is kept), until add brings it back up
 *   remove  no new requests either (in flight ones finish too); an added
 *           server's room is free again
 *   weight  a new weight (1..1000), for the next requests
 *
 * SWS_OK; SWS_DECLINED: no such group, or no such server in it (drain,
 * remove, weight); SWS_ERROR: an invalid address or weight.
 */
sws_int_t  sws_http_upstream_server_add(const sws_str_t *upstream, const sws_str_t *addr,
    sws_uint_t weight);
sws_int_t  sws_http_upstream_server_drain(const sws_str_t *upstream, const sws_str_t *addr);
sws_int_t  sws_http_upstream_server_remove(const sws_str_t *upstream, const sws_str_t *addr);
sws_int_t  sws_http_upstream_server_weight(const sws_str_t *upstream, const sws_str_t *addr,
    sws_uint_t weight);

/*
 * ABI 1.7: the same by handle, without a name lookup. A handle (> 0) names
 * a group of this process's running configuration that has a run-time
 * list; resolve it once (init_master, init_worker, or at first use) and
 * keep it: it follows its group by name across reloads. SWS_DECLINED: no
 * such group (or one without room, an implicit group); SWS_ERROR: memory.
 * The functions answer as those above, and SWS_ERROR for a value that is
 * no handle, SWS_DECLINED while its group is not in the running
 * configuration (a reload dropped it; a later one may bring it back).
 *
 * Across a reload, a group that is still there by name keeps its servers
 * added at run time (up or draining, with their weights), in their order,
 * as many as its dynamic_servers room holds (the others are dropped, with
 * a warning); an added server whose address the configuration now names
 * itself gives way to the configured one. Their counters are kept when
 * the group's configured servers and room did not change. The configured
 * servers take their state and weight from the new configuration: a
 * drain, down, removal or weight set on one at run time does not outlive
 * the reload (the admin module's state file brings them back). A group
 * the configuration no longer has drops its list; one of the same name
 * that comes back later starts empty.
 */
sws_int_t  sws_http_upstream_list_handle(const sws_str_t *upstream);
sws_int_t  sws_http_upstream_list_add(sws_int_t list, const sws_str_t *addr, sws_uint_t weight);
sws_int_t  sws_http_upstream_list_drain(sws_int_t list, const sws_str_t *addr);
sws_int_t  sws_http_upstream_list_remove(sws_int_t list, const sws_str_t *addr);
/* ABI 1.9: mark the server down (above); by handle only. */
sws_int_t  sws_http_upstream_list_down(sws_int_t list, const sws_str_t *addr);
sws_int_t  sws_http_upstream_list_weight(sws_int_t list, const sws_str_t *addr,
    sws_uint_t weight);

/* ---- metrics (shared by all workers; for the admin module) ------------- */

typedef struct {
    sws_str_t   upstream;          /* the group's name */
    sws_str_t   server;            /* as written in "server" */
    sws_str_t   addr;              /* the address it resolved to */
    sws_uint_t  weight;
    unsigned    backup:1;
    const char *state;             /* "up", "down", "unavail" (passive),
                                      "unhealthy" (active checks) */
    uint64_t    requests;          /* attempts sent to it */
    uint64_t    responses;         /* response heads received */
    uint64_t    failures;          /* errors, timeouts, invalid responses */
    uint64_t    active;            /* connections in use now (all workers) */
    uint64_t    response_time_ms;  /* total over responses: / responses */
    uint64_t    status[5];         /* responses 1xx .. 5xx */
    uint64_t    health_checks;     /* active probes */
    uint64_t    health_fails;      /* failed probes */
    /* ABI 1.7: room to grow. Before a call that reads it
     * (sws_http_upstream_stats_read, sws_http_upstream_list_info) the
     * caller sets size to its sizeof(sws_http_upstream_stats_t); the core
     * fills no more than that, and sets size to what it filled: a field
     * appended later is there only if it lies within size. The functions
     * of earlier SDKs (sws_http_upstream_stats_get, _server_info) fill the
     * struct up to size, not size itself, as they always did. */
    size_t      size;
    /* ABI 1.9 (was reserved[0]): connections to the server idle in the
     * workers' keep-alive pools now (all workers) */
    uint64_t    idle;
    uint64_t    reserved[7];
} sws_http_upstream_stats_t;

/* The servers of every upstream of the running configuration. */
sws_uint_t sws_http_upstream_stats_count(void);
sws_int_t  sws_http_upstream_stats_get(sws_uint_t i, sws_http_upstream_stats_t *st);
/* ABI 1.7: the same, as far as st->size says (SWS_ERROR if it is too small). */
sws_int_t  sws_http_upstream_stats_read(sws_uint_t i, sws_http_upstream_stats_t *st);

/* ABI 1.8: the response-time histogram of the i-th server of
 * sws_http_upstream_stats_read, cumulative as Prometheus has it: b[k].count
 * responses whose head came within b[k].le milliseconds (5, 10, 25, 50,
 * 100, 250, 500, 1000, 2500, 5000, 10000; the responses of the stats are
 * the +Inf bucket). *n: b's room in, the buckets filled out. SWS_OK, or
 * SWS_ERROR past the last server. */
#define SWS_HTTP_UPSTREAM_TIME_BUCKETS  11
typedef struct {
    sws_msec_t  le;
    uint64_t    count;
} sws_http_upstream_bucket_t;
sws_int_t  sws_http_upstream_stats_histogram(sws_uint_t i, sws_http_upstream_bucket_t *b,
    sws_uint_t *n);

/* The i-th server of one group as its run-time list has it now (the
 * configured ones, then those added and not removed), with its counters:
 * state "up", "draining", "down" (marked down, a configured one removed,
 * or down in the configuration), "unhealthy" or "unavail". SWS_OK, or SWS_DECLINED past the last one (or
 * no such group). */
sws_int_t  sws_http_upstream_server_info(const sws_str_t *upstream, sws_uint_t i,
    sws_http_upstream_stats_t *st);
/* ABI 1.7: the same by handle (sws_http_upstream_list_handle), as far
 * as st->size says (SWS_ERROR if it is too small). */
sws_int_t  sws_http_upstream_list_info(sws_int_t list, sws_uint_t i,
    sws_http_upstream_stats_t *st);

#endif
