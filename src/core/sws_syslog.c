/*
 * Logging to syslog: "syslog:server=ADDR[:PORT]|unix:PATH[,facility=F]
 * [,severity=S][,tag=T][,nohostname]" as the target of error_log and
 * access_log. Each message is one datagram framed as RFC 3164 says and
 * nginx sends it: "<PRI>Mmm dd hh:mm:ss HOST TAG: text", no newline.
 *
 * Each process makes its own socket on its first message (a worker does
 * not depend on a socket of the master's), non-blocking: a message the
 * socket does not take at once is dropped and counted, never waited for.
 * After an error the socket is closed and made again for the next
 * message, so a server that was down (ECONNREFUSED) or a unix socket that
 * was missing is found again when it is back.
 */
#include <ctype.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <scalws/sws_string.h>
#include "sws_core_module.h"
#include "sws_log_internal.h"
#include "sws_syslog.h"
#include "sws_times_internal.h"

#define SWS_SYSLOG_DEFAULT_FACILITY  23       /* local7 */
#define SWS_SYSLOG_DEFAULT_SEVERITY  6        /* info */
#define SWS_SYSLOG_DEFAULT_TAG       "scalws"

/* RFC 3164's facility codes, in order */
static const char *const  sws_syslog_facilities[] = {
    "kern", "user", "mail", "daemon", "auth", "intern", "lpr", "news", "uucp",
    "clock", "authpriv", "ftp", "ntp", "audit", "alert", "cron", "local0",
    "local1", "local2", "local3", "local4", "local5", "local6", "local7", NULL
};

/* the severities, in nginx's level names (code = index) */
static const char *const  sws_syslog_severities[] = {
    "emerg", "alert", "crit", "error", "warn", "notice", "info", "debug", NULL
};


static int
sws_syslog_lookup(const char *const *names, const u_char *p, size_t len)
{
    int  i;

    for (i = 0; names[i]; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], p, len) == 0) {
            return i;
        }
    }
    return -1;
}


static int
sws_syslog_param(const u_char *p, size_t len, const char *name, const u_char **v,
    size_t *vlen)
{
    size_t  n = strlen(name);

    if (len < n || memcmp(p, name, n) != 0) {
        return 0;
    }
    *v = p + n;
    *vlen = len - n;
    return 1;
}


/* 1..65535 in decimal, else -1 */
static int
sws_syslog_port(const u_char *p, size_t len)
{
    sws_int_t  port = sws_atoi(p, len);

    return port < 1 || port > 65535 ? -1 : (int) port;
}


/* server=VALUE: "unix:PATH", "[V6][:PORT]", "V4[:PORT]", "NAME[:PORT]" */
static sws_int_t
sws_syslog_parse_server(const u_char *v, size_t len, sws_syslog_peer_t *peer,
    const char **reason)
{
    const u_char        *last = v + len, *colon, *rb, *host;
    size_t               hlen;
    int                  port = SWS_SYSLOG_DEFAULT_PORT;
    char                 buf[INET6_ADDRSTRLEN];
    struct sockaddr_un  *sun = (struct sockaddr_un *) &peer->addr;
    struct sockaddr_in  *sin = (struct sockaddr_in *) &peer->addr;
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *) &peer->addr;

    sws_memzero(&peer->addr, sizeof(peer->addr));

    if (len >= 5 && sws_strncasecmp((u_char *) v, (u_char *) "unix:", 5) == 0) {
        if (len == 5) {
            *reason = "no path in the unix domain socket";
            return SWS_ERROR;
        }
        if (len - 5 >= sizeof(sun->sun_path) || memchr(v + 5, '\0', len - 5)) {
            *reason = "too long path in the unix domain socket";
            return SWS_ERROR;
        }
        sun->sun_family = AF_UNIX;
        memcpy(sun->sun_path, v + 5, len - 5);
        peer->addrlen = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len - 5 + 1);
        return SWS_OK;
    }

    if (len && v[0] == '[') {
        rb = memchr(v, ']', len);
        if (rb == NULL || (size_t) (rb - v - 1) >= sizeof(buf)) {
            *reason = "invalid host";
            return SWS_ERROR;
        }
        if (rb + 1 < last && rb[1] != ':') {
            *reason = "invalid host";
            return SWS_ERROR;
        }
        if (rb + 1 < last && (port = sws_syslog_port(rb + 2, last - rb - 2)) < 0) {
            *reason = "invalid port";
            return SWS_ERROR;
        }
        memcpy(buf, v + 1, rb - v - 1);
        buf[rb - v - 1] = '\0';
        if (inet_pton(AF_INET6, buf, &sin6->sin6_addr) != 1) {
            *reason = "invalid host";
            return SWS_ERROR;
        }
        sin6->sin6_family = AF_INET6;
        sin6->sin6_port = htons((uint16_t) port);
        peer->addrlen = sizeof(struct sockaddr_in6);
        return SWS_OK;
    }

    colon = memchr(v, ':', len);
    if (colon && (port = sws_syslog_port(colon + 1, last - colon - 1)) < 0) {
        *reason = "invalid port";
        return SWS_ERROR;
    }
    host = v;
    hlen = (size_t) ((colon ? colon : last) - v);
    if (hlen == 0) {
        *reason = "no host";
        return SWS_ERROR;
    }
    if (memchr(host, '/', hlen) || memchr(host, '\0', hlen) || hlen >= sizeof(peer->host)) {
        *reason = "invalid host";
        return SWS_ERROR;
    }
    peer->port = (unsigned) port;
    if (hlen < sizeof(buf)) {
        memcpy(buf, host, hlen);
        buf[hlen] = '\0';
        if (inet_pton(AF_INET, buf, &sin->sin_addr) == 1) {
            sin->sin_family = AF_INET;
            sin->sin_port = htons((uint16_t) port);
            peer->addrlen = sizeof(struct sockaddr_in);
            return SWS_OK;
        }
    }
    /* a name: sws_syslog_resolve() */
    memcpy(peer->host, host, hlen);
    peer->host[hlen] = '\0';
    return SWS_OK;
}


sws_int_t
sws_syslog_parse(const u_char *text, size_t len, sws_syslog_peer_t *peer, char *err,
    size_t errsize)
{
    const u_char  *p = text, *last = text + len, *comma, *v;
    const char    *reason;
    size_t         n, vlen, i;
    int            code, have_server = 0;

    sws_memzero(peer, sizeof(*peer));
    peer->facility = (sws_uint_t) SWS_UNSET;
    peer->severity = (sws_uint_t) SWS_UNSET;
    peer->fd = -1;

    for ( ;; ) {
        comma = memchr(p, ',', (size_t) (last - p));
        n = (size_t) ((comma ? comma : last) - p);

        if (sws_syslog_param(p, n, "server=", &v, &vlen)) {
            if (have_server) {
                snprintf(err, errsize, "duplicate syslog \"server\"");
                return SWS_ERROR;
            }
            have_server = 1;
            snprintf(peer->name, sizeof(peer->name), "%.*s", (int) vlen, v);
            if (sws_syslog_parse_server(v, vlen, peer, &reason) != SWS_OK) {
                snprintf(err, errsize, "%s in syslog server \"%.*s\"", reason, (int) vlen, v);
                return SWS_ERROR;
            }

        } else if (sws_syslog_param(p, n, "facility=", &v, &vlen)) {
            if (peer->facility != (sws_uint_t) SWS_UNSET) {
                snprintf(err, errsize, "duplicate syslog \"facility\"");
                return SWS_ERROR;
            }
            code = sws_syslog_lookup(sws_syslog_facilities, v, vlen);
            if (code < 0) {
                snprintf(err, errsize, "unknown syslog facility \"%.*s\"", (int) vlen, v);
                return SWS_ERROR;
            }
            peer->facility = (sws_uint_t) code;

        } else if (sws_syslog_param(p, n, "severity=", &v, &vlen)) {
            if (peer->severity != (sws_uint_t) SWS_UNSET) {
                snprintf(err, errsize, "duplicate syslog \"severity\"");
                return SWS_ERROR;
            }
            code = sws_syslog_lookup(sws_syslog_severities, v, vlen);
            if (code < 0) {
                snprintf(err, errsize, "unknown syslog severity \"%.*s\"", (int) vlen, v);
                return SWS_ERROR;
            }
            peer->severity = (sws_uint_t) code;

        } else if (sws_syslog_param(p, n, "tag=", &v, &vlen)) {
            if (peer->tag_set) {
                snprintf(err, errsize, "duplicate syslog \"tag\"");
                return SWS_ERROR;
            }
            if (vlen > SWS_SYSLOG_TAG_MAX) {
                snprintf(err, errsize, "syslog tag length exceeds %d", SWS_SYSLOG_TAG_MAX);
                return SWS_ERROR;
            }
            /* RFC 3164: the TAG is alphanumeric (nginx allows '_' too) */
            for (i = 0; i < vlen; i++) {
                if (!isalnum(v[i]) && v[i] != '_') {
                    snprintf(err, errsize, "syslog \"tag\" only allows alphanumeric "
                             "characters and underscore");
                    return SWS_ERROR;
                }
            }
            memcpy(peer->tag, v, vlen);
            peer->tag_len = vlen;
            peer->tag_set = 1;

        } else if (n == sizeof("nohostname") - 1 && memcmp(p, "nohostname", n) == 0) {
            peer->nohostname = 1;

        } else {
            snprintf(err, errsize, "unknown syslog parameter \"%.*s\"", (int) n, p);
            return SWS_ERROR;
        }

        if (comma == NULL) {
            break;
        }
        p = comma + 1;
    }

    if (!have_server) {
        snprintf(err, errsize, "no syslog server specified");
        return SWS_ERROR;
    }
    if (peer->facility == (sws_uint_t) SWS_UNSET) {
        peer->facility = SWS_SYSLOG_DEFAULT_FACILITY;
    }
    if (peer->severity == (sws_uint_t) SWS_UNSET) {
        peer->severity = SWS_SYSLOG_DEFAULT_SEVERITY;
    }
    if (!peer->tag_set) {
        peer->tag_len = sizeof(SWS_SYSLOG_DEFAULT_TAG) - 1;
        memcpy(peer->tag, SWS_SYSLOG_DEFAULT_TAG, peer->tag_len);
    }
    return SWS_OK;
}


sws_int_t
sws_syslog_resolve(sws_syslog_peer_t *peer, char *err, size_t errsize)
{
    struct addrinfo  hints, *res, *ai, *pick = NULL;

    if (peer->host[0] == '\0') {
        return SWS_OK;
    }
    sws_memzero(&hints, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    if (getaddrinfo(peer->host, NULL, &hints, &res) != 0 || res == NULL) {
        snprintf(err, errsize, "host not found in syslog server \"%s\"", peer->name);
        return SWS_ERROR;
    }
    /* the first IPv4 address, else the first IPv6 one (as nginx orders them) */
    for (ai = res; ai; ai = ai->ai_next) {
        if (ai->ai_family == AF_INET) {
            pick = ai;
            break;
        }
        if (ai->ai_family == AF_INET6 && pick == NULL) {
            pick = ai;
        }
    }
    if (pick == NULL || pick->ai_addrlen > sizeof(peer->addr)) {
        freeaddrinfo(res);
        snprintf(err, errsize, "host not found in syslog server \"%s\"", peer->name);
        return SWS_ERROR;
    }
    memcpy(&peer->addr, pick->ai_addr, pick->ai_addrlen);
    peer->addrlen = pick->ai_addrlen;
    if (pick->ai_family == AF_INET) {
        ((struct sockaddr_in *) &peer->addr)->sin_port = htons((uint16_t) peer->port);
    } else {
        ((struct sockaddr_in6 *) &peer->addr)->sin6_port = htons((uint16_t) peer->port);
    }
    freeaddrinfo(res);
    return SWS_OK;
}


const sws_str_t *
sws_syslog_hostname(void)
{
    static char       name[256];
    static sws_str_t  host;
    size_t            i;

    if (host.data == NULL) {
        if (gethostname(name, sizeof(name) - 1) != 0) {
            name[0] = '\0';
        }
        name[sizeof(name) - 1] = '\0';
        for (i = 0; name[i]; i++) {
            name[i] = (char) tolower((u_char) name[i]);
        }
        host.data = (u_char *) name;
        host.len = i;
    }
    return &host;
}


u_char *
sws_syslog_header(sws_syslog_peer_t *peer, sws_uint_t severity, u_char *buf)
{
    const sws_str_t  *t = sws_cached_syslog_time(), *host;
    u_char           *p = buf;

    if (t->data == NULL) {
        sws_time_update();
    }
    *p++ = '<';
    p = sws_sprint_uint(p, (uint64_t) (peer->facility * 8 + severity));
    *p++ = '>';
    p = sws_cpymem(p, t->data, t->len);
    *p++ = ' ';
    if (!peer->nohostname) {
        host = sws_syslog_hostname();
        p = sws_cpymem(p, host->data, host->len);
        *p++ = ' ';
    }
    p = sws_cpymem(p, peer->tag, peer->tag_len);
    *p++ = ':';
    *p++ = ' ';
    return p;
}


static int
sws_syslog_connect(sws_syslog_peer_t *peer)
{
    int  fd, low;

    fd = socket(peer->addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd == -1) {
        return -1;
    }
    if (fd < 10) {
        /* out of the low numbers that have fixed uses (a helper child puts
         * its listening socket at fd 3 and may still log before exec) */
        low = fd;
        fd = fcntl(low, F_DUPFD_CLOEXEC, 10);
        close(low);
        if (fd == -1) {
            return -1;
        }
    }
    if (connect(fd, (struct sockaddr *) &peer->addr, peer->addrlen) == -1) {
        close(fd);
        return -1;
    }
    peer->fd = fd;
    return 0;
}


int
sws_syslog_send(sws_syslog_peer_t *peer, const u_char *msg, size_t len)
{
    ssize_t  n;

    if (peer->fd == -1 && sws_syslog_connect(peer) == -1) {
        peer->dropped++;
        return 0;
    }
    do {
        n = send(peer->fd, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n == -1 && errno == EINTR);

    if (n == (ssize_t) len) {
        return 1;
    }
    peer->dropped++;
    if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) {
        /* refused, gone, or the unix socket replaced: a new socket next time */
        close(peer->fd);
        peer->fd = -1;
    }
    return 0;
}


/* ---- configuration ---- */

int
sws_syslog_target(const sws_str_t *arg)
{
    return arg->len >= 7 && memcmp(arg->data, "syslog:", 7) == 0;
}


static void
sws_syslog_close(void *data)
{
    sws_syslog_peer_t  *peer = data;

    if (peer->fd != -1) {
        close(peer->fd);
        peer->fd = -1;
    }
}


sws_syslog_peer_t *
sws_syslog_conf(sws_conf_t *cf, const sws_str_t *arg, int *failed)
{
    sws_syslog_peer_t  *peer;
    char                err[512];

    *failed = 0;
    if (!sws_syslog_target(arg)) {
        return NULL;
    }
    *failed = 1;
    peer = sws_palloc(sws_conf_pool(cf), sizeof(sws_syslog_peer_t));
    if (peer == NULL) {
        return NULL;
    }
    if (sws_syslog_parse(arg->data + 7, arg->len - 7, peer, err, sizeof(err)) != SWS_OK
        || sws_syslog_resolve(peer, err, sizeof(err)) != SWS_OK)
    {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "%s", err);
        return NULL;
    }
    if (sws_pool_cleanup_add(sws_conf_pool(cf), sws_syslog_close, peer) != SWS_OK) {
        return NULL;
    }
    *failed = 0;
    return peer;
}


/*
 * The error log's writer: the line as the file would have it (its time,
 * level and pid included, as nginx sends it), after the header, with the
 * level as the severity. A message logged while one is being sent (about
 * the sending itself) is dropped rather than sent in a loop.
 */
static void
sws_syslog_write_error(sws_log_t *log, sws_uint_t level, const u_char *line, size_t len)
{
    sws_syslog_peer_t  *peer = log->wdata;
    u_char              msg[SWS_SYSLOG_HEADER_MAX + 4096], *p;

    if (peer->busy) {
        peer->dropped++;
        return;
    }
    peer->busy = 1;
    p = sws_syslog_header(peer, level > SWS_LOG_STDERR ? level - 1 : SWS_LOG_NOTICE - 1, msg);
    len = sws_min(len, (size_t) (msg + sizeof(msg) - p));
    p = sws_cpymem(p, line, len);
    (void) sws_syslog_send(peer, msg, (size_t) (p - msg));
    peer->busy = 0;
}


sws_log_t *
sws_syslog_error_log(sws_pool_t *pool, sws_syslog_peer_t *peer, sws_uint_t level)
{
    return sws_log_create_writer(pool, level, sws_syslog_write_error, peer);
}
