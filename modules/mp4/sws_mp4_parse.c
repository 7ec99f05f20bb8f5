/*
 * Cutting an ISO BMFF (.mp4) file to a time interval, as nginx 1.22's
 * ngx_http_mp4_module answers "?start=S&end=E" (see docs/mp4.md):
 *
 *   the top-level atoms: ftyp (copied), moov (rebuilt), mdat (its part)
 *   each trak's stbl: stts, ctts, stss, stsc, stsz (or stz2), stco/co64
 *   cut to the samples from the one playing at S (or the key frame
 *   before it with mp4_start_key_frame, hidden by an edit list) to the
 *   last one that ends by E; the durations of mvhd, tkhd and mdhd made
 *   E - S; the chunk offsets moved to where the chunks are in what is
 *   sent; a trak whose samples all end before S is left out.
 *
 * The moov is outside input: every table's count is checked against the
 * atom that holds it before it is read, and every sample and chunk the
 * cut reaches must lie in the mdat.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "sws_mp4_parse.h"

#define SWS_MP4_MAX_TRAKS  16      /* more are an error, as a bound on work */

typedef struct {
    const u_char  *p;               /* the payload */
    size_t         len;
} sws_mp4_atom_t;

typedef struct {
    sws_mp4_atom_t  tkhd, mdhd, hdlr, mhd, dinf, stsd;
    sws_mp4_atom_t  stts, ctts, stss, stsc, stsz, stz2, stco, co64;
    const u_char   *mhd_type;       /* vmhd, smhd ...: the media header's name */
    uint32_t        timescale;
    uint64_t        duration;       /* mdhd's */
    uint32_t        samples;        /* stsz's count */
    uint32_t        chunks;         /* stco's count */
    /* the cut */
    uint32_t        start;          /* first sample sent */
    uint32_t        end;            /* one past the last */
    uint64_t        prefix;         /* duration of the key frames' lead (edit list) */
    uint64_t        new_duration;   /* mdhd's */
    uint32_t        first_chunk, last_chunk;       /* 0-based, inclusive */
    uint32_t        first_count, last_count;       /* samples sent of each */
    uint64_t        first_offset;   /* file offset of the first sample sent */
    uint64_t        data_end;       /* past the last one's bytes */
    unsigned        dropped:1;
} sws_mp4_trak_t;

typedef struct {
    sws_pool_t             *pool;
    const sws_mp4_request_t *req;
    sws_mp4_result_t       *res;
    sws_mp4_atom_t          mvhd;
    uint32_t                movie_scale;
    uint64_t                movie_duration;
    sws_mp4_trak_t          trak[SWS_MP4_MAX_TRAKS];
    sws_uint_t              ntraks;
    uint64_t                mdat_start, mdat_end;   /* the mdat's payload in the file */
} sws_mp4_t;


static uint32_t
get32(const u_char *p)
{
    return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static uint64_t
get64(const u_char *p)
{
    return (uint64_t) get32(p) << 32 | get32(p + 4);
}

static u_char *
put32(u_char *p, uint64_t v)
{
    p[0] = (u_char) (v >> 24); p[1] = (u_char) (v >> 16);
    p[2] = (u_char) (v >> 8);  p[3] = (u_char) v;
    return p + 4;
}

static u_char *
put64(u_char *p, uint64_t v)
{
    put32(p, v >> 32);
    return put32(p + 4, v & 0xffffffff);
}

static sws_int_t sws_mp4_nomem(sws_mp4_t *mp4);

static sws_int_t
sws_mp4_fail(sws_mp4_t *mp4, const char *prefix, const char *fmt, ...)
{
    char    *s = sws_pnalloc(mp4->pool, 200);
    va_list  ap;

    if (s == NULL) {
        return sws_mp4_nomem(mp4);
    }
    va_start(ap, fmt);
    vsnprintf(s, 200, fmt, ap);
    va_end(ap);
    mp4->res->err_prefix = prefix;
    mp4->res->err_suffix = s;
    return SWS_ERROR;
}

static sws_int_t
sws_mp4_nomem(sws_mp4_t *mp4)
{
    mp4->res->err_prefix = mp4->res->err_suffix = NULL;
    return SWS_ERROR;
}

/* ms milliseconds in ticks of scale per second (never wrapping). */
static uint64_t
sws_mp4_ticks(uint64_t ms, uint32_t scale)
{
    unsigned __int128 v = (unsigned __int128) ms * scale / 1000;

    return v > UINT64_MAX ? UINT64_MAX : (uint64_t) v;
}

#define sws_mp4_too_small(mp4, name)  sws_mp4_fail(mp4, "", " mp4 %s atom too small", name)


int64_t
sws_mp4_parse_time(const u_char *p, size_t len)
{
    const u_char *end = p + len;
    int64_t       v = 0;
    int           digits = 0, frac = -1;

    for ( /* void */ ; p < end; p++) {
        if (*p == '.' && frac < 0) {
            frac = 0;
            continue;
        }
        if (*p < '0' || *p > '9') {
            return -1;
        }
        if (frac >= 3) {
            continue;                  /* finer than a millisecond */
        }
        if (v > (INT64_MAX - 9) / 10) {
            return -1;
        }
        v = v * 10 + (*p - '0');
        digits++;
        if (frac >= 0) {
            frac++;
        }
    }
    if (digits == 0) {
        return -1;
    }
    for (frac = frac < 0 ? 0 : frac; frac < 3; frac++) {
        if (v > INT64_MAX / 10) {
            return -1;
        }
        v *= 10;
    }
    return v;
}


/* ---- the moov's atoms ---- */

/* The next atom of [*p, end): its name and payload; 0 at the end, -1 when
 * it does not fit. */
static int
sws_mp4_next(const u_char **p, const u_char *end, const u_char **name, sws_mp4_atom_t *a)
{
    size_t    left = (size_t) (end - *p), head = 8;
    uint64_t  size;

    if (left < 8) {
        return left ? -1 : 0;
    }
    size = get32(*p);
    if (size == 1) {
        if (left < 16) {
            return -1;
        }
        size = get64(*p + 8);
        head = 16;
    } else if (size == 0) {
        size = left;
    }
    if (size < head || size > left) {
        return -1;
    }
    *name = *p + 4;
    a->p = *p + head;
    a->len = (size_t) size - head;
    *p += size;
    return 1;
}

static sws_int_t
sws_mp4_read_stbl(sws_mp4_t *mp4, sws_mp4_trak_t *t, const u_char *p, const u_char *end)
{
    const u_char    *name;
    sws_mp4_atom_t   a;
    int              rc;

    while ((rc = sws_mp4_next(&p, end, &name, &a)) == 1) {
        sws_mp4_atom_t *slot = NULL;

        if (memcmp(name, "stsd", 4) == 0) slot = &t->stsd;
        else if (memcmp(name, "stts", 4) == 0) slot = &t->stts;
        else if (memcmp(name, "ctts", 4) == 0) slot = &t->ctts;
        else if (memcmp(name, "stss", 4) == 0) slot = &t->stss;
        else if (memcmp(name, "stsc", 4) == 0) slot = &t->stsc;
        else if (memcmp(name, "stsz", 4) == 0) slot = &t->stsz;
        else if (memcmp(name, "stz2", 4) == 0) slot = &t->stz2;
        else if (memcmp(name, "stco", 4) == 0) slot = &t->stco;
        else if (memcmp(name, "co64", 4) == 0) slot = &t->co64;
        if (slot && slot->p == NULL) {
            *slot = a;
        }
    }
    return rc < 0 ? sws_mp4_fail(mp4, "", " mp4 stbl atom is malformed") : SWS_OK;
}

static sws_int_t
sws_mp4_read_minf(sws_mp4_t *mp4, sws_mp4_trak_t *t, const u_char *p, const u_char *end)
{
    const u_char    *name;
    sws_mp4_atom_t   a;
    int              rc;

    while ((rc = sws_mp4_next(&p, end, &name, &a)) == 1) {
        if (memcmp(name, "stbl", 4) == 0) {
            if (sws_mp4_read_stbl(mp4, t, a.p, a.p + a.len) != SWS_OK) {
                return SWS_ERROR;
            }
        } else if (memcmp(name, "dinf", 4) == 0) {
            t->dinf = a;
        } else if (memcmp(name, "vmhd", 4) == 0 || memcmp(name, "smhd", 4) == 0) {
            t->mhd = a;
            t->mhd_type = name;
        }
    }
    return rc < 0 ? sws_mp4_fail(mp4, "", " mp4 minf atom is malformed") : SWS_OK;
}

static sws_int_t
sws_mp4_read_trak(sws_mp4_t *mp4, const u_char *p, const u_char *end)
{
    sws_mp4_trak_t  *t;
    const u_char    *name, *mp, *mend;
    sws_mp4_atom_t   a, b;
    int              rc;

    if (mp4->ntraks == SWS_MP4_MAX_TRAKS) {
        return sws_mp4_fail(mp4, "", " mp4 has too many traks");
    }
    t = &mp4->trak[mp4->ntraks++];
    memset(t, 0, sizeof(*t));

    while ((rc = sws_mp4_next(&p, end, &name, &a)) == 1) {
        if (memcmp(name, "tkhd", 4) == 0) {
            t->tkhd = a;
        } else if (memcmp(name, "mdia", 4) == 0) {
            mp = a.p;
            mend = a.p + a.len;
            while ((rc = sws_mp4_next(&mp, mend, &name, &b)) == 1) {
                if (memcmp(name, "mdhd", 4) == 0) {
                    t->mdhd = b;
                } else if (memcmp(name, "hdlr", 4) == 0) {
                    t->hdlr = b;
                } else if (memcmp(name, "minf", 4) == 0
                           && sws_mp4_read_minf(mp4, t, b.p, b.p + b.len) != SWS_OK)
                {
                    return SWS_ERROR;
                }
            }
            if (rc < 0) {
                break;
            }
        }
    }
    if (rc < 0) {
        return sws_mp4_fail(mp4, "", " mp4 trak atom is malformed");
    }
    return SWS_OK;
}

/* The version-dependent times of mvhd and mdhd: the timescale and the
 * duration (and where the duration is). */
static sws_int_t
sws_mp4_header_times(const sws_mp4_atom_t *a, uint32_t *scale, uint64_t *duration)
{
    if (a->len >= 32 && a->p[0] == 1) {
        *scale = get32(a->p + 20);
        *duration = get64(a->p + 24);
        return SWS_OK;
    }
    if (a->len >= 20 && a->p[0] == 0) {
        *scale = get32(a->p + 12);
        *duration = get32(a->p + 16);
        return SWS_OK;
    }
    return SWS_ERROR;
}


/* ---- the cut of one trak ---- */

/* The sample playing at time t (track ticks): the index of the one whose
 * span holds it, or the count when t is at or past the end; *dts its
 * start. */
static uint32_t
sws_mp4_sample_at(const sws_mp4_trak_t *t, uint64_t at, uint64_t *dts)
{
    const u_char  *e = t->stts.p + 8;
    uint32_t       n = get32(t->stts.p + 4), i, count, delta;
    uint64_t       acc = 0, base = 0, k;

    for (i = 0; i < n; i++, e += 8) {
        count = get32(e);
        delta = get32(e + 4);
        if (delta && at < acc + (uint64_t) count * delta) {
            k = (at - acc) / delta;
            *dts = acc + k * delta;
            return (uint32_t) (base + k);
        }
        acc += (uint64_t) count * delta;
        base += count;
    }
    *dts = acc;
    return (uint32_t) base;
}

/* The start time (ticks) of sample s. */
static uint64_t
sws_mp4_dts(const sws_mp4_trak_t *t, uint32_t s)
{
    const u_char  *e = t->stts.p + 8;
    uint32_t       n = get32(t->stts.p + 4), i, count;
    uint64_t       acc = 0;

    for (i = 0; i < n && s; i++, e += 8) {
        count = get32(e) < s ? get32(e) : s;
        acc += (uint64_t) count * get32(e + 4);
        s -= count;
    }
    return acc;
}

static uint64_t
sws_mp4_sample_size(const sws_mp4_trak_t *t, uint32_t s)
{
    const u_char  *p;
    uint32_t       bits;

    if (t->stsz.p) {
        if (get32(t->stsz.p + 4)) {
            return get32(t->stsz.p + 4);
        }
        return get32(t->stsz.p + 12 + (size_t) s * 4);
    }
    bits = t->stz2.p[7];
    p = t->stz2.p + 12;
    switch (bits) {
    case 4:
        return (s & 1) ? (p[s / 2] & 0x0f) : (p[s / 2] >> 4);
    case 8:
        return p[s];
    default:
        return (uint32_t) p[(size_t) s * 2] << 8 | p[(size_t) s * 2 + 1];
    }
}

/* The bytes of samples [from, to): a product for a fixed size (a count
 * that no table's bytes bound), else a sum over the table's entries. */
static uint64_t
sws_mp4_sizes(const sws_mp4_trak_t *t, uint32_t from, uint32_t to)
{
    uint64_t  sum = 0;

    if (t->stsz.p && get32(t->stsz.p + 4)) {
        return (uint64_t) (to - from) * get32(t->stsz.p + 4);
    }
    for ( /* void */ ; from < to; from++) {
        sum += sws_mp4_sample_size(t, from);
    }
    return sum;
}

static uint64_t
sws_mp4_chunk_offset(const sws_mp4_trak_t *t, uint32_t c)
{
    if (t->co64.p) {
        return get64(t->co64.p + 8 + (size_t) c * 8);
    }
    return get32(t->stco.p + 8 + (size_t) c * 4);
}

/* Checks each table's entries fit its atom; the counts. */
static sws_int_t
sws_mp4_check_tables(sws_mp4_t *mp4, sws_mp4_trak_t *t)
{
    uint32_t  n, bits;

    if (t->stts.p == NULL || t->stsc.p == NULL || t->stsd.p == NULL
        || (t->stsz.p == NULL && t->stz2.p == NULL)
        || (t->stco.p == NULL && t->co64.p == NULL)
        || t->tkhd.p == NULL || t->mdhd.p == NULL || t->hdlr.p == NULL)
    {
        return sws_mp4_fail(mp4, "", " mp4 trak lacks an atom it needs");
    }
    if (sws_mp4_header_times(&t->mdhd, &t->timescale, &t->duration) != SWS_OK) {
        return sws_mp4_too_small(mp4, "mdhd");
    }
    if (t->tkhd.len < 24 || (t->tkhd.p[0] == 1 && t->tkhd.len < 36)) {
        return sws_mp4_too_small(mp4, "tkhd");
    }
    if (t->stts.len < 8 || (t->stts.len - 8) / 8 < get32(t->stts.p + 4)) {
        return sws_mp4_too_small(mp4, "stts");
    }
    if (t->ctts.p && (t->ctts.len < 8 || (t->ctts.len - 8) / 8 < get32(t->ctts.p + 4))) {
        return sws_mp4_too_small(mp4, "ctts");
    }
    if (t->stss.p && (t->stss.len < 8 || (t->stss.len - 8) / 4 < get32(t->stss.p + 4))) {
        return sws_mp4_too_small(mp4, "stss");
    }
    if (t->stsc.len < 8 || (t->stsc.len - 8) / 12 < get32(t->stsc.p + 4)) {
        return sws_mp4_too_small(mp4, "stsc");
    }
    if (get32(t->stsc.p + 4) == 0) {
        return sws_mp4_fail(mp4, "zero number of entries in stsc atom in ", "");
    }
    /* chunks numbered from 1, in order: each chunk in one entry at most
     * (what bounds the new stsc) */
    for (n = 0, bits = 0; n < get32(t->stsc.p + 4); n++) {
        if (get32(t->stsc.p + 8 + (size_t) n * 12) <= bits) {
            return sws_mp4_fail(mp4, "", " mp4 stsc atom is malformed");
        }
        bits = get32(t->stsc.p + 8 + (size_t) n * 12);
    }
    if (t->stsz.p) {
        if (t->stsz.len < 12) {
            return sws_mp4_too_small(mp4, "stsz");
        }
        n = get32(t->stsz.p + 8);
        if (get32(t->stsz.p + 4) == 0 && (t->stsz.len - 12) / 4 < n) {
            return sws_mp4_too_small(mp4, "stsz");
        }
    } else {
        if (t->stz2.len < 12) {
            return sws_mp4_too_small(mp4, "stz2");
        }
        n = get32(t->stz2.p + 8);
        bits = t->stz2.p[7];
        if ((bits != 4 && bits != 8 && bits != 16)
            || (t->stz2.len - 12) < ((uint64_t) n * bits + 7) / 8)
        {
            return sws_mp4_too_small(mp4, "stz2");
        }
    }
    t->samples = n;
    if (t->co64.p) {
        if (t->co64.len < 8 || (t->co64.len - 8) / 8 < get32(t->co64.p + 4)) {
            return sws_mp4_too_small(mp4, "co64");
        }
        t->chunks = get32(t->co64.p + 4);
    } else {
        if (t->stco.len < 8 || (t->stco.len - 8) / 4 < get32(t->stco.p + 4)) {
            return sws_mp4_too_small(mp4, "stco");
        }
        t->chunks = get32(t->stco.p + 4);
    }
    return SWS_OK;
}

/* The chunk that holds sample s and the samples before s in it; SWS_ERROR
 * when the stsc and stco give fewer samples. */
static sws_int_t
sws_mp4_chunk_of(const sws_mp4_trak_t *t, uint32_t s, uint32_t *chunk, uint32_t *before)
{
    const u_char  *e = t->stsc.p + 8;
    uint32_t       n = get32(t->stsc.p + 4), i, first, next, spc;
    uint64_t       base = 0, span;

    for (i = 0; i < n; i++, e += 12) {
        first = get32(e);
        spc = get32(e + 4);
        next = i + 1 < n ? get32(e + 12) : t->chunks + 1;
        if (first == 0 || next < first || next > t->chunks + 1) {
            return SWS_ERROR;
        }
        span = (uint64_t) (next - first) * spc;
        if (spc && s < base + span) {
            *chunk = first - 1 + (uint32_t) ((s - base) / spc);
            *before = (uint32_t) ((s - base) % spc);
            return SWS_OK;
        }
        base += span;
    }
    return SWS_ERROR;
}

/* Samples in chunk c (0-based). */
static uint32_t
sws_mp4_chunk_samples(const sws_mp4_trak_t *t, uint32_t c)
{
    const u_char  *e = t->stsc.p + 8;
    uint32_t       n = get32(t->stsc.p + 4), i, spc = 0;

    for (i = 0; i < n && get32(e) <= c + 1; i++, e += 12) {
        spc = get32(e + 4);
    }
    return spc;
}

static sws_int_t
sws_mp4_cut_trak(sws_mp4_t *mp4, sws_mp4_trak_t *t)
{
    const sws_mp4_request_t *req = mp4->req;
    uint64_t                 start_t, len_t, start_dts, dts, total, key_dts, off, last_off;
    uint32_t                 s, e, before, k, n, i;
    const u_char            *p;

    if (sws_mp4_check_tables(mp4, t) != SWS_OK) {
        return SWS_ERROR;
    }
    start_t = sws_mp4_ticks(req->start_ms, t->timescale);
    total = sws_mp4_dts(t, UINT32_MAX);
    s = sws_mp4_sample_at(t, start_t, &start_dts);
    if (s >= t->samples || start_t >= total) {
        t->dropped = 1;                 /* all of it before the start */
        return SWS_OK;
    }
    if (t->duration > total) {
        total = t->duration;
    }
    t->new_duration = total - start_t;
    e = t->samples;
    if (req->end_ms) {
        /* as nginx: the interval's length, in the track's ticks, counted
         * from the first sample's own start */
        len_t = sws_mp4_ticks(req->end_ms - req->start_ms, t->timescale);
        e = sws_mp4_sample_at(t, start_dts + len_t, &dts);
        if (e > t->samples) {
            e = t->samples;             /* stts may count more than stsz */
        }
        if (len_t < t->new_duration) {
            t->new_duration = len_t;
        }
    }

    if (req->start_key_frame && t->stss.p && get32(t->stss.p + 4)) {
        /* the last key frame at or before s (stss numbers from 1) */
        n = get32(t->stss.p + 4);
        p = t->stss.p + 8;
        k = 0;
        for (i = 0; i < n; i++) {
            if (get32(p + 4 * i) >= 1 && get32(p + 4 * i) - 1 <= s) {
                k = get32(p + 4 * i) - 1 > k ? get32(p + 4 * i) - 1 : k;
            }
        }
        key_dts = sws_mp4_dts(t, k);
        t->prefix = sws_mp4_dts(t, s) - key_dts;
        t->new_duration += t->prefix;
        s = k;
    }
    t->start = s;
    t->end = e > s ? e : s;
    if (t->end == t->start) {
        return SWS_OK;                  /* kept, with no samples */
    }

    if (sws_mp4_chunk_of(t, t->start, &t->first_chunk, &before) != SWS_OK
        || sws_mp4_chunk_of(t, t->end - 1, &t->last_chunk, &i) != SWS_OK
        || t->last_chunk >= t->chunks)
    {
        return sws_mp4_fail(mp4, "", " mp4 stsc atom gives fewer samples than stsz");
    }
    t->first_count = sws_mp4_chunk_samples(t, t->first_chunk) - before;
    t->last_count = i + 1;
    if (t->first_chunk == t->last_chunk) {
        t->first_count = t->last_count = t->end - t->start;
    }

    /* the bytes of the first chunk's samples before the start */
    off = sws_mp4_chunk_offset(t, t->first_chunk) + sws_mp4_sizes(t, t->start - before, t->start);
    t->first_offset = off;
    last_off = t->first_chunk == t->last_chunk ? off : sws_mp4_chunk_offset(t, t->last_chunk);
    last_off += sws_mp4_sizes(t, t->end - t->last_count, t->end);
    t->data_end = last_off;
    if (off < mp4->mdat_start || last_off > mp4->mdat_end || off > last_off) {
        return sws_mp4_fail(mp4, "", " mp4 chunk offsets lie outside the mdat atom");
    }
    /* the chunks between must be in the mdat too (they are sent moved) */
    for (i = t->first_chunk + 1; i < t->last_chunk; i++) {
        off = sws_mp4_chunk_offset(t, i);
        if (off < mp4->mdat_start || off > mp4->mdat_end) {
            return sws_mp4_fail(mp4, "", " mp4 chunk offsets lie outside the mdat atom");
        }
    }
    return SWS_OK;
}


/* ---- writing the new moov ---- */

static u_char *
sws_mp4_open(u_char *p, const char *name)
{
    memcpy(p + 4, name, 4);
    return p + 8;                      /* the size is set by sws_mp4_close */
}

static u_char *
sws_mp4_close(u_char *start, u_char *p)
{
    put32(start, (uint64_t) (p - start));
    return p;
}

static u_char *
sws_mp4_copy(u_char *p, const char *name, const sws_mp4_atom_t *a)
{
    u_char *start = p;

    p = sws_mp4_open(p, name);
    memcpy(p, a->p, a->len);
    return sws_mp4_close(start, p + a->len);
}

/* A header atom copied with its duration replaced (mvhd, tkhd, mdhd: at
 * v0_at / v1_at by version). */
static u_char *
sws_mp4_copy_duration(u_char *p, const char *name, const sws_mp4_atom_t *a,
    size_t v0_at, size_t v1_at, uint64_t duration)
{
    u_char *body = p + 8;

    p = sws_mp4_copy(p, name, a);
    if (a->p[0] == 1) {
        put64(body + v1_at, duration);
    } else {
        put32(body + v0_at, duration > UINT32_MAX ? UINT32_MAX : duration);
    }
    return p;
}

/* A table atom's start: its version and flags copied from the source
 * table, its entry count left at *count_at for when it is known. */
static u_char *
sws_mp4_open_table(u_char *p, const char *name, const sws_mp4_atom_t *src, u_char **count_at)
{
    p = sws_mp4_open(p, name);
    memcpy(p, src->p, 4);
    *count_at = p + 4;
    return p + 8;
}

/* A run-length table (stts, ctts) cut to samples [s, e). */
static u_char *
sws_mp4_write_runs(u_char *p, const char *name, const sws_mp4_atom_t *a, uint32_t s, uint32_t e)
{
    u_char       *start = p, *count_at;
    const u_char *in = a->p + 8;
    uint32_t      n = get32(a->p + 4), i, c, out = 0;
    uint64_t      base = 0, lo, hi;

    p = sws_mp4_open_table(p, name, a, &count_at);
    for (i = 0; i < n && base < e; i++, in += 8) {
        c = get32(in);
        lo = base > s ? base : s;
        hi = base + c < e ? base + c : e;
        if (hi > lo) {
            p = put32(p, hi - lo);
            memcpy(p, in + 4, 4);
            p += 4;
            out++;
        }
        base += c;
    }
    put32(count_at, out);
    return sws_mp4_close(start, p);
}

static u_char *
sws_mp4_write_stss(u_char *p, const sws_mp4_trak_t *t)
{
    u_char       *start = p, *count_at;
    const u_char *in = t->stss.p + 8;
    uint32_t      n = get32(t->stss.p + 4), i, k, out = 0;

    p = sws_mp4_open_table(p, "stss", &t->stss, &count_at);
    for (i = 0; i < n; i++) {
        k = get32(in + 4 * i);
        if (k > t->start && k <= t->end) {
            p = put32(p, k - t->start);
            out++;
        }
    }
    put32(count_at, out);
    return sws_mp4_close(start, p);
}

/* stsc for chunks first_chunk..last_chunk, the first and the last with
 * the samples sent of them. */
static u_char *
sws_mp4_write_stsc(u_char *p, const sws_mp4_trak_t *t)
{
    u_char       *start = p, *count_at;
    const u_char *in = t->stsc.p + 8;
    uint32_t      n = get32(t->stsc.p + 4), i, first, next, lo, hi, out = 0, c, spc;

    p = sws_mp4_open_table(p, "stsc", &t->stsc, &count_at);
    if (t->end > t->start) {
        for (i = 0; i < n; i++, in += 12) {
            first = get32(in) - 1;
            next = i + 1 < n ? get32(in + 12) - 1 : t->chunks;
            lo = first > t->first_chunk ? first : t->first_chunk;
            hi = next - 1 < t->last_chunk ? next - 1 : t->last_chunk;
            if (next == 0 || lo > hi) {
                continue;
            }
            /* the run lo..hi, its first and last chunks on their own
             * when they are the cut ones */
            for (c = lo; c <= hi; ) {
                spc = get32(in + 4);
                if (c == t->first_chunk) {
                    spc = t->first_count;
                } else if (c == t->last_chunk) {
                    spc = t->last_count;
                }
                if (out == 0 || get32(p - 8) != spc || memcmp(p - 4, in + 8, 4) != 0) {
                    p = put32(p, (uint64_t) c - t->first_chunk + 1);
                    p = put32(p, spc);
                    memcpy(p, in + 8, 4);
                    p += 4;
                    out++;              /* else: the entry before goes on */
                }
                if (c == t->first_chunk || c == t->last_chunk) {
                    c++;
                } else if (hi == t->last_chunk && t->last_chunk > c) {
                    c = t->last_chunk;  /* the run up to the last one */
                } else {
                    break;
                }
            }
        }
    }
    put32(count_at, out);
    return sws_mp4_close(start, p);
}

static u_char *
sws_mp4_write_stsz(u_char *p, const sws_mp4_trak_t *t)
{
    u_char    *start = p;
    uint32_t   i, fixed = t->stsz.p ? get32(t->stsz.p + 4) : 0;

    p = sws_mp4_open(p, "stsz");
    p = put32(p, 0);
    p = put32(p, fixed);
    p = put32(p, t->end - t->start);
    if (fixed == 0) {
        for (i = t->start; i < t->end; i++) {
            p = put32(p, sws_mp4_sample_size(t, i));
        }
    }
    return sws_mp4_close(start, p);
}

/* stco or co64, the chunks moved by shift (the offset in what is sent of
 * the file's byte 0); SWS_ERROR (NULL) when a moved offset does not fit. */
static u_char *
sws_mp4_write_chunks(u_char *p, const sws_mp4_trak_t *t, int64_t shift)
{
    u_char    *start = p;
    uint32_t   c, n = t->end > t->start ? t->last_chunk - t->first_chunk + 1 : 0;
    uint64_t   off;

    p = sws_mp4_open(p, t->co64.p ? "co64" : "stco");
    p = put32(p, 0);
    p = put32(p, n);
    for (c = 0; c < n; c++) {
        off = c == 0 ? t->first_offset : sws_mp4_chunk_offset(t, t->first_chunk + c);
        off = (uint64_t) ((int64_t) off + shift);
        if (t->co64.p) {
            p = put64(p, off);
        } else {
            if (off > UINT32_MAX) {
                return NULL;
            }
            p = put32(p, off);
        }
    }
    return sws_mp4_close(start, p);
}

static u_char *
sws_mp4_write_moov(sws_mp4_t *mp4, u_char *p, int64_t shift, uint64_t start_m, uint64_t end_m)
{
    u_char         *moov = p, *trak, *mdia, *minf, *stbl, *edts, *elst;
    sws_mp4_trak_t *t;
    sws_uint_t      i;
    uint64_t        dur, tk;
    size_t          tkv0 = 20, tkv1 = 28;

    p = sws_mp4_open(p, "moov");
    dur = (end_m && end_m < mp4->movie_duration ? end_m : mp4->movie_duration) - start_m;
    p = sws_mp4_copy_duration(p, "mvhd", &mp4->mvhd, 16, 24, dur);

    for (i = 0; i < mp4->ntraks; i++) {
        t = &mp4->trak[i];
        if (t->dropped) {
            continue;
        }
        trak = p;
        p = sws_mp4_open(p, "trak");
        tk = t->tkhd.p[0] == 1 ? get64(t->tkhd.p + tkv1) : get32(t->tkhd.p + tkv0);
        tk = (end_m && end_m < tk ? end_m : tk);
        tk = tk > start_m ? tk - start_m : 0;
        p = sws_mp4_copy_duration(p, "tkhd", &t->tkhd, tkv0, tkv1, tk);
        if (t->prefix) {
            /* the key frames before the start, hidden by an edit list */
            edts = p;
            p = sws_mp4_open(p, "edts");
            elst = p;
            p = sws_mp4_open(p, "elst");
            p = put32(p, 0x01000000);
            p = put32(p, 1);
            p = put64(p, tk);
            p = put64(p, t->prefix);
            p = put32(p, 0x00010000);
            p = sws_mp4_close(edts, sws_mp4_close(elst, p));
        }
        mdia = p;
        p = sws_mp4_open(p, "mdia");
        p = sws_mp4_copy_duration(p, "mdhd", &t->mdhd, 16, 24, t->new_duration);
        p = sws_mp4_copy(p, "hdlr", &t->hdlr);
        minf = p;
        p = sws_mp4_open(p, "minf");
        if (t->mhd.p) {
            p = sws_mp4_copy(p, (const char *) t->mhd_type, &t->mhd);
        }
        if (t->dinf.p) {
            p = sws_mp4_copy(p, "dinf", &t->dinf);
        }
        stbl = p;
        p = sws_mp4_open(p, "stbl");
        p = sws_mp4_copy(p, "stsd", &t->stsd);
        p = sws_mp4_write_runs(p, "stts", &t->stts, t->start, t->end);
        if (t->stss.p) {
            p = sws_mp4_write_stss(p, t);
        }
        if (t->ctts.p) {
            p = sws_mp4_write_runs(p, "ctts", &t->ctts, t->start, t->end);
        }
        p = sws_mp4_write_stsc(p, t);
        p = sws_mp4_write_stsz(p, t);
        p = sws_mp4_write_chunks(p, t, shift);
        if (p == NULL) {
            return NULL;
        }
        sws_mp4_close(stbl, p);
        sws_mp4_close(minf, p);
        sws_mp4_close(mdia, p);
        sws_mp4_close(trak, p);
    }
    return sws_mp4_close(moov, p);
}

/* An upper bound of the new moov's size. */
static size_t
sws_mp4_moov_bound(const sws_mp4_t *mp4)
{
    size_t                 n = 8 + 8 + mp4->mvhd.len;
    const sws_mp4_trak_t  *t;
    sws_uint_t             i;

    for (i = 0; i < mp4->ntraks; i++) {
        t = &mp4->trak[i];
        n += 8 * 6 + 44 + t->tkhd.len + t->mdhd.len + t->hdlr.len + t->mhd.len + t->dinf.len
             + t->stsd.len + 8 * 8 + t->stts.len + t->ctts.len + t->stss.len
             + t->stsc.len + 4 * 12 + 12
             + (t->stsz.p ? t->stsz.len : (size_t) t->samples * 4)
             + t->stco.len + t->co64.len;
    }
    return n;
}


/* ---- the file ---- */

static sws_int_t
sws_mp4_read_moov(sws_mp4_t *mp4, const u_char *p, const u_char *end)
{
    const u_char    *name;
    sws_mp4_atom_t   a;
    int              rc;

    while ((rc = sws_mp4_next(&p, end, &name, &a)) == 1) {
        if (memcmp(name, "mvhd", 4) == 0 && mp4->mvhd.p == NULL) {
            mp4->mvhd = a;
        } else if (memcmp(name, "trak", 4) == 0) {
            if (sws_mp4_read_trak(mp4, a.p, a.p + a.len) != SWS_OK) {
                return SWS_ERROR;
            }
        }
    }
    if (rc < 0) {
        return sws_mp4_fail(mp4, "", " mp4 moov atom is malformed");
    }
    if (mp4->mvhd.p == NULL
        || sws_mp4_header_times(&mp4->mvhd, &mp4->movie_scale, &mp4->movie_duration) != SWS_OK)
    {
        return sws_mp4_too_small(mp4, "mvhd");
    }
    return SWS_OK;
}

static u_char *
sws_mp4_read_atom(sws_mp4_t *mp4, off_t off, size_t len)
{
    u_char  *buf = sws_pnalloc(mp4->pool, len ? len : 1);

    if (buf == NULL) {
        sws_mp4_nomem(mp4);
        return NULL;
    }
    if (mp4->req->read(mp4->req->ctx, buf, len, off) != (ssize_t) len) {
        sws_mp4_fail(mp4, "", " mp4 file could not be read");
        return NULL;
    }
    return buf;
}

sws_int_t
sws_mp4_cut(sws_pool_t *pool, const sws_mp4_request_t *req, sws_mp4_result_t *res)
{
    sws_mp4_t   *mp4;
    u_char       hdr[16], *ftyp = NULL, *moov = NULL, *p, *out;
    off_t        pos = 0, ftyp_at = -1, moov_at = -1;
    uint64_t     size, head, ftyp_len = 0, moov_len = 0, start_m, end_m;
    uint64_t     data_start = UINT64_MAX, data_end = 0, data_len;
    ssize_t      n;
    sws_uint_t   i, kept = 0;
    size_t       bound, mdat_head;
    int          have_mdat = 0;

    memset(res, 0, sizeof(*res));
    mp4 = sws_pcalloc(pool, sizeof(sws_mp4_t));
    if (mp4 == NULL) {
        return SWS_ERROR;
    }
    mp4->pool = pool;
    mp4->req = req;
    mp4->res = res;

    /* the top-level atoms */
    while (pos < req->size) {
        n = req->read(req->ctx, hdr, req->size - pos < 16 ? (size_t) (req->size - pos) : 16, pos);
        if (n < 8) {
            return sws_mp4_fail(mp4, "", " mp4 atom is too small:%lld",
                                (long long) (req->size - pos));
        }
        size = get32(hdr);
        head = 8;
        if (size == 1) {
            if (n < 16) {
                return sws_mp4_fail(mp4, "", " mp4 atom is too small:%lld",
                                    (long long) (req->size - pos));
            }
            size = get64(hdr + 8);
            head = 16;
        } else if (size == 0) {
            size = (uint64_t) (req->size - pos);
        }
        if (size < head) {
            return sws_mp4_fail(mp4, "", " mp4 atom is too small:%llu", (unsigned long long) size);
        }
        if (size > (uint64_t) (req->size - pos)) {
            return sws_mp4_fail(mp4, "", " mp4 atom too large:%llu", (unsigned long long) size);
        }
        if (memcmp(hdr + 4, "ftyp", 4) == 0 && ftyp_at < 0) {
            ftyp_at = pos;
            ftyp_len = size;
        } else if (memcmp(hdr + 4, "moov", 4) == 0 && moov_at < 0) {
            if (size - head > req->max_moov) {
                return sws_mp4_fail(mp4, "", " mp4 moov atom is too large:%llu, "
                                    "you may want to increase mp4_max_buffer_size",
                                    (unsigned long long) (size - head));
            }
            moov_at = pos + (off_t) head;
            moov_len = size - head;
        } else if (memcmp(hdr + 4, "mdat", 4) == 0 && !have_mdat) {
            have_mdat = 1;
            mp4->mdat_start = (uint64_t) pos + head;
            mp4->mdat_end = (uint64_t) pos + size;
        }
        pos += (off_t) size;
    }
    if (moov_at < 0) {
        return sws_mp4_fail(mp4, "no mp4 moov atom was found in ", "");
    }
    if (!have_mdat) {
        return sws_mp4_fail(mp4, "no mp4 mdat atom was found in ", "");
    }
    if (ftyp_at >= 0) {
        if (ftyp_len > req->max_moov) {
            return sws_mp4_fail(mp4, "", " mp4 ftyp atom is too large:%llu",
                                (unsigned long long) ftyp_len);
        }
        if ((ftyp = sws_mp4_read_atom(mp4, ftyp_at, (size_t) ftyp_len)) == NULL) {
            return SWS_ERROR;
        }
    }
    if ((moov = sws_mp4_read_atom(mp4, moov_at, (size_t) moov_len)) == NULL
        || sws_mp4_read_moov(mp4, moov, moov + moov_len) != SWS_OK)
    {
        return SWS_ERROR;
    }

    /* the interval */
    start_m = sws_mp4_ticks(req->start_ms, mp4->movie_scale);
    end_m = sws_mp4_ticks(req->end_ms, mp4->movie_scale);
    if (start_m > mp4->movie_duration) {
        return sws_mp4_fail(mp4, "", " mp4 start time exceeds file duration");
    }
    for (i = 0; i < mp4->ntraks; i++) {
        if (sws_mp4_cut_trak(mp4, &mp4->trak[i]) != SWS_OK) {
            return SWS_ERROR;
        }
        if (mp4->trak[i].dropped) {
            continue;
        }
        kept++;
        if (mp4->trak[i].end > mp4->trak[i].start) {
            if (mp4->trak[i].first_offset < data_start) {
                data_start = mp4->trak[i].first_offset;
            }
            if (mp4->trak[i].data_end > data_end) {
                data_end = mp4->trak[i].data_end;
            }
        }
    }
    if (req->end_ms == 0 && data_end) {
        data_end = mp4->mdat_end;       /* no end: the rest of the mdat, as nginx */
    }
    if (kept == 0) {
        return sws_mp4_fail(mp4, "no mp4 trak atoms were found in ", "");
    }
    if (data_start >= data_end) {
        return sws_mp4_fail(mp4, "no data between start time and end time in ", "");
    }

    /* ftyp, moov, mdat header, then the file's data_start..data_end */
    data_len = data_end - data_start;
    mdat_head = data_len + 8 > UINT32_MAX ? 16 : 8;
    bound = sws_mp4_moov_bound(mp4);
    out = sws_pnalloc(pool, (size_t) ftyp_len + bound + mdat_head);
    if (out == NULL) {
        return sws_mp4_nomem(mp4);
    }
    p = out;
    if (ftyp) {
        memcpy(p, ftyp, (size_t) ftyp_len);
        p += ftyp_len;
    }
    /* a first pass for the moov's size (the offsets depend on it), then
     * the moov with its chunks moved */
    {
        u_char  *end = sws_mp4_write_moov(mp4, p, 0, start_m, end_m);
        int64_t  shift;

        if (end == NULL) {
            return sws_mp4_fail(mp4, "", " mp4 chunk offsets do not fit stco");
        }
        shift = (int64_t) ((uint64_t) (p - out) + (uint64_t) (end - p) + mdat_head)
                - (int64_t) data_start;
        end = sws_mp4_write_moov(mp4, p, shift, start_m, end_m);
        if (end == NULL) {
            return sws_mp4_fail(mp4, "", " mp4 chunk offsets do not fit stco");
        }
        p = end;
    }
    if (mdat_head == 16) {
        p = put32(p, 1);
        memcpy(p, "mdat", 4);
        p = put64(p + 4, data_len + 16);
    } else {
        p = put32(p, data_len + 8);
        memcpy(p, "mdat", 4);
        p += 4;
    }
    res->head = out;
    res->head_len = (size_t) (p - out);
    res->data_start = (off_t) data_start;
    res->data_end = (off_t) data_end;
    return SWS_OK;
}
