/*
 * Logging to a syslog server (core-private): the "syslog:" targets of
 * error_log and access_log, sent as RFC 3164 datagrams over UDP or a unix
 * datagram socket, never blocking.
 */
#ifndef SWS_SYSLOG_H
#define SWS_SYSLOG_H

#include <sys/socket.h>
#include <scalws/sws_conf.h>
#include <scalws/sws_pool.h>
#include <scalws/sws_types.h>

#define SWS_SYSLOG_DEFAULT_PORT  514
#define SWS_SYSLOG_TAG_MAX       32            /* RFC 3164 */
/* "<191>Nov  6 08:49:37 " + host + " " + tag + ": " */
#define SWS_SYSLOG_HEADER_MAX    (sizeof("<191>Nov  6 08:49:37 ") - 1 + 255 + 1 \
                                  + SWS_SYSLOG_TAG_MAX + 2)

typedef struct {
    struct sockaddr_storage  addr;
    socklen_t                addrlen;        /* 0: not parsed yet */
    char                     name[300];      /* "server=" as written (messages) */
    char                     host[256];      /* a name left to resolve, or "" */
    unsigned                 port;
    sws_uint_t               facility;       /* SWS_UNSET until given */
    sws_uint_t               severity;       /* SWS_UNSET until given */
    u_char                   tag[SWS_SYSLOG_TAG_MAX];
    size_t                   tag_len;
    unsigned                 tag_set:1;
    unsigned                 nohostname:1;
    unsigned                 busy:1;         /* sending: a nested message is dropped */
    int                      fd;             /* this process's socket; -1: none yet */
    uint64_t                 dropped;        /* messages not sent */
    uint64_t                 reported;       /* of those, already reported */
    time_t                   report_time;
} sws_syslog_peer_t;

/*
 * Parse the parameters after "syslog:" (server=, facility=, severity=,
 * tag=, nohostname) into peer. A literal address is taken as it is; a name
 * is left in peer->host for sws_syslog_resolve(). SWS_ERROR with the
 * reason in err (nginx's words) for anything it refuses. No I/O.
 */
sws_int_t sws_syslog_parse(const u_char *text, size_t len, sws_syslog_peer_t *peer,
    char *err, size_t errsize);
/* Look up peer->host (getaddrinfo); SWS_ERROR with the reason in err. */
sws_int_t sws_syslog_resolve(sws_syslog_peer_t *peer, char *err, size_t errsize);
/* Write "<PRI>Mmm dd hh:mm:ss HOST TAG: " (no HOST with nohostname) into
 * buf (SWS_SYSLOG_HEADER_MAX bytes); returns its end. */
u_char   *sws_syslog_header(sws_syslog_peer_t *peer, sws_uint_t severity, u_char *buf);
/*
 * Send one message (header included) without blocking: the socket is made
 * on first use in each process and made again after an error. 1 when
 * sent, 0 when dropped (counted in peer->dropped).
 */
int       sws_syslog_send(sws_syslog_peer_t *peer, const u_char *msg, size_t len);
/* The host name of the header: gethostname() in lower case, once per process. */
const sws_str_t *sws_syslog_hostname(void);

/*
 * Configuration: for a target arg that starts with "syslog:", a peer made
 * from it in the configuration's pool with nginx's defaults (local7, info,
 * the tag "scalws"), its socket closed with the pool. NULL when arg is not
 * a syslog target; SWS_CONF_ERROR-like failure is reported at the
 * directive (file and line) and signalled by *failed.
 */
sws_syslog_peer_t *sws_syslog_conf(sws_conf_t *cf, const sws_str_t *arg, int *failed);
/* 1 if arg is a "syslog:" target. */
int       sws_syslog_target(const sws_str_t *arg);
/* An error log at level whose lines go to peer, the level as the severity. */
sws_log_t *sws_syslog_error_log(sws_pool_t *pool, sws_syslog_peer_t *peer, sws_uint_t level);

#endif
