/*
 * The program behind docs/benchmarks/2026-12-02-deflate-libraries.md: one
 * coder (zlib-nginx, zlib-ours, libdeflate, isal) at one level on one file,
 * compressed REPS times (the state kept and reset, as a server keeps it),
 * the last output inflated with zlib and compared with the file.
 *
 *   cc -O2 -g -o deflate-libs 2026-12-02-deflate-libraries.c \
 *      ../../../modules/compress/sws_compress_crc32.c -I../../../include \
 *      -lz -ldeflate -lisal
 *   ./deflate-libs isal 1 page.html 1          # prints: coder level file in out
 *   LB=86016 ./deflate-libs isal 1 page.html 1  # igzip's level buffer size
 *   valgrind --tool=callgrind --toggle-collect=run_one ./deflate-libs isal 1 page.html 5
 *
 * Instructions per compression: (Ir with REPS 5 - Ir with REPS 1) / 4.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <zlib.h>
#include <libdeflate.h>
#include <isa-l/igzip_lib.h>

typedef unsigned char u_char;
uint32_t sws_compress_crc32(uint32_t crc, const u_char *p, size_t len);

static u_char *in; static size_t in_len;
static u_char *out; static size_t out_len;
static const char *lib; static int level;

static z_stream zs; static int zs_init;
static struct libdeflate_compressor *ldc;
static struct isal_zstream is; static u_char *lvlbuf;

#define IN_CHUNK 32768
#define OUT_CHUNK 4096

__attribute__((noinline)) void
run_one(void)
{
    size_t pos = 0, o = 10;
    uint32_t crc = 0;

    if (strncmp(lib, "zlib", 4) == 0) {
        int ours = strcmp(lib, "zlib-ours") == 0;
        if (!zs_init) {
            deflateInit2(&zs, level, Z_DEFLATED, -15, ours ? 7 : 8, Z_DEFAULT_STRATEGY);
            zs_init = 1;
        } else {
            deflateReset(&zs);
        }
        memset(out, 0, 10);
        for (;;) {
            size_t n = in_len - pos < IN_CHUNK ? in_len - pos : IN_CHUNK;
            int fl = pos + n == in_len ? Z_FINISH : Z_NO_FLUSH, rc;
            crc = ours ? sws_compress_crc32(crc, in + pos, n) : crc32(crc, in + pos, n);
            zs.next_in = in + pos; zs.avail_in = n;
            do {
                zs.next_out = out + o; zs.avail_out = OUT_CHUNK;
                rc = deflate(&zs, fl);
                o = zs.next_out - out;
            } while (zs.avail_out == 0);
            pos += n;
            if (rc == Z_STREAM_END) break;
        }
        out[0] = 0x1f; out[1] = 0x8b; out[2] = 8;
        memcpy(out + o, &crc, 4); memcpy(out + o + 4, &in_len, 4);
        out_len = o + 8;
    } else if (strcmp(lib, "libdeflate") == 0) {
        if (ldc == NULL) {
            ldc = libdeflate_alloc_compressor(level);
        }
        out_len = libdeflate_gzip_compress(ldc, in, in_len, out,
                                           libdeflate_gzip_compress_bound(ldc, in_len));
    } else {
        if (lvlbuf == NULL) {
            size_t sz = level == 1 ? ISAL_DEF_LVL1_DEFAULT : level == 2 ? ISAL_DEF_LVL2_DEFAULT
                        : ISAL_DEF_LVL3_DEFAULT;
            if (getenv("LB")) sz = atoi(getenv("LB"));
            lvlbuf = malloc(sz);
            isal_deflate_init(&is);
            is.level = level; is.level_buf = lvlbuf; is.level_buf_size = sz;
            is.gzip_flag = IGZIP_GZIP;
        } else {
            isal_deflate_reset(&is); is.gzip_flag = IGZIP_GZIP;
        }
        is.end_of_stream = 0;
        o = 0;
        for (;;) {
            size_t n = in_len - pos < IN_CHUNK ? in_len - pos : IN_CHUNK;
            is.next_in = in + pos; is.avail_in = n;
            is.end_of_stream = pos + n == in_len;
            do {
                is.next_out = out + o; is.avail_out = OUT_CHUNK;
                isal_deflate(&is);
                o = is.next_out - out;
            } while (is.avail_out == 0);
            pos += n;
            if (is.end_of_stream && is.internal_state.state == ZSTATE_END) break;
            if (pos == in_len) { /* finish */
                while (is.internal_state.state != ZSTATE_END) {
                    is.next_out = out + o; is.avail_out = OUT_CHUNK;
                    isal_deflate(&is);
                    o = is.next_out - out;
                }
                break;
            }
        }
        out_len = o;
    }
}

int
main(int argc, char **argv)
{
    FILE *f;
    int reps, i;
    u_char *back;
    z_stream d;

    if (argc != 5) {
        fprintf(stderr, "usage: %s zlib-nginx|zlib-ours|libdeflate|isal LEVEL FILE REPS\n", argv[0]);
        return 2;
    }
    lib = argv[1]; level = atoi(argv[2]); reps = atoi(argv[4]);
    f = fopen(argv[3], "rb");
    fseek(f, 0, SEEK_END); in_len = ftell(f); rewind(f);
    in = malloc(in_len); fread(in, 1, in_len, f); fclose(f);
    out = malloc(in_len * 2 + 1024);
    for (i = 0; i < reps; i++) { run_one(); if (getenv("DBG")) fprintf(stderr, "run %d len %zu %02x%02x%02x\n", i, out_len, out[0], out[1], out[2]); }
    back = malloc(in_len + 1);
    memset(&d, 0, sizeof d);
    inflateInit2(&d, 31);
    d.next_in = out; d.avail_in = out_len; d.next_out = back; d.avail_out = in_len + 1;
    if (inflate(&d, Z_FINISH) != Z_STREAM_END || d.total_out != in_len || memcmp(back, in, in_len)) {
        fprintf(stderr, "MISMATCH %s %d %s\n", lib, level, argv[3]);
        return 1;
    }
    printf("%s %d %s %zu %zu\n", lib, level, argv[3], in_len, out_len);
    return 0;
}
