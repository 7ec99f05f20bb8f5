/*
 * libFuzzer target: the compress module's Accept-Encoding parser
 * (modules/compress/sws_compress_accept.c) on arbitrary bytes, and the
 * choice made from what it read. The q-values it returns must be in
 * range and the choice one of the allowed codings, with a q above 0.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_compress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const sws_uint_t  prefer[] = { SWS_COMPRESS_ZSTD, SWS_COMPRESS_BR,
                                          SWS_COMPRESS_GZIP };
    sws_compress_accept_t    a;
    sws_uint_t               i, allowed;
    sws_int_t                c;
    u_char                  *copy;

    /* an exact-size copy, so that a read past the end is caught */
    copy = malloc(size ? size : 1);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data, size);
    sws_compress_accept_parse(copy, size, &a);

    for (i = 0; i < SWS_COMPRESS_NCODINGS; i++) {
        if (a.q[i] > 1000) {
            abort();
        }
    }
    if (a.identity_q > 1000) {
        abort();
    }
    for (allowed = 0; allowed < (1u << SWS_COMPRESS_NCODINGS); allowed++) {
        c = sws_compress_accept_choose(&a, allowed, prefer, 3);
        if (c != -1 && (c < 0 || c >= SWS_COMPRESS_NCODINGS || !(allowed & (1u << c))
                        || a.q[c] == 0))
        {
            abort();
        }
    }
    free(copy);
    return 0;
}
