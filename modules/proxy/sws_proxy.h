/*
 * The proxy module: HTTP/1.x to upstream servers over the upstream
 * framework. sws_proxy_module.c: directives, configuration, the content
 * handler, variables. sws_proxy_request.c: the request line and the
 * proxy's own fields. sws_proxy_response.c: Location rewritten. HTTP/1
 * itself (framing, hop-by-hop fields, the response parser) is the
 * upstream framework's (sws_http_upstream_h1_*).
 * sws_proxy_url.c: proxy_pass's URL (at start-up, or per request).
 */
#ifndef SWS_PROXY_H
#define SWS_PROXY_H

#include <scalws/scalws.h>

/* A proxy_set_header entry, compiled. */
typedef struct {
    sws_str_t            name;        /* as written */
    sws_http_format_t   *value;
} sws_proxy_header_t;

/* The request headers a location adds (proxy_set_header), merged. */
typedef struct {
    sws_str_t            static_text;   /* "Name: value\r\n" of constant values */
    sws_proxy_header_t  *dynamic;       /* values with variables */
    sws_uint_t           ndynamic;
    sws_hash_t          *names;         /* every name set (lower case) */
    unsigned             host:1;        /* set by the user: ours is not sent */
    unsigned             connection:1;
    unsigned             upgrade:1;
    unsigned             xff:1;
    unsigned             xfp:1;
    unsigned             xrid:1;
    unsigned             no_length:1;     /* Content-Length "": none sent */
} sws_proxy_headers_t;

typedef struct {
    sws_str_t            from;
    sws_str_t            to;
    unsigned             is_default:1;
} sws_proxy_redirect_t;

/* A proxy_cookie_domain / proxy_cookie_path rule (sws_proxy_cookie.c). */
typedef struct {
    sws_str_t            match;       /* literal; empty with re */
    sws_regex_t         *re;
    sws_http_format_t   *replacement;
} sws_proxy_cookie_rule_t;

/* Where requests go: proxy_pass's parts (sws_proxy_url.c). */
typedef struct {
    sws_str_t                  url;          /* "http://authority" without the URI part */
    sws_str_t                  host;         /* $proxy_host: what Host says */
    sws_str_t                  port;         /* $proxy_port */
    sws_str_t                  uri;          /* the URI part (data NULL: none) */
    sws_uint_t                 default_port; /* of the scheme */
    unsigned                   ssl:1;        /* https:// */
} sws_proxy_target_t;

typedef struct {
    sws_http_upstream_conf_t  *upstream;     /* first: the framework's setter finds it */

    /* proxy_pass (this location only) */
    sws_proxy_target_t         target;       /* a constant URL */
    sws_http_format_t         *url_fmt;      /* a URL with variables, per request */
    sws_str_t                  location;     /* the location's pattern */
    sws_uint_t                 location_kind;

    sws_uint_t                 http_version; /* SWS_HTTP_VERSION_10 / 11 */
    sws_array_t               *set_list;     /* while parsing: (name, value) pairs */
    sws_proxy_headers_t       *headers;
    sws_int_t                  pass_request_headers;
    sws_int_t                  force_ranges;  /* proxy_force_ranges */
    sws_array_t               *redirects;    /* sws_proxy_redirect_t; empty: off */
    unsigned                   redirect_off:1;  /* "proxy_redirect off" given here */
    sws_array_t               *cookie_domains;  /* sws_proxy_cookie_rule_t; empty: off */
    sws_array_t               *cookie_paths;
    sws_http_format_t         *method;       /* proxy_method; NULL: the client's */
    sws_http_format_t         *body;         /* proxy_set_body; NULL: the client's */
    unsigned                   app:1;        /* node_pass, python_pass: Host is the
                                                client's */
    unsigned                   method_set:1; /* at this level (for "is duplicate") */
    unsigned                   body_set:1;
} sws_proxy_loc_conf_t;

typedef struct {
    sws_http_upstream_t       *u;
    sws_proxy_loc_conf_t      *plcf;
    const sws_proxy_target_t  *t;               /* &plcf->target, or this request's */
    unsigned                   upgrade:1;       /* the client asked, we pass it */
    unsigned                   rid:1;           /* our X-Request-Id replaces the client's */
} sws_proxy_ctx_t;

extern sws_module_t sws_module;
extern const sws_http_upstream_proto_t sws_proxy_proto;

sws_int_t sws_proxy_create_request(sws_http_request_t *r, void *data, sws_chain_t **out);
/* sws_proxy_cookie.c */
char     *sws_proxy_cookie(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
sws_int_t sws_proxy_rewrite_cookie(sws_http_request_t *r, sws_proxy_loc_conf_t *plcf,
    sws_str_t *value);
/* The framework's HTTP/1 head, then proxy_force_ranges. */
sws_int_t sws_proxy_process_header(sws_http_request_t *r, void *data, sws_buf_t *b);
/* proxy_redirect: the hook of the framework's HTTP/1 response parser. */
sws_int_t sws_proxy_response_header(sws_http_request_t *r, void *data, const sws_str_t *name,
    const u_char *lcname, sws_str_t *value);
/* NULL, or what is wrong with url (auth: the part to connect to). */
const char *sws_proxy_parse_url(const sws_str_t *url, sws_proxy_target_t *t,
    sws_str_t *auth);
/* The client's X-Forwarded-For values with the client address appended
 * (pool memory). */
sws_int_t sws_proxy_xff(sws_http_request_t *r, sws_str_t *out);

#endif
