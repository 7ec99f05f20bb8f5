/*
 * libFuzzer target: the parser of the parameters after "syslog:" in
 * access_log and error_log (src/core/sws_syslog.c) on arbitrary bytes,
 * from an exact-size copy (so that a read past the end is caught). A
 * parameter list it takes must give a facility and a severity in range, a
 * tag of at most 32 letters, digits or '_', an address or a name to
 * resolve, and a header that fits SWS_SYSLOG_HEADER_MAX bytes (written
 * into a buffer of exactly that size); one it refuses must say why. No
 * name is resolved (no I/O).
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sws_syslog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sws_syslog_peer_t  peer;
    char               err[512];
    u_char            *text, *hdr, *end;
    size_t             i;

    text = malloc(size ? size : 1);
    hdr = malloc(SWS_SYSLOG_HEADER_MAX);
    if (text == NULL || hdr == NULL) {
        abort();
    }
    memcpy(text, data, size);
    err[0] = '\0';

    if (sws_syslog_parse(text, size, &peer, err, sizeof(err)) != SWS_OK) {
        if (err[0] == '\0' || memchr(err, '\0', sizeof(err)) == NULL) {
            abort();
        }
    } else {
        if (peer.facility > 23 || peer.severity > 7 || peer.tag_len > SWS_SYSLOG_TAG_MAX
            || (peer.addrlen == 0 && peer.host[0] == '\0') || peer.fd != -1)
        {
            abort();
        }
        for (i = 0; i < peer.tag_len; i++) {
            if (!isalnum(peer.tag[i]) && peer.tag[i] != '_') {
                abort();
            }
        }
        end = sws_syslog_header(&peer, peer.severity, hdr);
        if (end > hdr + SWS_SYSLOG_HEADER_MAX || end[-2] != ':' || end[-1] != ' ') {
            abort();
        }
    }
    free(text);
    free(hdr);
    return 0;
}
