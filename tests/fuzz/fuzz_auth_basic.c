/*
 * libFuzzer target: the auth_basic module's parsers of outside input
 * (modules/auth_basic/sws_auth_basic_parse.c) on arbitrary bytes: the
 * Authorization field a client sends (first byte even), or a password
 * file split into lines (first byte odd), and base64 both ways. What they
 * return must point inside their buffers and hold what the format allows.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>
#include "../../modules/auth_basic/sws_auth_basic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
sws_fuzz_inside(const sws_str_t *s, const u_char *start, size_t len)
{
    if (s->data < start || s->data + s->len > start + len) {
        abort();
    }
}

static void
sws_fuzz_authorization(const u_char *in, size_t size)
{
    u_char     buf[SWS_AUTH_BASIC_MAX_CREDENTIALS];
    sws_str_t  user, password;
    size_t     i;

    if (sws_http_parse_basic_credentials(in, size, buf, &user, &password) != SWS_OK) {
        return;
    }
    sws_fuzz_inside(&user, buf, sizeof(buf));
    sws_fuzz_inside(&password, buf, sizeof(buf));
    if (memchr(user.data, ':', user.len) != NULL || password.data != user.data + user.len + 1) {
        abort();
    }
    for (i = 0; i < user.len; i++) {
        if (user.data[i] < 0x20 || user.data[i] == 0x7f) {
            abort();
        }
    }
    for (i = 0; i < password.len; i++) {
        if (password.data[i] < 0x20 || password.data[i] == 0x7f) {
            abort();
        }
    }
}

static void
sws_fuzz_file(const u_char *in, size_t size)
{
    const u_char  *pos = in, *end = in + size;
    sws_str_t      line, user, hash;
    size_t         lines = 0;

    while (sws_auth_basic_next_line(&pos, end, &line)) {
        sws_fuzz_inside(&line, in, size);
        if (memchr(line.data, '\n', line.len) != NULL || ++lines > size + 1) {
            abort();
        }
        if (sws_auth_basic_parse_line(&line, &user, &hash) == SWS_OK) {
            sws_fuzz_inside(&user, line.data, line.len);
            sws_fuzz_inside(&hash, line.data, line.len);
            if (user.len == 0 || memchr(user.data, ':', user.len) != NULL
                || memchr(hash.data, ':', hash.len) != NULL)
            {
                abort();
            }
        }
    }
}

/* decode(encode(x)) == x, and decode never writes more than 3/4 of its input */
static void
sws_fuzz_base64(const u_char *in, size_t size)
{
    u_char   *enc, *dec;
    ssize_t   n;
    size_t    elen;

    enc = malloc(4 * ((size + 2) / 3) + 1);
    dec = malloc(size + 1);
    if (enc == NULL || dec == NULL) {
        free(enc);
        free(dec);
        return;
    }
    elen = (size_t) (sws_encode_base64(enc, in, size) - enc);
    n = sws_decode_base64(dec, enc, elen);
    if (n != (ssize_t) size || memcmp(dec, in, size) != 0) {
        abort();
    }
    n = sws_decode_base64(dec, in, size);
    if (n > (ssize_t) (size * 3 / 4)) {
        abort();
    }
    free(enc);
    free(dec);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    u_char  *copy;

    if (size == 0) {
        return 0;
    }
    /* an exact-size copy, so that a read past the end is caught */
    copy = malloc(size - 1 ? size - 1 : 1);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, data + 1, size - 1);
    if (data[0] & 1) {
        sws_fuzz_file(copy, size - 1);
    } else {
        sws_fuzz_authorization(copy, size - 1);
    }
    sws_fuzz_base64(copy, size - 1);
    free(copy);
    return 0;
}
