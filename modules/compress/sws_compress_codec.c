/*
 * gzip (ISA-L's igzip at level 1 when the build has it, zlib
 * otherwise), brotli and zstd behind one streaming interface: run over
 * some input into some output room, with a mode (go on, flush, finish).
 *
 * Memory: a worker keeps a few igzip and zlib states and zstd contexts
 * between responses (reset, not freed: see sws_compress_idle_t), so that
 * a busy worker compresses in memory that is already its own and warm in
 * the cache rather than allocating, zeroing and freeing 200 KiB a
 * response. brotli has no reset: an encoder per response, freed by a pool
 * cleanup. Each coder's window is fitted to the body when its length is
 * known (as nginx fits zlib's), so a small response does not cost a large
 * window: zlib up to a 32 KiB window (nginx's gzip_window) and a 64 KiB
 * hash (see below), brotli up to 512 KiB (lgwin 19), zstd as its level
 * chooses for the pledged size; igzip's state is fixed (166 KiB).
 */
#include <stdlib.h>
#include <zlib.h>
#include <brotli/encode.h>
#include <zstd.h>
#if SWS_HAVE_LIBISAL
#include <isa-l/igzip_lib.h>
#endif
#include "sws_compress.h"

struct sws_compress_stream_s {
    sws_uint_t               coding;
    sws_log_t               *log;
    /* gzip: zlib or igzip makes a raw deflate stream; the header and the
     * trailer (CRC-32 and length, RFC 1952) are ours, so that the CRC is
     * ours too (sws_compress_crc32.c, a sixteenth of zlib's cost) */
    uint32_t                 crc;
    uint32_t                 isize;
    u_char                   frame[10];     /* the header, then the trailer */
    unsigned                 frame_pos:4;
    unsigned                 frame_len:4;   /* bytes of frame[] to write */
    unsigned                 trailer:1;     /* the trailer is made */
    unsigned                 isal:1;        /* gzip by igzip (u.isal) */
    union {
        struct sws_compress_idle_s  *z;     /* gzip: the zlib state */
        struct sws_compress_isal_s  *isal;  /* gzip: the igzip state */
        BrotliEncoderState          *br;
        ZSTD_CCtx                   *zstd;
    } u;
};


/* ---- coders kept between responses ---------------------------------------- */

/*
 * Per worker (a worker is one thread): up to SWS_COMPRESS_IDLE_MAX zlib
 * states (by level, window and hash size, which deflateReset() keeps) and
 * as many zstd contexts, about 200 KiB and 1 MiB each at most.
 */
#define SWS_COMPRESS_IDLE_MAX  4

typedef struct sws_compress_idle_s sws_compress_idle_t;
struct sws_compress_idle_s {
    z_stream              z;        /* never moved: zlib's state points at it */
    int                   level;
    int                   wbits;
    int                   memlevel;
    sws_compress_idle_t  *next;
};

static sws_compress_idle_t  *sws_compress_zlib_idle;
static sws_uint_t            sws_compress_zlib_nidle;
static ZSTD_CCtx            *sws_compress_zstd_idle[SWS_COMPRESS_IDLE_MAX];
static sws_uint_t            sws_compress_zstd_nidle;


/* ---- the gzip framing (RFC 1952), the same for zlib and igzip ----------- */

static void
sws_compress_gzip_header(sws_compress_stream_t *s)
{
    /* magic, deflate, no flags, no time, no extra flags, OS unix: nginx's */
    s->frame[0] = 0x1f;
    s->frame[1] = 0x8b;
    s->frame[2] = 8;
    s->frame[9] = 3;
    s->frame_len = 10;
}


/* Write what is left of s->frame; SWS_AGAIN when out of room. */
static sws_int_t
sws_compress_gzip_frame(sws_compress_stream_t *s, u_char **out, u_char *out_end)
{
    size_t  n = sws_min((size_t) (s->frame_len - s->frame_pos), (size_t) (out_end - *out));

    *out = sws_cpymem(*out, s->frame + s->frame_pos, n);
    s->frame_pos += n;
    return s->frame_pos == s->frame_len ? SWS_OK : SWS_AGAIN;
}


/* The input [start, end) was taken by the coder. */
static void
sws_compress_gzip_took(sws_compress_stream_t *s, const u_char *start, const u_char *end)
{
    if (end != start) {
        s->crc = sws_compress_crc32(s->crc, start, (size_t) (end - start));
        s->isize += (uint32_t) (end - start);
    }
}


/* The deflate stream ended: CRC-32 and ISIZE, little-endian, out. */
static sws_int_t
sws_compress_gzip_trailer(sws_compress_stream_t *s, u_char **out, u_char *out_end)
{
    uint32_t  n;

    for (n = 0; n < 4; n++) {
        s->frame[n] = (u_char) (s->crc >> (8 * n));
        s->frame[4 + n] = (u_char) (s->isize >> (8 * n));
    }
    s->trailer = 1;
    s->frame_pos = 0;
    s->frame_len = 8;
    return sws_compress_gzip_frame(s, out, out_end);
}


/* ---- zlib --------------------------------------------------------------- */

static void
sws_compress_zlib_cleanup(void *data)
{
    sws_compress_stream_t  *s = data;
    sws_compress_idle_t    *zi = s->u.z;

    if (sws_compress_zlib_nidle < SWS_COMPRESS_IDLE_MAX && deflateReset(&zi->z) == Z_OK) {
        zi->next = sws_compress_zlib_idle;
        sws_compress_zlib_idle = zi;
        sws_compress_zlib_nidle++;
        return;
    }
    (void) deflateEnd(&zi->z);
    free(zi);
}


/*
 * zlib's memLevel 7 (a 64 KiB hash) rather than nginx's 8 (gzip_hash 128k):
 * measured with callgrind at level 1 on a 100 KiB page, deflate() takes
 * 3.2 % fewer instructions, and the output is 0.2 % to 0.4 % larger on the
 * HTML, C and text files tried (docs/benchmarks/2026-12-01-compression-notes.md);
 * each response also needs 64 KiB less.
 */
#define SWS_COMPRESS_ZLIB_MEMLEVEL  7

static sws_int_t
sws_compress_zlib_init(sws_compress_stream_t *s, sws_pool_t *pool, int level, off_t size)
{
    int                    wbits = MAX_WBITS, memlevel = SWS_COMPRESS_ZLIB_MEMLEVEL, rc;
    sws_compress_idle_t   *zi, **prev;

    /* The smallest window that still holds the whole body, and a hash
     * that shrinks with it (nginx's rule). */
    if (size > 0) {
        while (size < ((off_t) 1 << (wbits - 1)) - 262 && wbits > 9) {
            wbits--;
            memlevel--;
        }
        if (memlevel < 1) {
            memlevel = 1;
        }
    }

    for (prev = &sws_compress_zlib_idle; (zi = *prev) != NULL; prev = &zi->next) {
        if (zi->level == level && zi->wbits == wbits && zi->memlevel == memlevel) {
            *prev = zi->next;
            sws_compress_zlib_nidle--;
            break;
        }
    }

    if (zi == NULL) {
        zi = calloc(1, sizeof(sws_compress_idle_t));   /* zlib's own allocator */
        if (zi == NULL) {
            sws_log_error(SWS_LOG_ALERT, s->log, 0, "out of memory for a zlib state");
            return SWS_ERROR;
        }
        /* -wbits: raw deflate, the gzip framing is ours */
        rc = deflateInit2(&zi->z, level, Z_DEFLATED, -wbits, memlevel, Z_DEFAULT_STRATEGY);
        if (rc != Z_OK) {
            sws_log_error(SWS_LOG_ALERT, s->log, 0, "deflateInit2() failed: %d", rc);
            free(zi);
            return SWS_ERROR;
        }
        zi->level = level;
        zi->wbits = wbits;
        zi->memlevel = memlevel;
    }

    s->u.z = zi;
    if (sws_pool_cleanup_add(pool, sws_compress_zlib_cleanup, s) != SWS_OK) {
        (void) deflateEnd(&zi->z);
        free(zi);
        return SWS_ERROR;
    }
    sws_compress_gzip_header(s);
    return SWS_OK;
}


static sws_int_t
sws_compress_zlib_run(sws_compress_stream_t *s, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode)
{
    z_stream      *z = &s->u.z->z;
    int            rc, flush;
    const u_char  *start = *in;

    if (s->frame_pos < s->frame_len) {
        /* the header first, or the rest of the trailer */
        if (sws_compress_gzip_frame(s, out, out_end) != SWS_OK) {
            return SWS_AGAIN;
        }
        if (s->trailer) {
            return SWS_OK;
        }
    }

    flush = mode == SWS_COMPRESS_FINISH ? Z_FINISH
            : mode == SWS_COMPRESS_FLUSH ? Z_SYNC_FLUSH : Z_NO_FLUSH;

    z->next_in = (Bytef *) *in;
    z->avail_in = (uInt) (in_end - *in);
    z->next_out = *out;
    z->avail_out = (uInt) (out_end - *out);

    rc = deflate(z, flush);

    *in = z->next_in;
    *out = z->next_out;
    sws_compress_gzip_took(s, start, *in);

    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        sws_log_error(SWS_LOG_ALERT, s->log, 0, "deflate() failed: %d", rc);
        return SWS_ERROR;
    }
    switch (mode) {
    case SWS_COMPRESS_FINISH:
        if (rc != Z_STREAM_END) {
            return SWS_AGAIN;
        }
        return sws_compress_gzip_trailer(s, out, out_end);
    case SWS_COMPRESS_FLUSH:
        /* all out only if deflate() stopped with room to spare */
        return z->avail_in == 0 && z->avail_out != 0 ? SWS_OK : SWS_AGAIN;
    default:
        return z->avail_in == 0 ? SWS_OK : SWS_AGAIN;
    }
}


/* ---- igzip (ISA-L) ------------------------------------------------------ */

#if SWS_HAVE_LIBISAL

/*
 * igzip's level 1 stands for gzip_comp_level 1 (nginx's default): on the
 * benchmark's page and six other texts (HTML, CSS, JavaScript, C,
 * Markdown, a licence) it makes output 1.6 % to 3.6 % smaller than zlib's
 * level 1 with 0.26x to 0.32x of its instructions. Its levels 2 and 3 make
 * more than zlib's 2 and 3 on some of them (level 2 on C +3.5 %, level 3
 * on the page +3.6 %), so levels 2 to 9 stay with zlib
 * (docs/benchmarks/2026-12-02-deflate-libraries.md).
 *
 * The state is the stream (82 KiB: the history, level 0's hash, the bit
 * buffer) and level 1's buffer (its hash and 16 Ki tokens: 84 KiB; the
 * default 64 Ki tokens cost 276 KiB for the same output on 100 KiB and
 * 0.1 % less, in 6 % fewer instructions, on a 283 KiB script), kept per
 * worker between responses like zlib's: 166 KiB a response, against
 * zlib's 200 KiB.
 */
#define SWS_COMPRESS_ISAL_LEVEL     1
#define SWS_COMPRESS_ISAL_BUF_SIZE  ISAL_DEF_LVL1_SMALL

typedef struct sws_compress_isal_s sws_compress_isal_t;
struct sws_compress_isal_s {
    /* first: as aligned as malloc's block, as when allocated apart */
    u_char                level_buf[SWS_COMPRESS_ISAL_BUF_SIZE];
    struct isal_zstream   z;
    sws_compress_isal_t  *next;
};

static sws_compress_isal_t  *sws_compress_isal_idle;
static sws_uint_t            sws_compress_isal_nidle;


static void
sws_compress_isal_cleanup(void *data)
{
    sws_compress_stream_t  *s = data;
    sws_compress_isal_t    *zi = s->u.isal;

    if (sws_compress_isal_nidle < SWS_COMPRESS_IDLE_MAX) {
        zi->next = sws_compress_isal_idle;
        sws_compress_isal_idle = zi;
        sws_compress_isal_nidle++;
        return;
    }
    free(zi);
}


static sws_int_t
sws_compress_isal_init(sws_compress_stream_t *s, sws_pool_t *pool)
{
    sws_compress_isal_t  *zi = sws_compress_isal_idle;

    if (zi != NULL) {
        sws_compress_isal_idle = zi->next;
        sws_compress_isal_nidle--;
        isal_deflate_reset(&zi->z);
    } else {
        zi = malloc(sizeof(sws_compress_isal_t));
        if (zi == NULL) {
            sws_log_error(SWS_LOG_ALERT, s->log, 0, "out of memory for an igzip state");
            return SWS_ERROR;
        }
        isal_deflate_init(&zi->z);
    }
    /* reset keeps these, but set them all: a response may have ended
     * anywhere (an aborted one in the middle of a flush) */
    zi->z.level = SWS_COMPRESS_ISAL_LEVEL;
    zi->z.level_buf = zi->level_buf;
    zi->z.level_buf_size = SWS_COMPRESS_ISAL_BUF_SIZE;
    zi->z.gzip_flag = IGZIP_DEFLATE;       /* raw: the gzip framing is ours */
    zi->z.end_of_stream = 0;
    zi->z.flush = NO_FLUSH;

    s->u.isal = zi;
    s->isal = 1;
    if (sws_pool_cleanup_add(pool, sws_compress_isal_cleanup, s) != SWS_OK) {
        free(zi);
        return SWS_ERROR;
    }
    sws_compress_gzip_header(s);
    return SWS_OK;
}


static sws_int_t
sws_compress_isal_run(sws_compress_stream_t *s, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode)
{
    struct isal_zstream  *z = &s->u.isal->z;
    const u_char         *start = *in;
    int                   rc;

    if (s->frame_pos < s->frame_len) {
        /* the header first, or the rest of the trailer */
        if (sws_compress_gzip_frame(s, out, out_end) != SWS_OK) {
            return SWS_AGAIN;
        }
        if (s->trailer) {
            return SWS_OK;
        }
    }

    z->next_in = (uint8_t *) *in;
    z->avail_in = (uint32_t) (in_end - *in);
    z->next_out = *out;
    z->avail_out = (uint32_t) (out_end - *out);
    z->flush = mode == SWS_COMPRESS_FLUSH ? SYNC_FLUSH : NO_FLUSH;
    z->end_of_stream = mode == SWS_COMPRESS_FINISH;

    rc = isal_deflate(z);

    *in = z->next_in;
    *out = z->next_out;
    sws_compress_gzip_took(s, start, *in);

    if (rc != COMP_OK) {
        sws_log_error(SWS_LOG_ALERT, s->log, 0, "isal_deflate() failed: %d", rc);
        return SWS_ERROR;
    }
    switch (mode) {
    case SWS_COMPRESS_FINISH:
        if (z->internal_state.state != ZSTATE_END) {
            return SWS_AGAIN;
        }
        return sws_compress_gzip_trailer(s, out, out_end);
    case SWS_COMPRESS_FLUSH:
        /* igzip's rule: all of it is out once the input is taken and the
         * output has room left (or the next block's header is due) */
        return z->avail_in == 0
               && (z->avail_out != 0 || z->internal_state.state == ZSTATE_NEW_HDR)
               ? SWS_OK : SWS_AGAIN;
    default:
        return z->avail_in == 0 ? SWS_OK : SWS_AGAIN;
    }
}

#endif


/* ---- brotli ------------------------------------------------------------- */

static void
sws_compress_br_cleanup(void *data)
{
    sws_compress_stream_t  *s = data;

    BrotliEncoderDestroyInstance(s->u.br);
}


static sws_int_t
sws_compress_br_init(sws_compress_stream_t *s, sws_pool_t *pool, int level, off_t size)
{
    uint32_t  lgwin = 19;

    s->u.br = BrotliEncoderCreateInstance(NULL, NULL, NULL);
    if (s->u.br == NULL) {
        sws_log_error(SWS_LOG_ALERT, s->log, 0, "BrotliEncoderCreateInstance() failed");
        return SWS_ERROR;
    }
    if (sws_pool_cleanup_add(pool, sws_compress_br_cleanup, s) != SWS_OK) {
        BrotliEncoderDestroyInstance(s->u.br);
        return SWS_ERROR;
    }
    if (size > 0) {
        while (lgwin > BROTLI_MIN_WINDOW_BITS && size <= ((off_t) 1 << (lgwin - 1)) - 16) {
            lgwin--;
        }
        BrotliEncoderSetParameter(s->u.br, BROTLI_PARAM_SIZE_HINT,
                                  size > (off_t) UINT32_MAX ? UINT32_MAX : (uint32_t) size);
    }
    if (!BrotliEncoderSetParameter(s->u.br, BROTLI_PARAM_QUALITY, (uint32_t) level)
        || !BrotliEncoderSetParameter(s->u.br, BROTLI_PARAM_LGWIN, lgwin)
        || !BrotliEncoderSetParameter(s->u.br, BROTLI_PARAM_MODE, BROTLI_MODE_TEXT))
    {
        sws_log_error(SWS_LOG_ALERT, s->log, 0, "BrotliEncoderSetParameter() failed");
        return SWS_ERROR;
    }
    return SWS_OK;
}


static sws_int_t
sws_compress_br_run(sws_compress_stream_t *s, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode)
{
    size_t                      avail_in = (size_t) (in_end - *in);
    size_t                      avail_out = (size_t) (out_end - *out);
    BrotliEncoderOperation      op;

    op = mode == SWS_COMPRESS_FINISH ? BROTLI_OPERATION_FINISH
         : mode == SWS_COMPRESS_FLUSH ? BROTLI_OPERATION_FLUSH : BROTLI_OPERATION_PROCESS;

    if (!BrotliEncoderCompressStream(s->u.br, op, &avail_in, in, &avail_out, out, NULL)) {
        sws_log_error(SWS_LOG_ALERT, s->log, 0, "BrotliEncoderCompressStream() failed");
        return SWS_ERROR;
    }
    switch (mode) {
    case SWS_COMPRESS_FINISH:
        return BrotliEncoderIsFinished(s->u.br) ? SWS_OK : SWS_AGAIN;
    case SWS_COMPRESS_FLUSH:
        return avail_in == 0 && !BrotliEncoderHasMoreOutput(s->u.br) ? SWS_OK : SWS_AGAIN;
    default:
        return avail_in == 0 && !BrotliEncoderHasMoreOutput(s->u.br) ? SWS_OK : SWS_AGAIN;
    }
}


/* ---- zstd --------------------------------------------------------------- */

static void
sws_compress_zstd_cleanup(void *data)
{
    sws_compress_stream_t  *s = data;

    if (sws_compress_zstd_nidle < SWS_COMPRESS_IDLE_MAX
        && !ZSTD_isError(ZSTD_CCtx_reset(s->u.zstd, ZSTD_reset_session_and_parameters)))
    {
        sws_compress_zstd_idle[sws_compress_zstd_nidle++] = s->u.zstd;
        return;
    }
    ZSTD_freeCCtx(s->u.zstd);
}


static sws_int_t
sws_compress_zstd_init(sws_compress_stream_t *s, sws_pool_t *pool, int level, off_t size)
{
    size_t  rc;

    s->u.zstd = sws_compress_zstd_nidle ? sws_compress_zstd_idle[--sws_compress_zstd_nidle]
                                        : ZSTD_createCCtx();
    if (s->u.zstd == NULL) {
        sws_log_error(SWS_LOG_ALERT, s->log, 0, "ZSTD_createCCtx() failed");
        return SWS_ERROR;
    }
    if (sws_pool_cleanup_add(pool, sws_compress_zstd_cleanup, s) != SWS_OK) {
        ZSTD_freeCCtx(s->u.zstd);
        return SWS_ERROR;
    }
    rc = ZSTD_CCtx_setParameter(s->u.zstd, ZSTD_c_compressionLevel, level);
    if (!ZSTD_isError(rc) && size > 0) {
        /* sizes the tables to the body, and records it in the frame */
        rc = ZSTD_CCtx_setPledgedSrcSize(s->u.zstd, (unsigned long long) size);
    }
    if (ZSTD_isError(rc)) {
        sws_log_error(SWS_LOG_ALERT, s->log, 0, "zstd parameters: %s", ZSTD_getErrorName(rc));
        return SWS_ERROR;
    }
    return SWS_OK;
}


static sws_int_t
sws_compress_zstd_run(sws_compress_stream_t *s, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode)
{
    ZSTD_inBuffer     ib = { *in, (size_t) (in_end - *in), 0 };
    ZSTD_outBuffer    ob = { *out, (size_t) (out_end - *out), 0 };
    ZSTD_EndDirective op;
    size_t            rc;

    op = mode == SWS_COMPRESS_FINISH ? ZSTD_e_end
         : mode == SWS_COMPRESS_FLUSH ? ZSTD_e_flush : ZSTD_e_continue;

    rc = ZSTD_compressStream2(s->u.zstd, &ob, &ib, op);

    *in += ib.pos;
    *out += ob.pos;

    if (ZSTD_isError(rc)) {
        sws_log_error(SWS_LOG_ALERT, s->log, 0, "ZSTD_compressStream2() failed: %s",
                      ZSTD_getErrorName(rc));
        return SWS_ERROR;
    }
    if (mode == SWS_COMPRESS_RUN) {
        return ib.pos == ib.size ? SWS_OK : SWS_AGAIN;
    }
    return rc == 0 ? SWS_OK : SWS_AGAIN;    /* 0: flushed (or the frame ended) */
}


/* ---- the interface ------------------------------------------------------ */

sws_compress_stream_t *
sws_compress_stream_create(sws_http_request_t *r, sws_uint_t coding, sws_int_t level,
    off_t size)
{
    sws_pool_t             *pool = sws_http_pool(r);
    sws_compress_stream_t  *s;
    sws_int_t               rc;

    s = sws_pcalloc(pool, sizeof(sws_compress_stream_t));
    if (s == NULL) {
        return NULL;
    }
    s->coding = coding;
    s->log = sws_http_log(r);

    switch (coding) {
    case SWS_COMPRESS_GZIP:
#if SWS_HAVE_LIBISAL
        if (level == SWS_COMPRESS_ISAL_LEVEL) {
            rc = sws_compress_isal_init(s, pool);
            break;
        }
#endif
        rc = sws_compress_zlib_init(s, pool, (int) level, size);
        break;
    case SWS_COMPRESS_BR:
        rc = sws_compress_br_init(s, pool, (int) level, size);
        break;
    default:
        rc = sws_compress_zstd_init(s, pool, (int) level, size);
        break;
    }
    return rc == SWS_OK ? s : NULL;
}


sws_int_t
sws_compress_stream_run(sws_compress_stream_t *s, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode)
{
    switch (s->coding) {
    case SWS_COMPRESS_GZIP:
#if SWS_HAVE_LIBISAL
        if (s->isal) {
            return sws_compress_isal_run(s, in, in_end, out, out_end, mode);
        }
#endif
        return sws_compress_zlib_run(s, in, in_end, out, out_end, mode);
    case SWS_COMPRESS_BR:
        return sws_compress_br_run(s, in, in_end, out, out_end, mode);
    default:
        return sws_compress_zstd_run(s, in, in_end, out, out_end, mode);
    }
}
