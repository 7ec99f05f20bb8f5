/*
 * HTTP/2 streams as requests: a header block becomes an ordinary request
 * object (pseudo-header fields map to method, target, authority and
 * scheme; other fields, lower-case, go to headers_in), DATA frames become
 * its body. The fields are checked as RFC 9113 8.2 and 8.3 ask: names in
 * lower case of token characters, values without NUL, CR, LF or whitespace
 * at either end, no connection-specific fields, TE only "trailers", the
 * pseudo-header fields known, once each and before the others, the ones a
 * request needs present, Host naming :authority's authority, content-length
 * against the DATA: a malformed request resets its stream (PROTOCOL_ERROR).
 * The limits of header sizes are here too.
 */
#include "sws_http_v2.h"
#include "sws_conn_stats.h"
#include "../sws_http_request_head.h"
#include "sws_swar.h"

#define SWS_H2_BAD_STREAMS   16        /* refused header blocks per connection */

static void sws_http_v2_stream_timeout(sws_event_t *ev);
static void sws_http_v2_body_end(sws_http_v2_stream_t *st);

/* Open streams by id: a tree, so that a connection with many streams in
 * flight does not scan them all for each frame. Its sentinel is shared by
 * every connection of the worker (it is only written within one insert or
 * delete, and a worker runs one at a time): none per connection. */
static sws_rbtree_node_t  sws_http_v2_ids_sentinel;

void
sws_http_v2_stream_ids_init(sws_http_v2_conn_t *h2c)
{
    sws_rbtree_init(&h2c->stream_ids, &sws_http_v2_ids_sentinel, sws_rbtree_insert_value);
}

sws_http_v2_stream_t *
sws_http_v2_find_stream(sws_http_v2_conn_t *h2c, int32_t id)
{
    sws_rbtree_node_t *n = h2c->stream_ids.root, *sentinel = h2c->stream_ids.sentinel;
    sws_uint_t         key = (sws_uint_t) id;

    while (n != sentinel) {
        if (key == n->key) {
            return (sws_http_v2_stream_t *) ((u_char *) n
                                             - offsetof(sws_http_v2_stream_t, id_node));
        }
        n = key < n->key ? n->left : n->right;
    }
    return NULL;
}

sws_http_v2_stream_t *
sws_http_v2_stream_open(sws_http_v2_conn_t *h2c, int32_t id)
{
    sws_connection_t     *c = h2c->connection;
    sws_http_v2_stream_t *st;
    sws_pool_t           *pool;

    pool = sws_pool_create(4096, c->log);
    if (pool == NULL) {
        return NULL;
    }
    st = sws_pcalloc(pool, sizeof(sws_http_v2_stream_t));
    if (st == NULL) {
        sws_pool_destroy(pool);
        return NULL;
    }
    st->pool = pool;
    st->h2c = h2c;
    st->id = id;
    st->send_window = h2c->peer_initial_window;
    st->recv_window = h2c->local_window;
    st->content_length = -1;
    st->urgency = 3;                   /* RFC 9218 4.1: the default */
    st->preread_last = &st->preread;
    st->rev.data = st;
    st->rev.handler = sws_http_v2_stream_timeout;
    st->wev.data = st;
    st->wev.write = 1;
    st->wev.handler = sws_http_v2_stream_timeout;
    st->pace.data = st;
    st->pace.handler = sws_http_v2_paced;
    st->r = sws_http_create_request(h2c->client, pool);
    if (st->r == NULL) {
        sws_pool_destroy(pool);
        return NULL;
    }
    st->r->connection = c;
    st->r->stream = st;
    sws_conn_stat_plain(h2_streams, 1);
    st->r->proto = &sws_http_v2_proto;
    st->r->http_version = SWS_HTTP_VERSION_20;
    sws_queue_insert_tail(&h2c->streams, &st->queue);
    st->id_node.key = (sws_uint_t) id;
    sws_rbtree_insert(&h2c->stream_ids, &st->id_node);
    h2c->nstreams++;
    return st;
}

/* ---- fields ---- */

/*
 * RFC 9113 8.2.1 byte by byte, one table: SWS_H2_NAME_BAD for a byte no
 * field name may hold (not a token character of RFC 9110 5.6.2, or upper
 * case), SWS_H2_VALUE_BAD for one no value may (NUL, CR, LF),
 * SWS_H2_VALUE_EDGE for one no value may start or end with (SP, HTAB); in
 * the low bits, a name byte's class for the core (sws_http_name_odd: 0 for
 * [a-z0-9-], 1 for '_', 2 for the other token characters), so that the
 * name is checked and classed in one pass.
 */
#define SWS_H2_NAME_BAD   0x80
#define SWS_H2_VALUE_BAD  0x40
#define SWS_H2_VALUE_EDGE 0x20
#define SWS_H2_ODD        0x03

#define N_  SWS_H2_NAME_BAD
#define V_  (SWS_H2_NAME_BAD | SWS_H2_VALUE_BAD)
#define E_  (SWS_H2_NAME_BAD | SWS_H2_VALUE_EDGE)
#define N16 N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_

static const u_char sws_http_v2_cls[256] = {
    V_, N_, N_, N_, N_, N_, N_, N_, N_, E_, V_, N_, N_, V_, N_, N_,   /* 0x00: NUL HT LF CR */
    N16,                                                              /* 0x10 */
    E_, 2,  N_, 2,  2,  2,  2,  2,  N_, N_, 2,  2,  N_, 0,  2,  N_,   /* 0x20: SP !#$%&'*+-. */
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  N_, N_, N_, N_, N_, N_,   /* 0x30: 0-9 */
    N16,                                                              /* 0x40: A-O */
    N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, N_, 2,  1,    /* 0x50: P-Z ^ _ */
    2,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,    /* 0x60: ` a-o */
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  N_, 2,  N_, 2,  N_,   /* 0x70: p-z | ~ */
    N16, N16, N16, N16, N16, N16, N16, N16                            /* 0x80 - 0xff */
};

#undef N_
#undef V_
#undef E_
#undef N16

/* A regular field's name: valid, its bytes' classes ORed into *odd. */
static int
sws_http_v2_name_valid(const u_char *p, size_t n, u_char *odd)
{
    u_char  k = 0;
    size_t  i;

    for (i = 0; i < n; i++) {
        k |= sws_http_v2_cls[p[i]];
    }
    *odd = k & SWS_H2_ODD;
    return n != 0 && !(k & SWS_H2_NAME_BAD);
}

/* In each byte of the result, the high bit set where a byte of w is below
 * 0x0e (NUL, CR and LF, but HTAB and other controls too): exact as to
 * whether there is one at all, which is all that is asked of it. */
#define SWS_H2_HIGHS  (SWS_SWAR_ONES * 0x80)
#define sws_http_v2_low(w, ones)  (((w) - (ones) * 0x0e) & ~(w))

/*
 * A value copied to dst (room for n bytes) and checked as it is (RFC 9113
 * 8.2.1: no NUL, CR or LF, no SP or HTAB at either end). Words of 8 (or 4)
 * bytes at a time, the last one overlapping; only a value with a control
 * character somewhere (an HTAB within it is valid) is looked at byte by
 * byte.
 */
static int
sws_http_v2_value_copy(u_char *dst, const u_char *src, size_t n)
{
    uint64_t  w, low = 0;
    uint32_t  v;
    size_t    i;

    if (n == 0) {
        return 1;
    }
    if (n >= 8) {
        for (i = 0; i + 8 < n; i += 8) {
            w = sws_load64(src + i);
            low |= sws_http_v2_low(w, SWS_SWAR_ONES);
            memcpy(dst + i, &w, 8);
        }
        w = sws_load64(src + n - 8);
        low |= sws_http_v2_low(w, SWS_SWAR_ONES);
        memcpy(dst + n - 8, &w, 8);
        low &= SWS_H2_HIGHS;
    } else if (n >= 4) {
        v = sws_load32(src);
        low = sws_http_v2_low(v, 0x01010101u);
        memcpy(dst, &v, 4);
        v = sws_load32(src + n - 4);
        low |= sws_http_v2_low(v, 0x01010101u);
        memcpy(dst + n - 4, &v, 4);
        low &= 0x80808080u;
    } else {
        for (i = 0; i < n; i++) {
            dst[i] = src[i];
            low |= sws_http_v2_cls[src[i]] & SWS_H2_VALUE_BAD;
        }
    }
    if (sws_unlikely(low != 0)) {
        for (i = 0; i < n; i++) {
            if (sws_http_v2_cls[src[i]] & SWS_H2_VALUE_BAD) {
                return 0;
            }
        }
    }
    return !((sws_http_v2_cls[src[0]] | sws_http_v2_cls[src[n - 1]]) & SWS_H2_VALUE_EDGE);
}

/* A value checked without a copy (a trailer field's, which is dropped). */
static int
sws_http_v2_value_valid(const u_char *p, size_t n)
{
    size_t  i;

    for (i = 0; i < n; i++) {
        if (sws_http_v2_cls[p[i]] & SWS_H2_VALUE_BAD) {
            return 0;
        }
    }
    return n == 0 || !((sws_http_v2_cls[p[0]] | sws_http_v2_cls[p[n - 1]]) & SWS_H2_VALUE_EDGE);
}

u_char
sws_http_v2_classify(const u_char *name, size_t nlen, const u_char *value, size_t vlen)
{
    u_char  valid = SWS_HPACK_KNOWN, odd;

    if (sws_http_v2_value_valid(value, vlen)) {
        valid |= SWS_HPACK_VALUE_OK;
    }
    if (sws_http_v2_name_valid(name, nlen, &odd)) {
        valid |= SWS_HPACK_NAME_OK | (u_char) (odd << SWS_HPACK_ODD_SHIFT);
    }
    return valid;
}

/* A value in the stream's pool, NUL-terminated: NULL when out of memory;
 * *valid says whether RFC 9113 8.2.1 lets it be (known already of a field
 * of the HPACK tables: then it is only copied). */
static u_char *
sws_http_v2_value(sws_pool_t *pool, const sws_hpack_field_t *f, int *valid)
{
    u_char  *p;

    p = sws_pnalloc(pool, f->vlen + 1);
    if (p == NULL) {
        return NULL;
    }
    if (f->valid & SWS_HPACK_KNOWN) {
        *valid = (f->valid & SWS_HPACK_VALUE_OK) != 0;
        sws_swar_copy(p, f->value, f->vlen);
    } else {
        *valid = sws_http_v2_value_copy(p, f->value, f->vlen);
    }
    p[f->vlen] = '\0';
    return p;
}

/* The fields HTTP/2 looks at itself, by name. */
typedef enum {
    SWS_H2_FIELD_OTHER = 0,
    SWS_H2_FIELD_CONNECTION,          /* RFC 9113 8.2.2: HTTP/1 connection management */
    SWS_H2_FIELD_TE,
    SWS_H2_FIELD_CONTENT_LENGTH,
    SWS_H2_FIELD_HOST,
    SWS_H2_FIELD_PRIORITY,
    SWS_H2_FIELD_COOKIE
} sws_http_v2_field_e;

static sws_http_v2_field_e
sws_http_v2_field_kind(const u_char *name, size_t n)
{
    switch (n) {
    case 2:
        return memcmp(name, "te", 2) == 0 ? SWS_H2_FIELD_TE : SWS_H2_FIELD_OTHER;
    case 4:
        return memcmp(name, "host", 4) == 0 ? SWS_H2_FIELD_HOST : SWS_H2_FIELD_OTHER;
    case 6:
        return memcmp(name, "cookie", 6) == 0 ? SWS_H2_FIELD_COOKIE : SWS_H2_FIELD_OTHER;
    case 7:
        return memcmp(name, "upgrade", 7) == 0 ? SWS_H2_FIELD_CONNECTION : SWS_H2_FIELD_OTHER;
    case 8:
        return memcmp(name, "priority", 8) == 0 ? SWS_H2_FIELD_PRIORITY : SWS_H2_FIELD_OTHER;
    case 10:
        return memcmp(name, "connection", 10) == 0 || memcmp(name, "keep-alive", 10) == 0
               ? SWS_H2_FIELD_CONNECTION : SWS_H2_FIELD_OTHER;
    case 14:
        return memcmp(name, "content-length", 14) == 0
               ? SWS_H2_FIELD_CONTENT_LENGTH : SWS_H2_FIELD_OTHER;
    case 16:
        return memcmp(name, "proxy-connection", 16) == 0
               ? SWS_H2_FIELD_CONNECTION : SWS_H2_FIELD_OTHER;
    case 17:
        return memcmp(name, "transfer-encoding", 17) == 0
               ? SWS_H2_FIELD_CONNECTION : SWS_H2_FIELD_OTHER;
    }
    return SWS_H2_FIELD_OTHER;
}

static void
sws_http_v2_malformed(sws_http_v2_stream_t *st, const char *why, const u_char *name,
    size_t namelen)
{
    if (!st->malformed) {
        sws_log_error(SWS_LOG_INFO, st->h2c->connection->log, 0,
                      "client sent %s \"%.*s\" on stream %d: reset with PROTOCOL_ERROR",
                      why, (int) sws_min(namelen, 64), name, (int) st->id);
    }
    st->malformed = 1;
}

/* A content-length value: digits only. */
static off_t
sws_http_v2_length(const u_char *p, size_t n)
{
    off_t  v = 0;
    size_t i;

    if (n == 0 || n > 18) {
        return -1;
    }
    for (i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') {
            return -1;
        }
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

/* A trailer field: checked, then dropped. */
static int
sws_http_v2_trailer_field(sws_http_v2_stream_t *st, const u_char *name, size_t namelen,
    const u_char *value, size_t valuelen)
{
    u_char  odd;

    if (namelen && name[0] == ':') {
        sws_http_v2_malformed(st, "a pseudo-header field in trailers", name, namelen);
    } else if (!sws_http_v2_name_valid(name, namelen, &odd)
               || !sws_http_v2_value_valid(value, valuelen))
    {
        sws_http_v2_malformed(st, "an invalid trailer field", name, namelen);
    } else if (sws_http_v2_field_kind(name, namelen) == SWS_H2_FIELD_CONNECTION) {
        /* RFC 9113 8.2.2: in any field section of the message */
        sws_http_v2_malformed(st, "a connection-specific trailer field", name, namelen);
    }
    if (st->malformed) {
        sws_http_v2_reset(st, SWS_H2_PROTOCOL_ERROR);
    }
    return 0;
}

/* name (n bytes, 4 to 16) is the literal lit of as many: two overlapping
 * words each, which the compiler makes constants of. */
static inline int
sws_http_v2_name_is(const u_char *name, const char *lit, size_t n)
{
    const u_char *l = (const u_char *) lit;

    if (n >= 8) {
        return sws_load64(name) == sws_load64(l)
               && sws_load64(name + n - 8) == sws_load64(l + n - 8);
    }
    return sws_load32(name) == sws_load32(l) && sws_load32(name + n - 4) == sws_load32(l + n - 4);
}

/* A pseudo-header field of the request (RFC 9113 8.3.1): known, once, before
 * the regular ones, its value valid. */
static int
sws_http_v2_pseudo(sws_http_v2_stream_t *st, const sws_hpack_field_t *f)
{
    const u_char *name = f->name;
    size_t        namelen = f->nlen;
    sws_str_t *slot = NULL;
    int        valid;

    if (st->regular) {
        sws_http_v2_malformed(st, "a pseudo-header field after a regular one", name, namelen);
        return 0;
    }
    switch (namelen) {
    case 5:
        if (sws_http_v2_name_is(name, ":path", 5)) {
            slot = &st->path;
        }
        break;
    case 7:
        if (sws_http_v2_name_is(name, ":method", 7)) {
            slot = &st->method;
        } else if (sws_http_v2_name_is(name, ":scheme", 7)) {
            slot = &st->scheme;
        }
        break;
    case 10:
        if (sws_http_v2_name_is(name, ":authority", 10)) {
            slot = &st->authority;
        }
        break;
    }
    if (slot == NULL) {
        sws_http_v2_malformed(st, "an unknown pseudo-header field", name, namelen);
        return 0;
    }
    if (slot->data != NULL) {
        sws_http_v2_malformed(st, "a repeated pseudo-header field", name, namelen);
        return 0;
    }
    slot->data = sws_http_v2_value(st->pool, f, &valid);
    if (slot->data == NULL) {
        return -1;
    }
    slot->len = f->vlen;
    if (!valid) {
        sws_http_v2_malformed(st, "an invalid value of", name, namelen);
    }
    return 0;
}

int
sws_http_v2_field(sws_http_v2_conn_t *h2c, sws_http_v2_stream_t *st, const sws_hpack_field_t *f)
{
    const u_char       *name = f->name, *value = f->value;
    size_t              namelen = f->nlen, valuelen = f->vlen;
    sws_http_request_t *r = st->r;
    sws_http_header_t  *h;
    sws_str_t          *ck;
    sws_int_t           rc;
    u_char             *p, odd;
    off_t               len;
    int                 valid;

    /* RFC 9113 6.5.2: the size of a field is its name, value and 32. */
    st->header_bytes += namelen + valuelen + 32;
    if (namelen + valuelen > h2c->max_field_size || st->header_bytes > h2c->max_header_size
        || r->headers_in.nelts >= SWS_HTTP_MAX_HEADERS)
    {
        if (!st->too_large) {
            st->too_large = 1;
            sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0,
                          "client sent too large request headers on stream %d",
                          (int) st->id);
            if (++h2c->bad_streams > SWS_H2_BAD_STREAMS) {
                sws_http_v2_conn_error(h2c, SWS_H2_ENHANCE_YOUR_CALM,
                                       "too many too large header blocks");
                return -1;
            }
        }
        if (st->header_bytes > 4 * h2c->max_header_size) {
            /* An HPACK bomb: decoding goes on (the table's state), but no
             * more of it for us. */
            sws_http_v2_reset(st, SWS_H2_ENHANCE_YOUR_CALM);
        }
        return 0;
    }
    if (h2c->block == SWS_H2_BLOCK_TRAILERS) {
        return sws_http_v2_trailer_field(st, name, namelen, value, valuelen);
    }
    if (st->too_large || st->malformed) {
        return 0;
    }
    if (namelen && name[0] == ':') {
        return sws_http_v2_pseudo(st, f);
    }

    st->regular = 1;
    /* A field of the HPACK tables was checked as it entered them. */
    if (f->valid & SWS_HPACK_KNOWN) {
        odd = (f->valid & SWS_HPACK_NAME_ODD) >> SWS_HPACK_ODD_SHIFT;
        valid = (f->valid & SWS_HPACK_NAME_OK) != 0;
    } else {
        valid = sws_http_v2_name_valid(name, namelen, &odd);
    }
    if (!valid) {
        sws_http_v2_malformed(st, "an invalid header name", name, namelen);
        return 0;
    }
    /* name and value in one piece of the pool: "name\0value\0", the value
     * checked as it is copied */
    p = sws_pnalloc(st->pool, namelen + valuelen + 2);
    if (p == NULL) {
        return -1;
    }
    if (f->valid & SWS_HPACK_KNOWN) {
        valid = (f->valid & SWS_HPACK_VALUE_OK) != 0;
        sws_swar_copy(p + namelen + 1, value, valuelen);
    } else {
        valid = sws_http_v2_value_copy(p + namelen + 1, value, valuelen);
    }
    if (!valid) {
        sws_http_v2_malformed(st, "an invalid value of header", name, namelen);
        return 0;
    }
    value = p + namelen + 1;
    p[namelen + 1 + valuelen] = '\0';
    switch (sws_http_v2_field_kind(name, namelen)) {
    case SWS_H2_FIELD_CONNECTION:
        sws_http_v2_malformed(st, "a connection-specific header", name, namelen);
        return 0;
    case SWS_H2_FIELD_TE:
        if (valuelen != 8 || sws_strncasecmp((u_char *) value, (u_char *) "trailers", 8) != 0) {
            sws_http_v2_malformed(st, "a TE other than trailers:", name, namelen);
            return 0;
        }
        break;
    case SWS_H2_FIELD_CONTENT_LENGTH:
        len = sws_http_v2_length(value, valuelen);
        if (len < 0 || (st->content_length >= 0 && len != st->content_length)) {
            sws_http_v2_malformed(st, "an invalid", name, namelen);
            return 0;
        }
        st->content_length = len;
        break;
    case SWS_H2_FIELD_HOST:
        /* the authority's other place (8.3.1): once at most */
        if (st->host) {
            sws_http_v2_malformed(st, "a second", name, namelen);
            return 0;
        }
        st->host = 1;
        break;
    case SWS_H2_FIELD_PRIORITY:
        if (!st->prio_updated) {    /* else a PRIORITY_UPDATE said it first: it wins */
            sws_http_v2_priority(st, value, valuelen);
        }
        break;
    case SWS_H2_FIELD_COOKIE:
        /* Crumbs of one cookie (RFC 9113 8.2.3): joined at the end. */
        if (st->cookies == NULL) {
            st->cookies = sws_array_create(st->pool, 4, sizeof(sws_str_t));
        }
        ck = st->cookies ? sws_array_push(st->cookies) : NULL;
        if (ck == NULL) {
            return -1;
        }
        ck->data = (u_char *) value;
        ck->len = valuelen;
        return 0;
    case SWS_H2_FIELD_OTHER:
        break;
    }

    h = sws_array_push(&r->headers_in);
    if (h == NULL) {
        return -1;
    }
    sws_swar_copy(p, name, namelen);
    p[namelen] = '\0';
    h->name.data = p;
    h->name.len = namelen;
    h->value.data = (u_char *) value;
    h->value.len = valuelen;
    h->hash = sws_hash_key(p, namelen);
    r->head_length += (off_t) (namelen + valuelen + 4);   /* "name: value\r\n" */
    /* A field the core refuses (a second Host ...) is answered once the
     * block is complete: HPACK decoding must go on to its end. */
    rc = sws_http_request_field(r, h, odd);
    if (rc == SWS_DECLINED) {
        r->headers_in.nelts--;           /* ignore_invalid_headers */
    } else if (rc != SWS_OK && st->field_error == 0) {
        st->field_error = (sws_uint_t) rc;
    }
    return 0;
}

/* RFC 9218 4: a dictionary; u=0..7 the urgency, i (or i=?1) incremental.
 * Members it does not know, and invalid ones, are ignored. */
void
sws_http_v2_priority(sws_http_v2_stream_t *st, const u_char *p, size_t len)
{
    u_char urgency = st->urgency, incremental = st->incremental;

    sws_http_v2_priority_parse(p, len, &urgency, &incremental);
    st->urgency = urgency;
    st->incremental = incremental;
}

void
sws_http_v2_priority_parse(const u_char *p, size_t len, u_char *urgency, u_char *incremental)
{
    const u_char *end = p + len, *key;
    size_t        klen;

    while (p < end) {
        while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) {
            p++;
        }
        key = p;
        while (p < end && ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')
                           || *p == '_' || *p == '-' || *p == '.' || *p == '*'))
        {
            p++;
        }
        klen = p - key;
        if (klen == 1 && key[0] == 'u') {
            if (end - p >= 2 && p[0] == '=' && p[1] >= '0' && p[1] <= '7'
                && (end - p == 2 || p[2] == ',' || p[2] == ';' || p[2] == ' '))
            {
                *urgency = (u_char) (p[1] - '0');
            }
        } else if (klen == 1 && key[0] == 'i') {
            if (p == end || *p != '=') {
                *incremental = 1;
            } else if (end - p >= 3 && p[1] == '?' && (p[2] == '0' || p[2] == '1')) {
                *incremental = p[2] == '1';
            }
        }
        while (p < end && *p != ',') {
            p++;
        }
    }
}

/* ---- the request ---- */

/* An authority without the default port of the scheme (RFC 3986 6.2.3). */
static sws_str_t
sws_http_v2_authority(const sws_str_t *a, const sws_str_t *scheme)
{
    sws_str_t out = *a;
    size_t    n;

    n = (scheme->len == 5 && memcmp(scheme->data, "https", 5) == 0) ? 4 : 3;
    if (out.len > n && memcmp(out.data + out.len - n, n == 4 ? ":443" : ":80", n) == 0) {
        out.len -= n;
    } else if (out.len && out.data[out.len - 1] == ':') {
        out.len--;
    }
    return out;
}

/* RFC 9113 8.3.1: a Host that names another authority than :authority
 * makes the request malformed. */
static int
sws_http_v2_host_differs(sws_http_v2_stream_t *st)
{
    sws_str_t a, h;

    if (st->authority.len == 0 || st->r->h_host == NULL) {
        return 0;
    }
    a = sws_http_v2_authority(&st->authority, &st->scheme);
    h = sws_http_v2_authority(st->r->h_host, &st->scheme);
    return !sws_str_caseeq(&a, &h);
}

/* HTTP/2's part of the request start (sws_http_process_request_headers
 * has chosen the server by :authority or Host and parsed content-length):
 * the limits, the request line from the pseudo-header fields, and the
 * body, which is DATA frames until END_STREAM (RFC 9113 8.1). */
sws_int_t
sws_http_v2_process_head(sws_http_request_t *r)
{
    sws_http_v2_stream_t *st = r->stream;

    return sws_http_request_head_of_fields(r, &st->method, &st->path, st->cookies, "2.0",
                                           st->too_large, st->field_error, st->in_closed);
}

static void
sws_http_v2_start(sws_http_v2_stream_t *st)
{
    sws_http_v2_conn_t       *h2c = st->h2c;
    sws_http_request_t       *r = st->r;
    sws_http_core_loc_conf_t *clcf;
    sws_uint_t                max;

    sws_del_timer(&st->rev);
    if (sws_http_v2_host_differs(st)) {
        sws_log_error(SWS_LOG_INFO, h2c->connection->log, 0,
                      "client sent :authority \"%.*s\" and host \"%.*s\" on stream %d: "
                      "reset with PROTOCOL_ERROR",
                      (int) sws_min(st->authority.len, 64), st->authority.data,
                      (int) sws_min(r->h_host->len, 64), r->h_host->data, (int) st->id);
        sws_http_v2_reset(st, SWS_H2_PROTOCOL_ERROR);
        return;
    }
    st->started = 1;
    h2c->processed++;
    clcf = h2c->client->cscf->ctx->loc_conf[sws_http_core_module.index];
    max = h2c->conf->max_requests != SWS_UNSET_UINT ? h2c->conf->max_requests
                                                    : clcf->keepalive_requests;
    if (h2c->processed >= max) {
        /* This one is served; the client opens a new connection after. */
        sws_http_v2_goaway(h2c, SWS_H2_NO_ERROR);
    }

    if (st->scheme.len) {
        r->schema = st->scheme;
    }
    r->host = st->authority;          /* validated with Host by the core */
    sws_http_start_request(r);
}

/* ---- the head's end ---- */

/* RFC 9113 8.3.1, 8.5: the pseudo-header fields a request must have. */
static const char *
sws_http_v2_head_missing(sws_http_v2_stream_t *st)
{
    if (st->method.data == NULL) {
        return "no :method";
    }
    if (st->method.len == 7 && memcmp(st->method.data, "CONNECT", 7) == 0) {
        if (st->authority.data == NULL) {
            return "CONNECT without :authority";
        }
        if (st->scheme.data || st->path.data) {
            return "CONNECT with :scheme or :path";
        }
        return NULL;
    }
    if (st->scheme.data == NULL) {
        return "no :scheme";
    }
    if (st->authority.data == NULL && !st->host) {
        return "neither :authority nor host";
    }
    if (st->path.data == NULL || st->path.len == 0) {
        return "no :path";
    }
    return NULL;
}

void
sws_http_v2_head_done(sws_http_v2_stream_t *st)
{
    const char *why;

    if (!st->too_large && !st->malformed) {
        why = sws_http_v2_head_missing(st);
        if (why == NULL && st->in_closed && st->content_length > 0) {
            why = "a content-length with no DATA to come";
        }
        if (why) {
            sws_http_v2_malformed(st, why, (u_char *) "", 0);
        }
    }
    if (st->malformed) {
        sws_http_v2_reset(st, SWS_H2_PROTOCOL_ERROR);
        return;
    }
    sws_http_v2_start(st);
}

void
sws_http_v2_trailers_done(sws_http_v2_stream_t *st)
{
    if (st->content_length >= 0 && st->received != st->content_length) {
        sws_log_error(SWS_LOG_INFO, st->h2c->connection->log, 0,
                      "client sent a body of another length than its content-length "
                      "on stream %d", (int) st->id);
        sws_http_v2_reset(st, SWS_H2_PROTOCOL_ERROR);
        return;
    }
    if (st->r) {
        sws_http_v2_body_end(st);
    }
}

/* ---- the body ---- */

void
sws_http_v2_consume(sws_http_v2_conn_t *h2c, sws_http_v2_stream_t *st, size_t n)
{
    size_t threshold;

    if (n == 0) {
        return;
    }
    /* Given back when half a window is taken: one WINDOW_UPDATE for many
     * DATA frames. */
    h2c->recv_consumed += n;
    if (h2c->recv_consumed >= SWS_H2_CONN_WINDOW / 2) {
        if (sws_http_v2_queue_window(h2c, 0, (uint32_t) h2c->recv_consumed) == SWS_OK) {
            h2c->recv_window += (int64_t) h2c->recv_consumed;
            h2c->recv_consumed = 0;
            sws_http_v2_post_send(h2c);
        }
    }
    if (st == NULL || st->in_closed || st->reset) {
        return;
    }
    st->recv_consumed += n;
    threshold = (size_t) sws_max((st->recv_target ? st->recv_target : h2c->local_window) / 2, 1);
    if (st->recv_consumed >= threshold) {
        if (sws_http_v2_queue_window(h2c, (uint32_t) st->id, (uint32_t) st->recv_consumed)
            == SWS_OK)
        {
            st->recv_window += (int64_t) st->recv_consumed;
            st->recv_consumed = 0;
            sws_http_v2_post_send(h2c);
        }
    }
}

/* The stream's window opens to `target` (bytes the client may send
 * beyond what was taken): when reading the body begins, to a frame's
 * default at least (a small http2_body_preread_size would not let the
 * client send); for a body the core stores as it comes (memory, then a
 * temporary file, so a bigger window takes no more memory), to
 * SWS_H2_BODY_WINDOW, so that an upload is not held to 64 KiB a round trip
 * (1.3 MB/s at 50 ms; with windows of its own, h2o's is not). */
static void
sws_http_v2_open_window(sws_http_v2_stream_t *st, int64_t target)
{
    int64_t inc = target - st->recv_window - (int64_t) st->recv_consumed;

    if (st->in_closed || st->reset || inc <= 0) {
        return;
    }
    if (sws_http_v2_queue_window(st->h2c, (uint32_t) st->id, (uint32_t) inc) == SWS_OK) {
        st->recv_window += inc;
        sws_http_v2_post_send(st->h2c);
    }
}

static void
sws_http_v2_body_end(sws_http_v2_stream_t *st)
{
    sws_http_request_t      *r = st->r;
    sws_http_request_body_t *rb = r ? r->body : NULL;

    st->in_closed = 1;
    if (st->out_closed) {
        /* Over both ways now: its slot is free for the client's next
         * stream, which may be in this very read (RFC 9113 5.1.2). */
        sws_http_v2_stream_close(st, SWS_H2_NO_ERROR);
        return;
    }
    if (rb == NULL || rb->finished) {
        return;
    }
    if (st->streaming) {
        /* The consumer learns of the end when it has pulled the rest. */
        sws_del_timer(&st->rev);
        rb->done(r);
        return;
    }
    rb->finished = 1;
    if (st->reading) {
        st->reading = 0;
        sws_del_timer(&st->rev);
        rb->done(r);
    }
}

static sws_int_t
sws_http_v2_body_too_large(sws_http_v2_stream_t *st)
{
    size_t max = sws_http_core_loc(st->r)->client_max_body_size;

    if (max && (size_t) st->received > max) {
        if (!st->body_error) {
            sws_log_error(SWS_LOG_ERR, st->r->log, 0,
                          "client intended to send too large body: more than %zu bytes", max);
        }
        st->body_error = 1;
        return 1;
    }
    return 0;
}

void
sws_http_v2_data(sws_http_v2_stream_t *st, const u_char *data, size_t len, int end)
{
    sws_http_request_t *r = st->r;
    sws_buf_t          *b;
    sws_chain_t        *cl;
    sws_int_t           rc;

    /* RFC 9113 8.1.1: a body longer, or ending shorter, than the
     * content-length makes the request malformed. */
    if (st->content_length >= 0
        && (st->received + (off_t) len > st->content_length
            || (end && st->received + (off_t) len != st->content_length)))
    {
        sws_log_error(SWS_LOG_INFO, st->h2c->connection->log, 0,
                      "client sent a body of another length than its content-length "
                      "on stream %d", (int) st->id);
        sws_http_v2_consume(st->h2c, NULL, len);
        sws_http_v2_reset(st, SWS_H2_PROTOCOL_ERROR);
        return;
    }
    st->received += len;
    if (st->out_closed) {
        /* After the response (sws_http_v2_body_rest_awaited): only counted. */
        sws_http_v2_consume(st->h2c, NULL, len);
        if (end) {
            sws_http_v2_body_end(st);
        }
        return;
    }
    if (r == NULL || len == 0) {
        sws_http_v2_consume(st->h2c, NULL, len);
        goto done;
    }

    if (r->body && r->body->discard) {
        sws_http_v2_consume(st->h2c, st, len);
        goto done;
    }
    if (st->reading) {
        sws_http_v2_consume(st->h2c, st, len);
        if (sws_http_v2_body_too_large(st)) {
            /* The rest is dropped (with its window given back) while the
             * 413 goes out. */
            st->reading = 0;
            r->body->discard = 1;
            sws_del_timer(&st->rev);
            sws_http_finalize(r, SWS_HTTP_REQUEST_ENTITY_TOO_LARGE);
            goto done;
        }
        rc = sws_http_body_store(r, data, len);
        if (rc != SWS_OK) {
            st->reading = 0;
            r->body->discard = 1;
            sws_del_timer(&st->rev);
            sws_http_finalize(r, rc);
            goto done;
        }
        r->body->received = st->received;
        sws_add_timer(&st->rev, sws_http_core_loc(r)->client_body_timeout);
        goto done;
    }

    if (st->streaming && sws_http_v2_body_too_large(st)) {
        st->streaming = 0;
        r->body->discard = 1;
        sws_del_timer(&st->rev);
        sws_http_v2_consume(st->h2c, st, st->unconsumed + len);
        st->unconsumed = 0;
        st->preread = NULL;
        st->preread_last = &st->preread;
        r->body->done(r);      /* its next pull gets the 413 */
        goto done;
    }

    /* Before the handler asks for the body, or streaming until the
     * consumer pulls it: kept, and the window not given back, so the
     * stream's window bounds what waits here (back-pressure). */
    b = sws_create_temp_buf(st->pool, len);
    cl = sws_alloc_chain_link(st->pool);
    if (b == NULL || cl == NULL) {
        sws_http_v2_consume(st->h2c, NULL, len);
        sws_http_v2_reset(st, SWS_H2_INTERNAL_ERROR);
        return;
    }
    b->last = sws_cpymem(b->last, data, len);
    cl->buf = b;
    cl->next = NULL;
    *st->preread_last = cl;
    st->preread_last = &cl->next;
    st->unconsumed += len;
    if (st->streaming) {
        r->body->received = st->received;
        sws_del_timer(&st->rev);
        r->body->done(r);
    }

done:
    if (end && !st->reset) {
        sws_http_v2_body_end(st);
    }
}

sws_int_t
sws_http_v2_read_body(sws_http_request_t *r)
{
    sws_http_v2_stream_t    *st = r->stream;
    sws_http_request_body_t *rb = r->body;
    sws_int_t                rc;

    if (st->body_error || sws_http_v2_body_too_large(st)) {
        return SWS_HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    if (r->expect_continue && !r->continue_sent && !st->in_closed && st->preread == NULL) {
        r->continue_sent = 1;
        rc = sws_http_v2_send_continue(st);
        if (rc != SWS_OK) {
            return rc;
        }
        sws_http_v2_post_send(st->h2c);
    }
    sws_http_v2_open_window(st, SWS_H2_DEFAULT_WINDOW);
    if (rb->stream) {
        /* The consumer pulls with read_body_data; the preread stays where
         * it is, its window given back as it is taken. */
        st->streaming = 1;
        rb->received = st->received;
        return SWS_OK;
    }
    if (st->preread) {
        *rb->last = st->preread;
        rb->last = st->preread_last;
        rb->buf = NULL;
        st->preread = NULL;
        st->preread_last = &st->preread;
    }
    rb->received = st->received;
    sws_http_v2_consume(st->h2c, st, st->unconsumed);
    st->unconsumed = 0;
    if (st->in_closed) {
        rb->finished = 1;
        rb->done(r);
        return SWS_OK;
    }
    st->reading = 1;
    st->recv_target = SWS_H2_BODY_WINDOW;
    sws_http_v2_open_window(st, SWS_H2_BODY_WINDOW);
    sws_add_timer(&st->rev, sws_http_core_loc(r)->client_body_timeout);
    return SWS_OK;
}

sws_int_t
sws_http_v2_read_body_data(sws_http_request_t *r, u_char *buf, size_t size, size_t *n)
{
    sws_http_v2_stream_t    *st = r->stream;
    sws_http_request_body_t *rb = r->body;
    sws_buf_t               *b;
    size_t                   k, got = 0;

    *n = 0;
    if (st->body_error) {
        return SWS_HTTP_REQUEST_ENTITY_TOO_LARGE;
    }
    if (rb->timedout) {
        return SWS_HTTP_REQUEST_TIME_OUT;
    }
    while (st->preread && got < size) {
        b = st->preread->buf;
        k = sws_min((size_t) (b->last - b->pos), size - got);
        memcpy(buf + got, b->pos, k);
        b->pos += k;
        got += k;
        if (b->pos == b->last) {
            st->preread = st->preread->next;
        }
    }
    if (st->preread == NULL) {
        st->preread_last = &st->preread;
    }
    if (got) {
        /* Taken: the client may send as much again. */
        st->unconsumed -= got;
        sws_http_v2_consume(st->h2c, st, got);
    }
    *n = got;
    if (st->preread == NULL && st->in_closed) {
        rb->finished = 1;
        st->streaming = 0;
        sws_del_timer(&st->rev);
        return SWS_DONE;
    }
    if (got) {
        sws_del_timer(&st->rev);
        return SWS_OK;
    }
    sws_add_timer(&st->rev, sws_http_core_loc(r)->client_body_timeout);
    return SWS_AGAIN;
}

sws_int_t
sws_http_v2_discard_body(sws_http_request_t *r)
{
    sws_http_v2_stream_t *st = r->stream;

    st->preread = NULL;
    st->preread_last = &st->preread;
    sws_http_v2_consume(st->h2c, st, st->unconsumed);
    st->unconsumed = 0;
    if (st->in_closed) {
        r->body->finished = 1;
    }
    return SWS_OK;
}

/* ---- the end ---- */

void
sws_http_v2_stream_close(sws_http_v2_stream_t *st, uint32_t error)
{
    sws_http_v2_conn_t *h2c = st->h2c;
    sws_http_request_t *r = st->r;

    if (st->unconsumed) {
        sws_http_v2_consume(h2c, NULL, st->unconsumed);
        st->unconsumed = 0;
    }
    /* Frames still in flight on it: after our RST_STREAM ignored, else
     * STREAM_CLOSED (sws_http_v2_frame.c). */
    sws_http_v2_remember_closed(h2c, (uint32_t) st->id
                                     | (st->reset ? SWS_H2_CLOSED_IGNORE : 0));
    if (h2c->headers_st == st) {
        h2c->headers_st = NULL;
    }
    sws_del_timer(&st->rev);
    sws_del_timer(&st->wev);
    sws_del_timer(&st->pace);
    sws_queue_remove(&st->queue);
    sws_rbtree_delete(&h2c->stream_ids, &st->id_node);
    h2c->nstreams--;

    if (error != SWS_H2_NO_ERROR && r) {
        sws_log_debug(r->log, "http2 stream %d closed with error %u", (int) st->id,
                      (unsigned) error);
    }
    if (r == NULL) {
        sws_pool_destroy(st->pool);    /* never became a request */
    } else if (sws_http_request_ended(r, st->out_closed ? SWS_OK : SWS_ERROR)
               == SWS_AGAIN)
    {
        /* Over for the client, not for the server: the core releases it
         * when it is finalized. */
        sws_http_v2_background_keep(st);
    }
    sws_http_v2_post_send(h2c);
}

static void
sws_http_v2_stream_timeout(sws_event_t *ev)
{
    sws_http_v2_stream_t *st = ev->data;
    sws_http_request_t   *r = st->r;

    ev->timedout = 0;
    if (ev->write) {
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client timed out reading the response "
                      "on stream %d", (int) st->id);
        sws_http_v2_reset(st, SWS_H2_CANCEL);
        return;
    }
    if (st->out_closed) {
        /* The rest of a body awaited after the response did not come. */
        sws_http_v2_reset(st, SWS_H2_NO_ERROR);
        return;
    }
    if (!st->started) {
        /* A header block left unfinished: HPACK state is half updated and
         * only CONTINUATION may follow, so the connection cannot go on. */
        sws_log_error(SWS_LOG_INFO, r->log, 0, "client timed out sending the request "
                      "head on stream %d", (int) st->id);
        sws_http_v2_goaway(st->h2c, SWS_H2_NO_ERROR);
        st->h2c->closing = 1;
        sws_http_v2_post_send(st->h2c);
        return;
    }
    sws_log_error(SWS_LOG_INFO, r->log, 0, "client timed out sending the request body "
                  "on stream %d", (int) st->id);
    st->reading = 0;
    if (st->streaming && r->body) {
        r->body->timedout = 1;       /* the consumer's next pull says 408 */
        r->body->done(r);
        sws_http_v2_post_send(st->h2c);
        return;
    }
    sws_http_finalize(r, SWS_HTTP_REQUEST_TIME_OUT);
    sws_http_v2_post_send(st->h2c);
}
