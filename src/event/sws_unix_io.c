/* Plain socket I/O: recv, and sending a chain with writev and sendfile. */
#include <string.h>
#include <unistd.h>
#include <sys/sendfile.h>
#include "sws_event.h"

#define SWS_IOVS      64
/* Bytes sent per call before other connections get a turn. Measured on
 * 1 MiB files (wrk -c16, 3 interleaved rounds of 5 s, server CPU per
 * request): 128 KiB 144-216 us, 256 KiB 224-472 us, 2 MiB 416-569 us. */
#define SWS_SEND_MAX  (128 * 1024)

/* What recv() (or recvmsg()) returned, into the read event's flags and
 * the return value; SWS_DECLINED: interrupted, call again. */
static ssize_t
sws_unix_recv_result(sws_connection_t *c, ssize_t n, size_t size)
{
    int err;

    if (n > 0) {
        if ((size_t) n < size && !c->read->eof) {
            c->read->ready = 0;   /* edge-triggered: the socket is drained */
        }
        return n;
    }
    if (n == 0) {
        c->read->ready = 0;
        c->read->eof = 1;
        return 0;
    }
    err = errno;
    if (err == EINTR) {
        return SWS_DECLINED;
    }
    c->read->ready = 0;
    if (err == EAGAIN) {
        return SWS_AGAIN;
    }
    c->read->error = 1;
    sws_log_error(err == ECONNRESET ? SWS_LOG_INFO : SWS_LOG_ERR, c->log, err,
                  "recv() failed");
    return SWS_ERROR;
}

ssize_t
sws_unix_recv(sws_connection_t *c, u_char *buf, size_t size)
{
    ssize_t n;

    do {
        n = sws_unix_recv_result(c, recv(c->fd, buf, size, 0), size);
    } while (n == SWS_DECLINED);
    return n;
}

/* The descriptors of one SCM_RIGHTS message onto c's list. */
static void
sws_unix_keep_fds(sws_connection_t *c, const struct cmsghdr *h)
{
    const u_char *data = CMSG_DATA(h);
    size_t        i, n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int           fd;

    for (i = 0; i < n; i++) {
        memcpy(&fd, data + i * sizeof(int), sizeof(int));
        if (c->npassed < SWS_PASSED_FDS) {
            c->passed_fd[c->npassed++] = fd;
            continue;
        }
        sws_log_error(SWS_LOG_WARN, c->log, 0, "%.*s passed more descriptors than are taken: "
                      "closed", (int) c->addr_text.len, c->addr_text.data);
        close(fd);
    }
}

ssize_t
sws_unix_recv_fds(sws_connection_t *c, u_char *buf, size_t size)
{
    union {
        struct cmsghdr  h;
        char            space[CMSG_SPACE(SWS_PASSED_FDS * sizeof(int))];
    }                   control;
    struct msghdr       msg;
    struct iovec        iov;
    struct cmsghdr     *h;
    ssize_t             n;

    do {
        iov.iov_base = buf;
        iov.iov_len = size;
        sws_memzero(&msg, sizeof(msg));
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.space;
        msg.msg_controllen = sizeof(control.space);
        n = recvmsg(c->fd, &msg, MSG_CMSG_CLOEXEC);
        if (n > 0) {
            for (h = CMSG_FIRSTHDR(&msg); h != NULL; h = CMSG_NXTHDR(&msg, h)) {
                if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
                    sws_unix_keep_fds(c, h);
                }
            }
            if (msg.msg_flags & MSG_CTRUNC) {
                sws_log_error(SWS_LOG_WARN, c->log, 0, "%.*s passed more descriptors at "
                              "once than are taken: closed by the kernel",
                              (int) c->addr_text.len, c->addr_text.data);
            }
        }
        n = sws_unix_recv_result(c, n, size);
    } while (n == SWS_DECLINED);
    return n;
}

int
sws_connection_take_fd(sws_connection_t *c)
{
    int fd;

    if (c->npassed == 0) {
        return -1;
    }
    fd = c->passed_fd[0];
    c->npassed--;
    memmove(&c->passed_fd[0], &c->passed_fd[1], c->npassed * sizeof(int));
    return fd;
}

void
sws_connection_close_fds(sws_connection_t *c)
{
    while (c->npassed) {
        (void) close(c->passed_fd[--c->npassed]);
    }
}

/* sendfile() hands the socket a file through a pipe of 16 pages: 64 KiB
 * from a page boundary, less from inside a page. */
#define SWS_SENDFILE_PAGE   4096
#define SWS_SENDFILE_CHUNK  (16 * SWS_SENDFILE_PAGE)

/*
 * Whether head bytes are held back (MSG_MORE) for the file data that b's
 * sendfile() sends after them. Held back, they leave with sendfile()'s
 * first chunk. When head and chunk fill less than a segment (on loopback
 * 65,483 bytes: a cache entry's body starts inside a page, after its
 * header), nothing leaves until the second chunk is queued, and then two
 * segments leave back to back: TCP's pacing (BBR without fq) sends the
 * second from an hrtimer, one more softirq per response and about half as
 * much CPU again for a 100 KiB response
 * (docs/benchmarks/2026-12-05-cache-100k-syscalls.md). So the head waits
 * only when head and first chunk make 64 KiB (more than any segment takes:
 * the first segment is full and leaves at once) or the data are one chunk;
 * else it goes alone, as nginx sends it.
 */
static int
sws_send_head_with_file(sws_connection_t *c, off_t head, const sws_buf_t *b)
{
    off_t  chunk = SWS_SENDFILE_CHUNK - b->file_pos % SWS_SENDFILE_PAGE;

    return !c->sendfile || b->file_last - b->file_pos <= chunk
           || head + chunk >= SWS_SENDFILE_CHUNK;
}

/* A shared scratch buffer for sending file data without sendfile. */
static u_char sws_file_scratch[65536];

static ssize_t
sws_send_file_buf(sws_connection_t *c, sws_buf_t *b, off_t limit)
{
    off_t    size = b->file_last - b->file_pos;
    ssize_t  n;

    if (size > limit) {
        size = limit;
    }
    if (c->sendfile) {
        off_t offset = b->file_pos;
        n = sendfile(c->fd, b->fd, &offset, (size_t) size);
        return n;
    }
    if (size > (off_t) sizeof(sws_file_scratch)) {
        size = sizeof(sws_file_scratch);
    }
    n = pread(b->fd, sws_file_scratch, (size_t) size, b->file_pos);
    if (n <= 0) {
        if (n == 0) {
            sws_log_error(SWS_LOG_CRIT, c->log, 0, "file was truncated while sending");
            errno = EIO;
        }
        return -1;
    }
    return send(c->fd, sws_file_scratch, (size_t) n, MSG_NOSIGNAL);
}

sws_chain_t *
sws_unix_send_chain(sws_connection_t *c, sws_chain_t *in, off_t limit)
{
    struct iovec   iov[SWS_IOVS];
    struct msghdr  msg;
    sws_chain_t   *cl;
    sws_buf_t     *b;
    sws_uint_t     niov;
    off_t          total, size, sent_total = 0;
    ssize_t        n;
    int            err;

    if (limit == 0 || limit > SWS_SEND_MAX) {
        limit = SWS_SEND_MAX;
    }

    while (in && sent_total < limit) {
        /* Gather memory buffers up to the first file buffer. */
        niov = 0;
        total = 0;
        for (cl = in; cl && niov < SWS_IOVS && sent_total + total < limit; cl = cl->next) {
            b = cl->buf;
            if (sws_buf_special(b)) {
                continue;
            }
            if (!sws_buf_in_memory(b)) {
                break;
            }
            size = b->last - b->pos;
            if (size == 0) {
                continue;
            }
            if (sent_total + total + size > limit) {
                size = limit - sent_total - total;
            }
            iov[niov].iov_base = b->pos;
            iov[niov].iov_len = (size_t) size;
            niov++;
            total += size;
        }

        if (niov) {
            /* A head followed by file data: tell TCP more is coming so the
             * head and the first file bytes share segments (when they fill
             * one: sws_send_head_with_file). */
            int flags = MSG_NOSIGNAL;
            if (cl && !sws_buf_special(cl->buf)
                && (!cl->buf->in_file || sws_send_head_with_file(c, total, cl->buf)))
            {
                flags |= MSG_MORE;
            }
            if (niov == 1) {
                /* The usual small response: send() does less in the kernel
                 * than sendmsg() (no msghdr, no iovec to import). */
                n = send(c->fd, iov[0].iov_base, iov[0].iov_len, flags);
            } else {
                sws_memzero(&msg, sizeof(msg));
                msg.msg_iov = iov;
                msg.msg_iovlen = niov;
                n = sendmsg(c->fd, &msg, flags);
            }
        } else if (cl && cl->buf->in_file) {
            n = sws_send_file_buf(c, cl->buf, limit - sent_total);
            total = n;
        } else {
            return NULL;    /* only special (flag) buffers left */
        }

        if (n == -1) {
            err = errno;
            if (err == EAGAIN || err == EINTR) {
                c->write->ready = 0;
                return in;
            }
            c->write->error = 1;
            sws_log_error((err == EPIPE || err == ECONNRESET) ? SWS_LOG_INFO : SWS_LOG_ERR,
                          c->log, err, "send() to %.*s failed", (int) c->addr_text.len,
                          c->addr_text.data);
            return SWS_CHAIN_ERROR;
        }

        c->sent += n;
        sent_total += n;
        in = sws_chain_update_sent(in, n);

        if (n < total) {
            c->write->ready = 0;
            return in;
        }
    }
    return in;
}
