/*
 * libFuzzer target: the python bridge's framing as scalwsd reads it
 * (modules/python/sws_python_bridge_frame.c): the RESPONSE frame decoded
 * as process_header does, then DATA, FILE and END frames read piece by
 * piece as the input filter does (a FILE's payload collected and
 * decoded). The first byte chooses the size of the pieces
 * the rest arrives in; each piece is an exact-size copy, so that a read
 * past its end is caught. Every field must lie inside the RESPONSE's
 * payload, every DATA piece inside the bytes given, and the outcome (the
 * data, the end, an error) must be the same whatever the cutting.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_python_bridge_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    unsigned long  hash;          /* of the data, in order */
    size_t         bytes;
    int            end;           /* END came: its flags + 1 */
    int            bad;
    unsigned long  files;         /* hash of the FILE ranges decoded */
} outcome_t;

/* A FILE payload, complete: decoded as the input filter does. */
static void
check_file(const unsigned char *p, size_t len, outcome_t *o)
{
    uint64_t offset, length;

    if (sws_pyb_file_decode(p, len, &offset, &length) != 0) {
        o->files = o->files * 131 + 1;
        return;
    }
    if (len != SWS_PYB_FILE_LEN || offset >= (uint64_t) 1 << 63
        || length >= (uint64_t) 1 << 63 || offset + length >= (uint64_t) 1 << 63)
    {
        abort();
    }
    o->files = o->files * 131 + (unsigned long) (offset ^ (length << 7)) + 2;
}

static void
check_fields(const unsigned char *p, size_t len)
{
    sws_pyb_response_t   rs;
    sws_pyb_str_t        name, value;
    const unsigned char *cur;
    unsigned             n = 0;

    if (sws_pyb_response_decode(p, len, &rs) != 0) {
        return;
    }
    if (rs.status < 100 || rs.status > 999) {
        abort();
    }
    for (cur = rs.fields; sws_pyb_field_next(&cur, rs.end, &name, &value); n++) {
        if (name.data < p || name.data + name.len > p + len || value.data < p
            || value.data + value.len > p + len || name.len == 0)
        {
            abort();
        }
    }
    if (n != rs.nfields || cur != rs.end) {
        abort();
    }
}

static void
run(const uint8_t *data, size_t size, size_t step, outcome_t *o)
{
    sws_pyb_reader_t     rd;
    const unsigned char *pos, *piece;
    unsigned char        file[SWS_PYB_FILE_LEN];
    size_t               at, n, k, nfile = 0;
    int                  rc;

    memset(o, 0, sizeof(*o));
    sws_pyb_reader_init(&rd, SWS_PYB_TO_SERVER);
    for (at = 0; at < size && !o->end && !o->bad; at += n) {
        unsigned char *copy;

        n = size - at < step ? size - at : step;
        copy = malloc(n);
        if (copy == NULL) {
            return;
        }
        memcpy(copy, data + at, n);
        pos = copy;
        while (!o->end && !o->bad
               && (rc = sws_pyb_read(&rd, &pos, copy + n, &piece, &k)) != SWS_PYB_AGAIN)
        {
            if (pos < copy || pos > copy + n) {
                abort();
            }
            if (rc == SWS_PYB_INVALID) {
                o->bad = 1;
            } else if (rc == SWS_PYB_PIECE) {
                if (k == 0 || piece < copy || piece + k > pos) {
                    abort();
                }
                if (rd.type == SWS_PYB_DATA) {
                    for (size_t i = 0; i < k; i++) {
                        o->hash = o->hash * 131 + piece[i];
                    }
                    o->bytes += k;
                } else if (rd.type == SWS_PYB_FILE) {
                    if (nfile + k > sizeof(file)) {
                        abort();      /* the reader bounds FILE's payload */
                    }
                    memcpy(file + nfile, piece, k);
                    nfile += k;
                    if (rd.rest == 0) {
                        check_file(file, nfile, o);
                    }
                }
            } else if (rd.type == SWS_PYB_END) {
                o->end = 1 + (int) rd.flags;
            } else if (rd.type == SWS_PYB_FILE) {
                if (rd.len != SWS_PYB_FILE_LEN || rd.flags) {
                    abort();
                }
                nfile = 0;
            } else if (rd.type != SWS_PYB_DATA && rd.type != SWS_PYB_RESPONSE) {
                abort();
            }
        }
        if (pos != copy + n && !o->end && !o->bad) {
            abort();                  /* AGAIN means all of it was taken */
        }
        free(copy);
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    outcome_t  whole, cut;
    size_t     step;

    if (size < 1) {
        return 0;
    }
    step = data[0] ? data[0] : 1;
    /* as process_header: a whole RESPONSE payload */
    if (size > 1 + SWS_PYB_HEAD_LEN) {
        check_fields(data + 1 + SWS_PYB_HEAD_LEN, size - 1 - SWS_PYB_HEAD_LEN);
    }
    run(data + 1, size - 1, size, &whole);
    run(data + 1, size - 1, step, &cut);
    if (whole.bytes > size || whole.end != cut.end || whole.bad != cut.bad
        || whole.bytes != cut.bytes || whole.hash != cut.hash || whole.files != cut.files)
    {
        abort();
    }
    return 0;
}
