/*
 * libFuzzer target: the cache module's stored-entry reader
 * (modules/cache/sws_cache_entry.c). A file under a cache's path is
 * outside input: whatever its bytes, the reader must either refuse it or
 * give an entry whose every part lies inside what was read, whose fields
 * walk exactly to their end, whose list of parts (a partial entry's) lies
 * sorted inside its body, and which, written again from its parts, reads
 * back the same.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sws_cache_entry_t  e, again;
    sws_str_t          name, value;
    uint32_t           pos = 0, n = 0;
    u_char            *copy, *out;
    size_t             len;

    /* an exact-size copy, so that a read past the end is caught */
    copy = malloc(size ? size : 1);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data, size);
    if (sws_cache_entry_parse(copy, size, size, &e) == NULL) {
        if (e.h.header_len > size || e.key + e.h.key_len > copy + size
            || e.fields + e.h.fields_len + e.h.parts_len != copy + e.h.header_len
            || e.parts != e.fields + e.h.fields_len
            || e.body != copy + e.h.header_len || e.h.header_len + e.h.body_len != size)
        {
            abort();
        }
        while (sws_cache_entry_field(&e, &pos, &name, &value)) {
            if (name.data < e.fields || value.data + value.len > e.fields + e.h.fields_len
                || name.len == 0)
            {
                abort();
            }
            n++;
        }
        if (n != e.h.nfields || pos != e.h.fields_len) {
            abort();
        }
        for (pos = 0; pos < e.h.parts_len; pos += sizeof(sws_cache_part_t)) {
            sws_cache_part_t  pt;

            memcpy(&pt, e.parts + pos, sizeof(pt));
            if (pt.start >= pt.end || pt.end > e.h.body_len) {
                abort();
            }
        }
        len = sws_cache_entry_header_size(e.h.key_len, e.h.vary_len,
                                          (size_t) e.h.fields_len + e.h.parts_len);
        out = malloc(len + e.h.body_len);
        if (out) {
            sws_cache_file_header_t  h = e.h;

            sws_cache_entry_write(out, &h, e.key, e.vary, e.fields);
            memcpy(out + len, e.body, e.h.body_len);
            if (sws_cache_entry_parse(out, len + e.h.body_len, len + e.h.body_len, &again)
                != NULL || again.h.checksum != e.h.checksum)
            {
                abort();
            }
            free(out);
        }
    }
    free(copy);
    return 0;
}
