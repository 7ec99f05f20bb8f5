/*
 * libFuzzer target: the Cookie field parser behind $cookie_NAME
 * (src/http/sws_http_cookie.c) on arbitrary bytes. The first byte chooses
 * how much of the input is the name; the value found must lie inside the
 * field, follow "NAME=" there and hold no ';'.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_http_cookie.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t      nlen;
    u_char     *field, *name;
    sws_str_t   v;

    if (size == 0) {
        return 0;
    }
    nlen = data[0] % 16;
    if (nlen > size - 1) {
        nlen = size - 1;
    }
    /* exact-size copies, so that a read past either end is caught */
    name = malloc(nlen ? nlen : 1);
    field = malloc(size - 1 - nlen ? size - 1 - nlen : 1);
    if (name == NULL || field == NULL) {
        free(name);
        free(field);
        return 0;
    }
    memcpy(name, data + 1, nlen);
    memcpy(field, data + 1 + nlen, size - 1 - nlen);
    if (sws_http_cookie_find(field, size - 1 - nlen, name, nlen, &v)) {
        if (v.data < field + nlen + 1 || v.data + v.len > field + size - 1 - nlen
            || v.data[-1] != '=' || memchr(v.data, ';', v.len) != NULL)
        {
            abort();
        }
    }
    free(name);
    free(field);
    return 0;
}
