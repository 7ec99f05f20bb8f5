/*
 * The admin module's output: a bounded buffer that text is appended to, and
 * a JSON writer over it (what /api/ answers). Standalone (no SDK call), so
 * that tests/unit/test_admin_json.c compiles it in.
 *
 * A write that does not fit sets overflow and writes nothing more: the
 * caller tries again with a larger buffer. The writer keeps the commas:
 * values at one level are separated, keys are given with each value of an
 * object (NULL in an array). Strings are escaped for JSON, and bytes that
 * are not well-formed UTF-8 become U+FFFD, so the document is always valid.
 */
#ifndef SWS_ADMIN_JSON_H
#define SWS_ADMIN_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SWS_ADMIN_JSON_DEPTH  32

typedef struct {
    u_char    *start;
    u_char    *pos;
    u_char    *end;
    unsigned   overflow:1;
    unsigned   depth;
    /* bit d: the level d has a value already (a comma before the next) */
    uint32_t   has_value;
} sws_admin_out_t;

void sws_admin_out_init(sws_admin_out_t *o, u_char *buf, size_t size);
void sws_admin_out_bytes(sws_admin_out_t *o, const void *p, size_t n);
void sws_admin_out_cstr(sws_admin_out_t *o, const char *s);
void sws_admin_out_uint(sws_admin_out_t *o, uint64_t n);
/* n / 1000 with three decimals ("0.250"). */
void sws_admin_out_milli(sws_admin_out_t *o, uint64_t n);

/* JSON. key: the member's name in an object, NULL in an array or at the top. */
void sws_admin_json_open(sws_admin_out_t *o, const char *key, char bracket);  /* '{' '[' */
void sws_admin_json_close(sws_admin_out_t *o, char bracket);                   /* '}' ']' */
void sws_admin_json_str(sws_admin_out_t *o, const char *key, const u_char *s, size_t len);
void sws_admin_json_cstr(sws_admin_out_t *o, const char *key, const char *s);  /* NULL: null */
void sws_admin_json_uint(sws_admin_out_t *o, const char *key, uint64_t n);
void sws_admin_json_int(sws_admin_out_t *o, const char *key, int64_t n);
void sws_admin_json_bool(sws_admin_out_t *o, const char *key, int b);
/* A JSON string's content, escaped (no quotes). */
void sws_admin_json_escape(sws_admin_out_t *o, const u_char *s, size_t len);

#endif
