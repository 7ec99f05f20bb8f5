/*
 * The streaming matcher of sub_filter.
 *
 * The body arrives in pieces of any size, and a string to replace may be
 * split across them at any byte. Most bytes start no pattern (a table of
 * first bytes says so) and are copied in runs. At a byte that may start
 * one, the patterns are compared in configuration order: the first that
 * matches whole wins; one whose prefix matches but that runs past the
 * input must be decided first, so the bytes from there on are kept in
 * hold (at most the longest pattern) until more input comes or the body
 * ends. Output that does not fit (a replacement longer than the room
 * left) is kept as pend and written first on the next call.
 */
#include <string.h>
#include <scalws/sws_http.h>
#include "sws_sub_filter.h"

#define SWS_SUB_NOMATCH    (-1)
#define SWS_SUB_UNDECIDED  (-2)

static const u_char  sws_sub_lower[256] = {
#define L4(c)  (c), (c) + 1, (c) + 2, (c) + 3
#define L16(c) L4(c), L4((c) + 4), L4((c) + 8), L4((c) + 12)
    L16(0x00), L16(0x10), L16(0x20), L16(0x30),
    0x40, L4('a'), L4('e'), L4('i'), L4('m'), L4('q'), L4('u'), 'y', 'z',
    0x5b, 0x5c, 0x5d, 0x5e, 0x5f,
    L16(0x60), L16(0x70), L16(0x80), L16(0x90), L16(0xa0), L16(0xb0),
    L16(0xc0), L16(0xd0), L16(0xe0), L16(0xf0)
#undef L16
#undef L4
};


/* Count pattern i in (add 1) or out (-1) of the bytes that may start a
 * match: its first byte in either case. */
static void
sws_sub_count_first(sws_sub_state_t *st, sws_uint_t i, int add)
{
    u_char  c = st->set->pats[i].data[0];

    st->first[c] = (uint16_t) (st->first[c] + add);
    if (c >= 'a' && c <= 'z') {
        c = (u_char) (c - 'a' + 'A');
        st->first[c] = (uint16_t) (st->first[c] + add);
    }
}


size_t
sws_sub_state_size(const sws_sub_set_t *set)
{
    return sizeof(sws_sub_state_t) + set->max_len + set->n;
}


void
sws_sub_state_init(sws_sub_state_t *st, const sws_sub_set_t *set, sws_sub_value_pt value,
    void *value_data)
{
    sws_uint_t  i;

    st->set = set;
    st->value = value;
    st->value_data = value_data;
    st->hold = (u_char *) (st + 1);
    st->done = st->hold + set->max_len;
    st->left = set->n;
    memset(st->first, 0, sizeof(st->first));
    for (i = 0; i < set->n; i++) {
        sws_sub_count_first(st, i, 1);
    }
}


/* Which pattern matches at s (len bytes known): its index,
 * SWS_SUB_NOMATCH, or SWS_SUB_UNDECIDED (a pattern tried before any that
 * matches runs past the bytes known: more are needed). */
static sws_int_t
sws_sub_decide(const sws_sub_state_t *st, const u_char *s, size_t len)
{
    const sws_sub_pattern_t  *p;
    sws_uint_t                i;
    size_t                    j, n;

    for (i = 0; i < st->set->n; i++) {
        if (st->done[i]) {
            continue;
        }
        p = &st->set->pats[i];
        n = p->len < len ? p->len : len;
        for (j = 0; j < n && sws_sub_lower[s[j]] == p->data[j]; j++) {
            /* compare */
        }
        if (j < n) {
            continue;
        }
        return p->len <= len ? (sws_int_t) i : SWS_SUB_UNDECIDED;
    }
    return SWS_SUB_NOMATCH;
}


/* Write what fits of [p, p + len) at *out; the rest becomes pend. */
static void
sws_sub_emit(sws_sub_state_t *st, const u_char *p, size_t len, u_char **out, u_char *out_end)
{
    size_t  n = (size_t) (out_end - *out);

    if (n > len) {
        n = len;
    }
    if (n) {
        memcpy(*out, p, n);
        *out += n;
    }
    st->pend = p + n;
    st->pend_len = len - n;
}


/* Pattern i was found: its replacement goes out. */
static sws_int_t
sws_sub_found(sws_sub_state_t *st, sws_uint_t i, u_char **out, u_char *out_end)
{
    sws_str_t  v;

    if (st->value(st->value_data, i, &v) != SWS_OK) {
        return SWS_ERROR;
    }
    if (st->set->once) {
        st->done[i] = 1;
        sws_sub_count_first(st, i, -1);
        st->left--;
    }
    sws_sub_emit(st, v.data, v.len, out, out_end);
    return SWS_OK;
}


/* Decide at the start of hold, topped up from the input, as far as its
 * bytes allow (eof: the body ended), byte by byte. SWS_OK when hold is
 * empty, SWS_AGAIN when output room ran out, SWS_DONE when more input is
 * needed, SWS_ERROR. pend never points into hold: a kept byte that starts
 * nothing is written only when there is room for it. */
static sws_int_t
sws_sub_drain_hold(sws_sub_state_t *st, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int eof)
{
    sws_int_t  m;
    size_t     take, drop;

    while (st->hold_len) {
        if (st->pend_len) {
            sws_sub_emit(st, st->pend, st->pend_len, out, out_end);
            if (st->pend_len) {
                return SWS_AGAIN;
            }
        }
        /* top hold up from the input */
        take = st->set->max_len - st->hold_len;
        if (*in && take > (size_t) (in_end - *in)) {
            take = (size_t) (in_end - *in);
        }
        if (*in && take) {
            memcpy(st->hold + st->hold_len, *in, take);
            st->hold_len += take;
            *in += take;
        }
        m = st->first[st->hold[0]]
            ? sws_sub_decide(st, st->hold, st->hold_len) : SWS_SUB_NOMATCH;
        if (m == SWS_SUB_UNDECIDED) {
            if (!eof) {
                return SWS_DONE;
            }
            /* the body ended inside a possible match: what is kept goes
             * out as it is, not searched again (as nginx) */
            sws_sub_emit(st, st->hold, st->hold_len, out, out_end);
            st->hold_len = 0;
            break;
        }
        if (*out == out_end) {
            return SWS_AGAIN;
        }
        if (m == SWS_SUB_NOMATCH) {
            *(*out)++ = st->hold[0];
            drop = 1;
        } else {
            if (sws_sub_found(st, (sws_uint_t) m, out, out_end) != SWS_OK) {
                return SWS_ERROR;
            }
            drop = st->set->pats[m].len;
        }
        st->hold_len -= drop;
        memmove(st->hold, st->hold + drop, st->hold_len);
    }
    /* the last replacement may not have fitted */
    return st->pend_len ? SWS_AGAIN : SWS_OK;
}


sws_int_t
sws_sub_match_run(sws_sub_state_t *st, const u_char **in, const u_char *in_end, u_char **out,
    u_char *out_end, int mode)
{
    const u_char  *p, *q, *end;
    sws_int_t      rc, m;
    size_t         room;

    if (st->pend_len) {
        sws_sub_emit(st, st->pend, st->pend_len, out, out_end);
        if (st->pend_len) {
            return SWS_AGAIN;
        }
    }

    rc = sws_sub_drain_hold(st, in, in_end, out, out_end,
                            mode == SWS_HTTP_TRANSFORM_FINISH);
    if (rc == SWS_DONE) {
        return SWS_OK;                  /* all input is in hold */
    }
    if (rc != SWS_OK) {
        return rc;
    }
    if (*in == NULL) {
        return SWS_OK;                  /* FLUSH, FINISH: all written */
    }

    p = *in;
    end = in_end;
    while (p < end) {
        room = (size_t) (out_end - *out);
        if (room == 0) {
            *in = p;
            return SWS_AGAIN;
        }
        /* a run of bytes that start no pattern, as far as the room goes */
        q = p;
        if (st->left) {
            while (q < end && (size_t) (q - p) < room && st->first[*q] == 0) {
                q++;
            }
        } else {
            q = p + ((size_t) (end - p) < room ? (size_t) (end - p) : room);
        }
        if (q > p) {
            memcpy(*out, p, (size_t) (q - p));
            *out += q - p;
            p = q;
            continue;
        }
        m = sws_sub_decide(st, p, (size_t) (end - p));
        if (m == SWS_SUB_UNDECIDED) {
            /* shorter than the longest pattern: it fits in hold */
            st->hold_len = (size_t) (end - p);
            memcpy(st->hold, p, st->hold_len);
            p = end;
            break;
        }
        if (m == SWS_SUB_NOMATCH) {
            *(*out)++ = *p++;
            continue;
        }
        if (sws_sub_found(st, (sws_uint_t) m, out, out_end) != SWS_OK) {
            *in = p;
            return SWS_ERROR;
        }
        p += st->set->pats[m].len;
        if (st->pend_len) {
            *in = p;
            return SWS_AGAIN;
        }
    }
    *in = p;
    return SWS_OK;
}
