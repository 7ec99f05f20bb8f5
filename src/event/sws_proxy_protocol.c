/*
 * The PROXY protocol header, versions 1 and 2 (haproxy.org's
 * proxy-protocol.txt), parsed one byte at a time: a byte that cannot
 * belong to a valid header is refused at once, so that garbage (or a
 * client speaking HTTP or TLS straight to the port) is closed without
 * waiting for more.
 *
 *   v1: "PROXY TCP4|TCP6 SRC DST SPORT DPORT\r\n" or "PROXY UNKNOWN ...\r\n",
 *       at most 107 bytes;
 *   v2: a 12-byte signature, version/command, family/transport, a 16-bit
 *       length, the addresses of the family, then TLVs (checked to fit,
 *       their contents skipped).
 */
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "sws_proxy_protocol.h"

enum {
    SWS_PP_START = 0,
    SWS_PP_V1,          /* the line, into buf */
    SWS_PP_V1_LF,       /* after its CR */
    SWS_PP_V2_HEAD,     /* the 16 bytes, into buf */
    SWS_PP_V2_ADDRS,    /* the addresses, into buf (unix ones skipped) */
    SWS_PP_V2_TLVS,     /* type, length, value ... */
    SWS_PP_V2_SKIP,     /* LOCAL, UNSPEC: the block is ignored */
    SWS_PP_DONE
};

static const u_char  sws_pp_v1_sig[] = "PROXY ";
static const u_char  sws_pp_v2_sig[12] = { 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a,
                                           0x51, 0x55, 0x49, 0x54, 0x0a };

/* A port: 1 to 5 digits, at most 65535 (v1). */
static int
sws_pp_port(const char *s, in_port_t *port)
{
    unsigned long  v = 0;
    size_t         n = strlen(s);

    if (n == 0 || n > 5) {
        return -1;
    }
    for (; *s; s++) {
        if (*s < '0' || *s > '9') {
            return -1;
        }
        v = v * 10 + (unsigned long) (*s - '0');
    }
    if (v > 65535) {
        return -1;
    }
    *port = htons((uint16_t) v);
    return 0;
}

static int
sws_pp_v1_addr(int family, const char *text, const char *port,
    struct sockaddr_storage *ss, socklen_t *len)
{
    in_port_t  p;

    if (sws_pp_port(port, &p) != 0) {
        return -1;
    }
    memset(ss, 0, sizeof(*ss));
    if (family == AF_INET) {
        struct sockaddr_in *sin = (struct sockaddr_in *) ss;
        if (inet_pton(AF_INET, text, &sin->sin_addr) != 1) {
            return -1;
        }
        sin->sin_family = AF_INET;
        sin->sin_port = p;
        *len = sizeof(struct sockaddr_in);
    } else {
        struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) ss;
        if (inet_pton(AF_INET6, text, &sin6->sin6_addr) != 1) {
            return -1;
        }
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = p;
        *len = sizeof(struct sockaddr_in6);
    }
    return 0;
}

/* The whole v1 line is in buf (without CRLF, NUL-terminated): split it on
 * single spaces into exactly the fields the protocol names. */
static sws_int_t
sws_pp_v1_line(sws_proxy_protocol_t *pp)
{
    char  *f[6], *p = (char *) pp->buf + sizeof(sws_pp_v1_sig) - 1;
    int    n = 0, family;

    if (strncmp(p, "UNKNOWN", 7) == 0 && (p[7] == '\0' || p[7] == ' ')) {
        pp->has_addrs = 0;            /* the rest of the line is ignored */
        return SWS_OK;
    }
    while (n < 6) {
        f[n++] = p;
        p = strchr(p, ' ');
        if (p == NULL) {
            break;
        }
        *p++ = '\0';
    }
    if (n != 5 || p != NULL) {
        return SWS_ERROR;
    }
    if (strcmp(f[0], "TCP4") == 0) {
        family = AF_INET;
    } else if (strcmp(f[0], "TCP6") == 0) {
        family = AF_INET6;
    } else {
        return SWS_ERROR;
    }
    if (sws_pp_v1_addr(family, f[1], f[3], &pp->src, &pp->src_len) != 0
        || sws_pp_v1_addr(family, f[2], f[4], &pp->dst, &pp->dst_len) != 0)
    {
        return SWS_ERROR;
    }
    pp->has_addrs = 1;
    return SWS_OK;
}

/* The 16-byte v2 header is in buf. */
static sws_int_t
sws_pp_v2_head(sws_proxy_protocol_t *pp)
{
    u_char  ver = pp->buf[12] >> 4, cmd = pp->buf[12] & 0x0f;
    u_char  fam = pp->buf[13] >> 4, proto = pp->buf[13] & 0x0f;
    size_t  need;

    pp->rest = ((size_t) pp->buf[14] << 8) | pp->buf[15];
    if (ver != 2 || cmd > 1 || fam > 3 || proto > 2
        || pp->rest > SWS_PROXY_PROTOCOL_V2_MAX)
    {
        return SWS_ERROR;
    }
    pp->command = cmd;
    pp->family = fam;
    pp->len = 0;
    if (cmd == 0 || fam == 0) {
        /* LOCAL (a health check of the balancer itself) or an unknown
         * family: the connection's own addresses stay. */
        pp->state = SWS_PP_V2_SKIP;
        return SWS_OK;
    }
    need = fam == 1 ? 12 : fam == 2 ? 36 : 216;
    if (pp->rest < need) {
        return SWS_ERROR;
    }
    pp->state = SWS_PP_V2_ADDRS;
    return SWS_OK;
}

/* The addresses of the family are in buf (inet, inet6) or were skipped. */
static void
sws_pp_v2_addrs(sws_proxy_protocol_t *pp)
{
    struct sockaddr_in   *s4 = (struct sockaddr_in *) &pp->src;
    struct sockaddr_in   *d4 = (struct sockaddr_in *) &pp->dst;
    struct sockaddr_in6  *s6 = (struct sockaddr_in6 *) &pp->src;
    struct sockaddr_in6  *d6 = (struct sockaddr_in6 *) &pp->dst;

    memset(&pp->src, 0, sizeof(pp->src));
    memset(&pp->dst, 0, sizeof(pp->dst));
    if (pp->family == 1) {
        s4->sin_family = d4->sin_family = AF_INET;
        memcpy(&s4->sin_addr, pp->buf, 4);
        memcpy(&d4->sin_addr, pp->buf + 4, 4);
        memcpy(&s4->sin_port, pp->buf + 8, 2);
        memcpy(&d4->sin_port, pp->buf + 10, 2);
        pp->src_len = pp->dst_len = sizeof(struct sockaddr_in);
        pp->has_addrs = 1;
    } else if (pp->family == 2) {
        s6->sin6_family = d6->sin6_family = AF_INET6;
        memcpy(&s6->sin6_addr, pp->buf, 16);
        memcpy(&d6->sin6_addr, pp->buf + 16, 16);
        memcpy(&s6->sin6_port, pp->buf + 32, 2);
        memcpy(&d6->sin6_port, pp->buf + 34, 2);
        pp->src_len = pp->dst_len = sizeof(struct sockaddr_in6);
        pp->has_addrs = 1;
    }
    /* unix addresses: nothing an HTTP client address can be */
}

/* One byte; SWS_AGAIN (more), SWS_OK (the header ends with it), SWS_ERROR. */
static sws_int_t
sws_pp_byte(sws_proxy_protocol_t *pp, u_char ch)
{
    size_t  need;

    switch (pp->state) {

    case SWS_PP_START:
        if (ch == 'P') {
            pp->version = 1;
            pp->state = SWS_PP_V1;
        } else if (ch == sws_pp_v2_sig[0]) {
            pp->version = 2;
            pp->state = SWS_PP_V2_HEAD;
        } else {
            return SWS_ERROR;
        }
        pp->buf[pp->len++] = ch;
        return SWS_AGAIN;

    case SWS_PP_V1:
        if (pp->len < sizeof(sws_pp_v1_sig) - 1) {
            if (ch != sws_pp_v1_sig[pp->len]) {
                return SWS_ERROR;
            }
        } else if (ch == '\r') {
            pp->state = SWS_PP_V1_LF;
            return SWS_AGAIN;
        } else if (ch < 0x20 || ch > 0x7e) {
            return SWS_ERROR;
        }
        /* room for CR LF after it, within 107 bytes */
        if (pp->len + 2 >= SWS_PROXY_PROTOCOL_V1_MAX) {
            return SWS_ERROR;
        }
        pp->buf[pp->len++] = ch;
        return SWS_AGAIN;

    case SWS_PP_V1_LF:
        if (ch != '\n') {
            return SWS_ERROR;
        }
        pp->buf[pp->len] = '\0';
        pp->state = SWS_PP_DONE;
        return sws_pp_v1_line(pp);

    case SWS_PP_V2_HEAD:
        if (pp->len < sizeof(sws_pp_v2_sig) && ch != sws_pp_v2_sig[pp->len]) {
            return SWS_ERROR;
        }
        pp->buf[pp->len++] = ch;
        if (pp->len < 16) {
            return SWS_AGAIN;
        }
        if (sws_pp_v2_head(pp) != SWS_OK) {
            return SWS_ERROR;
        }
        return pp->rest == 0 ? SWS_OK : SWS_AGAIN;

    case SWS_PP_V2_SKIP:
        return --pp->rest == 0 ? SWS_OK : SWS_AGAIN;

    case SWS_PP_V2_ADDRS:
        need = pp->family == 1 ? 12 : pp->family == 2 ? 36 : 216;
        if (pp->len < sizeof(pp->buf)) {
            pp->buf[pp->len] = ch;
        }
        pp->len++;
        pp->rest--;
        if (pp->len == need) {
            sws_pp_v2_addrs(pp);
            pp->state = SWS_PP_V2_TLVS;
            pp->tlv_hdr = 0;
            pp->tlv_left = 0;
        }
        if (pp->rest > 0) {
            return SWS_AGAIN;
        }
        return pp->state == SWS_PP_V2_TLVS ? SWS_OK : SWS_ERROR;

    case SWS_PP_V2_TLVS:
        pp->rest--;
        if (pp->tlv_hdr == 0 && pp->tlv_left > 0) {
            pp->tlv_left--;                   /* a value byte */
        } else {
            /* type (1 byte), length (2 bytes, big-endian) */
            if (pp->tlv_hdr == 1) {
                pp->tlv_left = (size_t) ch << 8;
            } else if (pp->tlv_hdr == 2) {
                pp->tlv_left |= ch;
            }
            pp->tlv_hdr = pp->tlv_hdr == 2 ? 0 : pp->tlv_hdr + 1;
            if (pp->tlv_hdr == 0 && pp->tlv_left > pp->rest) {
                return SWS_ERROR;         /* a value past the block's end */
            }
        }
        if (pp->rest > 0) {
            return SWS_AGAIN;
        }
        /* the block must end with a whole TLV */
        return pp->tlv_hdr == 0 && pp->tlv_left == 0 ? SWS_OK : SWS_ERROR;
    }
    return SWS_ERROR;
}

sws_int_t
sws_proxy_protocol_parse(sws_proxy_protocol_t *pp, const u_char *p, size_t n, size_t *used)
{
    size_t     i;
    sws_int_t  rc;

    if (pp->state == SWS_PP_DONE) {
        return SWS_ERROR;                 /* fed again after the end */
    }
    for (i = 0; i < n; i++) {
        rc = sws_pp_byte(pp, p[i]);
        pp->total++;
        if (rc == SWS_AGAIN) {
            continue;
        }
        pp->state = SWS_PP_DONE;
        if (rc == SWS_OK) {
            *used = i + 1;
        }
        return rc;
    }
    return SWS_AGAIN;
}
