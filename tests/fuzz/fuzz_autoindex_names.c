/*
 * libFuzzer target: the autoindex module's listings
 * (modules/autoindex/sws_autoindex_format.c) for one entry whose name is
 * the input (file names are outside input: any byte but '/' and NUL). In
 * each format the name must come back exactly: the HTML link
 * percent-decoded, the JSON string unescaped; and the HTML and XML text
 * must carry no markup character and no control byte.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#define _GNU_SOURCE 1          /* memmem */
#include <stdlib.h>
#include <string.h>
#include "sws_autoindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
hexval(u_char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The text between the first "open" after from and the next "close". */
static const u_char *
between(const u_char *from, const u_char *last, const char *open, const char *close,
    const u_char **end)
{
    const u_char *p = memmem(from, (size_t) (last - from), open, strlen(open)), *q;

    if (p == NULL) {
        abort();
    }
    p += strlen(open);
    q = memmem(p, (size_t) (last - p), close, strlen(close));
    if (q == NULL) {
        abort();
    }
    *end = q;
    return p;
}

static void
check_text(const u_char *p, const u_char *q)
{
    for ( ; p < q; p++) {
        if (*p < 0x20 || *p == 0x7f || *p == '<' || *p == '>' || *p == '"' || *p == '\'') {
            abort();
        }
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const sws_str_t    uri = sws_string("/d/");
    sws_autoindex_loc_conf_t  conf = { 1, SWS_AUTOINDEX_HTML, 1, 0 };
    sws_autoindex_entry_t     e;
    sws_autoindex_out_t       o;
    const u_char             *p, *q;
    u_char                   *name, *dec, *d;
    sws_pool_t               *pool;
    int                       hi, lo;

    if (size == 0 || size > 1024 || memchr(data, '/', size) || memchr(data, 0, size)) {
        return 0;
    }
    pool = sws_pool_create(4096, NULL);
    name = malloc(size + 1);
    dec = malloc(size * 6 + 8);
    if (pool == NULL || name == NULL || dec == NULL) {
        abort();
    }
    memcpy(name, data, size);
    name[size] = '\0';
    memset(&e, 0, sizeof(e));
    e.name.data = name;
    e.name.len = size;
    e.file = 1;
    e.size = 123;
    e.mtime = 1700000000;

    /* HTML: the link decodes to the name; the text is inert */
    memset(&o, 0, sizeof(o));
    o.pool = pool;
    if (sws_autoindex_html(&o, &uri, &e, 1, &conf) != SWS_OK) {
        abort();
    }
    p = between(o.start + 40, o.pos, "<a href=\"", "\">", &q);
    p = between(p, o.pos, "<a href=\"", "\">", &q);     /* after "../" */
    for (d = dec; p < q; ) {
        if (*p == '%') {
            hi = hexval(p[1]);
            lo = hexval(p[2]);
            if (hi < 0 || lo < 0) {
                abort();
            }
            *d++ = (u_char) (hi * 16 + lo);
            p += 3;
        } else {
            *d++ = *p++;
        }
    }
    if ((size_t) (d - dec) != size || memcmp(dec, name, size) != 0) {
        abort();
    }
    p = between(q, o.pos, "\">", "</a>", &q);
    check_text(p, q);

    /* JSON: the string unescapes to the name */
    memset(&o, 0, sizeof(o));
    o.pool = pool;
    if (sws_autoindex_json(&o, NULL, &e, 1) != SWS_OK) {
        abort();
    }
    p = between(o.start, o.pos, "\"name\":\"", "\", \"type\"", &q);
    for (d = dec; p < q; ) {
        if (*p < 0x20 || *p == 0x7f) {
            abort();
        }
        if (*p != '\\') {
            if (*p == '"') {
                abort();
            }
            *d++ = *p++;
        } else if (p[1] == '"' || p[1] == '\\') {
            *d++ = p[1];
            p += 2;
        } else if (p[1] == 'u' && p[2] == '0' && p[3] == '0') {
            hi = hexval(p[4]);
            lo = hexval(p[5]);
            if (hi < 0 || lo < 0) {
                abort();
            }
            *d++ = (u_char) (hi * 16 + lo);
            p += 6;
        } else {
            abort();
        }
    }
    if ((size_t) (d - dec) != size || memcmp(dec, name, size) != 0) {
        abort();
    }

    /* XML: the element's text is inert */
    memset(&o, 0, sizeof(o));
    o.pool = pool;
    if (sws_autoindex_xml(&o, &e, 1) != SWS_OK) {
        abort();
    }
    p = between(o.start + 30, o.pos, "size=\"123\">", "</file>", &q);
    check_text(p, q);

    sws_pool_destroy(pool);
    free(name);
    free(dec);
    return 0;
}
