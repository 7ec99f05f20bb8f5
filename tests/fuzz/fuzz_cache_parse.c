/*
 * libFuzzer target: the cache module's parsers of outside fields
 * (modules/cache/sws_cache_parse.c): Cache-Control (and its no-cache="f" /
 * private="f" field lists), Age's delta-seconds, Expires' dates in any
 * letter case. Whatever the bytes, nothing is read outside them, the
 * values are in their ranges, a delta is digits only, the field names are
 * measured as they are written and hold no separator, and a date read
 * reads back the same once formatted.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_cache_control(const sws_str_t *v)
{
    sws_cache_cc_t  cc;
    u_char         *names;
    size_t          n, m, i;

    sws_cache_cc_init(&cc);
    sws_cache_cc_parse(v, &cc);
    if (cc.max_age < -1 || cc.s_maxage < -1 || cc.swr < -1 || cc.sie < -1
        || cc.min_fresh < -1 || cc.max_stale < -1)
    {
        abort();
    }
    n = sws_cache_cc_field_names(v, NULL);
    if (n > v->len + 1 || (cc.strip && n == 0)) {
        abort();
    }
    names = malloc(n ? n : 1);
    if (names == NULL) {
        return;
    }
    m = sws_cache_cc_field_names(v, names);
    if (m != n || (n && names[n - 1] != ',')) {
        abort();
    }
    for (i = 0; i < n; i++) {
        if (names[i] == '"' || names[i] == ' ' || names[i] == '\t'
            || (names[i] == ',' && (i == 0 || names[i - 1] == ',')))
        {
            abort();
        }
    }
    free(names);
}

static void
check_delta(const u_char *p, size_t len)
{
    time_t  t = sws_cache_delta(p, p + len);
    size_t  i;
    int     digit = 0;

    if (t < -1) {
        abort();
    }
    if (t >= 0) {
        for (i = 0; i < len; i++) {
            if (p[i] >= '0' && p[i] <= '9') {
                digit = 1;
            } else if (p[i] != '"' && p[i] != ' ' && p[i] != '\t') {
                abort();               /* only digits (quotes, trailing blanks) */
            }
        }
        if (!digit) {
            abort();
        }
    }
}

static void
check_date(const u_char *p, size_t len)
{
    u_char  buf[64];
    time_t  t = sws_cache_parse_date(p, len), again;

    if (t < 0) {
        return;
    }
    again = sws_cache_parse_date(buf, (size_t) (sws_http_time(buf, t) - buf));
    if (again != t) {
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char     *copy;
    sws_str_t   v;

    /* an exact-size copy, so that a read past the end is caught */
    copy = malloc(size ? size : 1);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data, size);
    v.data = copy;
    v.len = size;
    check_cache_control(&v);
    check_delta(copy, size);
    check_date(copy, size);
    free(copy);
    return 0;
}
