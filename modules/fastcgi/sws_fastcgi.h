/*
 * The fastcgi module: FastCGI to PHP-FPM (or any FastCGI responder) over
 * the upstream framework.
 *
 *   sws_fastcgi_module.c    directives, configuration, the content handler,
 *                           $fastcgi_script_name and $fastcgi_path_info
 *   sws_fastcgi_request.c   BEGIN_REQUEST, the PARAMS (fastcgi_param and the
 *                           request's headers as HTTP_*, rendered by the
 *                           core's CGI parameters), STDIN records
 *   sws_fastcgi_response.c  STDOUT unframed in place, its CGI head parsed by
 *                           the core's; STDERR to the log
 *   sws_fastcgi_probe.c     health_check probes as FastCGI requests
 *   sws_fastcgi_record.c    the records themselves: writers, the parser
 */
#ifndef SWS_FASTCGI_H
#define SWS_FASTCGI_H

#include <scalws/scalws.h>
#include <scalws/sws_regex.h>
#include "sws_fastcgi_record.h"

typedef struct {
    sws_http_cgi_conf_t        cgi;            /* first: the framework's setter finds it */
    sws_str_t                  index;
    sws_int_t                  keep_conn;
    sws_regex_t               *split_re;       /* fastcgi_split_path_info */
    sws_array_t               *catch_stderr;   /* sws_str_t: fastcgi_catch_stderr */
} sws_fcgi_loc_conf_t;

typedef struct {
    sws_http_upstream_t       *u;
    sws_fcgi_loc_conf_t       *flcf;
    sws_fcgi_parser_t          parser;
    sws_http_cgi_head_t       *head;           /* the CGI head's parser */
    size_t                     dec;            /* head: decoded bytes at b->pos */
    sws_str_t                  script_name;    /* $fastcgi_script_name */
    sws_str_t                  path_info;      /* $fastcgi_path_info */
    u_char                    *err;            /* a STDERR line not ended yet */
    size_t                     err_len;
    unsigned                   split_done:1;
    unsigned                   predecoded:1;   /* the body's first bytes are decoded */
    unsigned                   keep:1;         /* FCGI_KEEP_CONN was asked */
    unsigned                   in_head:1;      /* STDERR now is checked (catch_stderr) */
    unsigned                   caught:1;       /* ... and a fastcgi_catch_stderr text came */
} sws_fcgi_ctx_t;

extern sws_module_t sws_module;
extern const sws_http_upstream_proto_t sws_fcgi_proto;
extern const sws_http_upstream_probe_t sws_fcgi_probe;

/* $fastcgi_script_name and $fastcgi_path_info of this request. */
void       sws_fcgi_split(sws_http_request_t *r, sws_fcgi_loc_conf_t *flcf,
                          sws_str_t *script, sws_str_t *path_info);

sws_int_t  sws_fcgi_create_request(sws_http_request_t *r, void *data, sws_chain_t **out);
void       sws_fcgi_frame_body(sws_http_request_t *r, void *data, sws_buf_t *b, int last);
extern const sws_http_cgi_pairs_t sws_fcgi_pairs;

void       sws_fcgi_reinit(sws_http_request_t *r, void *data);
sws_int_t  sws_fcgi_process_header(sws_http_request_t *r, void *data, sws_buf_t *b);
sws_int_t  sws_fcgi_input_filter(sws_http_request_t *r, void *data,
                                 sws_http_upstream_input_t *in);
void       sws_fcgi_finalize(sws_http_request_t *r, void *data, sws_int_t rc);

#endif
