/*
 * libFuzzer target: the lines of a CGI response head as uwsgi, SCGI and
 * FastCGI servers send them (src/http/upstream/sws_http_upstream_cgi_lines.c,
 * under the core's shared head parser). The first byte chooses the size of
 * the pieces the rest arrives in and whether an HTTP status line may come
 * first; the bytes are parsed as the head parser does, from a buffer that
 * grows piece by piece (each time an exact-size copy, so that a read past
 * its end is caught). Every item must lie inside what was received, the
 * position must only move forward over whole lines, and the items and the
 * outcome must be the same whatever the cutting.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_http_upstream_cgi_lines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    unsigned long  hash;          /* of the items, in order */
    size_t         items;
    int            end;           /* the empty line came */
    int            bad;
} outcome_t;

static unsigned long
mix(unsigned long h, const u_char *p, size_t n)
{
    while (n--) {
        h = h * 131 + *p++;
    }
    return h * 131 + 7;
}

static void
run(const uint8_t *data, size_t size, size_t step, int status_line, outcome_t *o)
{
    size_t          have = 0, done = 0, n;
    u_char         *buf = NULL, *pos, *last;
    sws_cgi_line_t  line;
    sws_int_t       rc;

    memset(o, 0, sizeof(*o));
    while (have < size && !o->end && !o->bad) {
        u_char *grown;

        n = size - have < step ? size - have : step;
        have += n;
        grown = malloc(have - done);      /* the unparsed rest, exactly */
        if (grown == NULL) {
            abort();
        }
        memcpy(grown, data + done, have - done);
        free(buf);
        buf = grown;
        pos = buf;
        last = buf + (have - done);
        for ( ;; ) {
            u_char *before = pos;

            rc = sws_cgi_line_next(&pos, last, status_line && o->items == 0, &line);
            if (rc == SWS_AGAIN) {
                if (pos != before || memchr(pos, '\n', (size_t) (last - pos))) {
                    abort();
                }
                break;
            }
            if (pos <= before || pos > last || pos[-1] != '\n') {
                abort();
            }
            if (rc == SWS_CGI_LINE_INVALID) {
                if (line.why == NULL) {
                    abort();
                }
                o->bad = 1;
                break;
            }
            if (rc != SWS_OK) {
                abort();
            }
            o->items++;
            o->hash = mix(o->hash, (const u_char *) &line.kind, sizeof(line.kind));
            if (line.kind == SWS_CGI_LINE_END) {
                o->end = 1;
                break;
            }
            if (line.kind == SWS_CGI_LINE_STATUS) {
                if (line.status < 200 || line.status > 599) {
                    abort();
                }
                o->hash = mix(o->hash, (const u_char *) &line.status, sizeof(line.status));
                continue;
            }
            if (line.kind != SWS_CGI_LINE_FIELD || line.name.len == 0
                || line.name.data < before || line.name.data + line.name.len > pos
                || (line.value.len && (line.value.data < before
                                       || line.value.data + line.value.len > pos)))
            {
                abort();
            }
            o->hash = mix(o->hash, line.name.data, line.name.len);
            o->hash = mix(o->hash, line.value.data, line.value.len);
        }
        done += (size_t) (pos - buf);
    }
    free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    outcome_t  whole, cut;
    size_t     step;
    int        status_line;

    if (size < 1) {
        return 0;
    }
    step = (data[0] >> 1) ? (size_t) (data[0] >> 1) : 1;
    status_line = data[0] & 1;
    run(data + 1, size - 1, size, status_line, &whole);
    run(data + 1, size - 1, step, status_line, &cut);
    if (whole.items != cut.items || whole.hash != cut.hash || whole.end != cut.end
        || whole.bad != cut.bad)
    {
        abort();
    }
    return 0;
}
