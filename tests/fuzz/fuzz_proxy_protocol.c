/*
 * libFuzzer target: the PROXY protocol parser (src/event/sws_proxy_protocol.c)
 * on arbitrary bytes, fed whole and in pieces (the sizes from the first
 * byte): both ways must agree on the verdict, on where the header ends
 * and on the addresses, the end must lie within the input and the bound
 * of a header, and addresses must be of the families the protocol has.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "sws_proxy_protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sws_int_t
feed(sws_proxy_protocol_t *pp, const u_char *p, size_t n, size_t step, size_t *end)
{
    size_t     off = 0, k, used = 0;
    sws_int_t  rc = SWS_AGAIN;

    memset(pp, 0, sizeof(*pp));
    while (off < n) {
        k = step ? (n - off < step ? n - off : step) : n - off;
        rc = sws_proxy_protocol_parse(pp, p + off, k, &used);
        if (rc == SWS_OK) {
            if (used == 0 || used > k) {
                abort();
            }
            *end = off + used;
        }
        if (rc != SWS_AGAIN) {
            return rc;
        }
        off += k;
    }
    return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sws_proxy_protocol_t  a, b;
    size_t                ea = 0, eb = 0, step;
    sws_int_t             ra, rb;
    u_char               *copy;

    if (size == 0) {
        return 0;
    }
    step = (data[0] % 16) + 1;
    copy = malloc(size - 1 ? size - 1 : 1);          /* exact size: overreads show */
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data + 1, size - 1);
    ra = feed(&a, copy, size - 1, 0, &ea);
    rb = feed(&b, copy, size - 1, step, &eb);
    if (ra != rb) {
        abort();
    }
    if (ra == SWS_OK) {
        if (ea != eb || ea > size - 1 || ea > 16 + SWS_PROXY_PROTOCOL_V2_MAX
            || a.has_addrs != b.has_addrs)
        {
            abort();
        }
        if (a.has_addrs
            && ((a.src.ss_family != AF_INET && a.src.ss_family != AF_INET6)
                || a.src.ss_family != a.dst.ss_family
                || memcmp(&a.src, &b.src, sizeof(a.src)) != 0))
        {
            abort();
        }
    }
    free(copy);
    return 0;
}
