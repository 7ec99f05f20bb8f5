/*
 * The floor: a reference for the benchmark, not a web server. It answers
 * every HTTP/1.1 request on a keep-alive connection with one fixed 200
 * response (a head like a static file's, then `body` bytes from memory),
 * with one writev() per response and nothing else: no parsing beyond
 * finding the end of each request head, no logging, no configuration.
 * What it costs per request is about what the kernel costs to receive a
 * request and send that response over loopback TCP, which no server can
 * go below; bench/run measures it beside the servers (bench/README.md).
 *
 * Usage: floor CONF, where CONF has the lines "listen 127.0.0.1:PORT" and
 * "body BYTES" (bench/configs/floor/).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

typedef struct {
    int     fd;
    size_t  pending;    /* responses owed (pipelined requests) */
    size_t  sent;       /* bytes of the current response sent */
    char    tail[3];    /* the last bytes read, to find "\r\n\r\n" across reads */
} conn_t;

static char    head[512];
static size_t  head_len;
static char   *body;
static size_t  body_len;
static time_t  head_time;

/* The head carries the date, as every server's does: rewritten once a second. */
static void
make_head(void)
{
    time_t     now = time(NULL);
    struct tm  tm;
    char       date[64];

    if (now == head_time) {
        return;
    }
    head_time = now;
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    head_len = (size_t) snprintf(head, sizeof(head),
                                 "HTTP/1.1 200 OK\r\nServer: floor\r\nDate: %s\r\n"
                                 "Content-Type: application/octet-stream\r\n"
                                 "Content-Length: %zu\r\n"
                                 "Last-Modified: Wed, 02 Dec 2026 00:00:00 GMT\r\n"
                                 "ETag: \"6b0fc143-19000\"\r\nAccept-Ranges: bytes\r\n\r\n",
                                 date, body_len);
}

/* Send what is owed; 0, or -1 when the connection is to be closed. */
static int
flush(conn_t *c)
{
    struct iovec  iov[2];
    ssize_t       n;
    int           k;

    while (c->pending) {
        k = 0;
        if (c->sent < head_len) {
            iov[k].iov_base = head + c->sent;
            iov[k++].iov_len = head_len - c->sent;
            iov[k].iov_base = body;
            iov[k++].iov_len = body_len;
        } else {
            iov[k].iov_base = body + (c->sent - head_len);
            iov[k++].iov_len = body_len - (c->sent - head_len);
        }
        n = writev(c->fd, iov, k);
        if (n < 0) {
            return errno == EAGAIN ? 0 : -1;
        }
        c->sent += (size_t) n;
        if (c->sent == head_len + body_len) {
            c->sent = 0;
            c->pending--;
        }
    }
    return 0;
}

/* Count the request heads ended in what was read. */
static void
count_requests(conn_t *c, const char *p, size_t n)
{
    char    w[4];
    size_t  i;

    memcpy(w, c->tail, 3);
    for (i = 0; i < n; i++) {
        w[3] = p[i];
        if (memcmp(w, "\r\n\r\n", 4) == 0) {
            c->pending++;
        }
        memmove(w, w + 1, 3);
    }
    memcpy(c->tail, w, 3);
}

static int
read_conf(const char *path, struct sockaddr_in *sin)
{
    FILE  *f = fopen(path, "r");
    char   line[256], addr[64];
    int    port = 0;

    if (f == NULL) {
        perror(path);
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, " listen %63[0-9.]:%d", addr, &port) == 2) {
            sin->sin_family = AF_INET;
            sin->sin_port = htons((uint16_t) port);
            inet_pton(AF_INET, addr, &sin->sin_addr);
        } else {
            sscanf(line, " body %zu", &body_len);
        }
    }
    fclose(f);
    if (port == 0) {
        fprintf(stderr, "%s: no \"listen ADDR:PORT\" line\n", path);
        return -1;
    }
    return 0;
}

int
main(int argc, char **argv)
{
    struct sockaddr_in  sin = { 0 };
    struct epoll_event  ev, evs[256];
    char                buf[16384];
    conn_t             *c;
    ssize_t             r;
    int                 ls, ep, fd, n, i, one = 1;

    if (argc != 2 || read_conf(argv[1], &sin) != 0) {
        fprintf(stderr, "usage: floor CONF\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    body = malloc(body_len ? body_len : 1);
    if (body == NULL) {
        return 1;
    }
    memset(body, 'x', body_len);
    make_head();

    ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ls < 0 || bind(ls, (struct sockaddr *) &sin, sizeof(sin)) != 0 || listen(ls, 4096) != 0) {
        perror("listen");
        return 1;
    }
    ep = epoll_create1(0);
    ev.events = EPOLLIN;
    ev.data.ptr = NULL;
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);

    for ( ;; ) {
        n = epoll_wait(ep, evs, 256, -1);
        if (n > 0) {
            make_head();
        }
        for (i = 0; i < n; i++) {
            c = evs[i].data.ptr;
            if (c == NULL) {
                while ((fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                    c = calloc(1, sizeof(conn_t));
                    if (c == NULL) {
                        close(fd);
                        continue;
                    }
                    c->fd = fd;
                    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
                    ev.data.ptr = c;
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
                }
                continue;
            }
            for ( ;; ) {
                r = recv(c->fd, buf, sizeof(buf), 0);
                if (r <= 0) {
                    break;
                }
                count_requests(c, buf, (size_t) r);
            }
            if (r == 0 || (r < 0 && errno != EAGAIN) || flush(c) != 0) {
                close(c->fd);
                free(c);
            }
        }
    }
}
