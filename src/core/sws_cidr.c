/* Networks of configurations (include/scalws/sws_cidr.h). */
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <scalws/sws_cidr.h>
#include <scalws/sws_string.h>

sws_int_t
sws_cidr_parse(const u_char *text, size_t len, sws_uint_t flags, sws_cidr_t *cidr)
{
    char            buf[INET6_ADDRSTRLEN + 8];
    const u_char   *slash;
    size_t          alen = len, i, n;
    sws_int_t       bits = -1, b, rc = SWS_OK;

    memset(cidr, 0, sizeof(*cidr));
    if ((flags & SWS_CIDR_ALL) && len == 3 && memcmp(text, "all", 3) == 0) {
        return SWS_OK;                             /* family 0 */
    }
    if ((flags & SWS_CIDR_UNIX) && len == 5 && memcmp(text, "unix:", 5) == 0) {
        cidr->family = AF_UNIX;
        return SWS_OK;
    }
    slash = memchr(text, '/', len);
    if (slash) {
        alen = (size_t) (slash - text);
        if (len - alen - 1 == 0 || len - alen - 1 > 3) {
            return SWS_ERROR;
        }
        bits = sws_atoi(slash + 1, len - alen - 1);
        if (bits < 0) {
            return SWS_ERROR;
        }
    }
    if (alen == 0 || alen >= sizeof(buf)) {
        return SWS_ERROR;
    }
    memcpy(buf, text, alen);
    buf[alen] = '\0';
    if (inet_pton(AF_INET, buf, cidr->addr) == 1) {
        cidr->family = AF_INET;
        n = 4;
    } else if (inet_pton(AF_INET6, buf, cidr->addr) == 1) {
        cidr->family = AF_INET6;
        n = 16;
    } else {
        return SWS_ERROR;
    }
    if (bits == -1) {
        bits = (sws_int_t) n * 8;
    }
    if ((size_t) bits > n * 8) {
        return SWS_ERROR;
    }
    cidr->bits = (uint8_t) bits;
    for (i = 0; i < n; i++) {
        b = bits - (sws_int_t) i * 8;
        cidr->mask[i] = b >= 8 ? 0xff : b <= 0 ? 0 : (uint8_t) (0xff << (8 - b));
        if (cidr->addr[i] & ~cidr->mask[i]) {
            cidr->addr[i] &= cidr->mask[i];
            rc = SWS_DONE;
        }
    }
    return rc;
}

int
sws_cidr_match(const sws_cidr_t *cidr, int family, const uint8_t *addr)
{
    size_t  i, n;

    if (cidr->family == 0) {
        return 1;
    }
    if (cidr->family != family) {
        return 0;
    }
    n = family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
    for (i = 0; i < n; i++) {
        if ((addr[i] & cidr->mask[i]) != cidr->addr[i]) {
            return 0;
        }
    }
    return 1;
}

static const uint8_t  sws_cidr_v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

int
sws_cidr_addr(const struct sockaddr *sa, uint8_t addr[16])
{
    if (sa == NULL) {
        return -1;
    }
    switch (sa->sa_family) {
    case AF_INET:
        memcpy(addr, &((const struct sockaddr_in *) sa)->sin_addr, 4);
        return AF_INET;
    case AF_INET6:
        memcpy(addr, &((const struct sockaddr_in6 *) sa)->sin6_addr, 16);
        if (memcmp(addr, sws_cidr_v4_mapped, sizeof(sws_cidr_v4_mapped)) == 0) {
            memmove(addr, addr + 12, 4);
            return AF_INET;
        }
        return AF_INET6;
    case AF_UNIX:
        return AF_UNIX;
    }
    return -1;
}

int
sws_cidr_addr_text(const u_char *text, size_t len, uint8_t addr[16])
{
    char  buf[INET6_ADDRSTRLEN + 1];

    if (len >= 5 && memcmp(text, "unix:", 5) == 0) {
        return AF_UNIX;
    }
    if (len == 0 || len >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (inet_pton(AF_INET, buf, addr) == 1) {
        return AF_INET;
    }
    if (inet_pton(AF_INET6, buf, addr) == 1) {
        if (memcmp(addr, sws_cidr_v4_mapped, sizeof(sws_cidr_v4_mapped)) == 0) {
            memmove(addr, addr + 12, 4);
            return AF_INET;
        }
        return AF_INET6;
    }
    return -1;
}
