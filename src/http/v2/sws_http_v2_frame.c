/*
 * HTTP/2 frames in (RFC 9113 4 to 6): the preface, each frame validated
 * against its type's rules and the stream's state (5.1), the settings, flow
 * control of both directions, header blocks decoded by our HPACK decoder
 * (sws_hpack_decoder.c) as their fragments come, and the abuse limits:
 * rapid reset, CONTINUATION floods, SETTINGS, PING and PRIORITY floods,
 * empty DATA frames, refused streams.
 *
 * Only whole frames are processed (the caller keeps the rest for the next
 * read), all of those in the buffer before any output goes out, so that an
 * error in a later frame gets its answer whatever came before it.
 *
 * Stream states: an id above the highest the client opened is idle; an id
 * of h2c->streams is open or half-closed; any other is closed, and a ring
 * of the ids closed last tells one that was opened (a late frame on it is
 * STREAM_CLOSED, or ignored after our RST_STREAM) from one that never was.
 */
#include "sws_http_v2.h"

#define SWS_H2_FLOOD_WINDOW      1000      /* ms */
#define SWS_H2_FLOOD_MAX         1000      /* control frames per window */
#define SWS_H2_RST_RATE          33        /* client resets a second, after the burst */
#define SWS_H2_MAX_CONTINUATIONS 8         /* per header block */
#define SWS_H2_MAX_SETTINGS      32        /* entries in one SETTINGS frame */
#define SWS_H2_UNREAD_MAX        (256 * 1024)  /* queued output, and ACKs asked for */

static const u_char sws_http_v2_preface[24] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

static void sws_http_v2_prio_idle_take(sws_http_v2_conn_t *h2c, int32_t sid,
    sws_http_v2_stream_t *st);

static uint32_t
sws_http_v2_get32(const u_char *p)
{
    return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

void
sws_http_v2_conn_error(sws_http_v2_conn_t *h2c, uint32_t code, const char *what)
{
    if (!h2c->closing) {
        sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0,
                      "client sent %s: closing the HTTP/2 connection", what);
    }
    sws_http_v2_goaway(h2c, code);
    h2c->closing = 1;
}

static sws_int_t
sws_http_v2_calm(sws_http_v2_conn_t *h2c, const char *what)
{
    sws_http_v2_conn_error(h2c, SWS_H2_ENHANCE_YOUR_CALM, what);
    return SWS_ERROR;
}

static sws_int_t
sws_http_v2_proto_error(sws_http_v2_conn_t *h2c, uint32_t code, const char *what)
{
    sws_http_v2_conn_error(h2c, code, what);
    return SWS_ERROR;
}

/* An answer (a SETTINGS or PING ACK) to queue: a client that makes them
 * and does not read them would fill the output queue. */
static sws_int_t
sws_http_v2_unread(sws_http_v2_conn_t *h2c)
{
    if (h2c->out_bytes > SWS_H2_UNREAD_MAX) {
        return sws_http_v2_calm(h2c, "control frames and reads none of the answers");
    }
    return SWS_OK;
}

/* Control frames (and empty DATA frames) cost us work and the client
 * nothing: more than SWS_H2_FLOOD_MAX a second end the connection. */
static sws_int_t
sws_http_v2_flood(sws_http_v2_conn_t *h2c)
{
    sws_msec_t now = sws_current_msec();

    if (now - h2c->flood_start >= SWS_H2_FLOOD_WINDOW) {
        h2c->flood_start = now;
        h2c->flood_frames = 0;
    }
    if (++h2c->flood_frames > SWS_H2_FLOOD_MAX) {
        return sws_http_v2_calm(h2c, "too many control frames (flood)");
    }
    return SWS_OK;
}

void
sws_http_v2_remember_closed(sws_http_v2_conn_t *h2c, uint32_t id)
{
    h2c->closed[h2c->closed_next++ % SWS_H2_CLOSED_RING] = id;
}

/* A stream id below the highest opened and not open: 0 never opened (or
 * forgotten), 1 closed, 2 closed by our RST_STREAM. */
static int
sws_http_v2_closed_state(sws_http_v2_conn_t *h2c, int32_t id)
{
    sws_uint_t i;
    uint32_t   v;

    for (i = 0; i < SWS_H2_CLOSED_RING; i++) {
        v = h2c->closed[i];
        if (v && (int32_t) (v & ~SWS_H2_CLOSED_IGNORE) == id) {
            return (v & SWS_H2_CLOSED_IGNORE) ? 2 : 1;
        }
    }
    return 0;
}

/* Rapid reset (CVE-2023-44487) and its variants: streams opened and then
 * reset by the client, or refused by us (over MAX_CONCURRENT_STREAMS,
 * after our GOAWAY), cost header decoding and frames for nothing. They
 * share a token bucket: a burst of twice the stream limit, then
 * SWS_H2_RST_RATE a second; over it, GOAWAY ENHANCE_YOUR_CALM. */
static sws_int_t
sws_http_v2_wasted_stream(sws_http_v2_conn_t *h2c, const char *what)
{
    sws_msec_t now = sws_current_msec();

    h2c->rst_tokens = (sws_uint_t) sws_min((sws_msec_t) h2c->rst_burst * 1000,
                          (sws_msec_t) h2c->rst_tokens + (now - h2c->rst_last) * SWS_H2_RST_RATE);
    h2c->rst_last = now;
    if (h2c->rst_tokens < 1000) {
        return sws_http_v2_calm(h2c, what);
    }
    h2c->rst_tokens -= 1000;
    return SWS_OK;
}

/* A stream error on a stream not open (closed, or refused as it opened):
 * RST_STREAM, and frames in flight on it are ignored from now on. */
static sws_int_t
sws_http_v2_reset_closed(sws_http_v2_conn_t *h2c, int32_t id, uint32_t error)
{
    sws_http_v2_remember_closed(h2c, (uint32_t) id | SWS_H2_CLOSED_IGNORE);
    if (sws_http_v2_queue_rst(h2c, (uint32_t) id, error) != SWS_OK) {
        return SWS_ERROR;
    }
    return SWS_OK;
}

/* ---- header blocks ---- */

/* A fragment of the header block (HEADERS or CONTINUATION payload, padding
 * and priority taken off): decoded at once, the fields to its stream. A
 * representation the fragment's end cuts waits for the next one's octets
 * (at most SWS_H2_MAX_CONTINUATIONS of them, within the header list's
 * limit: what is kept and copied again is bounded by those). */
static sws_int_t
sws_http_v2_fragment(sws_http_v2_conn_t *h2c, u_char *p, size_t n, int end)
{
    sws_http_v2_stream_t *st = h2c->headers_st;
    sws_http_v2_block_e   kind;
    sws_hpack_field_t     f;
    const u_char         *pos, *last;
    u_char               *joined = NULL;
    size_t                left;
    sws_int_t             rc;

    pos = p;
    last = p + n;
    if (h2c->hpack_rest) {
        joined = malloc(h2c->hpack_rest_len + n);
        if (joined == NULL) {
            return sws_http_v2_proto_error(h2c, SWS_H2_INTERNAL_ERROR,
                                           "a header block when out of memory");
        }
        memcpy(joined, h2c->hpack_rest, h2c->hpack_rest_len);
        memcpy(joined + h2c->hpack_rest_len, p, n);
        pos = joined;
        last = joined + h2c->hpack_rest_len + n;
        free(h2c->hpack_rest);
        h2c->hpack_rest = NULL;
        h2c->hpack_rest_len = 0;
    }
    for ( ;; ) {
        rc = sws_hpack_decode(&h2c->hdec, &pos, last, &f);
        if (rc == SWS_AGAIN) {
            break;
        }
        if (rc != SWS_OK) {
            free(joined);
            return sws_http_v2_proto_error(h2c, SWS_H2_COMPRESSION_ERROR,
                                           "a header block that cannot be decoded");
        }
        if (st && !st->reset && sws_http_v2_field(h2c, st, &f) != 0) {
            free(joined);
            return SWS_ERROR;
        }
    }
    left = last - pos;
    if (left) {
        if (end) {
            free(joined);
            return sws_http_v2_proto_error(h2c, SWS_H2_COMPRESSION_ERROR,
                                           "a header block that cannot be decoded");
        }
        h2c->hpack_rest = malloc(left);
        if (h2c->hpack_rest == NULL) {
            free(joined);
            return sws_http_v2_proto_error(h2c, SWS_H2_INTERNAL_ERROR,
                                           "a header block when out of memory");
        }
        memcpy(h2c->hpack_rest, pos, left);
        h2c->hpack_rest_len = left;
    }
    free(joined);
    if (end) {
        sws_hpack_decode_end(&h2c->hdec);
    }
    if (!end) {
        return SWS_OK;                   /* CONTINUATION frames follow */
    }

    kind = h2c->block;
    h2c->block = SWS_H2_BLOCK_NONE;
    h2c->block_sid = 0;
    h2c->headers_st = NULL;
    if (st == NULL) {
        return SWS_OK;
    }
    sws_del_timer(&st->rev);
    if (st->reset) {
        return SWS_OK;                   /* closes in the next run */
    }
    if (h2c->block_end_stream) {
        st->in_closed = 1;
    }
    if (kind == SWS_H2_BLOCK_REQUEST) {
        sws_http_v2_head_done(st);
    } else {
        sws_http_v2_trailers_done(st);
    }
    return SWS_OK;
}

static sws_int_t
sws_http_v2_headers(sws_http_v2_conn_t *h2c, u_char flags, int32_t sid, u_char *p,
    size_t len)
{
    sws_http_v2_stream_t *st;
    size_t                pad = 0;
    int                   selfdep = 0, state;

    if (sid == 0) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR, "HEADERS on stream 0");
    }
    if (!(sid & 1)) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                       "HEADERS on an even stream");
    }
    if (flags & SWS_H2_FLAG_PADDED) {
        if (len < 1) {
            return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR,
                                           "a too short padded HEADERS");
        }
        pad = *p++;
        len--;
    }
    if (flags & SWS_H2_FLAG_PRIORITY) {
        if (len < 5) {
            return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR,
                                           "a too short HEADERS priority");
        }
        selfdep = (int32_t) (sws_http_v2_get32(p) & 0x7fffffff) == sid;
        p += 5;
        len -= 5;
    }
    if (pad > len) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                       "HEADERS padding longer than the payload");
    }
    len -= pad;

    h2c->block = SWS_H2_BLOCK_DISCARD;
    h2c->block_sid = sid;
    h2c->block_frames = 0;
    h2c->block_bytes = len;
    h2c->block_end_stream = (flags & SWS_H2_FLAG_END_STREAM) != 0;
    h2c->headers_st = NULL;

    st = sws_http_v2_find_stream(h2c, sid);
    if (sid > h2c->last_stream_id) {
        /* A new stream: those below it still idle are closed now. */
        h2c->last_stream_id = sid;
        if (h2c->goaway) {
            /* After our GOAWAY (decoded for the HPACK state): not taken,
             * and said so at once with REFUSED_STREAM (RFC 9113 8.7), so
             * that the client retries it elsewhere; not after an error. */
            if (!h2c->closing
                && (sws_http_v2_unread(h2c) != SWS_OK
                    || sws_http_v2_wasted_stream(h2c, "too many streams after GOAWAY")
                       != SWS_OK
                    || sws_http_v2_reset_closed(h2c, sid, SWS_H2_REFUSED_STREAM) != SWS_OK))
            {
                return SWS_ERROR;
            }
        } else if (selfdep) {
            if (sws_http_v2_reset_closed(h2c, sid, SWS_H2_PROTOCOL_ERROR) != SWS_OK) {
                return SWS_ERROR;
            }
        } else if (h2c->nstreams >= h2c->conf->concurrent_streams) {
            sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0,
                          "client opened more than %lu streams: stream %d refused",
                          (unsigned long) h2c->conf->concurrent_streams, (int) sid);
            if (sws_http_v2_wasted_stream(h2c, "too many refused streams") != SWS_OK
                || sws_http_v2_reset_closed(h2c, sid, SWS_H2_REFUSED_STREAM) != SWS_OK)
            {
                return SWS_ERROR;
            }
        } else {
            st = sws_http_v2_stream_open(h2c, sid);
            if (st == NULL) {
                return sws_http_v2_proto_error(h2c, SWS_H2_INTERNAL_ERROR,
                                               "a stream when out of memory");
            }
            h2c->block = SWS_H2_BLOCK_REQUEST;
            h2c->headers_st = st;
        }
        if (h2c->prio_idle) {
            sws_http_v2_prio_idle_take(h2c, sid, h2c->headers_st);
        }
    } else if (st != NULL) {
        if (st->reset) {
            /* frames in flight after our RST_STREAM: ignored */
        } else if (st->in_closed) {
            sws_http_v2_reset(st, SWS_H2_STREAM_CLOSED);
        } else if (!(flags & SWS_H2_FLAG_END_STREAM)) {
            /* RFC 9113 8.1: trailers end the stream */
            sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0,
                          "client sent trailers without END_STREAM on stream %d",
                          (int) sid);
            sws_http_v2_reset(st, SWS_H2_PROTOCOL_ERROR);
        } else {
            h2c->block = SWS_H2_BLOCK_TRAILERS;
            h2c->headers_st = st;
        }
    } else {
        state = sws_http_v2_closed_state(h2c, sid);
        if (state == 0) {
            return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                           "a new stream with a lower identifier");
        }
        if (state == 1 && sws_http_v2_reset_closed(h2c, sid, SWS_H2_STREAM_CLOSED) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return sws_http_v2_fragment(h2c, p, len, flags & SWS_H2_FLAG_END_HEADERS);
}

static sws_int_t
sws_http_v2_continuation(sws_http_v2_conn_t *h2c, u_char flags, u_char *p, size_t len)
{
    if (h2c->block == SWS_H2_BLOCK_NONE) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                       "CONTINUATION without HEADERS");
    }
    /* Limits of how many and how much, whatever HPACK makes of it. */
    if (++h2c->block_frames > SWS_H2_MAX_CONTINUATIONS) {
        return sws_http_v2_calm(h2c, "too many CONTINUATION frames (CONTINUATION flood)");
    }
    h2c->block_bytes += len;
    if (h2c->block_bytes > h2c->max_header_size + SWS_H2_DEFAULT_FRAME) {
        return sws_http_v2_calm(h2c, "a too large header block (CONTINUATION flood)");
    }
    return sws_http_v2_fragment(h2c, p, len, flags & SWS_H2_FLAG_END_HEADERS);
}

/* ---- DATA ---- */

static sws_int_t
sws_http_v2_data_frame(sws_http_v2_conn_t *h2c, u_char flags, int32_t sid, u_char *p,
    size_t len)
{
    sws_http_v2_stream_t *st;
    size_t                pad = 0, dlen = len;
    u_char               *data = p;

    if (sid == 0) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR, "DATA on stream 0");
    }
    if (sid > h2c->last_stream_id) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR, "DATA on an idle stream");
    }
    if (flags & SWS_H2_FLAG_PADDED) {
        if (len < 1) {
            return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR,
                                           "a too short padded DATA");
        }
        pad = p[0];
        if (pad > len - 1) {
            return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                           "DATA padding longer than the payload");
        }
        data = p + 1;
        dlen = len - 1 - pad;
    }
    /* The whole frame counts against the windows (RFC 9113 6.9.1). */
    if ((int64_t) len > h2c->recv_window) {
        return sws_http_v2_proto_error(h2c, SWS_H2_FLOW_CONTROL_ERROR,
                                       "DATA beyond the connection's window");
    }
    h2c->recv_window -= (int64_t) len;
    if (len == 0 && !(flags & SWS_H2_FLAG_END_STREAM) && sws_http_v2_flood(h2c) != SWS_OK) {
        return SWS_ERROR;
    }

    if (h2c->goaway && sid > h2c->goaway_last) {
        sws_http_v2_consume(h2c, NULL, len);     /* 6.8: after our GOAWAY, ignored */
        return SWS_OK;
    }
    st = sws_http_v2_find_stream(h2c, sid);
    if (st == NULL || st->reset || st->in_closed) {
        /* Nobody wants it, but the connection's window must move on. */
        sws_http_v2_consume(h2c, NULL, len);
        if (st != NULL) {
            if (!st->reset) {
                sws_http_v2_reset(st, SWS_H2_STREAM_CLOSED);   /* half-closed (remote) */
            }
            return SWS_OK;
        }
        if (sws_http_v2_closed_state(h2c, sid) != 2) {
            return sws_http_v2_reset_closed(h2c, sid, SWS_H2_STREAM_CLOSED);
        }
        return SWS_OK;
    }
    if ((int64_t) len > st->recv_window) {
        sws_http_v2_consume(h2c, NULL, len);
        sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0,
                      "client sent DATA beyond the window of stream %d", (int) sid);
        sws_http_v2_reset(st, SWS_H2_FLOW_CONTROL_ERROR);
        return SWS_OK;
    }
    st->recv_window -= (int64_t) len;
    if (len > dlen) {
        sws_http_v2_consume(h2c, st, len - dlen);       /* the padding */
    }
    sws_http_v2_data(st, data, dlen, flags & SWS_H2_FLAG_END_STREAM);
    return SWS_OK;
}

/* ---- control frames ---- */

static sws_int_t
sws_http_v2_settings(sws_http_v2_conn_t *h2c, u_char flags, int32_t sid, u_char *p,
    size_t len)
{
    sws_queue_t          *q;
    sws_http_v2_stream_t *st;
    uint32_t              value;
    uint16_t              id;
    int64_t               delta;
    size_t                i;

    if (sid != 0) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR, "SETTINGS on a stream");
    }
    if (flags & SWS_H2_FLAG_ACK) {
        if (len != 0) {
            return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR,
                                           "a SETTINGS ACK with a payload");
        }
        if (!h2c->settings_acked) {
            /* Our http2_body_preread_size holds from now on. */
            h2c->settings_acked = 1;
            delta = (int64_t) h2c->conf->preread_size - h2c->local_window;
            h2c->local_window = (int32_t) h2c->conf->preread_size;
            for (q = sws_queue_head(&h2c->streams); q != sws_queue_sentinel(&h2c->streams);
                 q = sws_queue_next(q))
            {
                st = sws_queue_data(q, sws_http_v2_stream_t, queue);
                st->recv_window += delta;
            }
        }
        return sws_http_v2_flood(h2c);
    }
    if (len % 6) {
        return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR,
                                       "SETTINGS not a multiple of 6 bytes");
    }
    if (len / 6 > SWS_H2_MAX_SETTINGS) {
        return sws_http_v2_calm(h2c, "too many settings in one frame");
    }
    if (sws_http_v2_flood(h2c) != SWS_OK) {
        return SWS_ERROR;
    }
    h2c->settings_seen = 1;

    /* In order (RFC 9113 6.5.3): a value may follow another of the same. */
    for (i = 0; i < len; i += 6) {
        id = (uint16_t) ((p[i] << 8) | p[i + 1]);
        value = sws_http_v2_get32(p + i + 2);
        switch (id) {
        case SWS_H2_SET_HEADER_TABLE_SIZE:
            sws_hpack_encoder_set_limit(&h2c->hpack, value);
            break;
        case SWS_H2_SET_ENABLE_PUSH:
            if (value > 1) {
                return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                               "SETTINGS_ENABLE_PUSH above 1");
            }
            break;
        case SWS_H2_SET_INITIAL_WINDOW_SIZE:
            if (value > SWS_H2_MAX_WINDOW) {
                return sws_http_v2_proto_error(h2c, SWS_H2_FLOW_CONTROL_ERROR,
                                               "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1");
            }
            /* RFC 9113 6.9.2: every stream's window moves by the change,
             * below zero too; past 2^31-1 is a connection error. */
            delta = (int64_t) value - h2c->peer_initial_window;
            h2c->peer_initial_window = value;
            for (q = sws_queue_head(&h2c->streams); q != sws_queue_sentinel(&h2c->streams);
                 q = sws_queue_next(q))
            {
                st = sws_queue_data(q, sws_http_v2_stream_t, queue);
                st->send_window += delta;
                if (st->send_window > SWS_H2_MAX_WINDOW) {
                    return sws_http_v2_proto_error(h2c, SWS_H2_FLOW_CONTROL_ERROR,
                               "an initial window size overflowing a stream window");
                }
            }
            break;
        case SWS_H2_SET_MAX_FRAME_SIZE:
            if (value < SWS_H2_DEFAULT_FRAME || value > SWS_H2_MAX_FRAME) {
                return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                               "an invalid SETTINGS_MAX_FRAME_SIZE");
            }
            h2c->peer_max_frame = value;
            break;
        default:
            break;      /* MAX_CONCURRENT_STREAMS (we push nothing), unknown ones */
        }
    }
    if (sws_http_v2_unread(h2c) != SWS_OK) {
        return SWS_ERROR;
    }
    if (sws_http_v2_queue_head(h2c, 0, SWS_H2_SETTINGS, SWS_H2_FLAG_ACK, 0) != SWS_OK) {
        return sws_http_v2_proto_error(h2c, SWS_H2_INTERNAL_ERROR, "SETTINGS when out of memory");
    }
    sws_http_v2_post_send(h2c);          /* windows may have opened */
    return SWS_OK;
}

static sws_int_t
sws_http_v2_ping(sws_http_v2_conn_t *h2c, u_char flags, int32_t sid, u_char *p, size_t len)
{
    if (sid != 0) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR, "PING on a stream");
    }
    if (len != 8) {
        return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR,
                                       "PING of a size other than 8");
    }
    if (sws_http_v2_flood(h2c) != SWS_OK) {
        return SWS_ERROR;
    }
    if (flags & SWS_H2_FLAG_ACK) {
        sws_http_v2_drain_ack(h2c, p);
        return SWS_OK;
    }
    if (sws_http_v2_unread(h2c) != SWS_OK) {
        return SWS_ERROR;
    }
    if (sws_http_v2_queue_head(h2c, 8, SWS_H2_PING, SWS_H2_FLAG_ACK, 0) != SWS_OK
        || sws_http_v2_queue(h2c, p, 8) != SWS_OK)
    {
        return sws_http_v2_proto_error(h2c, SWS_H2_INTERNAL_ERROR, "PING when out of memory");
    }
    return SWS_OK;
}

static sws_int_t
sws_http_v2_rst_stream(sws_http_v2_conn_t *h2c, int32_t sid, u_char *p, size_t len)
{
    sws_http_v2_stream_t *st;
    uint32_t              code;

    if (sid == 0) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR, "RST_STREAM on stream 0");
    }
    if (len != 4) {
        return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR,
                                       "RST_STREAM of a size other than 4");
    }
    if (sid > h2c->last_stream_id) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                       "RST_STREAM on an idle stream");
    }
    if (h2c->goaway && sid > h2c->goaway_last) {
        return SWS_OK;                   /* a stream ignored after our GOAWAY */
    }
    if (sws_http_v2_wasted_stream(h2c, "too many stream resets (rapid reset)") != SWS_OK) {
        return SWS_ERROR;
    }

    st = sws_http_v2_find_stream(h2c, sid);
    if (st == NULL) {
        return SWS_OK;                   /* closed already */
    }
    code = sws_http_v2_get32(p);
    sws_log_debug(h2c->connection->log, "http2 stream %d reset by the client: %u",
                  (int) sid, (unsigned) code);
    sws_http_v2_stream_close(st, code);   /* remembered as closed, not ignored */
    return SWS_OK;
}

static sws_int_t
sws_http_v2_window_update(sws_http_v2_conn_t *h2c, int32_t sid, u_char *p, size_t len)
{
    sws_http_v2_stream_t *st;
    uint32_t              inc;

    if (len != 4) {
        return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR,
                                       "WINDOW_UPDATE of a size other than 4");
    }
    inc = sws_http_v2_get32(p) & 0x7fffffff;
    if (sid == 0) {
        if (inc == 0) {
            return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                           "WINDOW_UPDATE of 0 on the connection");
        }
        h2c->send_window += inc;
        if (h2c->send_window > SWS_H2_MAX_WINDOW) {
            return sws_http_v2_proto_error(h2c, SWS_H2_FLOW_CONTROL_ERROR,
                                           "WINDOW_UPDATE overflowing the connection window");
        }
        sws_http_v2_post_send(h2c);
        return SWS_OK;
    }
    if (sid > h2c->last_stream_id) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                       "WINDOW_UPDATE on an idle stream");
    }
    st = sws_http_v2_find_stream(h2c, sid);
    if (st == NULL || st->reset) {
        return SWS_OK;                   /* closed: may be in flight */
    }
    if (inc == 0) {
        sws_http_v2_reset(st, SWS_H2_PROTOCOL_ERROR);
        return SWS_OK;
    }
    st->send_window += inc;
    if (st->send_window > SWS_H2_MAX_WINDOW) {
        sws_http_v2_reset(st, SWS_H2_FLOW_CONTROL_ERROR);
        return SWS_OK;
    }
    sws_http_v2_post_send(h2c);
    return SWS_OK;
}

static sws_int_t
sws_http_v2_priority_frame(sws_http_v2_conn_t *h2c, int32_t sid, u_char *p, size_t len)
{
    sws_http_v2_stream_t *st;

    if (sid == 0) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR, "PRIORITY on stream 0");
    }
    if (len != 5) {
        return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR,
                                       "PRIORITY of a size other than 5");
    }
    if (sws_http_v2_flood(h2c) != SWS_OK) {
        return SWS_ERROR;
    }
    /* RFC 9113 5.3.1: a stream cannot depend on itself; the rest of the
     * deprecated scheme is ignored (RFC 9218 takes its place). */
    if ((int32_t) (sws_http_v2_get32(p) & 0x7fffffff) == sid) {
        st = sws_http_v2_find_stream(h2c, sid);
        if (st) {
            sws_http_v2_reset(st, SWS_H2_PROTOCOL_ERROR);
            return SWS_OK;
        }
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                       "a stream depending on itself");
    }
    return SWS_OK;
}

/* RFC 9218 7.1: a PRIORITY_UPDATE of a stream still idle is kept for its
 * HEADERS. The idle streams so prioritized and the open ones must not
 * exceed MAX_CONCURRENT_STREAMS (a PROTOCOL_ERROR); beyond the
 * SWS_H2_PRIO_IDLE kept, one is dropped (the request's field then says). */
static sws_int_t
sws_http_v2_prio_idle_keep(sws_http_v2_conn_t *h2c, int32_t id, const u_char *p, size_t len)
{
    sws_http_v2_prio_idle_t *pi;
    sws_uint_t               i;

    for (i = 0; i < h2c->nprio_idle; i++) {
        if (h2c->prio_idle[i].sid == id) {
            break;
        }
    }
    if (i == h2c->nprio_idle) {
        if (h2c->nprio_idle + h2c->nstreams >= h2c->conf->concurrent_streams) {
            return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                           "PRIORITY_UPDATEs of more idle streams than "
                                           "MAX_CONCURRENT_STREAMS allows");
        }
        if (i == SWS_H2_PRIO_IDLE) {
            return SWS_OK;
        }
        if (h2c->prio_idle == NULL) {
            h2c->prio_idle = malloc(SWS_H2_PRIO_IDLE * sizeof(sws_http_v2_prio_idle_t));
            if (h2c->prio_idle == NULL) {
                return SWS_OK;           /* a hint lost, nothing more */
            }
        }
        pi = &h2c->prio_idle[h2c->nprio_idle++];
        pi->sid = id;
        pi->urgency = 3;
        pi->incremental = 0;
    }
    pi = &h2c->prio_idle[i];
    sws_http_v2_priority_parse(p, len, &pi->urgency, &pi->incremental);
    return SWS_OK;
}

/* A HEADERS of stream sid came (st: the stream it opened, or NULL when
 * refused or ignored): its kept priority applies, and those of the ids
 * below it, closed now without having opened, go. */
static void
sws_http_v2_prio_idle_take(sws_http_v2_conn_t *h2c, int32_t sid, sws_http_v2_stream_t *st)
{
    sws_uint_t i, n = 0;

    for (i = 0; i < h2c->nprio_idle; i++) {
        if (h2c->prio_idle[i].sid == sid && st != NULL) {
            st->urgency = h2c->prio_idle[i].urgency;
            st->incremental = h2c->prio_idle[i].incremental;
            st->prio_updated = 1;
        }
        if (h2c->prio_idle[i].sid > sid) {
            h2c->prio_idle[n++] = h2c->prio_idle[i];
        }
    }
    h2c->nprio_idle = n;
    if (n == 0) {
        free(h2c->prio_idle);
        h2c->prio_idle = NULL;
    }
}

/* RFC 9218 7.1: the priority of a stream, changed, or said before it
 * opens (kept for its HEADERS); of a closed one, ignored. */
static sws_int_t
sws_http_v2_priority_update(sws_http_v2_conn_t *h2c, int32_t sid, u_char *p, size_t len)
{
    sws_http_v2_stream_t *st;
    int32_t               id;

    if (sid != 0) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                       "PRIORITY_UPDATE on a stream");
    }
    if (len < 4) {
        return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR,
                                       "a too short PRIORITY_UPDATE");
    }
    if (sws_http_v2_flood(h2c) != SWS_OK) {
        return SWS_ERROR;
    }
    id = (int32_t) (sws_http_v2_get32(p) & 0x7fffffff);
    if (id == 0 || !(id & 1)) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                       "PRIORITY_UPDATE of stream 0 or a pushed one");
    }
    st = sws_http_v2_find_stream(h2c, id);
    if (st) {
        sws_http_v2_priority(st, p + 4, len - 4);
        sws_http_v2_post_send(h2c);
    } else if (id > h2c->last_stream_id) {
        return sws_http_v2_prio_idle_keep(h2c, id, p + 4, len - 4);
    }
    return SWS_OK;
}

static sws_int_t
sws_http_v2_goaway_frame(sws_http_v2_conn_t *h2c, int32_t sid, u_char *p, size_t len)
{
    if (sid != 0) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR, "GOAWAY on a stream");
    }
    if (len < 8) {
        return sws_http_v2_proto_error(h2c, SWS_H2_FRAME_SIZE_ERROR, "a too short GOAWAY");
    }
    sws_log_debug(h2c->connection->log, "http2 GOAWAY from the client: %u",
                  (unsigned) sws_http_v2_get32(p + 4));
    h2c->goaway_seen = 1;
    return SWS_OK;
}

/* ---- the frame loop ---- */

static sws_int_t
sws_http_v2_frame(sws_http_v2_conn_t *h2c, u_char type, u_char flags, int32_t sid,
    u_char *p, size_t len)
{
    /* RFC 9113 3.4: the client's preface ends with a SETTINGS frame. */
    if (!h2c->settings_seen && (type != SWS_H2_SETTINGS || (flags & SWS_H2_FLAG_ACK))) {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                       "a preface not followed by SETTINGS");
    }
    /* 6.10: nothing but the CONTINUATIONs of an unfinished header block. */
    if (h2c->block != SWS_H2_BLOCK_NONE
        && (type != SWS_H2_CONTINUATION || sid != h2c->block_sid))
    {
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR,
                                       "another frame inside a header block");
    }

    switch (type) {
    case SWS_H2_DATA:
        return sws_http_v2_data_frame(h2c, flags, sid, p, len);
    case SWS_H2_HEADERS:
        return sws_http_v2_headers(h2c, flags, sid, p, len);
    case SWS_H2_PRIORITY:
        return sws_http_v2_priority_frame(h2c, sid, p, len);
    case SWS_H2_RST_STREAM:
        return sws_http_v2_rst_stream(h2c, sid, p, len);
    case SWS_H2_SETTINGS:
        return sws_http_v2_settings(h2c, flags, sid, p, len);
    case SWS_H2_PUSH_PROMISE:
        return sws_http_v2_proto_error(h2c, SWS_H2_PROTOCOL_ERROR, "PUSH_PROMISE");
    case SWS_H2_PING:
        return sws_http_v2_ping(h2c, flags, sid, p, len);
    case SWS_H2_GOAWAY:
        return sws_http_v2_goaway_frame(h2c, sid, p, len);
    case SWS_H2_WINDOW_UPDATE:
        return sws_http_v2_window_update(h2c, sid, p, len);
    case SWS_H2_CONTINUATION:
        return sws_http_v2_continuation(h2c, flags, p, len);
    case SWS_H2_PRIORITY_UPDATE:
        return sws_http_v2_priority_update(h2c, sid, p, len);
    default:
        return SWS_OK;                   /* 4.1, 5.5: unknown types are ignored */
    }
}

ssize_t
sws_http_v2_frames(sws_http_v2_conn_t *h2c, u_char *p, size_t len)
{
    u_char   *start = p, *end = p + len, type, flags;
    size_t    k, flen;
    int32_t   sid;

    if (h2c->closing) {
        return -1;
    }
    if (h2c->preface_left) {
        k = sws_min(h2c->preface_left, len);
        if (memcmp(p, sws_http_v2_preface + sizeof(sws_http_v2_preface) - h2c->preface_left,
                   k) != 0)
        {
            sws_http_v2_conn_error(h2c, SWS_H2_PROTOCOL_ERROR, "an invalid connection preface");
            return -1;
        }
        p += k;
        h2c->preface_left -= k;
        if (h2c->preface_left) {
            return (ssize_t) len;
        }
    }

    while (end - p >= SWS_H2_FRAME_HEADER) {
        flen = ((size_t) p[0] << 16) | ((size_t) p[1] << 8) | p[2];
        type = p[3];
        flags = p[4];
        sid = (int32_t) (sws_http_v2_get32(p + 5) & 0x7fffffff);   /* 4.1: R ignored */
        if (flen > SWS_H2_DEFAULT_FRAME) {
            sws_http_v2_conn_error(h2c, SWS_H2_FRAME_SIZE_ERROR, "a frame over the maximum size");
            return -1;
        }
        if ((size_t) (end - p) - SWS_H2_FRAME_HEADER < flen) {
            break;                        /* the rest comes with the next read */
        }
        if (sws_http_v2_frame(h2c, type, flags, sid, p + SWS_H2_FRAME_HEADER, flen) != SWS_OK
            || h2c->closing)
        {
            return -1;
        }
        p += SWS_H2_FRAME_HEADER + flen;
    }
    return p - start;
}
