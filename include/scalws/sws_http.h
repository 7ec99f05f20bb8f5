/*
 * The HTTP request as modules see it. The same request object serves
 * HTTP/1.1, HTTP/2 and HTTP/3: phases, modules and filters never ask which
 * protocol carries it. The request is opaque; accessors keep the ABI stable.
 */
#ifndef SWS_HTTP_H
#define SWS_HTTP_H

#include <time.h>
#include <sys/socket.h>
#include <scalws/sws_types.h>
#include <scalws/sws_buf.h>
#include <scalws/sws_array.h>

/* Methods (bit flags, so a module can keep a set of allowed methods). */
#define SWS_HTTP_UNKNOWN   0x0001
#define SWS_HTTP_GET       0x0002
#define SWS_HTTP_HEAD      0x0004
#define SWS_HTTP_POST      0x0008
#define SWS_HTTP_PUT       0x0010
#define SWS_HTTP_DELETE    0x0020
#define SWS_HTTP_OPTIONS   0x0040
#define SWS_HTTP_PATCH     0x0080
#define SWS_HTTP_TRACE     0x0100
#define SWS_HTTP_CONNECT   0x0200

#define SWS_HTTP_VERSION_10  1000
#define SWS_HTTP_VERSION_11  1001
#define SWS_HTTP_VERSION_20  2000
#define SWS_HTTP_VERSION_30  3000

/* Status codes used by the core. */
#define SWS_HTTP_CONTINUE                100
#define SWS_HTTP_SWITCHING_PROTOCOLS     101
#define SWS_HTTP_OK                      200
#define SWS_HTTP_CREATED                 201
#define SWS_HTTP_NO_CONTENT              204
#define SWS_HTTP_PARTIAL_CONTENT         206
#define SWS_HTTP_MOVED_PERMANENTLY       301
#define SWS_HTTP_MOVED_TEMPORARILY       302
#define SWS_HTTP_SEE_OTHER               303
#define SWS_HTTP_NOT_MODIFIED            304
#define SWS_HTTP_TEMPORARY_REDIRECT      307
#define SWS_HTTP_PERMANENT_REDIRECT      308
#define SWS_HTTP_BAD_REQUEST             400
#define SWS_HTTP_UNAUTHORIZED            401
#define SWS_HTTP_FORBIDDEN               403
#define SWS_HTTP_NOT_FOUND               404
#define SWS_HTTP_NOT_ALLOWED             405
#define SWS_HTTP_REQUEST_TIME_OUT        408
#define SWS_HTTP_CONFLICT                409
#define SWS_HTTP_LENGTH_REQUIRED         411
#define SWS_HTTP_PRECONDITION_FAILED     412
#define SWS_HTTP_REQUEST_ENTITY_TOO_LARGE 413
#define SWS_HTTP_REQUEST_URI_TOO_LARGE   414
#define SWS_HTTP_RANGE_NOT_SATISFIABLE   416
#define SWS_HTTP_EXPECTATION_FAILED      417
#define SWS_HTTP_HEADERS_TOO_LARGE       431
#define SWS_HTTP_CLOSE                   444  /* close without a response */
#define SWS_HTTP_CLIENT_CLOSED_REQUEST   499
#define SWS_HTTP_INTERNAL_SERVER_ERROR   500
#define SWS_HTTP_NOT_IMPLEMENTED         501
#define SWS_HTTP_BAD_GATEWAY             502
#define SWS_HTTP_SERVICE_UNAVAILABLE     503
#define SWS_HTTP_GATEWAY_TIME_OUT        504
#define SWS_HTTP_VERSION_NOT_SUPPORTED   505

/* A header: the name as received (request names are lower-cased once, on
 * arrival), the value with surrounding whitespace removed. */
typedef struct {
    sws_str_t   name;
    sws_str_t   value;
    uint32_t    hash;     /* sws_hash_key of the lower-case name; 0 = deleted */
} sws_http_header_t;

/* ---- phases ---------------------------------------------------------- */

/*
 * The request phases. The values are ABI (a module built for 1.0 passes
 * them); the order in which the phases run is the core's table, not these
 * numbers: POST_READ, SERVER_REWRITE, FIND_LOCATION, REWRITE, PREACCESS,
 * ACCESS, PRE_CONTENT, CONTENT, LOG.
 */
typedef enum {
    SWS_HTTP_POST_READ_PHASE = 0,
    SWS_HTTP_SERVER_REWRITE_PHASE = 1,
    SWS_HTTP_FIND_LOCATION_PHASE = 2,   /* core only */
    SWS_HTTP_REWRITE_PHASE = 3,
    SWS_HTTP_ACCESS_PHASE = 4,
    SWS_HTTP_PRE_CONTENT_PHASE = 5,
    SWS_HTTP_CONTENT_PHASE = 6,
    SWS_HTTP_LOG_PHASE = 7,
    /* ABI 1.0-1.6's count of phases, kept for its value: no phase */
    SWS_HTTP_PHASE_COUNT = 8,
    /* ABI 1.7: limits (limit_req, limit_conn) and the client's address
     * (realip), before the access checks; runs after REWRITE */
    SWS_HTTP_PREACCESS_PHASE = 9
} sws_http_phase_t;

/*
 * A phase handler returns:
 *   SWS_DECLINED  not mine: the next handler of the same phase runs;
 *   SWS_OK        this phase is done: the next phase runs;
 *   SWS_AGAIN / SWS_DONE  the module took over (it will call
 *                 sws_http_finalize or sws_http_run_phases later);
 *   an HTTP status (>= 100) or SWS_ERROR: the request is finalised with it.
 * A content handler's return value goes to sws_http_finalize.
 */
typedef sws_int_t (*sws_http_handler_pt)(sws_http_request_t *r);
typedef sws_int_t (*sws_http_header_filter_pt)(sws_http_request_t *r);
typedef sws_int_t (*sws_http_body_filter_pt)(sws_http_request_t *r, sws_chain_t *in);
typedef void      (*sws_http_event_handler_pt)(sws_http_request_t *r);

/*
 * Registration, from a module's postconfiguration hook (ABI 1.7): the phase,
 * the handler's place in it, and where it has work. Within a phase the
 * handlers run by ascending order, then by module name: load order decides
 * nothing. The bundled modules use multiples of 100 (SWS_HTTP_ORDER_*);
 * another module takes a number between those it must follow and precede.
 *
 * Each location (and server level, if block and limit_except block) gets
 * its own list of handlers at configuration time: active() is called with
 * the module's merged location conf of each, and a handler is left out
 * where it answers 0 (its directives are not used there), so that it costs
 * nothing on those requests. active NULL: the handler runs everywhere.
 * POST_READ and SERVER_REWRITE handlers are asked with the server level's
 * conf (they run before a location is chosen).
 */
typedef struct {
    sws_http_phase_t      phase;
    sws_uint_t            order;
    sws_http_handler_pt   handler;
    const sws_module_t   *module;     /* the registering module (&sws_module);
                                         active gets its loc conf (NULL if none) */
    sws_uint_t          (*active)(const void *loc_conf);
    void                 *reserved[4];
} sws_http_phase_handler_t;

#define SWS_HTTP_ORDER_REALIP       100   /* PREACCESS; POST_READ */
#define SWS_HTTP_ORDER_LIMIT_REQ    200   /* PREACCESS */
#define SWS_HTTP_ORDER_LIMIT_CONN   300   /* PREACCESS */
#define SWS_HTTP_ORDER_ACCESS       100   /* ACCESS: allow/deny */
#define SWS_HTTP_ORDER_AUTH_BASIC   200   /* ACCESS */
#define SWS_HTTP_ORDER_AUTH_REQUEST 300   /* ACCESS (ABI 1.8) */
#define SWS_HTTP_ORDER_MIRROR       100   /* PRE_CONTENT, before try_files (ABI 1.8) */
#define SWS_HTTP_ORDER_INDEX        100   /* CONTENT: index files */
#define SWS_HTTP_ORDER_PRECOMPRESSED 200  /* CONTENT: gzip_static and kin */
#define SWS_HTTP_ORDER_STATIC       300   /* CONTENT: files */
#define SWS_HTTP_ORDER_DEFAULT      1000  /* sws_http_add_phase_handler's */

sws_int_t sws_http_register_phase_handler(sws_conf_t *cf, const sws_http_phase_handler_t *h);

/* The same with order SWS_HTTP_ORDER_DEFAULT, in every location (ABI 1.0). */
sws_int_t sws_http_add_phase_handler(sws_conf_t *cf, sws_http_phase_t phase,
    sws_http_handler_pt handler);
/* From postconfiguration: the handler that lists a directory (autoindex).
 * It runs for a URI ending in '/' once every content phase handler has
 * declined it (the static index handler found no index file), and returns
 * SWS_DECLINED where it does not list (the core then answers 403). One
 * per configuration. */
sws_int_t sws_http_set_directory_handler(sws_conf_t *cf, sws_http_handler_pt handler);
/* From a location-level directive: this location's content handler. A second
 * content handler in one location is a configuration error. */
sws_int_t sws_http_set_content_handler(sws_conf_t *cf, sws_http_handler_pt handler,
    const char *owner);
/* ABI 1.8: a module's block directive that is a server of its own (the
 * admin module's "admin { }"). The block is read as a server { } block
 * (listen, ssl_*, and the server-level directives of every module) whose
 * requests all go to handler; with no listen in it, it listens on
 * default_listen ("127.0.0.1:9090"). Its addresses are its alone: a listen
 * that another server shares is a configuration error. done, if not NULL,
 * is then called with cf inside the new server (sws_conf_http_srv_conf
 * gives its confs) to check what was read; its message is reported at the
 * block's directive. Returns SWS_CONF_OK or an error (already reported). */
typedef char *(*sws_http_own_server_pt)(sws_conf_t *cf, void *data);
char *sws_http_conf_own_server(sws_conf_t *cf, sws_http_handler_pt handler, const char *owner,
    const char *default_listen, sws_http_own_server_pt done, void *data);
/* ABI 1.8: 1 and the first listen of the server being read that is
 * neither loopback (127.0.0.0/8, ::1) nor a unix socket, with where it is
 * written; 0 if it has none. */
int sws_http_conf_public_listen(sws_conf_t *cf, sws_str_t *addr, const char **file,
    sws_uint_t *line);
/* From a location-level directive: the location's pattern as written and
 * its kind (SWS_HTTP_LOC_PREFIX / EXACT / REGEX). SWS_ERROR outside a location.
 * ABI 1.9: NAMED for "location @name", NESTED inside an if or limit_except
 * block (the pattern is then the enclosing location's); both were PREFIX. */
#define SWS_HTTP_LOC_PREFIX  0
#define SWS_HTTP_LOC_EXACT   1
#define SWS_HTTP_LOC_REGEX   2
#define SWS_HTTP_LOC_NAMED   3
#define SWS_HTTP_LOC_NESTED  4
sws_int_t sws_http_conf_location(sws_conf_t *cf, sws_str_t *name, sws_uint_t *kind);
/* Filters: insert at the top of the chain; returns the filter to call next. */
sws_http_header_filter_pt sws_http_insert_header_filter(sws_http_header_filter_pt f);
sws_http_body_filter_pt   sws_http_insert_body_filter(sws_http_body_filter_pt f);

/* ---- the request ----------------------------------------------------- */

sws_pool_t  *sws_http_pool(sws_http_request_t *r);
sws_log_t   *sws_http_log(sws_http_request_t *r);

sws_uint_t       sws_http_method(sws_http_request_t *r);
const sws_str_t *sws_http_method_name(sws_http_request_t *r);
sws_uint_t       sws_http_version(sws_http_request_t *r);
/* The decoded, normalised path (no dot segments, no query). */
const sws_str_t *sws_http_uri(sws_http_request_t *r);
/* The query string without '?', empty if none. */
const sws_str_t *sws_http_args(sws_http_request_t *r);
/* The request target as received. */
const sws_str_t *sws_http_unparsed_uri(sws_http_request_t *r);
/* The extension of the last path segment ("html"), empty if none. */
const sws_str_t *sws_http_exten(sws_http_request_t *r);
/* Host without port, lower-cased; empty if none. */
const sws_str_t *sws_http_host(sws_http_request_t *r);
/* "http" or "https". */
const sws_str_t *sws_http_scheme(sws_http_request_t *r);
/* The request id (empty unless request_id is on). */
const sws_str_t *sws_http_request_id(sws_http_request_t *r);
/* The client address as text. */
const sws_str_t *sws_http_remote_addr(sws_http_request_t *r);
/* The client's address as the request sees it: the connection's peer, or
 * what a module set with sws_http_set_remote_addr (realip); *len (may be
 * NULL) gets its length. */
const struct sockaddr *sws_http_remote_sockaddr(sws_http_request_t *r, socklen_t *len);
/* From now on, for this request, the client is sa (copied): $remote_addr,
 * $binary_remote_addr, $remote_port, the access log, sws_http_remote_addr
 * and what proxy forwards (X-Forwarded-For) see it. SWS_OK or SWS_ERROR. */
sws_int_t sws_http_set_remote_addr(sws_http_request_t *r, const struct sockaddr *sa,
    socklen_t len);
/* What the PROXY protocol header of the connection said ("listen ...
 * proxy_protocol"): the client's address (server 0) or the one it
 * connected to (server 1), *len its length; NULL if there was none (or a
 * LOCAL / UNKNOWN header). */
const struct sockaddr *sws_http_proxy_protocol_addr(sws_http_request_t *r, int server,
    socklen_t *len);
/* 1 if the request is internal (after a redirect, for try_files/index). */
int              sws_http_is_internal(sws_http_request_t *r);
/* ABI 1.10: the client's request target (sws_http_unparsed_uri) still says
 * the request's URI and args: not rewritten, no "set $args". A proxy sends
 * the target as the client wrote it only then. */
int              sws_http_unparsed_uri_valid(sws_http_request_t *r);
/* ABI 1.12: 1 if the path of the client's request target has an encoded
 * slash ("%2F" or "%2f"), which a file lookup refuses (decoded, it would
 * name another directory than the segment the client wrote); noted by the
 * parser, so asking costs no scan of the target. */
int              sws_http_encoded_slash(sws_http_request_t *r);

/* Request headers, in arrival order; names lower-case. */
const sws_array_t *sws_http_headers_in(sws_http_request_t *r);
/* The value of the first header with this lower-case name, or NULL. */
const sws_str_t   *sws_http_header_in(sws_http_request_t *r, const char *lcname, size_t len);
/*
 * Basic credentials (RFC 7617) in an Authorization value: "Basic" (any
 * case), spaces, the base64 of "user:password", optional trailing spaces.
 * buf (SWS_HTTP_MAX_CREDENTIALS bytes, or len if less: what is decoded is
 * shorter than the value) receives the decoded credentials;
 * user and password point into it. SWS_OK, or SWS_DECLINED when the value
 * is another scheme or malformed: bad base64, no ':', a NUL or control
 * byte, longer than SWS_HTTP_MAX_CREDENTIALS.
 */
#define SWS_HTTP_MAX_CREDENTIALS  1024
sws_int_t          sws_http_parse_basic_credentials(const u_char *value, size_t len,
    u_char *buf, sws_str_t *user, sws_str_t *password);
/* -1 if the request has no body length (no body, or chunked). */
off_t              sws_http_content_length_in(sws_http_request_t *r);
int                sws_http_has_body(sws_http_request_t *r);

/* Per-module, per-request context. */
void *sws_http_get_ctx(sws_http_request_t *r, const sws_module_t *m);
void  sws_http_set_ctx(sws_http_request_t *r, const sws_module_t *m, void *ctx);

/* The module's configuration for this request's server and location. */
void *sws_http_main_conf(sws_http_request_t *r, const sws_module_t *m);
void *sws_http_srv_conf(sws_http_request_t *r, const sws_module_t *m);
void *sws_http_loc_conf(sws_http_request_t *r, const sws_module_t *m);

/* ---- locations and files --------------------------------------------- */

/*
 * Map the request URI to a file path using the location's root or alias.
 * path is NUL-terminated (len excludes the NUL); root_len is the length of
 * the document root part. reserve: extra bytes to allocate after the path.
 */
sws_int_t sws_http_map_uri_to_path(sws_http_request_t *r, sws_str_t *path,
    size_t *root_len, size_t reserve);
/* The MIME type for an extension from the location's types; default_type
 * if unknown. */
const sws_str_t *sws_http_mime_type(sws_http_request_t *r, const sws_str_t *exten);
/* Restart location matching with a new URI (and args, may be NULL);
 * the request becomes internal. Returns SWS_DONE; the caller returns that. */
sws_int_t sws_http_internal_redirect(sws_http_request_t *r, const sws_str_t *uri,
    const sws_str_t *args);
/*
 * Rewriting (the rewrite module; ABI 1.1 additions):
 * sws_http_rewrite_uri() sets the request's URI (decoded, as r->uri is)
 * and args (NULL: kept); both must live as long as the request; the
 * request becomes internal. SWS_OK, or 500 for an empty URI.
 * sws_http_relocate(): the URI was rewritten in the REWRITE phase
 * ("rewrite ... last"): choose the location again and go on from there
 * (the server's rewrites do not run again). It counts as an internal
 * redirect (more than 10 in a request: 500). Returns SWS_DONE: return it.
 * sws_http_named_location(): go on in the server's "location @name"
 * (name with its '@'), from its REWRITE phase, keeping URI and method;
 * 500 when there is none. Returns SWS_DONE.
 */
sws_int_t sws_http_rewrite_uri(sws_http_request_t *r, const sws_str_t *uri,
    const sws_str_t *args);
sws_int_t sws_http_relocate(sws_http_request_t *r);
sws_int_t sws_http_named_location(sws_http_request_t *r, const sws_str_t *name);

/*
 * Nested locations: an "if" block is a location configuration inside a
 * server or a location, as in nginx. sws_http_conf_nested_location(),
 * from a block directive's setter in a server or a location, creates
 * every module's location configuration for it (merged with the enclosing
 * level after the http block); NULL inside a nested location (no nesting)
 * or on failure. sws_http_location_conf() gives a module's configuration
 * of it. sws_http_conf_parse_nested() dispatches the directive's block in
 * it: in a location, every location directive is allowed; in a server,
 * only those declared for SWS_HTTP_LIF_CONF. At request time,
 * sws_http_enter_location() makes it the request's location (SWS_OK, or
 * 413 for a declared body larger than its client_max_body_size).
 */
typedef struct sws_http_location_s  sws_http_location_t;
sws_http_location_t *sws_http_conf_nested_location(sws_conf_t *cf);
void     *sws_http_location_conf(sws_http_location_t *loc, const sws_module_t *m);
char     *sws_http_conf_parse_nested(sws_conf_t *cf, sws_http_location_t *loc);
sws_int_t sws_http_enter_location(sws_http_request_t *r, sws_http_location_t *loc);

/* ABI 1.6: 1 if host (lower case, no port) is a name of the request's
 * server: its server_name entries, exact, "*.x.com", ".x.com" (x.com too)
 * or "mail.*"; a "~" name's regex is matched against subject instead (NULL:
 * regexes do not count). 0 otherwise. */
int       sws_http_server_name_match(sws_http_request_t *r, const sws_str_t *host,
    const sws_str_t *subject);

/* 1 if the response's file data goes with sendfile(): the location's
 * sendfile is on and the protocol sends files that way (HTTP/1 on a plain
 * socket or kernel TLS; not HTTP/2, which copies files into DATA frames). */
int       sws_http_sendfile_enabled(sws_http_request_t *r);

/* A file opened for a response (sws_http_open_file). */
typedef struct {
    int              fd;        /* -1 for a directory, or when data holds it all */
    off_t            size;
    time_t           mtime;
    const sws_str_t *etag;      /* strong "mtime-size" ETag, or NULL */
    const u_char    *data;      /* the whole contents when the cache keeps
                                 * them (small files), else NULL */
    int              err;       /* errno when SWS_ERROR is returned */
    unsigned         is_file:1;
    unsigned         is_dir:1;
    unsigned         reserved_bits:30;
    /* ABI 1.9 (from reserved), sws_http_open_cached() only: what the caller
     * attached to this cached file (sws_http_file_attach), or NULL; and
     * the core's cached file itself (not to be touched) */
    void            *attached;
    void            *cached;
    void            *reserved[2];
} sws_http_file_t;

/*
 * Open path (NUL-terminated) for reading and stat it, through the
 * location's open_file_cache when it is on. The descriptor and data belong
 * to the core and stay valid until the request ends. SWS_OK, or SWS_ERROR
 * with f->err set (ENOENT, EACCES...).
 */
sws_int_t sws_http_open_file(sws_http_request_t *r, const sws_str_t *path,
    sws_http_file_t *f);
/*
 * What is at path (NUL-terminated): size, mtime, is_file, is_dir, or
 * SWS_ERROR with f->err. Through the location's open_file_cache when it is
 * on, so that a check (try_files, index) sees what sws_http_open_file()
 * will (a cached miss stays a miss until open_file_cache_valid), else a
 * plain stat(). Do not read f->fd or f->data: open the file for that.
 */
sws_int_t sws_http_file_info(sws_http_request_t *r, const sws_str_t *path,
    sws_http_file_t *f);

/*
 * ABI 1.9. A module's own file (a cache's entry) through the worker's open
 * file cache, whatever the location's open_file_cache: the descriptor (or,
 * for a small file, its bytes) stays open for the next requests while it is
 * used within inactive, with at most max files in the worker's cache (its
 * other users' count too), and goes at once when inotify reports a change
 * to the file. It is never checked with stat(): the caller says which file
 * it wants, by its inode (uniq; 0 takes what is there), and a cached
 * descriptor of another file at the path (one replaced since) is closed and
 * the path opened again. Symbolic links are followed. SWS_OK; SWS_DECLINED
 * with f->err ESTALE when the file at the path is not uniq (it was replaced
 * again: the caller's records are older than the file); SWS_ERROR with
 * f->err. The descriptor and data stay valid until the request ends.
 */
typedef struct {
    sws_uint_t       max;
    sws_msec_t       inactive;
    uint64_t         uniq;
} sws_http_file_cache_t;

sws_int_t sws_http_open_cached(sws_http_request_t *r, const sws_str_t *path,
    const sws_http_file_cache_t *fc, sws_http_file_t *f);
/* ABI 1.9. Keep data with the cached file f (sws_http_open_cached, none
 * attached yet): later opens of the same file find it in f->attached, and
 * done(data) is called when the file leaves the worker's cache (its last
 * request over). State worth keeping as long as the descriptor (a cache
 * entry's checked header). SWS_OK, or SWS_DECLINED (data not kept). */
sws_int_t sws_http_file_attach(sws_http_file_t *f, void *data, void (*done)(void *data));
/* ABI 1.9. The worker's cached descriptor of path (sws_http_open_cached)
 * closed now, or when its last request is over: the caller removed or
 * replaced the file and wants its space back without waiting for inotify
 * (other workers' go when inotify tells them). */
void      sws_http_file_forget(const sws_str_t *path);

/* ---- the response ---------------------------------------------------- */

void      sws_http_set_status(sws_http_request_t *r, sws_uint_t status);
sws_uint_t sws_http_status(sws_http_request_t *r);
/* Add a response header; name and value must live as long as the request
 * (pool memory or static). Returns the header for later changes, or NULL. */
sws_http_header_t *sws_http_header_out_add(sws_http_request_t *r,
    const sws_str_t *name, const sws_str_t *value);
/* Remove every response header with this name (case-insensitive). */
void      sws_http_header_out_remove(sws_http_request_t *r, const char *name, size_t len);
/* The first response header with this name, or NULL. */
sws_http_header_t *sws_http_header_out(sws_http_request_t *r, const char *name, size_t len);
const sws_array_t *sws_http_headers_out(sws_http_request_t *r);
/* Well-known response fields kept apart (the core formats them). */
void      sws_http_set_content_length(sws_http_request_t *r, off_t n);  /* -1: unknown */
off_t     sws_http_content_length(sws_http_request_t *r);
void      sws_http_set_content_type(sws_http_request_t *r, const sws_str_t *type);
const sws_str_t *sws_http_content_type(sws_http_request_t *r);
void      sws_http_set_last_modified(sws_http_request_t *r, time_t t);  /* -1: none */
time_t    sws_http_last_modified(sws_http_request_t *r);
/* ABI 1.8. The response's own Date (a stored response's, which goes out
 * instead of the time now: sws_http_send_stored); len 0: none. */
const sws_str_t *sws_http_response_date(sws_http_request_t *r);
void      sws_http_set_etag(sws_http_request_t *r, const sws_str_t *etag); /* NULL: none */
const sws_str_t *sws_http_etag(sws_http_request_t *r);
/* ABI 1.8: a strong ETag "x" becomes W/"x" (a filter that changes the
 * body's bytes but not its meaning: gzip, gunzip, sub_filter); a weak one
 * stays; a value that is not an entity-tag (no quotes) is dropped.
 * SWS_OK or SWS_ERROR. */
sws_int_t sws_http_weak_etag(sws_http_request_t *r);
/* The strong ETag of a file, "MTIME-SIZE" in lower-case hex with its
 * quotes (the one the static module and the file cache send), written into
 * buf of SWS_HTTP_ETAG_LEN bytes; returns the end. */
#define SWS_HTTP_ETAG_LEN  35
u_char   *sws_http_etag_make(u_char *buf, time_t mtime, off_t size);
/* Location for redirects, sent as given (a relative reference is valid,
 * RFC 9110 10.2.2). */
void      sws_http_set_location(sws_http_request_t *r, const sws_str_t *location);
/* The Location set so far (len 0: none). ABI 1.2. */
const sws_str_t *sws_http_location(sws_http_request_t *r);
/* Clear everything set so far, e.g. before an error page. */
void      sws_http_clear_response(sws_http_request_t *r);
/* Ask the filters to honour Range for this response (static files). */
void      sws_http_allow_ranges(sws_http_request_t *r, int on);
/* ABI 1.11. As sws_http_allow_ranges(r, 1), but one range at most: several
 * get the whole (200), as for a producer whose body streams through
 * reused buffers and cannot be held for a multipart/byteranges
 * (proxy_force_ranges; nginx's single_range). */
void      sws_http_allow_single_range(sws_http_request_t *r);
int       sws_http_ranges_allowed(sws_http_request_t *r);
/*
 * ABI 1.9. A Range field's value ("bytes=a-b, c-, -n", RFC 9110 14.1.1)
 * for a representation of size bytes, as the range filter reads it (and
 * nginx's): up to max ranges into (start, end-exclusive) pairs. Returns
 * the count (>= 1); 0 if no range is satisfiable or the list after
 * "bytes=" does not parse (a 416); -1 if the value is not "bytes=" with
 * something after it, has more than max ranges, ranges that together are
 * longer than the representation, or asks an empty one from its start
 * (the whole is sent, 200). Since 1.10 a malformed list and a range whose
 * first byte is after its last ("3-1") are a 416 where they were -1, and
 * whitespace around the numbers is taken.
 */
typedef struct { off_t start; off_t end; } sws_http_range_t;
sws_int_t sws_http_parse_range(const u_char *p, size_t len, off_t size,
    sws_http_range_t *ranges, sws_uint_t max);
/*
 * ABI 1.10. A multipart/byteranges body (RFC 9110 14.6) of the n ranges of
 * a representation of size bytes and type content_type (NULL or len 0:
 * none), made as the range filter makes it for a file: *type is the
 * response's Content-Type with a new boundary, heads[i] (an array of n
 * given by the caller) the text before range i's bytes, *tail the closing
 * boundary after the last; all in pool memory. Returns the body's length
 * (texts and ranges), or -1 when out of memory. For a producer that holds
 * the ranges' bytes but not the whole (a cache's stored parts).
 */
off_t     sws_http_range_multipart_text(sws_pool_t *pool, const sws_str_t *content_type,
    const sws_http_range_t *ranges, sws_uint_t n, off_t size, sws_str_t *type,
    sws_str_t *heads, sws_str_t *tail);
/*
 * ABI 1.10. The request's conditions (If-Match, If-Unmodified-Since,
 * If-None-Match, If-Modified-Since: RFC 9110 13.2.2, steps 1 to 4, with
 * the location's if_modified_since) judged as the not-modified filter
 * judges a 200, against a representation with these validators (etag NULL
 * or len 0: none; last_modified -1: none, and then date, a stored
 * response's Date field (NULL: none), stands for it, RFC 9111 4.3.2).
 * SWS_HTTP_OK: none fails, go on; SWS_HTTP_NOT_MODIFIED or
 * SWS_HTTP_PRECONDITION_FAILED. Only GET and HEAD are judged (else
 * SWS_HTTP_OK), and never a subrequest. For a producer that answers from
 * validators it holds without sending the representation as a 200 (a
 * cache's stored parts).
 */
sws_uint_t sws_http_preconditions(sws_http_request_t *r, const sws_str_t *etag,
    time_t last_modified, const sws_str_t *date);

/*
 * Trailer fields, sent after the body: over HTTP/1.1 after the last chunk,
 * over HTTP/2 as a HEADERS frame that ends the stream. Call
 * sws_http_expect_trailers() before the head is sent (a header filter): an
 * HTTP/1.1 response is then framed chunked even when its length is known
 * (HTTP/1.0 has no trailers; neither has a response without a body).
 * sws_http_trailer_out_add() works until the last buffer reaches the
 * protocol (a body filter that sees last_buf, before passing it on); name
 * and value must live as long as the request. Returns the field, or NULL.
 */
void      sws_http_expect_trailers(sws_http_request_t *r);
sws_http_header_t *sws_http_trailer_out_add(sws_http_request_t *r,
    const sws_str_t *name, const sws_str_t *value);
/* The trailer fields added so far, or NULL. */
const sws_array_t *sws_http_trailers_out(sws_http_request_t *r);

/* Run the header filters and queue the head. Returns SWS_OK, or SWS_ERROR
 * (connection failed). After it, check sws_http_header_only(): for HEAD and
 * bodiless statuses (1xx, 204, 304) no body may follow; send nothing more
 * and finalize with SWS_OK. A filter may change the status (304, 206, 416)
 * and the body it expects (a 416/304 has none). */
sws_int_t sws_http_send_header(sws_http_request_t *r);
/* An interim (1xx) response ahead of the final one, e.g. a 103 Early
 * Hints a proxy passes on: its n headers as given (those with hash 0
 * count as deleted and are left out). Refused with
 * SWS_DECLINED for 100 and 101 (the core and the upgrade path send those),
 * after the final head, and to HTTP/1.0 clients (RFC 9110 15.2: they get
 * none). SWS_OK when queued (and sent as far as the socket takes it),
 * SWS_ERROR when the connection failed. */
sws_int_t sws_http_send_interim(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *headers, sws_uint_t n);
/* Run the body filters over in. SWS_OK or SWS_AGAIN (buffered: the core
 * finishes sending on its own), SWS_ERROR on a failed connection. */
sws_int_t sws_http_output(sws_http_request_t *r, sws_chain_t *in);
/* Send only a flag (last_buf or flush). */
sws_int_t sws_http_send_special(sws_http_request_t *r, int last);
/* For body filters that hold data they could not pass on yet (a coder
 * whose output buffers all wait for the client): set while holding. Then
 * each time output was sent the core runs the body filters again with no
 * new input (in == NULL), so the filter can go on, and the response does
 * not end before the filter has passed its last buffer. Clear it when the
 * filter holds nothing; return SWS_AGAIN while it is set. */
void      sws_http_set_buffered(sws_http_request_t *r, int on);
int       sws_http_buffered(sws_http_request_t *r);
/*
 * Body transforms (ABI 1.8): the body filter machinery of a module that
 * turns the body into another as it flows (gzip, gunzip, sub_filter). The
 * module gives a coder, run(r, data, &in, in_end, &out, out_end, mode),
 * that takes input from [*in, in_end) and writes into [*out, out_end),
 * advancing both, and returns SWS_OK when it is done with this input for
 * this mode (for FLUSH and FINISH: all it has is written; in is NULL),
 * SWS_AGAIN when it needs more output room, SWS_ERROR after logging why.
 * The transform keeps at most nbufs output buffers of bufsize bytes:
 * when all wait for the client it takes no more input (the producer's
 * buffers stay unconsumed: back-pressure) and holds the request's
 * buffered mark (its own bit of it). File input is read in chunks. A
 * flush buffer in the input makes it run FLUSH and pass what it has; the
 * last buffer FINISH, then the output ends with last_buf. Made in a
 * header filter (pool memory); the module's body filter calls
 * sws_http_transform_filter(r, t, in, next) and returns what it returns.
 */
#define SWS_HTTP_TRANSFORM_RUN     0   /* take input, write when ready */
#define SWS_HTTP_TRANSFORM_FLUSH   1   /* everything so far, now */
#define SWS_HTTP_TRANSFORM_FINISH  2   /* the end of the body */
typedef struct sws_http_transform_s  sws_http_transform_t;
typedef sws_int_t (*sws_http_transform_pt)(sws_http_request_t *r, void *data,
    const u_char **in, const u_char *in_end, u_char **out, u_char *out_end, int mode);
sws_http_transform_t *sws_http_transform_create(sws_http_request_t *r, sws_uint_t nbufs,
    size_t bufsize, sws_http_transform_pt run, void *data);
sws_int_t sws_http_transform_filter(sws_http_request_t *r, sws_http_transform_t *t,
    sws_chain_t *in, sws_http_body_filter_pt next);
/* ABI 1.8: the response depends on whether the client accepts gzip (a
 * filter that decompresses for clients that do not: gunzip), so that the
 * filter that knows gzip_vary (compress, whose header filter runs after)
 * sends "Vary: Accept-Encoding" where it is on, as nginx's r->gzip_vary. */
void      sws_http_set_gzip_vary(sws_http_request_t *r);
int       sws_http_gzip_vary(sws_http_request_t *r);
/* Whether the header was already sent (then an error can only close). */
int       sws_http_header_sent(sws_http_request_t *r);
/* Whether the response must carry no body (HEAD, 204, 304). */
int       sws_http_header_only(sws_http_request_t *r);

/* Finish the request: rc is SWS_OK / SWS_DONE (the handler sent the
 * response), SWS_AGAIN (output still buffered), an HTTP status to answer
 * with a generated error page, SWS_ERROR (close). */
void      sws_http_finalize(sws_http_request_t *r, sws_int_t rc);
/* Resume the phase engine after a handler returned SWS_AGAIN. */
void      sws_http_run_phases(sws_http_request_t *r);
/* From a phase handler: wait ms milliseconds on a timer (the worker goes
 * on with other connections), then run the phases again from the same
 * handler, which returns SWS_AGAIN now (and keeps in its request context
 * that it has waited). A client that went away meanwhile ends the request
 * (499) instead. SWS_OK, or SWS_ERROR (no memory). */
sws_int_t sws_http_sleep(sws_http_request_t *r, sws_msec_t ms);

/* The response's rate limit in bytes per second (0: none) and the bytes
 * sent before it applies: the location's limit_rate / limit_rate_after
 * unless set for the request before its body starts (rewrite's "set
 * $limit_rate"). Over HTTP/1 and HTTP/2 the body is then paced on timers. */
void      sws_http_set_limit_rate(sws_http_request_t *r, off_t rate);
off_t     sws_http_limit_rate(sws_http_request_t *r);
void      sws_http_set_limit_rate_after(sws_http_request_t *r, off_t after);

/* Convenience: a whole response with a memory body (copied into the pool).
 * Returns what the content handler should return. */
sws_int_t sws_http_send_response(sws_http_request_t *r, sws_uint_t status,
    const sws_str_t *content_type, const sws_str_t *body);

/*
 * A stored response (a cache's, or any module's), through the header and
 * body filters like any other: Range, conditional requests and HEAD work
 * on it. What was set on r before is cleared. status; the n headers
 * (copied, every one: hash is not looked at; Content-Type, ETag,
 * Last-Modified and Location are set as such; the framing ones,
 * Content-Length, Transfer-Encoding, Connection and Keep-Alive, and
 * Server, which the core writes, are left out; a Date goes out instead of
 * the core's, as the response's own (ABI 1.8; before, it was left out
 * too)); body: memory and/or
 * file buffers (in_file, fd, file_pos..file_last) of the request's pool,
 * whose data stays valid until the request ends (the last buffer is
 * marked last_buf here; NULL: no body). The length is the body's; ranges
 * are allowed for a 200. Returns what the content handler returns.
 */
sws_int_t sws_http_send_stored(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *headers, sws_uint_t n, sws_chain_t *body);
/* The same, without copying the headers: their names and values stay
 * valid until the request ends (a cache holding its entry). ABI 1.2. */
sws_int_t sws_http_send_stored_ref(sws_http_request_t *r, sws_uint_t status,
    const sws_http_header_t *headers, sws_uint_t n, sws_chain_t *body);

/*
 * A stored response's fields prepared once for many sends (a cache's
 * memory copy, answered by every hit): the fields sws_http_send_stored
 * leaves out dropped, Content-Type, ETag, Location and a valid
 * Last-Modified taken apart, the others kept in order. ABI 1.5.
 *
 * sws_http_stored_prepare() fills head from the n headers, writing the
 * kept ones into fields (room for n; it may be headers itself). Nothing
 * is copied: head, fields and what they point to must stay valid and
 * unchanged for as long as it is sent from.
 * sws_http_send_stored_head() is sws_http_send_stored_ref() of that head,
 * then the nmore headers in more added as they are (this response's own,
 * an Age: none that the core keeps apart or writes itself). The request's
 * field list is a copy, so filters change it and never the head.
 */
typedef struct {
    sws_str_t           content_type;
    sws_str_t           etag;
    sws_str_t           location;
    int64_t             last_modified;     /* -1: none */
    sws_http_header_t  *fields;
    uint32_t            nfields;
    uint32_t            flags;             /* ABI 1.8 (was reserved): below */
} sws_http_stored_head_t;

/* The stored Date, at fields[nfields] (not counted), goes out as the
 * response's Date. ABI 1.8. */
#define SWS_HTTP_STORED_HEAD_DATE  0x0001

void      sws_http_stored_prepare(sws_http_stored_head_t *head, sws_http_header_t *fields,
    const sws_http_header_t *headers, sws_uint_t n);
sws_int_t sws_http_send_stored_head(sws_http_request_t *r, sws_uint_t status,
    const sws_http_stored_head_t *head, const sws_http_header_t *more, sws_uint_t nmore,
    sws_chain_t *body);

/*
 * Fixed responses: status, type and body known at configuration time. The
 * core preformats what it can, and answers HTTP/1.x requests with one write
 * and without building header structures when nothing (no third-party
 * header filter) needs them. content_type NULL: none; location: for 3xx.
 */
typedef struct sws_http_fixed_s sws_http_fixed_t;
sws_http_fixed_t *sws_http_fixed_create(sws_conf_t *cf, sws_uint_t status,
    const sws_str_t *content_type, const sws_str_t *body, const sws_str_t *location);
/* The same with the Content-Type nginx's "return CODE TEXT" sends: the type
 * of the request URI's extension (types), else default_type, found per
 * request. ABI 1.3. */
sws_http_fixed_t *sws_http_fixed_create_typed(sws_conf_t *cf, sws_uint_t status,
    const sws_str_t *body);
/* Send it; returns what the content handler should return. */
sws_int_t sws_http_send_fixed(sws_http_request_t *r, const sws_http_fixed_t *f);
/*
 * A module whose filters act on some responses only says so from its
 * postconfiguration: acts(r) is 1 when they would change r's response.
 * A fixed response keeps the one-write path while no filter a module
 * inserted acts on it; the filters of a module that does not call this
 * are taken to act on every response (then fixed responses take the
 * ordinary path). ABI 1.3.
 */
/* The core's page for status (the bytes of nginx's, the server's name
 * aside) in a buffer of the request's pool: *out NULL when the status has
 * none (nginx answers those empty). SWS_OK or SWS_ERROR. For a filter that
 * turns a response into an error (412, 416). ABI 1.3. */
sws_int_t sws_http_error_page_make(sws_http_request_t *r, sws_uint_t status,
    sws_buf_t **out);
typedef int (*sws_http_filters_acts_pt)(sws_http_request_t *r);
sws_int_t sws_http_filters_act_when(sws_conf_t *cf, sws_http_filters_acts_pt acts);

/* ---- the request body ------------------------------------------------ */

/* Read the whole body (dechunked, at most client_max_body_size), then
 * call done. Returns SWS_OK (done is called, now or later: the handler
 * then returns SWS_DONE) or an HTTP status (400, 408, 413...). The body
 * chain is then sws_http_request_body(): memory buffers when the body fits
 * in client_body_buffer_size, else one file buffer (in_file, fd,
 * file_pos..file_last) of a temporary file (client_body_temp_path). */
sws_int_t    sws_http_read_body(sws_http_request_t *r, sws_http_event_handler_pt done);
sws_chain_t *sws_http_request_body(sws_http_request_t *r);
/* Copy up to size bytes of the body chain, from offset on, into buf,
 * whether they are in memory or in a file (positions as the chain has
 * them now: sending the chain moves them). Returns the bytes copied (0
 * past the end), or -1 after logging a failed read. */
ssize_t      sws_http_request_body_copy(sws_http_request_t *r, off_t offset, u_char *buf,
                                        size_t size);
/* Read and drop the body (so that keep-alive can go on). */
sws_int_t    sws_http_discard_body(sws_http_request_t *r);

/*
 * Streaming the body instead (a consumer that forwards it as it arrives):
 * handler(r) runs whenever body data may be readable, and the consumer
 * pulls it with sws_http_read_body_data(). Nothing is read from the client
 * while the consumer does not pull: that is the back-pressure. Returns
 * SWS_OK or an HTTP status (the request is then to be finalized with it).
 */
sws_int_t    sws_http_read_body_stream(sws_http_request_t *r, sws_http_event_handler_pt handler);
/* Copy up to size bytes of the (dechunked) body into buf, *n of them:
 *   SWS_OK     *n > 0 bytes, more may follow;
 *   SWS_DONE   the body is complete (*n may still be > 0);
 *   SWS_AGAIN  nothing now (*n == 0): the handler runs when more arrives;
 *   an HTTP status (400, 408, 413) or SWS_ERROR: the body failed. */
sws_int_t    sws_http_read_body_data(sws_http_request_t *r, u_char *buf, size_t size,
    size_t *n);

/* For handlers that stream a response: handler(r) runs each time queued
 * output was sent (some or all of it: sws_http_output returned SWS_AGAIN
 * before) while the request is not finished. NULL to stop. */
void         sws_http_set_write_handler(sws_http_request_t *r, sws_http_event_handler_pt handler);

/* A module's timer for the request (one per request): handler(r) runs
 * once, ms from now (a new call re-arms it, handler NULL cancels it). It
 * never runs after the request is over. SWS_OK or SWS_ERROR (memory). */
sws_int_t    sws_http_set_timer(sws_http_request_t *r, sws_msec_t ms,
    sws_http_event_handler_pt handler);

/* ---- subrequests (ABI 1.8) -------------------------------------------- */

/*
 * A subrequest runs a location of r's server internally, as nginx's do:
 * its own request object and pool, the URI and args given, r's request
 * headers, client address, variables' slots and $request_uri, and the
 * phases of the location it finds from the server's rewrites on (the
 * preaccess and access phases excepted: the parent passed them; an
 * "internal" location is reachable). Its response goes to no client: the
 * status and headers stay on the subrequest, the body is captured (up to
 * body_limit bytes) or dropped. When it has ended, done(r, sr, data) runs
 * from the event loop (never inside sws_http_subrequest): sws_http_status,
 * sws_http_header_out, sws_http_subrequest_body and variables ($upstream_*)
 * read sr there, and only there: sr is freed when done returns. done may
 * resume r (sws_http_run_phases) or finalize it.
 *
 * If r ends first (its client went away), its subrequests that still run
 * end with it and done is not called. A BACKGROUND subrequest (a mirror)
 * keeps r instead: r's response goes to its client at once, and r is
 * released (a kept-alive HTTP/1 connection reads its next request) when
 * the last one has ended. Nesting is limited to 50 levels ("subrequests
 * cycle" in the error log, SWS_ERROR).
 */
typedef void (*sws_http_subrequest_done_pt)(sws_http_request_t *r, sws_http_request_t *sr,
    void *data);

#define SWS_HTTP_SUBREQUEST_BACKGROUND     0x01  /* r waits for it, not its client */
#define SWS_HTTP_SUBREQUEST_BODY           0x02  /* r's body (read whole first) goes with it */
#define SWS_HTTP_SUBREQUEST_CAPTURE        0x04  /* keep its body, up to body_limit */
#define SWS_HTTP_SUBREQUEST_PARENT_METHOD  0x08  /* r's method, not method */
/*
 * OUTPUT (ABI 1.8): the subrequest's body (after its own body filters)
 * goes to r's client, after what r has sent, at r's protocol (below r's
 * body filters); its status and head go nowhere (r's module sent r's head
 * first). One OUTPUT subrequest of r runs at a time (the next is started
 * from done: SWS_ERROR otherwise); its producer waits while r's client is
 * slow, as r's own would, and it ends only when its body has left. A
 * module whose response goes on in OUTPUT subrequests passes its own last
 * buffer with last_buf cleared; r's response then stays open after r is
 * finalized, and the core ends it (last_buf at the protocol) once r is
 * finalized and its last OUTPUT subrequest has ended. One whose response
 * was cut (its last buffer never came) cuts r's; to cut it for another
 * reason (a status done does not want), done finalizes r with SWS_ERROR.
 */
#define SWS_HTTP_SUBREQUEST_OUTPUT         0x10

typedef struct {
    sws_str_t                    uri;        /* decoded, as r->uri (copied) */
    sws_str_t                    args;       /* without '?'; empty: none (copied) */
    sws_uint_t                   method;     /* SWS_HTTP_GET ...; 0: GET */
    sws_uint_t                   flags;      /* SWS_HTTP_SUBREQUEST_* */
    size_t                       body_limit; /* CAPTURE: bytes kept, the rest dropped */
    sws_http_subrequest_done_pt  done;       /* NULL: nothing to tell */
    void                        *data;
    void                        *reserved[4];
} sws_http_subrequest_conf_t;

/* Start a subrequest of r; *sr (may be NULL) gets it. SWS_OK, or SWS_ERROR
 * (logged: no memory, nesting too deep, an empty URI, an unknown method). */
sws_int_t sws_http_subrequest(sws_http_request_t *r, const sws_http_subrequest_conf_t *conf,
    sws_http_request_t **sr);
/* The request that started r, or NULL for a client's request. */
sws_http_request_t *sws_http_parent(sws_http_request_t *r);
/* A finished subrequest's captured body (sr's memory; empty unless
 * CAPTURE). SWS_OK, or SWS_DECLINED when more came than body_limit (body
 * holds the first body_limit bytes). */
sws_int_t sws_http_subrequest_body(sws_http_request_t *sr, sws_str_t *body);

/* ---- response caches, by name (ABI 1.2) -------------------------------- */

/*
 * A module that keeps responses (the cache module) registers each of its
 * caches by name at configuration time; any other module (an admin API)
 * can then remove entries by key during a request of that configuration.
 * key: one key, or every key that starts with what comes before a
 * trailing "*". purge returns SWS_OK with *removed set, or SWS_ERROR.
 */
typedef sws_int_t (*sws_http_cache_purge_pt)(void *data, const sws_str_t *key,
    sws_uint_t *removed);
sws_int_t sws_http_cache_purge_register(sws_conf_t *cf, const sws_str_t *cache,
    sws_http_cache_purge_pt purge, void *data);
/* SWS_OK (*removed entries gone), SWS_DECLINED (no cache of that name),
 * SWS_ERROR. */
sws_int_t sws_http_cache_purge(sws_http_request_t *r, const sws_str_t *cache,
    const sws_str_t *key, sws_uint_t *removed);

/*
 * ABI 1.8: a cache's figures, for an admin API. The cache module registers
 * a stats function per cache; sws_http_cache_stats(r, i, st) fills st for
 * the i-th cache that has one (st->size: the caller's sizeof, set first;
 * the function fills no more than that), SWS_DECLINED past the last.
 * responses[] counts the requests that used the cache by their final
 * $upstream_cache_status, in the order of SWS_HTTP_CACHE_MISS ..
 */
#define SWS_HTTP_CACHE_MISS         0
#define SWS_HTTP_CACHE_HIT          1
#define SWS_HTTP_CACHE_EXPIRED      2
#define SWS_HTTP_CACHE_STALE        3
#define SWS_HTTP_CACHE_UPDATING     4
#define SWS_HTTP_CACHE_REVALIDATED  5
#define SWS_HTTP_CACHE_BYPASS       6
#define SWS_HTTP_CACHE_STATUSES     7

typedef struct {
    size_t     size;
    sws_str_t  name;            /* filled by the core */
    uint64_t   entries;         /* complete entries stored */
    uint64_t   disk_bytes;      /* their files */
    uint64_t   memory_bytes;    /* their copies in shared memory */
    uint64_t   max_disk_bytes;  /* 0: no limit */
    uint64_t   max_memory_bytes;
    uint64_t   responses[SWS_HTTP_CACHE_STATUSES];
    uint64_t   evictions;       /* entries the cache manager removed
                                   (inactive, or for room) */
    uint64_t   reserved[8];
} sws_http_cache_stats_t;

typedef void (*sws_http_cache_stats_pt)(void *data, sws_http_cache_stats_t *st);
sws_int_t sws_http_cache_stats_register(sws_conf_t *cf, const sws_str_t *cache,
    sws_http_cache_stats_pt stats, void *data);
sws_int_t sws_http_cache_stats(sws_http_request_t *r, sws_uint_t i,
    sws_http_cache_stats_t *st);

/* ---- status zones (ABI 1.9) -------------------------------------------- */

/*
 * What the status_zone directive counts (docs/admin.md), summed over the
 * workers: the i-th zone of r's configuration, server zones and location
 * zones in the order the configuration names them first. st->size: the
 * caller's sizeof, set first; the core fills no more than that and sets it
 * to what it filled. SWS_OK; SWS_DECLINED past the last zone; SWS_ERROR
 * for a size too small. requests is responses[] and discarded together: a
 * request counts once it ended (at the log phase), in the zone of the
 * server and of the location it ended in.
 */
typedef struct {
    size_t      size;
    sws_str_t   name;
    sws_uint_t  location;       /* 1: a location's zone; 0: a server's */
    uint64_t    requests;
    uint64_t    responses[5];   /* by the class of the status sent: 1xx .. 5xx */
    uint64_t    discarded;      /* ended without a response head (client gone, 444) */
    uint64_t    bytes_in;       /* the requests' heads and bodies */
    uint64_t    bytes_out;      /* the responses' heads and bodies */
    uint64_t    time_ms;        /* the requests' times ($request_time) together */
    uint64_t    reserved[8];
} sws_http_status_zone_stats_t;

sws_int_t sws_http_status_zone_stats(sws_http_request_t *r, sws_uint_t i,
    sws_http_status_zone_stats_t *st);

/* The responses of zone i by status code, those counted at least once, in
 * ascending order, as far as *n (c's room in, filled out) allows. The
 * common codes are counted (1xx .. 5xx of RFC 9110 and WebDAV's); another
 * is in its class only. SWS_OK, SWS_DECLINED past the last zone. */
typedef struct {
    sws_uint_t  code;
    uint64_t    count;
} sws_http_status_code_count_t;

#define SWS_HTTP_STATUS_ZONE_CODES  64     /* room enough for every counted code */

sws_int_t sws_http_status_zone_codes(sws_http_request_t *r, sws_uint_t i,
    sws_http_status_code_count_t *c, sws_uint_t *n);

#endif
