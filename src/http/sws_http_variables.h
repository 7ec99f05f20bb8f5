/*
 * Request variables ($remote_addr, $status, $http_user_agent ...) and
 * formats built from them ("text $var text ${var}text"), compiled once at
 * configuration time: each variable is resolved to a getter function and
 * its argument, so rendering a line walks a flat array of operations.
 * The registry of variables is sws_http_variables.c, the format compiler
 * and renderer sws_http_format.c.
 */
#ifndef SWS_HTTP_VARIABLES_H
#define SWS_HTTP_VARIABLES_H

#include <scalws/scalws.h>

#include <scalws/sws_variables.h>

#define SWS_HTTP_VAR_SCRATCH  32      /* an int64, "S.mmm", an HTTP date */

/* One operation of a compiled format: literal text, or a variable. */
typedef struct sws_http_fop_s sws_http_fop_t;
typedef void (*sws_http_var_get_pt)(sws_http_request_t *r, sws_http_fop_t *op,
    sws_str_t *v);

struct sws_http_fop_s {
    sws_http_var_get_pt  get;          /* NULL: literal text */
    const void          *ext;          /* a module's variable */
    sws_str_t            text;         /* the literal, or the getter's argument */
    sws_str_t            value;        /* the last evaluated value */
    u_char               scratch[SWS_HTTP_VAR_SCRATCH];
};

/* The registry (sws_http_variables.c): fill op's getter and argument for
 * the variable name (memory from pool); SWS_DECLINED if there is no such
 * variable. */
sws_int_t sws_http_var_resolve(sws_pool_t *pool, sws_http_fop_t *op, const u_char *name,
    size_t len);

/* Helpers of the getters: v set to a string literal; n in decimal, a millisecond count as "S.mmm",
 * both in op's scratch. */
#define sws_http_var_set(v, s)  do { (v)->len = sizeof(s) - 1; (v)->data = (u_char *) (s); } while (0)
void sws_http_var_uint(sws_http_fop_t *op, sws_str_t *v, uint64_t n);
void sws_http_var_msec_text(sws_http_fop_t *op, sws_str_t *v, uint64_t ms);

/* Getters of the table kept with their subject (sws_http_var_request.c). */
void sws_http_var_request_length(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v);
void sws_http_var_request_body(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v);
void sws_http_var_request_body_file(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v);
void sws_http_var_request_completion(sws_http_request_t *r, sws_http_fop_t *op,
    sws_str_t *v);
void sws_http_var_pipe(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v);
void sws_http_var_connection_time(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v);
void sws_http_var_tcpinfo(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v);
void sws_http_var_http2(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v);
void sws_http_var_http3(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v);
void sws_http_var_hostname(sws_http_request_t *r, sws_http_fop_t *op, sws_str_t *v);

/* Forget the variables modules declared (a new configuration starts). */
void sws_http_variables_reset(void);
/* An http block starts: reset, and until sws_http_variables_end() a name
 * no variable has yet is resolved at the end (declared further down by a
 * map or a set), its file and line taken from cf. */
void sws_http_variables_begin(sws_conf_t *cf);
/* The block is read: resolve what was left, or log "unknown variable" at
 * its line (SWS_ERROR). *nslots: the per-request slots needed. */
sws_int_t sws_http_variables_end(sws_conf_t *cf, sws_uint_t *nslots);
/* After sws_http_variables_end: the $limit_rate a set writes (*slot, 1
 * returned) and the one a map declares (*map: NULL if none). */
int sws_http_variables_limit_rate(sws_uint_t *slot, const void **map);
/* 1 and the slot when a "set $args" exists. */
int sws_http_variables_args(sws_uint_t *slot);
/* The value of a module's variable (*map above) for r. */
void sws_http_variable_ext_value(sws_http_request_t *r, const void *ext, sws_str_t *v);

#endif
