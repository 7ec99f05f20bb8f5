/*
 * libFuzzer target: the referer module's parser of the Referer field
 * (modules/referer/sws_referer_parse.c) on arbitrary bytes. On success the
 * parts must lie inside the field, the host be lower case without ':' or
 * '/', and the path start with '/' (or be empty) at the field's end side.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "../../modules/referer/sws_referer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sws_referer_parts_t  p;
    u_char              *field = malloc(size ? size : 1);  /* exact size */
    size_t               i;

    memcpy(field, data, size);
    if (sws_referer_parse(field, size, &p) == SWS_OK) {
        if (p.rest.data < field || p.rest.data + p.rest.len != field + size
            || p.path.data < p.rest.data || p.path.data + p.path.len != field + size
            || p.host.len > SWS_REFERER_MAX_HOST
            || p.host.len > (size_t) (p.path.data - p.rest.data)
            || (p.path.len && p.path.data[0] != '/'))
        {
            abort();
        }
        for (i = 0; i < p.host.len; i++) {
            if (p.host.data[i] == ':' || p.host.data[i] == '/'
                || (p.host.data[i] >= 'A' && p.host.data[i] <= 'Z'))
            {
                abort();
            }
        }
    }
    free(field);
    return 0;
}
