/*
 * libFuzzer target: the fastcgi module's record parser
 * (modules/fastcgi/sws_fastcgi_record.c) on arbitrary bytes, as a server
 * could send them. The first byte chooses the size of the pieces the rest
 * is cut into (one byte to all of it); each piece is an exact-size copy,
 * so that a read past its end is caught. The parser must only ever hand
 * out stream data inside the piece it was given, advance through every
 * piece, agree on the same outcome whatever the cutting, and never accept
 * more stream bytes than it was given.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_fastcgi_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    size_t      out;
    size_t      err;
    int         end;
    const char *bad;
} outcome_t;

static void
run(const uint8_t *data, size_t size, size_t step, outcome_t *o)
{
    sws_fcgi_parser_t  p;
    sws_fcgi_piece_t   piece;
    size_t             at, n;
    sws_int_t          rc;

    memset(o, 0, sizeof(*o));
    sws_fcgi_parser_init(&p);
    for (at = 0; at < size && !o->end && !o->bad; at += n) {
        u_char *copy, *pos;

        n = size - at < step ? size - at : step;
        copy = malloc(n);
        if (copy == NULL) {
            return;
        }
        memcpy(copy, data + at, n);
        pos = copy;
        while ((rc = sws_fcgi_parse(&p, &pos, copy + n, &piece)) != SWS_AGAIN) {
            if (pos < copy || pos > copy + n) {
                abort();
            }
            if (rc == SWS_FCGI_DATA) {
                if (piece.len == 0 || piece.data < copy || piece.data + piece.len > pos
                    || (piece.type != SWS_FCGI_STDOUT && piece.type != SWS_FCGI_STDERR))
                {
                    abort();
                }
                if (piece.type == SWS_FCGI_STDOUT) {
                    o->out += piece.len;
                } else {
                    o->err += piece.len;
                }
            } else if (rc == SWS_FCGI_END) {
                o->end = 1;
                break;
            } else if (rc == SWS_FCGI_BAD) {
                if (p.error == NULL) {
                    abort();
                }
                o->bad = p.error;
                break;
            } else if (rc != SWS_FCGI_STDOUT_END) {
                abort();
            }
        }
        if (pos != copy + n && !o->end && !o->bad) {
            abort();                  /* AGAIN means all of it was taken */
        }
        free(copy);
    }
    if (!o->end && !o->bad) {
        o->bad = sws_fcgi_parse_eof(&p);
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
    run(data + 1, size - 1, size, &whole);
    run(data + 1, size - 1, step, &cut);
    if (whole.out + whole.err > size || whole.end != cut.end
        || (whole.bad == NULL) != (cut.bad == NULL) || whole.out != cut.out
        || whole.err != cut.err)
    {
        abort();
    }
    return 0;
}
