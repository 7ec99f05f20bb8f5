/*
 * sws_regex: PCRE2 behind the SDK. One match data block per process, grown
 * at compile time to the largest pattern's group count (compiling happens
 * in the master, before the fork, or in a worker that reads a new
 * configuration: both before any match that needs the larger block).
 */
#include <stdio.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <scalws/sws_pool.h>
#include <scalws/sws_log.h>
#include <scalws/sws_regex.h>
#include "sws_core_module.h"

struct sws_regex_s {
    pcre2_code  *code;
    uint32_t     captures;
    uint32_t     names;          /* named groups */
    uint32_t     name_size;      /* bytes per entry of the name table */
    PCRE2_SPTR   name_table;
    unsigned     jit:1;
};

static pcre2_match_data  *sws_regex_md;
static uint32_t           sws_regex_md_pairs;
static uint32_t           sws_regex_want_pairs = 1;


static void
sws_regex_cleanup(void *data)
{
    sws_regex_t  *re = data;

    pcre2_code_free(re->code);
    re->code = NULL;
}


/* pcre_jit (the core's directive): on unless a configuration says off. */
static int sws_regex_jit = 1;

void
sws_regex_use_jit(int on)
{
    sws_regex_jit = on;
}

sws_regex_t *
sws_regex_compile(sws_pool_t *pool, const sws_str_t *pattern, sws_uint_t flags,
    const char **err)
{
    int           rc;
    char         *msg;
    size_t        n;
    PCRE2_SIZE    off;
    PCRE2_UCHAR   text[256];
    sws_regex_t  *re;

    re = sws_pcalloc(pool, sizeof(sws_regex_t));
    if (re == NULL) {
        *err = "out of memory";
        return NULL;
    }

    re->code = pcre2_compile((PCRE2_SPTR) (pattern->data ? pattern->data : (u_char *) ""),
                             pattern->len,
                             (flags & SWS_REGEX_CASELESS) ? PCRE2_CASELESS : 0,
                             &rc, &off, NULL);
    if (re->code == NULL) {
        pcre2_get_error_message(rc, text, sizeof(text));
        n = strlen((char *) text) + pattern->len + 64;
        msg = sws_pnalloc(pool, n);
        if (msg == NULL) {
            *err = "out of memory";
            return NULL;
        }
        snprintf(msg, n, "pcre2_compile() failed: %s in \"%.*s\" at offset %zu",
                 (char *) text, (int) pattern->len, (char *) pattern->data, (size_t) off);
        *err = msg;
        return NULL;
    }

    if (sws_pool_cleanup_add(pool, sws_regex_cleanup, re) != SWS_OK) {
        pcre2_code_free(re->code);
        *err = "out of memory";
        return NULL;
    }

    re->jit = sws_regex_jit && pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE) == 0;

    (void) pcre2_pattern_info(re->code, PCRE2_INFO_CAPTURECOUNT, &re->captures);
    (void) pcre2_pattern_info(re->code, PCRE2_INFO_NAMECOUNT, &re->names);
    if (re->names) {
        (void) pcre2_pattern_info(re->code, PCRE2_INFO_NAMEENTRYSIZE, &re->name_size);
        (void) pcre2_pattern_info(re->code, PCRE2_INFO_NAMETABLE, &re->name_table);
    }

    if (re->captures + 1 > sws_regex_want_pairs) {
        sws_regex_want_pairs = re->captures + 1;
    }

    return re;
}


sws_uint_t
sws_regex_captures(const sws_regex_t *re)
{
    return re->captures;
}


sws_uint_t
sws_regex_name(const sws_regex_t *re, sws_uint_t i, sws_str_t *name)
{
    PCRE2_SPTR  e;

    if (i >= re->names) {
        return 0;
    }
    /* each entry: the group number (2 bytes, big-endian), the name, NUL */
    e = re->name_table + i * re->name_size;
    name->data = (u_char *) e + 2;
    name->len = strlen((const char *) e + 2);
    return ((sws_uint_t) e[0] << 8) | e[1];
}


sws_int_t
sws_regex_exec(const sws_regex_t *re, const u_char *s, size_t len, size_t *ovector,
    sws_uint_t nvector, sws_log_t *log)
{
    int          rc;
    sws_uint_t   i, n;
    PCRE2_SIZE  *ov;
    PCRE2_UCHAR  text[128];

    if (sws_regex_md == NULL || sws_regex_md_pairs < sws_regex_want_pairs) {
        if (sws_regex_md) {
            pcre2_match_data_free(sws_regex_md);
        }
        sws_regex_md = pcre2_match_data_create(sws_regex_want_pairs, NULL);
        if (sws_regex_md == NULL) {
            sws_regex_md_pairs = 0;
            if (log) {
                sws_log_error(SWS_LOG_ERR, log, 0, "pcre2_match_data_create() failed");
            }
            return SWS_ERROR;
        }
        sws_regex_md_pairs = sws_regex_want_pairs;
    }

    if (s == NULL) {
        s = (const u_char *) "";
    }
    if (re->jit) {
        rc = pcre2_jit_match(re->code, s, len, 0, 0, sws_regex_md, NULL);
    } else {
        rc = pcre2_match(re->code, s, len, 0, 0, sws_regex_md, NULL);
    }

    if (rc == PCRE2_ERROR_NOMATCH) {
        return SWS_DECLINED;
    }
    if (rc < 0) {
        if (log) {
            pcre2_get_error_message(rc, text, sizeof(text));
            sws_log_error(SWS_LOG_ERR, log, 0, "regex match failed: %s", (char *) text);
        }
        return SWS_ERROR;
    }

    /* rc is the highest group set + 1; 0 means the block was too small,
     * which cannot happen as it is sized for every pattern */
    n = rc ? (sws_uint_t) rc : re->captures + 1;
    if (ovector) {
        ov = pcre2_get_ovector_pointer(sws_regex_md);
        for (i = 0; i < nvector; i++) {
            if (i < n && ov[2 * i] != PCRE2_UNSET) {
                ovector[2 * i] = ov[2 * i];
                ovector[2 * i + 1] = ov[2 * i + 1];
            } else {
                ovector[2 * i] = SWS_REGEX_UNSET;
                ovector[2 * i + 1] = SWS_REGEX_UNSET;
            }
        }
    }
    return (sws_int_t) n;
}
