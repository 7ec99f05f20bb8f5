/*
 * Request variables ($remote_addr, $host, $http_NAME ...) and formats built
 * from them ("text $var ${var}text"), compiled once at configuration time.
 * Modules may declare variables of their own ($proxy_host ...).
 */
#ifndef SWS_VARIABLES_H
#define SWS_VARIABLES_H

#include <scalws/sws_types.h>
#include <scalws/sws_conf.h>
#include <scalws/sws_pool.h>

/* How variable values are escaped (literal text is never escaped). */
#define SWS_HTTP_ESCAPE_DEFAULT  0   /* < 0x20, '"', '\\', >= 0x7f as \xHH;
                                        an empty value is written as "-" */
#define SWS_HTTP_ESCAPE_JSON     1   /* JSON string escaping */
#define SWS_HTTP_ESCAPE_NONE     2   /* as is */

typedef struct sws_http_format_s sws_http_format_t;

/*
 * Compile text (copied into pool). Returns NULL with *err set (pool memory
 * or a static string) for an unknown variable ("unknown variable "$x""),
 * an invalid name ("$" not followed by a name), an unterminated "${" or a
 * bad escape value.
 */
sws_http_format_t *sws_http_format_compile(sws_pool_t *pool, const sws_str_t *text,
    int escape, const char **err);

/*
 * The exact length of the output for r. It evaluates the variables and
 * keeps their values in f, so the following sws_http_format_render() for
 * the same r writes exactly this many bytes without evaluating them again
 * (render alone evaluates them itself). Single-threaded use only.
 */
size_t  sws_http_format_len(sws_http_format_t *f, sws_http_request_t *r);
/* Write the output into buf (room for sws_http_format_len bytes); returns
 * the end of what was written. */
u_char *sws_http_format_render(sws_http_format_t *f, sws_http_request_t *r, u_char *buf);

/*
 * Measure, find room for and render f for r in one call (one pass over the
 * variables for the length, one to write, as the two calls above). The
 * output goes into buf if it fits in size bytes with extra bytes to spare
 * after it, else into len + extra bytes of pool; the extra bytes are the
 * caller's (a NUL, a newline, more text). out->data is the output,
 * out->len its length; an empty output with no extra and no buf is "".
 * SWS_OK; SWS_ERROR: no memory; SWS_DECLINED when it does not fit buf and
 * pool is NULL: out->len is then the length it needs and the values stay
 * kept in f, so sws_http_format_render() for the same r can still write
 * it once the caller has made room. buf may be NULL (size 0).
 */
static inline sws_int_t
sws_http_format_string(sws_http_format_t *f, sws_http_request_t *r, sws_pool_t *pool,
    size_t extra, u_char *buf, size_t size, sws_str_t *out)
{
    /* inline: at a call site the constant arguments fold away, and what
     * is left is the two calls a caller would write (no cost of its own) */
    size_t  len = sws_http_format_len(f, r);

    out->len = len;
    if (buf && len + extra <= size) {
        out->data = buf;
    } else if (pool == NULL) {
        return SWS_DECLINED;            /* the values stay kept in f */
    } else if (len + extra == 0) {
        out->data = (u_char *) "";
        return SWS_OK;
    } else {
        out->data = (u_char *) sws_pnalloc(pool, len + extra);
        if (out->data == NULL) {
            return SWS_ERROR;
        }
    }
    out->len = (size_t) (sws_http_format_render(f, r, out->data) - out->data);
    return SWS_OK;
}

/* 1 if the format has no variables (its output never changes). */
int     sws_http_format_is_static(const sws_http_format_t *f);

/*
 * A module's variable: the getter sets *value to memory that lives as long
 * as the request (the request's pool, the request itself, or static). It
 * runs on every read. Declare it while the http block is read (a format
 * compiled before the declaration finds it too: names unknown when a
 * format is compiled are resolved when the block ends, and only then are
 * they an error); a name of the core wins.
 */
typedef void (*sws_http_variable_pt)(sws_http_request_t *r, void *data, sws_str_t *value);
sws_int_t sws_http_variable_add(sws_conf_t *cf, const char *name, sws_http_variable_pt get,
    void *data);

/*
 * A module's variable evaluated lazily and once per request (map): the
 * getter runs when the variable is first read in a request, and that value
 * is kept for the request (internal redirects included). With
 * SWS_HTTP_VAR_VOLATILE it runs on every read. A read while the getter
 * runs (a value that depends on itself) is empty, and the cycle is logged.
 * A name of the core, or one another module or "set" declared, is an error
 * (logged at the directive).
 */
#define SWS_HTTP_VAR_VOLATILE  0x1
sws_int_t sws_http_variable_add_cached(sws_conf_t *cf, const char *name,
    sws_http_variable_pt get, void *data, sws_uint_t flags);

/*
 * A variable that handlers write (rewrite's "set $name"): returns its index
 * (the same for the same name), or SWS_ERROR (logged) for a name of the
 * core or of a module. Every format knows it; until written in a request
 * it is empty. sws_http_variable_set() writes it for one request; value
 * must live as long as the request.
 */
sws_int_t sws_http_variable_writable(sws_conf_t *cf, const sws_str_t *name);
sws_int_t sws_http_variable_set(sws_http_request_t *r, sws_uint_t index,
    const sws_str_t *value);

#endif
