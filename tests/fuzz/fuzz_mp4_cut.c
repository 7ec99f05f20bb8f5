/*
 * libFuzzer target: an .mp4 file as the mp4 module reads and cuts it
 * (modules/mp4/sws_mp4_parse.c). The first 8 bytes of the input choose
 * the interval (start and end in milliseconds, mp4_start_key_frame), the
 * rest is the file. Whatever the file, the cut reads nothing outside it,
 * and what it answers is an MP4 head (ftyp, moov, mdat header) followed
 * by a range of the file that lies inside it.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_mp4_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    const u_char  *p;
    size_t         len;
} file_t;

static ssize_t
read_file(void *ctx, u_char *buf, size_t n, off_t off)
{
    file_t *f = ctx;

    if (off < 0 || (size_t) off > f->len) {
        abort();                        /* the cut asked outside the file */
    }
    if (n > f->len - (size_t) off) {
        n = f->len - (size_t) off;
    }
    memcpy(buf, f->p + off, n);
    return (ssize_t) n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sws_mp4_request_t  req;
    sws_mp4_result_t   res;
    sws_pool_t        *pool;
    file_t             f;
    u_char            *copy;

    if (size < 8) {
        return 0;
    }
    /* the file in a buffer of its own size: ASan sees any over-read */
    copy = malloc(size - 8 ? size - 8 : 1);
    pool = sws_pool_create(4096, NULL);
    if (copy == NULL || pool == NULL) {
        abort();
    }
    memcpy(copy, data + 8, size - 8);
    f.p = copy;
    f.len = size - 8;

    memset(&req, 0, sizeof(req));
    req.read = read_file;
    req.ctx = &f;
    req.size = (off_t) f.len;
    req.max_moov = 1 << 20;
    req.start_ms = (uint64_t) (data[0] | data[1] << 8 | data[2] << 16);
    req.end_ms = (uint64_t) (data[3] | data[4] << 8 | data[5] << 16);
    req.start_key_frame = data[6] & 1;
    if (req.end_ms <= req.start_ms) {
        req.end_ms = 0;                 /* as the handler passes it */
    }

    if (sws_mp4_cut(pool, &req, &res) == SWS_OK) {
        if (res.head_len < 8 || res.data_start < 0 || res.data_start >= res.data_end
            || (size_t) res.data_end > f.len)
        {
            abort();
        }
        /* the head is written: every byte readable */
        volatile u_char sum = 0;
        for (size_t i = 0; i < res.head_len; i++) {
            sum ^= res.head[i];
        }
        (void) sum;
    } else if (res.err_suffix == NULL || res.err_prefix == NULL) {
        abort();                        /* an error always says which */
    }
    sws_pool_destroy(pool);
    free(copy);
    return 0;
}
