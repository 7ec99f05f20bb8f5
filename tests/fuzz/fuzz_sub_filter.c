/*
 * libFuzzer target: sub_filter's streaming matcher
 * (modules/sub_filter/sws_sub_filter_match.c). The input gives up to 4
 * patterns and their replacements, the once flag, a body and a way to cut
 * it: the body is fed in pieces of random sizes into output room of random
 * sizes, with flushes between pieces, and the result must be the bytes a
 * plain reference gets from the whole body at once (leftmost match, the
 * first configured at one place, case ignored in ASCII, each string once
 * with once; a body ending inside a possible match ends as it is, as
 * nginx's does).
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include <scalws/sws_http.h>
#include "../../modules/sub_filter/sws_sub_filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NPATS  4

typedef struct {
    const uint8_t  *p;
    size_t          left;
} fuzz_in_t;

static uint8_t
fuzz_byte(fuzz_in_t *f)
{
    if (f->left == 0) {
        return 0;
    }
    f->left--;
    return *f->p++;
}

static sws_str_t  fuzz_values[NPATS];

static sws_int_t
fuzz_value(void *data, sws_uint_t i, sws_str_t *v)
{
    (void) data;
    *v = fuzz_values[i];
    return SWS_OK;
}

static u_char
fuzz_lower(u_char c)
{
    return (c >= 'A' && c <= 'Z') ? (u_char) (c | 0x20) : c;
}

/* The reference: the whole body at once, byte by byte. */
static size_t
fuzz_reference(const sws_sub_set_t *set, const u_char *body, size_t len, u_char *out)
{
    u_char      done[NPATS] = { 0 };
    size_t      i = 0, o = 0, j;
    sws_uint_t  k;

    while (i < len) {
        for (k = 0; k < set->n; k++) {
            if (done[k]) {
                continue;
            }
            for (j = 0; j < set->pats[k].len && i + j < len
                        && fuzz_lower(body[i + j]) == set->pats[k].data[j]; j++)
            {
                /* compare */
            }
            if (j == set->pats[k].len || i + j == len) {
                break;
            }
        }
        if (k < set->n && set->pats[k].len > len - i) {
            /* the body ends inside a possible match: the rest as it is */
            memcpy(out + o, body + i, len - i);
            o += len - i;
            break;
        }
        if (k < set->n) {
            memcpy(out + o, fuzz_values[k].data, fuzz_values[k].len);
            o += fuzz_values[k].len;
            i += set->pats[k].len;
            done[k] = set->once;
        } else {
            out[o++] = body[i++];
        }
    }
    return o;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in_t          f = { data, size };
    sws_sub_pattern_t  pats[NPATS];
    u_char             patbuf[NPATS][16], valbuf[NPATS][24];
    sws_sub_set_t      set = { pats, 0, 0, 0 };
    sws_sub_state_t   *st;
    u_char            *ref, *got, *o;
    const u_char      *in, *body;
    size_t             body_len, i, j, n, ref_len, room, piece;
    uint8_t            cfg;
    sws_int_t          rc;
    int                mode, guard;

    cfg = fuzz_byte(&f);
    set.once = cfg & 1;
    n = 1 + ((cfg >> 1) & 3);
    for (i = 0; i < n; i++) {
        pats[i].len = 1 + fuzz_byte(&f) % sizeof(patbuf[i]);
        for (j = 0; j < pats[i].len; j++) {
            /* a small alphabet, so that patterns overlap and match */
            patbuf[i][j] = (u_char) ('a' + fuzz_byte(&f) % 3);
        }
        pats[i].data = patbuf[i];
        if (pats[i].len > set.max_len) {
            set.max_len = pats[i].len;
        }
        fuzz_values[i].len = fuzz_byte(&f) % sizeof(valbuf[i]);
        for (j = 0; j < fuzz_values[i].len; j++) {
            valbuf[i][j] = (u_char) ('0' + i);
        }
        fuzz_values[i].data = valbuf[i];
    }
    set.n = (sws_uint_t) n;

    /* the body: the rest but the cut bytes (half of what is left) */
    body_len = f.left / 2;
    body = f.p;
    f.p += body_len;
    f.left -= body_len;

    st = calloc(1, sws_sub_state_size(&set));
    ref = malloc(body_len * sizeof(valbuf[0]) + 1);
    got = malloc(body_len * sizeof(valbuf[0]) + 1);
    sws_sub_state_init(st, &set, fuzz_value, NULL);
    ref_len = fuzz_reference(&set, body, body_len, ref);

    o = got;
    i = 0;
    for (guard = 0; guard < 100000; guard++) {
        piece = 1 + fuzz_byte(&f) % 64;
        if (piece > body_len - i) {
            piece = body_len - i;
        }
        mode = i + piece == body_len ? (piece ? SWS_HTTP_TRANSFORM_RUN : SWS_HTTP_TRANSFORM_FINISH)
               : (fuzz_byte(&f) & 7) == 0 ? SWS_HTTP_TRANSFORM_FLUSH : SWS_HTTP_TRANSFORM_RUN;
        in = piece ? body + i : NULL;
        /* run this piece (or flag) until it is taken, in small rooms */
        for ( ;; ) {
            const u_char  *start = in;
            u_char        *ostart = o;

            room = fuzz_byte(&f) % 40;
            if (room == 0) {
                room = 1;
            }
            rc = sws_sub_match_run(st, &in, piece ? body + i + piece : NULL, &o, o + room,
                                   piece ? SWS_HTTP_TRANSFORM_RUN : mode);
            if (rc == SWS_ERROR || (size_t) (o - ostart) > room
                || (piece && (in < start || in > body + i + piece)))
            {
                abort();
            }
            if (rc == SWS_OK && (!piece || in == body + i + piece)) {
                break;
            }
        }
        i += piece;
        if (piece && mode == SWS_HTTP_TRANSFORM_FLUSH) {
            in = NULL;
            for (rc = SWS_AGAIN; rc == SWS_AGAIN; ) {
                rc = sws_sub_match_run(st, &in, NULL, &o, o + 3, SWS_HTTP_TRANSFORM_FLUSH);
            }
        }
        if (!piece) {
            break;
        }
        if (i == body_len) {
            /* the end: FINISH until all is out */
            in = NULL;
            for (rc = SWS_AGAIN; rc == SWS_AGAIN; ) {
                rc = sws_sub_match_run(st, &in, NULL, &o, o + 5, SWS_HTTP_TRANSFORM_FINISH);
            }
            break;
        }
    }
    if (rc != SWS_OK || (size_t) (o - got) != ref_len || memcmp(got, ref, ref_len) != 0) {
        abort();
    }
    free(st);
    free(ref);
    free(got);
    return 0;
}
