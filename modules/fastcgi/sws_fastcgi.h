/*
 * The fastcgi module: FastCGI to PHP-FPM (or any FastCGI responder) over
 * the upstream framework.
 *
 *   sws_fastcgi_module.c    directives, configuration, the content handler,
 *                           $fastcgi_script_name and $fastcgi_path_info
 *   sws_fastcgi_request.c   BEGIN_REQUEST, the PARAMS (fastcgi_param, the
 *                           request's headers as HTTP_*), STDIN records
 *   sws_fastcgi_response.c  STDOUT parsed: the CGI head (Status, Location),
 *                           the body unframed in place, STDERR to the log
 *   sws_fastcgi_probe.c     health_check probes as FastCGI requests
 *   sws_fastcgi_record.c    the records themselves: writers, the parser
 */
#ifndef SWS_FASTCGI_H
#define SWS_FASTCGI_H

#include <scalws/scalws.h>
#include <scalws/sws_regex.h>
#include "sws_fastcgi_record.h"

/* A fastcgi_param, compiled. */
typedef struct {
    sws_str_t            name;
    sws_http_format_t   *value;        /* NULL: the value is constant */
    unsigned             if_not_empty:1;
    unsigned             content_length:1;   /* CONTENT_LENGTH */
} sws_fcgi_param_t;

/* A level's parameters, merged: constant ones pre-encoded as pairs. */
typedef struct {
    sws_str_t            static_pairs;
    sws_fcgi_param_t    *dynamic;
    sws_uint_t           ndynamic;
    sws_hash_t          *http_names;   /* HTTP_* set by fastcgi_param: the
                                          client's header is not sent too */
} sws_fcgi_params_t;

typedef struct {
    sws_http_upstream_conf_t  *upstream;       /* first: the framework's setter finds it */

    sws_http_format_t         *pass_fmt;       /* fastcgi_pass with variables */
    sws_array_t               *param_list;     /* while parsing: sws_str_t triples
                                                  (name, value, "if_not_empty"|"") */
    sws_fcgi_params_t         *params;
    sws_str_t                  index;
    sws_int_t                  keep_conn;
    sws_int_t                  pass_request_headers;
    sws_regex_t               *split_re;       /* fastcgi_split_path_info */
} sws_fcgi_loc_conf_t;

typedef struct {
    sws_http_upstream_t       *u;
    sws_fcgi_loc_conf_t       *flcf;
    sws_fcgi_parser_t          parser;
    size_t                     dec;            /* head: decoded bytes at b->pos */
    sws_str_t                  location;
    sws_str_t                  script_name;    /* $fastcgi_script_name */
    sws_str_t                  path_info;      /* $fastcgi_path_info */
    u_char                    *err;            /* a STDERR line not ended yet */
    size_t                     err_len;
    unsigned                   split_done:1;
    unsigned                   status_set:1;
    unsigned                   predecoded:1;   /* the body's first bytes are decoded */
    unsigned                   keep:1;         /* FCGI_KEEP_CONN was asked */
} sws_fcgi_ctx_t;

extern sws_module_t sws_module;
extern const sws_http_upstream_proto_t sws_fcgi_proto;
extern const sws_http_upstream_probe_t sws_fcgi_probe;

/* $fastcgi_script_name and $fastcgi_path_info of this request. */
void       sws_fcgi_split(sws_http_request_t *r, sws_fcgi_loc_conf_t *flcf,
                          sws_str_t *script, sws_str_t *path_info);

sws_int_t  sws_fcgi_create_request(sws_http_request_t *r, void *data, sws_chain_t **out);
void       sws_fcgi_frame_body(sws_http_request_t *r, void *data, sws_buf_t *b, int last);
char      *sws_fcgi_compile_params(sws_conf_t *cf, sws_fcgi_loc_conf_t *flcf);

void       sws_fcgi_reinit(sws_http_request_t *r, void *data);
sws_int_t  sws_fcgi_process_header(sws_http_request_t *r, void *data, sws_buf_t *b);
sws_int_t  sws_fcgi_input_filter(sws_http_request_t *r, void *data,
                                 sws_http_upstream_input_t *in);
void       sws_fcgi_finalize(sws_http_request_t *r, void *data, sws_int_t rc);

#endif
