/*
 * The compress module: gzip, brotli and zstd content codings, on the fly
 * (a header and a body filter) and precompressed (.gz, .br, .zst siblings
 * of static files). Shared between its files:
 *
 *   sws_compress_module.c     directives, configuration, the descriptor
 *   sws_compress_accept.c     Accept-Encoding with q-values (RFC 9110 12.5.3)
 *   sws_compress_codec.c      the three libraries behind one small interface
 *   sws_compress_crc32.c      gzip's CRC-32 with carry-less multiplication
 *   sws_compress_filter.c     the header and body filters
 *   sws_compress_static.c     precompressed files (gzip_static and the others)
 */
#ifndef SWS_COMPRESS_H
#define SWS_COMPRESS_H

#include <scalws/scalws.h>

/* The codings, also indices into the per-coding configuration. */
enum {
    SWS_COMPRESS_GZIP = 0,
    SWS_COMPRESS_BR,
    SWS_COMPRESS_ZSTD,
    SWS_COMPRESS_NCODINGS
};

/* gzip_proxied flags (nginx's). */
#define SWS_COMPRESS_PROXIED_OFF        0x0001
#define SWS_COMPRESS_PROXIED_EXPIRED    0x0002
#define SWS_COMPRESS_PROXIED_NO_CACHE   0x0004
#define SWS_COMPRESS_PROXIED_NO_STORE   0x0008
#define SWS_COMPRESS_PROXIED_PRIVATE    0x0010
#define SWS_COMPRESS_PROXIED_NO_LM      0x0020
#define SWS_COMPRESS_PROXIED_NO_ETAG    0x0040
#define SWS_COMPRESS_PROXIED_AUTH       0x0080
#define SWS_COMPRESS_PROXIED_ANY        0x0100

/* *_static */
#define SWS_COMPRESS_STATIC_OFF     0
#define SWS_COMPRESS_STATIC_ON      1
#define SWS_COMPRESS_STATIC_ALWAYS  2

/* One coding's directives in a location: gzip_*, brotli_*, zstd_*. */
typedef struct {
    sws_int_t      enable;          /* gzip on|off */
    sws_int_t      level;           /* gzip_comp_level */
    sws_int_t      vary;            /* gzip_vary */
    size_t         min_length;      /* gzip_min_length */
    sws_array_t   *types;           /* gzip_types: sws_str_t, lower case; "*" any */
    sws_uint_t     proxied;         /* gzip_proxied: SWS_COMPRESS_PROXIED_* */
    sws_int_t      bufs_num;        /* gzip_buffers NUMBER SIZE */
    size_t         bufs_size;
    sws_uint_t     http_version;    /* gzip_http_version: SWS_HTTP_VERSION_1x */
    sws_array_t   *disable;         /* gzip_disable: sws_str_t, lower case */
    sws_uint_t     static_mode;     /* gzip_static: SWS_COMPRESS_STATIC_* */
} sws_compress_coding_conf_t;

typedef struct {
    sws_compress_coding_conf_t  coding[SWS_COMPRESS_NCODINGS];
    /* compress_prefer: codings in the server's order of preference */
    sws_uint_t                  prefer[SWS_COMPRESS_NCODINGS];
    sws_uint_t                  nprefer;    /* 0: unset */
} sws_compress_loc_conf_t;

/* Names: the token in Accept-Encoding / Content-Encoding, and the suffix of
 * a precompressed sibling. */
extern const sws_str_t  sws_compress_token[SWS_COMPRESS_NCODINGS];
extern const sws_str_t  sws_compress_suffix[SWS_COMPRESS_NCODINGS];

extern sws_module_t  sws_module;


/* ---- sws_compress_accept.c ------------------------------------------ */

/* What a client's Accept-Encoding allows: each coding's q-value in
 * thousandths (0: not acceptable), and identity's. */
typedef struct {
    sws_uint_t  q[SWS_COMPRESS_NCODINGS];
    sws_uint_t  identity_q;
} sws_compress_accept_t;

/* Parse an Accept-Encoding value (never fails: what it cannot read counts
 * as not acceptable). */
void sws_compress_accept_parse(const u_char *p, size_t len, sws_compress_accept_t *a);
/* The coding to use among those in allowed (a bit per coding), by the
 * client's q-values, ties broken by prefer; -1 for none. */
sws_int_t sws_compress_accept_choose(const sws_compress_accept_t *a, sws_uint_t allowed,
    const sws_uint_t *prefer, sws_uint_t nprefer);


/* ---- sws_compress_codec.c ------------------------------------------- */

typedef struct sws_compress_stream_s  sws_compress_stream_t;

/* Flush modes of sws_compress_stream_run: the core's body transform's. */
#define SWS_COMPRESS_RUN     SWS_HTTP_TRANSFORM_RUN
#define SWS_COMPRESS_FLUSH   SWS_HTTP_TRANSFORM_FLUSH
#define SWS_COMPRESS_FINISH  SWS_HTTP_TRANSFORM_FINISH

/* A coder for one response, released with the request's pool. size: the
 * body's length when known (-1 if not), to size the window to it. */
sws_compress_stream_t *sws_compress_stream_create(sws_http_request_t *r, sws_uint_t coding,
    sws_int_t level, off_t size);
/*
 * Compress from [*in, in_end) into [*out, out_end), advancing both. Returns
 * SWS_OK when the coder is done with this input for this mode (for FLUSH
 * and FINISH: all of it is out), SWS_AGAIN when it needs more output room,
 * SWS_ERROR on a library error (logged).
 */
sws_int_t sws_compress_stream_run(sws_compress_stream_t *s, const u_char **in,
    const u_char *in_end, u_char **out, u_char *out_end, int mode);


/* ---- sws_compress_crc32.c ------------------------------------------- */

/* zlib's crc32() (the same start and result values), faster. */
uint32_t sws_compress_crc32(uint32_t crc, const u_char *p, size_t len);


/* ---- sws_compress_filter.c / sws_compress_static.c ------------------ */

sws_int_t sws_compress_filter_init(sws_conf_t *cf);
sws_int_t sws_compress_static_init(sws_conf_t *cf);
/* Whether a response of this type may be compressed with this coding. */
int       sws_compress_type_ok(const sws_compress_coding_conf_t *cc, const sws_str_t *type);
/* Request-side checks shared with the static handler: HTTP version, the
 * User-Agent (gzip_disable), proxied requests (gzip_proxied, with the
 * response's headers when resp is set). */
int       sws_compress_request_ok(sws_http_request_t *r, const sws_compress_coding_conf_t *cc,
    int resp);
/* The coding the client gets among allowed (a bit per coding), or -1. */
sws_int_t sws_compress_negotiate(sws_http_request_t *r, const sws_compress_loc_conf_t *lcf,
    sws_uint_t allowed, sws_compress_accept_t *a);
/* Add "Vary: Accept-Encoding" unless the response already varies on it. */
sws_int_t sws_compress_add_vary(sws_http_request_t *r);

#endif
