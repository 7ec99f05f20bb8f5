/*
 * libFuzzer target: the list of inherited sockets of a binary upgrade
 * (SCALWS=fd;fd;, src/event/sws_listening_env.h) on arbitrary bytes. Each
 * step must move forward or stop, and what it returns must be a
 * descriptor number as written.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "sws_listening_env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p, *before;
    char       *s;
    int         fd, rc;
    size_t      n = 0;

    s = malloc(size + 1);                /* a C string, as getenv() gives */
    if (s == NULL) {
        return 0;
    }
    memcpy(s, data, size);
    s[size] = '\0';
    for (p = s; ; n++) {
        before = p;
        rc = sws_listening_env_next(&p, &fd);
        if (rc != 1) {
            if (rc == -1 && p != before) {
                abort();                 /* an error leaves the position */
            }
            break;
        }
        if (fd < 0 || p <= before || p > s + strlen(s) || (*p != ';' && *p != '\0')) {
            abort();
        }
        if (n > size) {
            abort();                     /* no progress */
        }
    }
    free(s);
    return 0;
}
