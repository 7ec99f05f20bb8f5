/*
 * The rewrite module's shared types: a location's script, a list of
 * operations (set, rewrite, return, if, break) run in the server's rewrite
 * phase (the server's) and the location's rewrite phase (the location's),
 * as nginx's ngx_http_rewrite_module. An "if" block is a nested location
 * (sws_http_conf_nested_location): its own script runs inline when the
 * condition holds, then the enclosing script goes on.
 */
#ifndef SWS_REWRITE_H
#define SWS_REWRITE_H

#include <scalws/scalws.h>

extern sws_module_t sws_module;

enum {
    SWS_REWRITE_SET = 0,
    SWS_REWRITE_REWRITE,
    SWS_REWRITE_RETURN,
    SWS_REWRITE_IF,
    SWS_REWRITE_BREAK
};

/* rewrite's flags */
enum {
    SWS_REWRITE_FLAG_NONE = 0,
    SWS_REWRITE_FLAG_LAST,
    SWS_REWRITE_FLAG_BREAK,
    SWS_REWRITE_FLAG_REDIRECT,
    SWS_REWRITE_FLAG_PERMANENT
};

/* if's conditions (sws_rewrite_cond.c) */
enum {
    SWS_COND_VALUE = 0,     /* ($v): not empty and not "0" */
    SWS_COND_EQ,            /* = */
    SWS_COND_NE,            /* != */
    SWS_COND_REGEX,         /* ~ ~* (negated: !~ !~*) */
    SWS_COND_FILE,          /* -f */
    SWS_COND_DIR,           /* -d */
    SWS_COND_EXISTS,        /* -e */
    SWS_COND_EXEC           /* -x */
};

typedef struct {
    sws_uint_t           type;
    unsigned             negate:1;
    sws_http_format_t   *left;       /* the variable, or the path of -f ... */
    sws_http_format_t   *right;      /* = != */
    sws_regex_t         *re;         /* ~ ~* */
    sws_str_t            text;       /* the condition as written, for the log */
} sws_rewrite_cond_t;

typedef struct sws_rewrite_loc_conf_s  sws_rewrite_loc_conf_t;

typedef struct {
    sws_uint_t           kind;
    sws_uint_t           line;
    /* set */
    sws_uint_t           index;
    sws_str_t            name;
    sws_http_format_t   *value;      /* set's value; rewrite's replacement;
                                      * return's text or URL (NULL: none) */
    /* rewrite */
    sws_regex_t         *re;
    sws_str_t            pattern;
    sws_uint_t           flag;
    unsigned             redirect:1; /* the replacement is a URL, or a flag says so */
    unsigned             drop_args:1;/* the replacement ends with '?' */
    /* return */
    sws_uint_t           status;
    sws_http_fixed_t    *fixed;      /* a response without variables */
    /* if */
    sws_rewrite_cond_t  *cond;
    sws_http_location_t *loc;
    sws_rewrite_loc_conf_t *body;    /* the if block's script */
} sws_rewrite_op_t;

struct sws_rewrite_loc_conf_s {
    sws_array_t         *ops;        /* sws_rewrite_op_t; NULL: none here */
    sws_int_t            log;        /* rewrite_log */
    sws_int_t            uninit_warn;/* uninitialized_variable_warn (accepted) */
    unsigned             server:1;   /* the server's own script */
    unsigned             first_return:1; /* the script starts with a return:
                                      * the location's phase runs it alone */
};

/* sws_rewrite_cond.c: parse "if" arguments 1..n-1 (the parentheses
 * included) into c; SWS_CONF_OK or SWS_CONF_ERROR (logged). */
char *sws_rewrite_cond_parse(sws_conf_t *cf, sws_rewrite_cond_t *c);
/* 1 true, 0 false, SWS_ERROR (500). */
sws_int_t sws_rewrite_cond_eval(sws_http_request_t *r, const sws_rewrite_cond_t *c);

/* Render a format into the request's pool, NUL-terminated (not counted). */
sws_int_t sws_rewrite_render(sws_http_request_t *r, sws_http_format_t *f, sws_str_t *out);

/* sws_rewrite_script.c: return CODE [TEXT|URL] (a status, SWS_DONE or
 * SWS_HTTP_CLOSE); run a script. SWS_DECLINED: it ran to its end;
 * SWS_OK: break (or rewrite ... break); SWS_AGAIN: rewrite ... last;
 * anything else ends the phase handler with it (a status, SWS_DONE).
 * *changed: the URI was rewritten. */
sws_int_t sws_rewrite_return(sws_http_request_t *r, const sws_rewrite_op_t *op);
sws_int_t sws_rewrite_run(sws_http_request_t *r, const sws_rewrite_loc_conf_t *lcf,
    int *changed);

#endif
