/*
 * libFuzzer target: the path of a WebDAV Destination header as the dav
 * module decodes it (modules/dav/sws_dav_path.c) before mapping it under
 * the location's root. Whatever the input, a decoded path is no longer
 * than its input, has no NUL, and has no "." or ".." segment left: a
 * ".." (written or percent-encoded, at any place) refuses the whole path.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_dav_path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether [p, p + n) has the segment "/NAME" (NAME: "." or ".."). */
static int
has_segment(const u_char *p, size_t n, const char *name)
{
    size_t k = strlen(name), i;

    for (i = 0; i + k + 1 <= n; i++) {
        if (p[i] == '/' && memcmp(p + i + 1, name, k) == 0
            && (i + 1 + k == n || p[i + 1 + k] == '/'))
        {
            return 1;
        }
    }
    return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char *in = malloc(size ? size : 1), *out = malloc(size + 1);
    size_t  len;

    if (in == NULL || out == NULL) {
        abort();
    }
    memcpy(in, data, size);
    len = sws_dav_decode_path(in, in + size, out);
    if (len != SWS_DAV_PATH_INVALID) {
        if (len > size || out[len] != '\0' || memchr(out, '\0', len)
            || has_segment(out, len, "..") || has_segment(out, len, "."))
        {
            abort();
        }
    }
    free(in);
    free(out);
    return 0;
}
