/*
 * CGI-style protocols on the upstream framework (ABI 1.8): what FastCGI,
 * uwsgi and SCGI share, so that each module holds only its wire format.
 *
 *   - the *_param directives (NAME VALUE [if_not_empty], VALUE with
 *     variables), with the client's header fields as HTTP_* parameters
 *     (RFC 3875 4.1.18), rendered per request through the module's pair
 *     codec: how one name-value pair is framed on its wire;
 *   - the response head as a CGI program gives it (RFC 3875 6): header
 *     lines, Status:, Location:, after an HTTP status line for the
 *     protocols whose servers may send one (uwsgi, SCGI); and a body
 *     delimited by Content-Length or the end of the connection;
 *   - the directive table: SWS_HTTP_CGI_COMMANDS(prefix, ...) is the
 *     *_param family and the framework's directives under the prefix.
 *
 * A module's handler creates its upstream as any protocol does
 * (sws_http_upstream_create); its create_request measures the parameters
 * with sws_http_cgi_params_measure, makes one buffer of the exact size and
 * writes them there with sws_http_cgi_params_write, around its own framing.
 */
#ifndef SWS_UPSTREAM_CGI_H
#define SWS_UPSTREAM_CGI_H

#include <scalws/sws_types.h>
#include <scalws/sws_buf.h>
#include <scalws/sws_conf.h>
#include <scalws/sws_http.h>
#include <scalws/sws_variables.h>
#include <scalws/sws_upstream.h>

/* ---- parameters ----------------------------------------------------- */

/* A level's *_param directives (opaque): recorded by the setter, compiled
 * at merge with the module's codec. */
typedef struct sws_http_cgi_params_s  sws_http_cgi_params_t;

/*
 * How one pair is framed (the bytes around a name of nlen bytes and its
 * value of vlen bytes): size is the whole pair's length, framing included;
 * before_name, before_value and after_value write their framing at p and
 * return its end (NULL: nothing there). FastCGI: the two lengths before
 * the name; uwsgi: a 16-bit length before each; SCGI: a NUL after each.
 */
typedef struct {
    size_t    (*size)(size_t nlen, size_t vlen);
    u_char   *(*before_name)(u_char *p, size_t nlen, size_t vlen);
    u_char   *(*before_value)(u_char *p, size_t nlen, size_t vlen);
    u_char   *(*after_value)(u_char *p, size_t nlen, size_t vlen);
    void       *reserved[4];     /* zero */
} sws_http_cgi_pairs_t;

/*
 * The setter of "PREFIX_param NAME VALUE [if_not_empty]": cmd->offset is
 * that of a sws_http_cgi_params_t pointer in the location conf (NULL at
 * create_loc_conf). VALUE is compiled here (errors name the file and line).
 */
char *sws_http_cgi_param_directive(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

/*
 * From merge_loc_conf: a level without *_param inherits its parent's (as
 * nginx: a level that sets one sets them all), and the list is compiled for
 * pairs: constant pairs encoded once, the others kept as formats. Siblings
 * share what they inherit. SWS_CONF_OK or SWS_CONF_ERROR.
 */
char *sws_http_cgi_params_merge(sws_conf_t *cf, sws_http_cgi_params_t **prev,
    sws_http_cgi_params_t **conf, const sws_http_cgi_pairs_t *pairs);

/* Whether a *_param of that name is configured (name: as written). */
int   sws_http_cgi_params_has(const sws_http_cgi_params_t *ps, const char *name);

/* One request's rendering (opaque, in the request's pool). */
typedef struct sws_http_cgi_render_s  sws_http_cgi_render_t;

/* flags of sws_http_cgi_params_measure */
#define SWS_HTTP_CGI_PASS_HEADERS  0x0001   /* the client's fields as HTTP_NAME */

/*
 * For create_request: the parameters of r measured (*len: their bytes,
 * framing included). The values are the *_param ones (an empty
 * CONTENT_LENGTH gets the length of a body that was read whole), then with
 * SWS_HTTP_CGI_PASS_HEADERS the client's fields as HTTP_NAME (upper case,
 * '-' as '_'; only names of letters, digits and '-', never Proxy: httpoxy;
 * repeated ones joined with ", ", Cookie with "; "), except those a
 * *_param sets and, when the response goes to a cache, the conditional and
 * range ones (sws_http_upstream_cache_request), with the cache's
 * revalidation fields instead. NULL on error (memory).
 */
sws_http_cgi_render_t *sws_http_cgi_params_measure(sws_http_request_t *r,
    sws_http_upstream_t *u, const sws_http_cgi_params_t *ps, sws_uint_t flags, size_t *len);

/* For create_request: the request's head [start, last) (pool memory) as
 * the first link of *out, a buffered body's buffers after it (as they
 * are). SWS_OK or SWS_ERROR. */
sws_int_t  sws_http_cgi_request_chain(sws_http_upstream_t *u, u_char *start, u_char *last,
    sws_chain_t **out);

/* The pairs measured, written at p (exactly *len bytes); returns the end.
 * Nothing else may evaluate variables of r in between (the formats keep
 * the values they measured). */
u_char *sws_http_cgi_params_write(sws_http_cgi_render_t *rd, u_char *p);

/* ---- the response head ---------------------------------------------- */

/* One response's head parser (opaque, in the request's pool). */
typedef struct sws_http_cgi_head_s  sws_http_cgi_head_t;

/* flags of sws_http_cgi_head_create */
#define SWS_HTTP_CGI_STATUS_LINE     0x0001  /* an "HTTP/1.x NNN ..." line may come
                                                first (uwsgi, SCGI) */
#define SWS_HTTP_CGI_LOCAL_REDIRECT  0x0002  /* Location: /path without Status:
                                                starts the request again there
                                                (RFC 3875 6.2.2) */
#define SWS_HTTP_CGI_LENGTH          0x0004  /* Content-Length is passed on and
                                                delimits the body */

/* proto names the protocol in log lines ("uwsgi"). NULL on error. */
sws_http_cgi_head_t *sws_http_cgi_head_create(sws_http_upstream_t *u, const char *proto,
    sws_uint_t flags);
/* Another attempt (the proto's reinit). */
void       sws_http_cgi_head_reset(sws_http_cgi_head_t *h);

/*
 * The head from [b->pos, b->last): complete lines are consumed (b->pos
 * advances); each field goes to sws_http_upstream_header, Status: and an
 * HTTP status line set the status, Location without a status is a 302
 * (or a local redirect, see the flag), no status at all is a 200. Returns
 * SWS_AGAIN, SWS_OK (the head is complete), SWS_UPSTREAM_INVALID (an
 * error-log line says why) or SWS_ERROR.
 */
sws_int_t  sws_http_cgi_head_parse(sws_http_cgi_head_t *h, sws_buf_t *b);

/*
 * The body that follows, as an input filter: bytes as they are, up to the
 * Content-Length (with SWS_HTTP_CGI_LENGTH; bytes after it are dropped)
 * or until the server closes; none for HEAD, 204 and 304. Returns what an
 * input filter returns (a close before Content-Length: SWS_ERROR, logged).
 */
sws_int_t  sws_http_cgi_body(sws_http_cgi_head_t *h, sws_http_upstream_input_t *in);

/* ---- the location's configuration and the target -------------------- */

/*
 * What every CGI-style location has: the FIRST member of the module's
 * location conf (its upstream pointer first, so that the framework's
 * setter finds it).
 */
typedef struct {
    sws_http_upstream_conf_t  *upstream;
    sws_http_format_t         *pass;          /* a target with variables */
    sws_http_cgi_params_t     *params;        /* PREFIX_param */
    sws_int_t                  pass_request_headers;
    unsigned                   ssl:1;         /* over TLS (uwsgi_pass suwsgi://):
                                                 set before sws_http_cgi_pass */
    unsigned                   reserved_bits:31;
    void                      *reserved[4];
} sws_http_cgi_conf_t;

/* From create_loc_conf and merge_loc_conf (pairs: the module's codec). */
sws_int_t  sws_http_cgi_conf_init(sws_conf_t *cf, sws_http_cgi_conf_t *c);
char      *sws_http_cgi_conf_merge(sws_conf_t *cf, sws_http_cgi_conf_t *prev,
    sws_http_cgi_conf_t *conf, const sws_http_cgi_pairs_t *pairs);

/*
 * From the module's PREFIX_pass setter (cmd): addr (its scheme, if any,
 * taken off by the module) is the location's target: with variables,
 * evaluated per request; else an upstream { } name, "host:port",
 * "[v6]:port" or "unix:/path" (default_port for one without a port); the
 * location's content handler is handler; with c->ssl its requests go over
 * TLS (the framework's *_ssl_* directives apply). SWS_CONF_OK or an error
 * message.
 */
char      *sws_http_cgi_pass(sws_conf_t *cf, const sws_command_t *cmd, sws_http_cgi_conf_t *c,
    const sws_str_t *addr, sws_uint_t default_port, sws_http_handler_pt handler);

/* From the handler, after sws_http_upstream_create: a target with
 * variables evaluated; with c->ssl, TLS to it (its host the name for SNI
 * and verification). SWS_OK, or the status to answer (502: logged). */
sws_int_t  sws_http_cgi_target(sws_http_request_t *r, sws_http_upstream_t *u,
    const sws_http_cgi_conf_t *c, sws_uint_t default_port);

/* ---- a whole protocol: the handler and the response ------------------ */

/*
 * For a protocol whose response is a CGI or HTTP head and the bytes after
 * it (uwsgi, SCGI), all but create_request is here: the per-request
 * context, the content handler's work and the proto table's response
 * entries. create_request gets ctx as a sws_http_cgi_ctx_t *.
 */
typedef struct {
    sws_http_upstream_t   *u;
    sws_http_cgi_head_t   *head;
    void                  *conf;         /* the module's location conf */
    void                  *reserved[2];
} sws_http_cgi_ctx_t;

/*
 * What the module's content handler returns: conf is its location conf
 * (a sws_http_cgi_conf_t first); a fresh cache hit answers at once,
 * else the upstream is made with proto and a sws_http_cgi_ctx_t, the head
 * parser with proto->name and head_flags, the target evaluated, a body of
 * unknown length read whole first (the program is told CONTENT_LENGTH),
 * and the request started.
 */
sws_int_t  sws_http_cgi_handler(sws_http_request_t *r, const sws_http_upstream_proto_t *proto,
    void *conf, sws_uint_t head_flags, sws_uint_t default_port);

/* The proto table's reinit, process_header and input_filter for it. */
void       sws_http_cgi_reinit(sws_http_request_t *r, void *ctx);
sws_int_t  sws_http_cgi_process_header(sws_http_request_t *r, void *ctx, sws_buf_t *b);
sws_int_t  sws_http_cgi_input_filter(sws_http_request_t *r, void *ctx,
    sws_http_upstream_input_t *in);

/* ---- the directives ------------------------------------------------- */

/*
 * The directive table of a CGI-style module with prefix P ("uwsgi"), whose
 * location conf (type T) starts with its sws_http_cgi_conf_t, member cgi:
 * PREFIX_param, PREFIX_pass_request_headers and the framework's
 * (sws_http_upstream_conf_directive). The module adds PREFIX_pass and its
 * own; the cache's directives (PREFIX_cache ...) are the cache module's.
 */
#define SWS_HTTP_CGI_ALL_  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)
#define SWS_HTTP_CGI_UPS_(P, suffix, args, id)                                          \
    { P suffix, SWS_HTTP_CGI_ALL_ | (args), sws_http_upstream_conf_directive,            \
      SWS_HTTP_LOC_CONF_OFFSET, id, NULL }

#define SWS_HTTP_CGI_COMMANDS(P, T)                                                     \
    { P "_param", SWS_HTTP_CGI_ALL_ | SWS_CONF_TAKE23, sws_http_cgi_param_directive,     \
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(T, cgi.params), NULL },                          \
    { P "_pass_request_headers", SWS_HTTP_CGI_ALL_ | SWS_CONF_FLAG,                      \
      sws_conf_set_flag_slot, SWS_HTTP_LOC_CONF_OFFSET,                                  \
      offsetof(T, cgi.pass_request_headers), NULL },                                     \
    SWS_HTTP_CGI_UPS_(P, "_connect_timeout", SWS_CONF_TAKE1,                             \
                      SWS_UPSTREAM_CONF_CONNECT_TIMEOUT),                                \
    SWS_HTTP_CGI_UPS_(P, "_send_timeout", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SEND_TIMEOUT), \
    SWS_HTTP_CGI_UPS_(P, "_read_timeout", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_READ_TIMEOUT), \
    SWS_HTTP_CGI_UPS_(P, "_next_upstream", SWS_CONF_1MORE, SWS_UPSTREAM_CONF_NEXT_UPSTREAM), \
    SWS_HTTP_CGI_UPS_(P, "_next_upstream_tries", SWS_CONF_TAKE1,                         \
                      SWS_UPSTREAM_CONF_NEXT_UPSTREAM_TRIES),                            \
    SWS_HTTP_CGI_UPS_(P, "_next_upstream_timeout", SWS_CONF_TAKE1,                       \
                      SWS_UPSTREAM_CONF_NEXT_UPSTREAM_TIMEOUT),                          \
    SWS_HTTP_CGI_UPS_(P, "_buffering", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_BUFFERING),      \
    SWS_HTTP_CGI_UPS_(P, "_buffers", SWS_CONF_TAKE2, SWS_UPSTREAM_CONF_BUFFERS),         \
    SWS_HTTP_CGI_UPS_(P, "_buffer_size", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_BUFFER_SIZE), \
    SWS_HTTP_CGI_UPS_(P, "_temp_path", SWS_CONF_TAKE1234, SWS_UPSTREAM_CONF_TEMP_PATH),  \
    SWS_HTTP_CGI_UPS_(P, "_max_temp_file_size", SWS_CONF_TAKE1,                          \
                      SWS_UPSTREAM_CONF_MAX_TEMP_FILE_SIZE),                             \
    SWS_HTTP_CGI_UPS_(P, "_temp_file_write_size", SWS_CONF_TAKE1,                        \
                      SWS_UPSTREAM_CONF_TEMP_FILE_WRITE_SIZE),                           \
    SWS_HTTP_CGI_UPS_(P, "_request_buffering", SWS_CONF_FLAG,                            \
                      SWS_UPSTREAM_CONF_REQUEST_BUFFERING),                              \
    SWS_HTTP_CGI_UPS_(P, "_pass_request_body", SWS_CONF_FLAG,                            \
                      SWS_UPSTREAM_CONF_PASS_REQUEST_BODY),                              \
    SWS_HTTP_CGI_UPS_(P, "_ignore_client_abort", SWS_CONF_FLAG,                          \
                      SWS_UPSTREAM_CONF_IGNORE_CLIENT_ABORT),                            \
    SWS_HTTP_CGI_UPS_(P, "_bind", SWS_CONF_TAKE12, SWS_UPSTREAM_CONF_BIND),              \
    SWS_HTTP_CGI_UPS_(P, "_socket_keepalive", SWS_CONF_FLAG,                             \
                      SWS_UPSTREAM_CONF_SOCKET_KEEPALIVE),                               \
    SWS_HTTP_CGI_UPS_(P, "_busy_buffers_size", SWS_CONF_TAKE1,                           \
                      SWS_UPSTREAM_CONF_BUSY_BUFFERS_SIZE),                              \
    SWS_HTTP_CGI_UPS_(P, "_limit_rate", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_LIMIT_RATE),   \
    SWS_HTTP_CGI_UPS_(P, "_hide_header", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_HIDE_HEADER), \
    SWS_HTTP_CGI_UPS_(P, "_pass_header", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_PASS_HEADER), \
    SWS_HTTP_CGI_UPS_(P, "_intercept_errors", SWS_CONF_FLAG,                             \
                      SWS_UPSTREAM_CONF_INTERCEPT_ERRORS)

#endif
