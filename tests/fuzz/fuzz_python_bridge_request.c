/*
 * libFuzzer target: the python bridge's framing as the runner reads it
 * (modules/python/sws_python_bridge_frame.c, compiled into the runner's
 * extension modules/python/bridge/_bridge.c): REQUEST frames collected and
 * decoded, BODY frames up to BODY_END, in the order the extension accepts
 * them. The first byte chooses the size of the pieces the rest arrives
 * in (exact-size copies). Every string and field of a decoded REQUEST
 * must lie inside its payload, and the outcome (the requests, the body
 * bytes, an error) must be the same whatever the cutting.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "sws_python_bridge_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    unsigned long  hash;          /* of what was decoded, in order */
    size_t         requests;
    size_t         body;
    int            bad;
} outcome_t;

static unsigned long
mix(unsigned long h, const unsigned char *p, size_t n)
{
    while (n--) {
        h = h * 131 + *p++;
    }
    return h;
}

static int
inside(const sws_pyb_str_t *s, const unsigned char *p, size_t len)
{
    return s->len == 0 || (s->data >= p && s->data + s->len <= p + len);
}

/* A whole REQUEST payload: 0, or -1 if it is refused. */
static int
request(const unsigned char *p, size_t len, outcome_t *o)
{
    sws_pyb_request_t    rq;
    sws_pyb_str_t        name, value;
    const unsigned char *cur;
    unsigned             n = 0;

    if (sws_pyb_request_decode(p, len, &rq) != 0) {
        return -1;
    }
    if (!inside(&rq.method, p, len) || !inside(&rq.path, p, len) || !inside(&rq.raw, p, len)
        || !inside(&rq.query, p, len) || !inside(&rq.client, p, len)
        || !inside(&rq.server, p, len) || !inside(&rq.host, p, len) || rq.method.len == 0)
    {
        abort();
    }
    o->hash = mix(o->hash, rq.method.data, rq.method.len);
    o->hash = mix(o->hash, rq.path.data, rq.path.len);
    for (cur = rq.fields; sws_pyb_field_next(&cur, rq.end, &name, &value); n++) {
        if (!inside(&name, p, len) || !inside(&value, p, len) || name.len == 0) {
            abort();
        }
        o->hash = mix(o->hash, name.data, name.len);
        o->hash = mix(o->hash, value.data, value.len);
    }
    if (n != rq.nfields || cur != rq.end) {
        abort();
    }
    return 0;
}

static void
run(const uint8_t *data, size_t size, size_t step, outcome_t *o)
{
    sws_pyb_reader_t     rd;
    const unsigned char *pos, *piece;
    unsigned char       *head = NULL;
    size_t               at, n, k, head_len = 0;
    int                  rc, in_body = 0;

    memset(o, 0, sizeof(*o));
    sws_pyb_reader_init(&rd, SWS_PYB_TO_RUNNER);
    for (at = 0; at < size && !o->bad; at += n) {
        unsigned char *copy;

        n = size - at < step ? size - at : step;
        copy = malloc(n);
        if (copy == NULL) {
            break;
        }
        memcpy(copy, data + at, n);
        pos = copy;
        while (!o->bad && (rc = sws_pyb_read(&rd, &pos, copy + n, &piece, &k))
                          != SWS_PYB_AGAIN)
        {
            if (pos < copy || pos > copy + n) {
                abort();
            }
            if (rc == SWS_PYB_INVALID) {
                o->bad = 1;
                break;
            }
            if (rc == SWS_PYB_FRAME) {
                if (rd.type == SWS_PYB_REQUEST) {
                    if (in_body || head || rd.len > SWS_PYB_MAX_HEAD) {
                        o->bad = 1;
                        break;
                    }
                    head = malloc(rd.len);
                    head_len = 0;
                    if (head == NULL) {
                        o->bad = 1;
                        break;
                    }
                } else if (!in_body) {
                    o->bad = 1;
                    break;
                } else if (rd.type == SWS_PYB_BODY_END) {
                    in_body = 0;
                } else if (rd.type != SWS_PYB_BODY) {
                    abort();
                }
                continue;
            }
            if (k == 0 || piece < copy || piece + k > pos) {
                abort();
            }
            if (rd.type == SWS_PYB_BODY) {
                o->body += k;
                o->hash = mix(o->hash, piece, k);
                continue;
            }
            if (head == NULL || head_len + k > rd.len) {
                abort();
            }
            memcpy(head + head_len, piece, k);
            head_len += k;
            if (rd.rest == 0) {
                if (head_len != rd.len || request(head, head_len, o) != 0) {
                    o->bad = 1;
                } else {
                    o->requests++;
                    in_body = (rd.flags & SWS_PYB_REQUEST_BODY) != 0;
                }
                free(head);
                head = NULL;
            }
        }
        free(copy);
    }
    free(head);
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
    if (whole.body > size || whole.requests != cut.requests || whole.bad != cut.bad
        || whole.body != cut.body || whole.hash != cut.hash)
    {
        abort();
    }
    return 0;
}
