/*
 * The native Python bridge's framing (see sws_python_bridge_frame.h): the
 * frame reader both sides use, and the decoders of the two head frames.
 */
#include <string.h>
#include "sws_python_bridge_frame.h"

void
sws_pyb_reader_init(sws_pyb_reader_t *rd, unsigned side)
{
    memset(rd, 0, sizeof(*rd));
    rd->side = side;
}

static uint32_t
sws_pyb_get32(const unsigned char *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

static uint64_t
sws_pyb_get64(const unsigned char *p)
{
    return ((uint64_t) sws_pyb_get32(p) << 32) | sws_pyb_get32(p + 4);
}

static unsigned
sws_pyb_get16(const unsigned char *p)
{
    return ((unsigned) p[0] << 8) | p[1];
}

/* Whether the side accepts a frame of this header. */
static int
sws_pyb_frame_valid(const sws_pyb_reader_t *rd)
{
    if (rd->head[2] || rd->head[3]) {
        return 0;
    }
    if (rd->side == SWS_PYB_TO_RUNNER) {
        switch (rd->type) {
        case SWS_PYB_REQUEST:
            return rd->len >= SWS_PYB_REQUEST_FIXED && rd->len <= SWS_PYB_MAX_HEAD
                   && (rd->flags & ~(SWS_PYB_REQUEST_BODY | SWS_PYB_REQUEST_UPGRADE
                                     | SWS_PYB_REQUEST_FILE)) == 0;
        case SWS_PYB_BODY:
            return rd->flags == 0;
        case SWS_PYB_BODY_END:
            return rd->flags == 0 && rd->len == 0;
        }
        return 0;
    }
    switch (rd->type) {
    case SWS_PYB_RESPONSE:
        return rd->len >= SWS_PYB_RESPONSE_FIXED && rd->len <= SWS_PYB_MAX_HEAD
               && rd->flags == 0;
    case SWS_PYB_DATA:
        return rd->flags == 0;
    case SWS_PYB_END:
        return (rd->flags & ~SWS_PYB_END_KEEP) == 0 && rd->len == 0;
    case SWS_PYB_FILE:
        return rd->flags == 0 && rd->len == SWS_PYB_FILE_LEN;
    }
    return 0;
}

int
sws_pyb_read(sws_pyb_reader_t *rd, const unsigned char **pos, const unsigned char *last,
    const unsigned char **piece, size_t *n)
{
    const unsigned char *p = *pos;
    size_t               k;

    if (rd->rest) {
        if (p == last) {
            return SWS_PYB_AGAIN;
        }
        k = (size_t) (last - p);
        if (k > rd->rest) {
            k = rd->rest;
        }
        *piece = p;
        *n = k;
        rd->rest -= (uint32_t) k;
        *pos = p + k;
        return SWS_PYB_PIECE;
    }
    k = SWS_PYB_HEAD_LEN - rd->have;
    if ((size_t) (last - p) < k) {
        k = (size_t) (last - p);
    }
    memcpy(rd->head + rd->have, p, k);
    rd->have += (unsigned) k;
    *pos = p + k;
    if (rd->have < SWS_PYB_HEAD_LEN) {
        return SWS_PYB_AGAIN;
    }
    rd->have = 0;
    rd->type = rd->head[0];
    rd->flags = rd->head[1];
    rd->len = sws_pyb_get32(rd->head + 4);
    rd->rest = rd->len;
    if (!sws_pyb_frame_valid(rd)) {
        rd->rest = 0;
        return SWS_PYB_INVALID;
    }
    return SWS_PYB_FRAME;
}

unsigned char *
sws_pyb_put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char) (v >> 8);
    p[1] = (unsigned char) v;
    return p + 2;
}

unsigned char *
sws_pyb_put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char) (v >> 24);
    p[1] = (unsigned char) (v >> 16);
    p[2] = (unsigned char) (v >> 8);
    p[3] = (unsigned char) v;
    return p + 4;
}

unsigned char *
sws_pyb_put64(unsigned char *p, uint64_t v)
{
    p = sws_pyb_put32(p, (uint32_t) (v >> 32));
    return sws_pyb_put32(p, (uint32_t) v);
}

unsigned char *
sws_pyb_put_head(unsigned char *p, unsigned type, unsigned flags, uint32_t len)
{
    p[0] = (unsigned char) type;
    p[1] = (unsigned char) flags;
    p[2] = 0;
    p[3] = 0;
    return sws_pyb_put32(p + 4, len);
}

unsigned char *
sws_pyb_put_str(unsigned char *p, const void *s, size_t len)
{
    p = sws_pyb_put16(p, (unsigned) len);
    if (len) {
        memcpy(p, s, len);
    }
    return p + len;
}

/* A string at *p, inside end; advances *p. 0, or -1 if it does not fit. */
static int
sws_pyb_get_str(const unsigned char **p, const unsigned char *end, sws_pyb_str_t *s)
{
    const unsigned char *q = *p;

    if (end - q < 2) {
        return -1;
    }
    s->len = sws_pyb_get16(q);
    q += 2;
    if ((size_t) (end - q) < s->len) {
        return -1;
    }
    s->data = q;
    *p = q + s->len;
    return 0;
}

/* n fields from p must end exactly at end. */
static int
sws_pyb_fields_check(const unsigned char *p, const unsigned char *end, unsigned n)
{
    sws_pyb_str_t name, value;

    while (n--) {
        if (sws_pyb_get_str(&p, end, &name) || sws_pyb_get_str(&p, end, &value)
            || name.len == 0)
        {
            return -1;
        }
    }
    return p == end ? 0 : -1;
}

int
sws_pyb_request_decode(const unsigned char *p, size_t len, sws_pyb_request_t *rq)
{
    const unsigned char *end = p + len;
    sws_pyb_str_t       *s[SWS_PYB_STRINGS];
    unsigned             i;

    if (len < SWS_PYB_REQUEST_FIXED || len > SWS_PYB_MAX_HEAD) {
        return -1;
    }
    rq->major = p[0];
    rq->minor = p[1];
    rq->flags = p[2];
    if (p[3] || (rq->flags & ~SWS_PYB_HTTPS) || sws_pyb_get16(p + 18)) {
        return -1;
    }
    rq->client_port = sws_pyb_get16(p + 4);
    rq->server_port = sws_pyb_get16(p + 6);
    rq->content_length = sws_pyb_get64(p + 8);
    rq->nfields = sws_pyb_get16(p + 16);
    p += SWS_PYB_REQUEST_FIXED;
    s[0] = &rq->method;
    s[1] = &rq->path;
    s[2] = &rq->raw;
    s[3] = &rq->query;
    s[4] = &rq->client;
    s[5] = &rq->server;
    s[6] = &rq->host;
    for (i = 0; i < SWS_PYB_STRINGS; i++) {
        if (sws_pyb_get_str(&p, end, s[i])) {
            return -1;
        }
    }
    if (rq->method.len == 0) {
        return -1;
    }
    rq->fields = p;
    rq->end = end;
    return sws_pyb_fields_check(p, end, rq->nfields);
}

int
sws_pyb_response_decode(const unsigned char *p, size_t len, sws_pyb_response_t *rs)
{
    if (len < SWS_PYB_RESPONSE_FIXED || len > SWS_PYB_MAX_HEAD) {
        return -1;
    }
    rs->status = sws_pyb_get16(p);
    rs->nfields = sws_pyb_get16(p + 2);
    if (rs->status < 100 || rs->status > 999) {
        return -1;
    }
    rs->fields = p + SWS_PYB_RESPONSE_FIXED;
    rs->end = p + len;
    return sws_pyb_fields_check(rs->fields, rs->end, rs->nfields);
}

int
sws_pyb_file_decode(const unsigned char *p, size_t len, uint64_t *offset, uint64_t *length)
{
    const uint64_t  max = (uint64_t) 1 << 63;

    if (len != SWS_PYB_FILE_LEN) {
        return -1;
    }
    *offset = sws_pyb_get64(p);
    *length = sws_pyb_get64(p + 8);
    return *offset < max && *length < max && *offset + *length < max ? 0 : -1;
}

int
sws_pyb_field_next(const unsigned char **cur, const unsigned char *end, sws_pyb_str_t *name,
    sws_pyb_str_t *value)
{
    if (*cur >= end || sws_pyb_get_str(cur, end, name) || sws_pyb_get_str(cur, end, value)) {
        return 0;
    }
    return 1;
}
