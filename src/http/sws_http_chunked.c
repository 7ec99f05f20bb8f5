/*
 * Chunked transfer coding (RFC 9112 7.1) as a byte-at-a-time state machine:
 * the input may be cut anywhere, all state lives in sws_http_chunked_t.
 *
 *   chunked-body = *chunk last-chunk trailer-section CRLF
 *   chunk        = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
 *   chunk-ext    = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
 *
 * A bare LF is accepted as a line terminator (RFC 9112 2.2), a bare CR is
 * not. Whitespace is only allowed where BWS is, so "5 \r\n" is an error.
 * Limits: 15 significant hex digits (< 2^60) per chunk size, 4096 bytes per
 * chunk-size line, 4096 bytes for the whole trailer section, and the sum of
 * chunk sizes (ctx->total, counted when a chunk size line is complete) at
 * most 2^62.
 */
#include "sws_http_parse.h"

#define SWS_HTTP_CHUNK_LINE_MAX     4096
#define SWS_HTTP_CHUNK_TRAILER_MAX  4096
#define SWS_HTTP_CHUNK_DIGITS_MAX   15
#define SWS_HTTP_CHUNK_TOTAL_MAX    ((off_t) 1 << 62)

enum {
    sw_size_start = 0,
    sw_size,
    sw_ws_before_semi,      /* BWS seen, only ';' may follow */
    sw_ext_name_start,      /* after ';' */
    sw_ext_name,
    sw_ext_before_eq,       /* BWS after a name: '=' or ';' */
    sw_ext_val_start,       /* after '=' */
    sw_ext_token,
    sw_ext_after_val,       /* after a token or quoted value */
    sw_ext_quoted,
    sw_ext_quoted_pair,
    sw_size_lf,             /* CR seen at the end of the size line */
    sw_data,
    sw_data_cr,
    sw_data_lf,
    sw_trailer_start,
    sw_trailer_name,
    sw_trailer_value,
    sw_trailer_lf,
    sw_last_lf,
    sw_done,
    sw_error
};

#define C_TCHAR   0x01
#define C_QDTEXT  0x02      /* HTAB SP 21 23-5B 5D-7E obs-text */
#define C_FIELD   0x04      /* HTAB SP VCHAR obs-text */
#define C_HEX     0x08

#define T_ C_TCHAR
#define Q_ C_QDTEXT
#define F_ C_FIELD

static const uint8_t sws_chunk_cls[256] = {
    ['\t'] = Q_|F_,
    [' '] = Q_|F_,
    ['!'] = T_|Q_|F_,
    ['"'] = F_,
    ['#'] = T_|Q_|F_, ['$'] = T_|Q_|F_, ['%'] = T_|Q_|F_, ['&'] = T_|Q_|F_,
    ['\''] = T_|Q_|F_,
    ['('] = Q_|F_, [')'] = Q_|F_,
    ['*'] = T_|Q_|F_, ['+'] = T_|Q_|F_,
    [','] = Q_|F_,
    ['-'] = T_|Q_|F_, ['.'] = T_|Q_|F_,
    ['/'] = Q_|F_,
    ['0' ... '9'] = T_|Q_|F_|C_HEX,
    [':'] = Q_|F_, [';'] = Q_|F_, ['<'] = Q_|F_, ['='] = Q_|F_,
    ['>'] = Q_|F_, ['?'] = Q_|F_, ['@'] = Q_|F_,
    ['A' ... 'F'] = T_|Q_|F_|C_HEX,
    ['G' ... 'Z'] = T_|Q_|F_,
    ['['] = Q_|F_,
    ['\\'] = F_,
    [']'] = Q_|F_,
    ['^'] = T_|Q_|F_, ['_'] = T_|Q_|F_, ['`'] = T_|Q_|F_,
    ['a' ... 'f'] = T_|Q_|F_|C_HEX,
    ['g' ... 'z'] = T_|Q_|F_,
    ['{'] = Q_|F_,
    ['|'] = T_|Q_|F_,
    ['}'] = Q_|F_,
    ['~'] = T_|Q_|F_,
    [0x80 ... 0xff] = Q_|F_,
};


sws_int_t
sws_http_parse_chunked(sws_http_chunked_t *ctx, u_char **pos, u_char *last)
{
    u_char      *p, c;
    sws_uint_t   state, len;
    off_t        size;

    state = ctx->state;
    p = *pos;

    if (state == sw_data) {
        goto data;
    }
    if (state == sw_done) {
        return SWS_DONE;
    }
    if (state == sw_error) {
        return SWS_ERROR;
    }

    size = ctx->size;
    len = ctx->ext_len;

    for ( ;; ) {
        if (p == last) {
            ctx->state = state;
            ctx->size = size;
            ctx->ext_len = len;
            *pos = p;
            return SWS_AGAIN;
        }

        c = *p++;

        if (state >= sw_trailer_start) {
            if (++len > SWS_HTTP_CHUNK_TRAILER_MAX) {
                goto error;
            }
        } else if (++len > SWS_HTTP_CHUNK_LINE_MAX) {
            goto error;
        }

        switch (state) {

        case sw_size_start:
            if (!(sws_chunk_cls[c] & C_HEX)) {
                goto error;
            }
            size = (c <= '9') ? c - '0' : (c | 0x20) - 'a' + 10;
            state = sw_size;
            break;

        case sw_size:
            if (sws_chunk_cls[c] & C_HEX) {
                /* already 15 significant digits: one more is too many */
                if (size >> (4 * (SWS_HTTP_CHUNK_DIGITS_MAX - 1)) != 0) {
                    goto error;
                }
                size = (size << 4) | ((c <= '9') ? c - '0' : (c | 0x20) - 'a' + 10);
                break;
            }
            switch (c) {
            case ';':
                state = sw_ext_name_start;
                break;
            case ' ':
            case '\t':
                state = sw_ws_before_semi;
                break;
            case '\r':
                state = sw_size_lf;
                break;
            case '\n':
                goto size_line_done;
            default:
                goto error;
            }
            break;

        case sw_ws_before_semi:
            if (c == ';') {
                state = sw_ext_name_start;
            } else if (c != ' ' && c != '\t') {
                goto error;
            }
            break;

        case sw_ext_name_start:
            if (sws_chunk_cls[c] & C_TCHAR) {
                state = sw_ext_name;
            } else if (c != ' ' && c != '\t') {
                goto error;
            }
            break;

        case sw_ext_name:
            if (sws_chunk_cls[c] & C_TCHAR) {
                break;
            }
            switch (c) {
            case '=':
                state = sw_ext_val_start;
                break;
            case ';':
                state = sw_ext_name_start;
                break;
            case ' ':
            case '\t':
                state = sw_ext_before_eq;
                break;
            case '\r':
                state = sw_size_lf;
                break;
            case '\n':
                goto size_line_done;
            default:
                goto error;
            }
            break;

        case sw_ext_before_eq:
            switch (c) {
            case '=':
                state = sw_ext_val_start;
                break;
            case ';':
                state = sw_ext_name_start;
                break;
            case ' ':
            case '\t':
                break;
            default:
                goto error;
            }
            break;

        case sw_ext_val_start:
            if (sws_chunk_cls[c] & C_TCHAR) {
                state = sw_ext_token;
            } else if (c == '"') {
                state = sw_ext_quoted;
            } else if (c != ' ' && c != '\t') {
                goto error;
            }
            break;

        case sw_ext_token:
            if (sws_chunk_cls[c] & C_TCHAR) {
                break;
            }
            /* fall through */

        case sw_ext_after_val:
            switch (c) {
            case ';':
                state = sw_ext_name_start;
                break;
            case ' ':
            case '\t':
                state = sw_ws_before_semi;
                break;
            case '\r':
                state = sw_size_lf;
                break;
            case '\n':
                goto size_line_done;
            default:
                goto error;
            }
            break;

        case sw_ext_quoted:
            if (c == '"') {
                state = sw_ext_after_val;
            } else if (c == '\\') {
                state = sw_ext_quoted_pair;
            } else if (!(sws_chunk_cls[c] & C_QDTEXT)) {
                goto error;
            }
            break;

        case sw_ext_quoted_pair:
            /* HTAB / SP / VCHAR / obs-text */
            if (!(sws_chunk_cls[c] & C_FIELD)) {
                goto error;
            }
            state = sw_ext_quoted;
            break;

        case sw_size_lf:
            if (c != '\n') {
                goto error;
            }
            goto size_line_done;

        case sw_data_cr:
            if (c == '\r') {
                state = sw_data_lf;
            } else if (c == '\n') {
                state = sw_size_start;
                len = 0;
            } else {
                goto error;
            }
            break;

        case sw_data_lf:
            if (c != '\n') {
                goto error;
            }
            state = sw_size_start;
            len = 0;
            break;

        case sw_trailer_start:
            if (sws_chunk_cls[c] & C_TCHAR) {
                state = sw_trailer_name;
            } else if (c == '\r') {
                state = sw_last_lf;
            } else if (c == '\n') {
                goto done;
            } else {
                goto error;         /* includes obs-fold */
            }
            break;

        case sw_trailer_name:
            if (c == ':') {
                state = sw_trailer_value;
            } else if (!(sws_chunk_cls[c] & C_TCHAR)) {
                goto error;
            }
            break;

        case sw_trailer_value:
            if (c == '\r') {
                state = sw_trailer_lf;
            } else if (c == '\n') {
                state = sw_trailer_start;
            } else if (!(sws_chunk_cls[c] & C_FIELD)) {
                goto error;
            }
            break;

        case sw_trailer_lf:
            if (c != '\n') {
                goto error;
            }
            state = sw_trailer_start;
            break;

        case sw_last_lf:
            if (c != '\n') {
                goto error;
            }
            goto done;

        default:
            goto error;
        }

        continue;

    size_line_done:

        if (size == 0) {
            state = sw_trailer_start;
            len = 0;
            continue;
        }

        if (size > SWS_HTTP_CHUNK_TOTAL_MAX - ctx->total) {
            goto error;
        }
        ctx->total += size;
        ctx->size = size;
        ctx->ext_len = 0;
        ctx->state = sw_data;
        break;
    }

data:

    if (ctx->size > 0) {
        *pos = p;
        return (p == last) ? SWS_AGAIN : SWS_OK;
    }

    /* the chunk data is consumed: its CRLF follows */
    ctx->state = sw_data_cr;
    ctx->size = 0;
    ctx->ext_len = 0;
    *pos = p;
    return sws_http_parse_chunked(ctx, pos, last);

done:

    ctx->state = sw_done;
    ctx->size = 0;
    ctx->ext_len = len;
    *pos = p;
    return SWS_DONE;

error:

    ctx->state = sw_error;
    *pos = p - 1;
    return SWS_ERROR;
}
