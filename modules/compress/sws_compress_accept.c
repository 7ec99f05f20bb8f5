/*
 * Accept-Encoding (RFC 9110 12.5.3): a list of codings, each with an
 * optional weight ";q=" from 0 to 1 with up to three decimals.
 *
 *   - a coding named explicitly gets its own q ("x-gzip" counts as gzip);
 *   - "*" gives its q to every coding not named;
 *   - identity is acceptable unless "identity;q=0", or "*;q=0" without an
 *     identity entry;
 *   - an element that cannot be read (a bad token, a bad q) makes that
 *     coding unacceptable rather than guessing at what was meant; when a
 *     coding is named twice, the first entry counts.
 *
 * Kept free of the request and of the configuration so that the fuzz
 * target (tests/fuzz/fuzz_accept_encoding.c) links it alone.
 */
#include "sws_compress.h"

#define SWS_COMPRESS_Q_UNSET  ((sws_uint_t) -1)

const sws_str_t  sws_compress_token[SWS_COMPRESS_NCODINGS] = {
    sws_string("gzip"), sws_string("br"), sws_string("zstd")
};

/* RFC 9110 5.6.2 tchar */
static int
sws_compress_tchar(u_char c)
{
    static const uint32_t  map[4] = {
        0x00000000,
        0x03ff6cfa,     /* ! # $ % & ' * + - . 0-9 */
        0xc7fffffe,     /* A-Z ^ _ */
        0x57ffffff      /* ` a-z | ~ */
    };

    return c < 128 && ((map[c >> 5] >> (c & 0x1f)) & 1);
}


static const u_char *
sws_compress_ows(const u_char *p, const u_char *end)
{
    while (p < end && (*p == ' ' || *p == '\t')) {
        p++;
    }
    return p;
}


/* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in
 * thousandths; SWS_ERROR if v is not one. */
static sws_int_t
sws_compress_qvalue(const u_char *v, size_t len)
{
    sws_int_t  q, scale;
    size_t     i;

    if (len == 0 || (v[0] != '0' && v[0] != '1') || len > 5) {
        return SWS_ERROR;
    }
    q = (v[0] - '0') * 1000;
    if (len == 1) {
        return q;
    }
    if (v[1] != '.') {
        return SWS_ERROR;
    }
    for (i = 2, scale = 100; i < len; i++, scale /= 10) {
        if (v[i] < '0' || v[i] > '9') {
            return SWS_ERROR;
        }
        q += (v[i] - '0') * scale;
    }
    return q > 1000 ? SWS_ERROR : q;
}


/* Which entry a coding name fills: a coding index, or one of these. */
#define SWS_COMPRESS_ENTRY_IDENTITY  SWS_COMPRESS_NCODINGS
#define SWS_COMPRESS_ENTRY_STAR      (SWS_COMPRESS_NCODINGS + 1)
#define SWS_COMPRESS_ENTRY_OTHER     (SWS_COMPRESS_NCODINGS + 2)

static sws_uint_t
sws_compress_entry(const u_char *name, size_t len)
{
    sws_str_t   s = { len, (u_char *) name };
    sws_uint_t  i;

    for (i = 0; i < SWS_COMPRESS_NCODINGS; i++) {
        if (sws_str_caseeq(&s, &sws_compress_token[i])) {
            return i;
        }
    }
    if (sws_str_caseeq_cstr(&s, "x-gzip")) {
        return SWS_COMPRESS_GZIP;
    }
    if (sws_str_caseeq_cstr(&s, "identity")) {
        return SWS_COMPRESS_ENTRY_IDENTITY;
    }
    if (len == 1 && name[0] == '*') {
        return SWS_COMPRESS_ENTRY_STAR;
    }
    return SWS_COMPRESS_ENTRY_OTHER;
}


/* One parameter after ';' at p: "name=value" with value a token or a
 * quoted string. Sets *q when it is a valid "q". Returns the end of the
 * parameter, or NULL when it cannot be read. */
static const u_char *
sws_compress_param(const u_char *p, const u_char *end, sws_int_t *q)
{
    const u_char  *name = p, *v;
    size_t         nlen;

    while (p < end && sws_compress_tchar(*p)) {
        p++;
    }
    nlen = (size_t) (p - name);
    if (nlen == 0 || p == end || *p != '=') {
        return NULL;
    }
    v = ++p;
    if (p < end && *p == '"') {
        for (p++; p < end && *p != '"'; p++) {
            if (*p == '\\' && p + 1 < end) {
                p++;
            }
        }
        if (p == end) {
            return NULL;
        }
        p++;
    } else {
        while (p < end && sws_compress_tchar(*p)) {
            p++;
        }
    }
    if (nlen == 1 && (name[0] | 0x20) == 'q') {
        *q = sws_compress_qvalue(v, (size_t) (p - v));
    }
    return p;
}


void
sws_compress_accept_parse(const u_char *p, size_t len, sws_compress_accept_t *a)
{
    sws_uint_t     q[SWS_COMPRESS_NCODINGS + 2], entry, i;
    sws_int_t      w;
    const u_char  *end = p + len, *name;
    size_t         nlen;
    int            bad;

    for (i = 0; i < sws_nelems(q); i++) {
        q[i] = SWS_COMPRESS_Q_UNSET;
    }

    while (p < end) {
        p = sws_compress_ows(p, end);
        name = p;
        while (p < end && sws_compress_tchar(*p)) {
            p++;
        }
        nlen = (size_t) (p - name);
        w = 1000;
        bad = (nlen == 0);

        p = sws_compress_ows(p, end);
        while (!bad && p < end && *p == ';') {
            p = sws_compress_param(sws_compress_ows(p + 1, end), end, &w);
            bad = (p == NULL || w == SWS_ERROR);
            if (p != NULL) {
                p = sws_compress_ows(p, end);
            }
        }
        if (!bad && p < end && *p != ',') {
            bad = 1;                    /* junk after the element */
        }

        if (nlen) {
            entry = sws_compress_entry(name, nlen);
            if (entry != SWS_COMPRESS_ENTRY_OTHER && q[entry] == SWS_COMPRESS_Q_UNSET) {
                q[entry] = bad ? 0 : (sws_uint_t) w;
            }
        }

        /* on to the next element (past a quoted comma too) */
        if (p == NULL) {
            p = name;
        }
        while (p < end && *p != ',') {
            if (*p == '"') {
                for (p++; p < end && *p != '"'; p++) {
                    if (*p == '\\' && p + 1 < end) {
                        p++;
                    }
                }
                if (p == end) {
                    break;
                }
            }
            p++;
        }
        if (p < end) {
            p++;
        }
    }

    for (i = 0; i < SWS_COMPRESS_NCODINGS; i++) {
        a->q[i] = q[i] != SWS_COMPRESS_Q_UNSET ? q[i]
                  : q[SWS_COMPRESS_ENTRY_STAR] != SWS_COMPRESS_Q_UNSET
                    ? q[SWS_COMPRESS_ENTRY_STAR] : 0;
    }
    entry = SWS_COMPRESS_ENTRY_IDENTITY;
    a->identity_q = q[entry] != SWS_COMPRESS_Q_UNSET ? q[entry]
                    : q[SWS_COMPRESS_ENTRY_STAR] != SWS_COMPRESS_Q_UNSET
                      ? q[SWS_COMPRESS_ENTRY_STAR] : 1000;
    /* "*" only excludes identity at q=0; a lower q does not rank it. */
    if (q[entry] == SWS_COMPRESS_Q_UNSET && a->identity_q != 0) {
        a->identity_q = 1000;
    }
}


sws_int_t
sws_compress_accept_choose(const sws_compress_accept_t *a, sws_uint_t allowed,
    const sws_uint_t *prefer, sws_uint_t nprefer)
{
    sws_int_t   best = -1;
    sws_uint_t  i, c, bestq = 0;

    for (i = 0; i < nprefer; i++) {
        c = prefer[i];
        if (c >= SWS_COMPRESS_NCODINGS || !(allowed & (1u << c))) {
            continue;
        }
        if (a->q[c] > bestq) {          /* equal q: the earlier preference */
            bestq = a->q[c];
            best = (sws_int_t) c;
        }
    }
    return best;
}
