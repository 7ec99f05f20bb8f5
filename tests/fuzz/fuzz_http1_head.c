/*
 * libFuzzer target: the HTTP/1 head and body parsers on arbitrary bytes.
 * The input is split into lines the way the connection code does, each
 * line parsed as a request line (first) or a header line; the path is
 * normalised; Content-Length, Range and the chunked decoder get the rest.
 * Each header line, and the whole input as one line, are also checked
 * against the byte-wise reference parser, cut at every position
 * (fuzz_http1_field_ref.h).
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_http_parse.h"
#include "fuzz_http1_field_ref.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A Range value for a representation of size bytes: at most max ranges,
 * each inside it and not empty; with 0 or -1 none. */
static void
fuzz_range(const u_char *v, size_t len, off_t size)
{
    sws_http_range_t  ranges[16];
    sws_int_t         n, i;

    n = sws_http_parse_range(v, len, size, ranges, 16);
    if (n < -1 || n > 16) {
        abort();
    }
    for (i = 0; i < n; i++) {
        if (ranges[i].start < 0 || ranges[i].start >= ranges[i].end || ranges[i].end > size) {
            abort();
        }
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char                  *buf, *p, *last, *nl, *end, *norm;
    sws_http_request_line_t  rl;
    sws_http_header_t        h;
    sws_http_chunked_t       ck;
    size_t                   len;
    int                      first = 1;

    buf = malloc(size + 1);
    if (buf == NULL) {
        return 0;
    }
    memcpy(buf, data, size);
    fuzz_field_diff(data, size);
    p = buf;
    last = buf + size;

    while (p < last && (nl = memchr(p, '\n', last - p)) != NULL) {
        end = (nl > p && nl[-1] == '\r') ? nl - 1 : nl;
        if (first) {
            first = 0;
            if (sws_http_parse_request_line(&rl, p, end) == SWS_OK && rl.path.len) {
                norm = malloc(rl.path.len + 1);
                if (norm) {
                    sws_http_normalize_path(rl.path.data, rl.path.len, norm, &len, 1);
                    free(norm);
                }
            }
        } else if (end == p) {
            p = nl + 1;
            break;
        } else {
            fuzz_field_diff(p, (size_t) (end - p));
            if (sws_http_parse_header_line(&h, p, p, end) == SWS_OK) {
                (void) sws_http_parse_content_length(h.value.data, h.value.len);
                fuzz_range(h.value.data, h.value.len, 1000);
                fuzz_range(h.value.data, h.value.len, 0);
                fuzz_range(h.value.data, h.value.len, (off_t) 1 << 62);
            }
        }
        p = nl + 1;
    }

    /* The rest as a chunked body, fed in two pieces. */
    memset(&ck, 0, sizeof(ck));
    for (int piece = 0; piece < 2 && p < last; piece++) {
        u_char *stop = piece == 0 ? p + (last - p) / 2 : last;
        while (p < stop) {
            sws_int_t rc = sws_http_parse_chunked(&ck, &p, stop);
            if (rc == SWS_OK) {
                off_t n = sws_min((off_t) (stop - p), ck.size);
                p += n;
                ck.size -= n;
                continue;
            }
            if (rc != SWS_AGAIN) {
                p = last;
            }
            break;
        }
    }
    free(buf);
    return 0;
}
