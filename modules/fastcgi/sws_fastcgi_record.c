/*
 * FastCGI records: the writers and the strict, incremental parser (see
 * sws_fastcgi_record.h).
 */
#include <string.h>
#include "sws_fastcgi_record.h"

void
sws_fcgi_parser_init(sws_fcgi_parser_t *p)
{
    memset(p, 0, sizeof(*p));
}

static sws_int_t
sws_fcgi_bad(sws_fcgi_parser_t *p, const char *why)
{
    p->state = SWS_FCGI_ST_BAD;
    p->error = why;
    return SWS_FCGI_BAD;
}

/* A complete header is in p->hdr: is it one a responder may send now? */
static sws_int_t
sws_fcgi_header(sws_fcgi_parser_t *p)
{
    const u_char *h = p->hdr;
    uint32_t      id = (uint32_t) h[2] << 8 | h[3];

    if (h[0] != SWS_FCGI_VERSION) {
        return sws_fcgi_bad(p, "a record of an unknown FastCGI version");
    }
    p->type = h[1];
    p->content = (uint32_t) h[4] << 8 | h[5];
    p->padding = h[6];
    if (p->type != SWS_FCGI_STDOUT && p->type != SWS_FCGI_STDERR
        && p->type != SWS_FCGI_END_REQUEST)
    {
        return sws_fcgi_bad(p, "a record of an unexpected type");
    }
    if (id != SWS_FCGI_REQUEST_ID) {
        return sws_fcgi_bad(p, "a record for another request id");
    }
    if (p->type == SWS_FCGI_END_REQUEST) {
        if (p->content != 8) {
            return sws_fcgi_bad(p, "an END_REQUEST record whose length is not 8");
        }
        p->elen = 0;
    } else if (p->type == SWS_FCGI_STDOUT ? p->stdout_closed : p->stderr_closed) {
        return sws_fcgi_bad(p, "a record on a stream already closed");
    }
    p->state = p->content ? SWS_FCGI_ST_CONTENT
                          : p->padding ? SWS_FCGI_ST_PADDING : SWS_FCGI_ST_HEADER;
    if (p->content == 0) {
        /* An empty stream record closes its stream. */
        if (p->type == SWS_FCGI_STDOUT) {
            p->stdout_closed = 1;
            return SWS_FCGI_STDOUT_END;
        }
        p->stderr_closed = 1;
    }
    return SWS_AGAIN;
}

static sws_int_t
sws_fcgi_end_request(sws_fcgi_parser_t *p)
{
    const u_char *e = p->end;

    p->app_status = (uint32_t) e[0] << 24 | (uint32_t) e[1] << 16 | (uint32_t) e[2] << 8 | e[3];
    if (e[4] != SWS_FCGI_REQUEST_COMPLETE) {
        return sws_fcgi_bad(p, e[4] == 1 ? "END_REQUEST: cannot multiplex"
                               : e[4] == 2 ? "END_REQUEST: overloaded"
                               : e[4] == 3 ? "END_REQUEST: unknown role"
                               : "END_REQUEST with an unknown protocol status");
    }
    return SWS_FCGI_END;
}

sws_int_t
sws_fcgi_parse(sws_fcgi_parser_t *p, u_char **pos, u_char *last, sws_fcgi_piece_t *piece)
{
    u_char   *q = *pos;
    size_t    n;
    sws_int_t rc;

    while (q < last) {
        switch (p->state) {

        case SWS_FCGI_ST_HEADER:
            n = sws_min((size_t) (last - q), SWS_FCGI_HEADER_LEN - p->hlen);
            memcpy(p->hdr + p->hlen, q, n);
            p->hlen += (uint32_t) n;
            q += n;
            if (p->hlen < SWS_FCGI_HEADER_LEN) {
                break;
            }
            p->hlen = 0;
            rc = sws_fcgi_header(p);
            if (rc != SWS_AGAIN) {
                *pos = q;
                return rc;
            }
            break;

        case SWS_FCGI_ST_CONTENT:
            n = sws_min((size_t) (last - q), (size_t) p->content);
            p->content -= (uint32_t) n;
            if (p->type == SWS_FCGI_END_REQUEST) {
                memcpy(p->end + p->elen, q, n);
                p->elen += (uint32_t) n;
                q += n;
            } else {
                piece->type = p->type;
                piece->data = q;
                piece->len = n;
                q += n;
            }
            if (p->content == 0) {
                p->state = p->padding ? SWS_FCGI_ST_PADDING : SWS_FCGI_ST_HEADER;
            }
            if (p->type != SWS_FCGI_END_REQUEST) {
                *pos = q;
                return SWS_FCGI_DATA;
            }
            if (p->content == 0 && p->padding == 0) {
                p->state = SWS_FCGI_ST_DONE;
                *pos = q;
                return sws_fcgi_end_request(p);
            }
            break;

        case SWS_FCGI_ST_PADDING:
            n = sws_min((size_t) (last - q), (size_t) p->padding);
            p->padding -= (uint32_t) n;
            q += n;
            if (p->padding == 0) {
                if (p->type == SWS_FCGI_END_REQUEST) {
                    p->state = SWS_FCGI_ST_DONE;
                    *pos = q;
                    return sws_fcgi_end_request(p);
                }
                p->state = SWS_FCGI_ST_HEADER;
            }
            break;

        case SWS_FCGI_ST_DONE:
            *pos = q;
            return sws_fcgi_bad(p, "data after END_REQUEST");

        default:
            *pos = q;
            return SWS_FCGI_BAD;
        }
    }
    *pos = q;
    return SWS_AGAIN;
}

const char *
sws_fcgi_parse_eof(const sws_fcgi_parser_t *p)
{
    switch (p->state) {
    case SWS_FCGI_ST_DONE:
        return NULL;
    case SWS_FCGI_ST_HEADER:
        return p->hlen ? "closed the connection inside a record header"
                       : "closed the connection before END_REQUEST";
    case SWS_FCGI_ST_BAD:
        return p->error;
    default:
        return "closed the connection inside a record";
    }
}

u_char *
sws_fcgi_write_header(u_char *p, sws_uint_t type, size_t content, size_t padding)
{
    *p++ = SWS_FCGI_VERSION;
    *p++ = (u_char) type;
    *p++ = 0;
    *p++ = SWS_FCGI_REQUEST_ID;
    *p++ = (u_char) (content >> 8);
    *p++ = (u_char) content;
    *p++ = (u_char) padding;
    *p++ = 0;
    return p;
}

u_char *
sws_fcgi_write_begin(u_char *p, int keep_conn)
{
    p = sws_fcgi_write_header(p, SWS_FCGI_BEGIN_REQUEST, 8, 0);
    *p++ = 0;
    *p++ = SWS_FCGI_RESPONDER;
    *p++ = keep_conn ? SWS_FCGI_KEEP_CONN : 0;
    memset(p, 0, 5);
    return p + 5;
}

size_t
sws_fcgi_pair_len(size_t nlen, size_t vlen)
{
    return (nlen < 128 ? 1 : 4) + (vlen < 128 ? 1 : 4) + nlen + vlen;
}

static u_char *
sws_fcgi_write_len(u_char *p, size_t len)
{
    if (len < 128) {
        *p++ = (u_char) len;
        return p;
    }
    *p++ = (u_char) (0x80 | ((len >> 24) & 0x7f));
    *p++ = (u_char) (len >> 16);
    *p++ = (u_char) (len >> 8);
    *p++ = (u_char) len;
    return p;
}

u_char *
sws_fcgi_write_lens(u_char *p, size_t nlen, size_t vlen)
{
    p = sws_fcgi_write_len(p, nlen);
    return sws_fcgi_write_len(p, vlen);
}

u_char *
sws_fcgi_write_pair(u_char *p, const u_char *name, size_t nlen, const u_char *value,
    size_t vlen)
{
    p = sws_fcgi_write_lens(p, nlen, vlen);
    memcpy(p, name, nlen);
    p += nlen;
    if (vlen) {
        memcpy(p, value, vlen);
    }
    return p + vlen;
}
