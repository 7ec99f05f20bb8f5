/*
 * The mp4 module's reading of an ISO BMFF file (sws_mp4_parse.c): the
 * file's top-level atoms, then the moov's sample tables cut to a time
 * interval. Outside input: every size and count is checked against the
 * bytes that hold it; nothing here reads past what it was given.
 */
#ifndef SWS_MP4_PARSE_H
#define SWS_MP4_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <scalws/sws_types.h>
#include <scalws/sws_pool.h>

/* Reads n bytes at off into buf: the count read (short at the end), or -1. */
typedef ssize_t (*sws_mp4_read_pt)(void *ctx, u_char *buf, size_t n, off_t off);

typedef struct {
    sws_mp4_read_pt  read;
    void            *ctx;
    off_t            size;            /* the file's */
    size_t           max_moov;        /* mp4_max_buffer_size */
    uint64_t         start_ms;        /* the interval asked for */
    uint64_t         end_ms;          /* 0: to the end */
    unsigned         start_key_frame:1;
} sws_mp4_request_t;

typedef struct {
    u_char          *head;            /* ftyp, the new moov, the mdat header */
    size_t           head_len;
    off_t            data_start;      /* then the file's bytes [data_start, data_end) */
    off_t            data_end;
    /* on an error, nginx's error log line: err_prefix, the file's name in
     * quotes, err_suffix (both NULL: no memory) */
    const char      *err_prefix;
    const char      *err_suffix;
} sws_mp4_result_t;

/* SWS_OK with res->head etc., or SWS_ERROR with res->err_* set. */
sws_int_t sws_mp4_cut(sws_pool_t *pool, const sws_mp4_request_t *req,
    sws_mp4_result_t *res);

/* A start= or end= value in milliseconds: digits with an optional point
 * and fraction (three digits count, more are ignored), as nginx reads it;
 * -1 when it is none. */
int64_t sws_mp4_parse_time(const u_char *p, size_t len);

#endif
