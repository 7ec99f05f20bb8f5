/*
 * Run-time DNS on c-ares, driven by the worker's event loop: each resolver
 * gets a c-ares channel in a worker when it is first used (never in the
 * master, nor when no resolver is configured). c-ares tells which of its
 * sockets want reading or writing (its socket state callback): each is a
 * connection of the loop, registered with the event method, and its events run
 * ares_process_fd(); one timer runs c-ares's retransmissions and timeouts.
 *
 * Questions for the same name in a worker share one lookup (A and, with
 * ipv6=on, AAAA); each asker waits with its own timeout (resolver_timeout)
 * and may cancel. Answers go to the cache shared by the workers
 * (sws_resolver_conf.c) and are delivered from a posted event, never from
 * inside c-ares's own calls.
 */
#include <poll.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <ares.h>
#include "sws_event.h"
#include "sws_resolver_internal.h"

#define SWS_RESOLVER_SOCKETS  (2 * SWS_RESOLVER_MAX_SERVERS + 4)

typedef struct sws_resolver_worker_s  sws_resolver_worker_t;
typedef struct sws_resolver_lookup_s  sws_resolver_lookup_t;

struct sws_resolver_worker_s {
    ares_channel             channel;
    sws_resolver_t          *res;
    sws_event_t              timer;        /* c-ares's next timeout */
    sws_connection_t        *socks[SWS_RESOLVER_SOCKETS];
    sws_queue_t              lookups;      /* in flight */
    sws_log_t               *log;
    sws_resolver_worker_t   *next;         /* every channel of the worker */
};

/* One question of a lookup (A or AAAA), c-ares's callback argument. */
typedef struct {
    sws_resolver_lookup_t   *lk;
    int                      family;
} sws_resolver_question_t;

struct sws_resolver_lookup_s {
    sws_queue_t              link;         /* w->lookups */
    sws_resolver_worker_t   *w;
    sws_queue_t              waiters;
    sws_event_t              done;         /* posted when both answers are in */
    sws_uint_t               pending;      /* questions not answered */
    sws_int_t                status4;      /* each question's status */
    sws_int_t                status6;
    sws_uint_t               naddrs;
    uint32_t                 ttl;
    sws_resolver_question_t  q4;
    sws_resolver_question_t  q6;
    sws_resolver_addr_t      addrs[SWS_RESOLVER_MAX_ADDRS];
    sws_str_t                name;         /* lower case, NUL-terminated, after this */
};

struct sws_resolver_query_s {
    sws_queue_t              link;         /* lk->waiters */
    sws_resolver_lookup_t   *lk;
    sws_event_t              timer;        /* resolver_timeout */
    sws_log_t               *log;
    sws_resolver_handler_pt  handler;
    void                    *data;
};

static sws_resolver_worker_t  *sws_resolver_workers;
static int                     sws_resolver_lib_ready;

static const char *const sws_resolver_errors[] = {
    "Format error", "Server failure", "Host not found", "Unimplemented", "Operation refused"
};

const char *
sws_resolver_strerror(sws_int_t status)
{
    if (status >= SWS_RESOLVE_FORMERR && status <= SWS_RESOLVE_REFUSED) {
        return sws_resolver_errors[status - 1];
    }
    if (status == SWS_RESOLVE_TIMEDOUT) {
        return "Operation timed out";
    }
    return "Unknown error";
}

/* ---- c-ares's sockets and timer in the event loop ---- */

static void
sws_resolver_arm(sws_resolver_worker_t *w)
{
    struct timeval  tv, *tvp;
    sws_msec_t      ms;

    tvp = ares_timeout(w->channel, NULL, &tv);
    if (tvp == NULL) {
        if (w->timer.timer_set) {
            sws_del_timer(&w->timer);
        }
        return;
    }
    ms = (sws_msec_t) tvp->tv_sec * 1000 + tvp->tv_usec / 1000;
    sws_add_timer(&w->timer, ms > 0 ? ms : 1);
}

static sws_int_t
sws_resolver_slot(sws_resolver_worker_t *w, int fd)
{
    sws_uint_t i;

    for (i = 0; i < SWS_RESOLVER_SOCKETS; i++) {
        if (w->socks[i] && w->socks[i]->fd == fd) {
            return (sws_int_t) i;
        }
    }
    return -1;
}

static void
sws_resolver_read_handler(sws_event_t *ev)
{
    sws_connection_t      *c = ev->data;
    sws_resolver_worker_t *w = c->data;
    int                    fd = c->fd, n;
    struct pollfd          pfd;

    /* Edge-triggered: c-ares reads UDP until EAGAIN, but TCP one read at a
     * time, so go on while the socket (still c-ares's) has data. */
    for (n = 0; n < 64; n++) {
        ares_process_fd(w->channel, fd, ARES_SOCKET_BAD);
        if (sws_resolver_slot(w, fd) < 0) {
            break;
        }
        pfd.fd = fd;
        pfd.events = POLLIN;
        pfd.revents = 0;
        if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLIN | POLLERR | POLLHUP))) {
            break;
        }
    }
    sws_resolver_arm(w);
}

static void
sws_resolver_write_handler(sws_event_t *ev)
{
    sws_connection_t      *c = ev->data;
    sws_resolver_worker_t *w = c->data;

    ares_process_fd(w->channel, ARES_SOCKET_BAD, c->fd);
    sws_resolver_arm(w);
}

static void
sws_resolver_timer_handler(sws_event_t *ev)
{
    sws_resolver_worker_t *w = ev->data;

    ares_process_fd(w->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
    sws_resolver_arm(w);
}

static void
sws_resolver_detach(sws_resolver_worker_t *w, sws_uint_t i)
{
    sws_connection_t *c = w->socks[i];

    w->socks[i] = NULL;
    sws_event_del_connection(c);     /* c-ares closes the socket itself */
    sws_del_timer(c->read);
    sws_del_timer(c->write);
    sws_delete_posted_event(c->read);
    sws_delete_posted_event(c->write);
    c->read->closed = 1;
    c->write->closed = 1;
    c->destroyed = 1;
    c->fd = -1;
    sws_free_connection(c);
}

/* c-ares: socket fd wants reading and/or writing, or neither (it is about
 * to be closed). */
static void
sws_resolver_sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
    sws_resolver_worker_t *w = data;
    sws_connection_t      *c;
    sws_int_t              i = sws_resolver_slot(w, fd);
    sws_uint_t             k;

    if (!readable && !writable) {
        if (i >= 0) {
            sws_resolver_detach(w, (sws_uint_t) i);
        }
        return;
    }
    if (i >= 0) {
        /* Edge-triggered: a socket writable all along gives no new event
         * when c-ares has something to send on it (TCP): look now. */
        if (writable) {
            sws_post_event(w->socks[i]->write);
        }
        return;
    }
    for (k = 0; k < SWS_RESOLVER_SOCKETS && w->socks[k]; k++) { /* a free slot */ }
    if (k == SWS_RESOLVER_SOCKETS) {
        sws_log_error(SWS_LOG_ALERT, w->log, 0, "resolver: too many sockets");
        return;                          /* its queries time out */
    }
    c = sws_get_connection(fd, w->log);
    if (c == NULL) {
        return;
    }
    c->data = w;
    c->read->handler = sws_resolver_read_handler;
    c->write->handler = sws_resolver_write_handler;
    if (sws_event_add_connection(c) != SWS_OK) {
        sws_free_connection(c);
        return;
    }
    w->socks[k] = c;
}

static sws_resolver_worker_t *
sws_resolver_worker(sws_resolver_t *res, sws_log_t *log)
{
    sws_resolver_worker_t *w;
    struct ares_options    o;
    int                    rc, mask;
    static char            lookups[] = "b";

    if (res->w) {
        return res->w;
    }
    if (!sws_resolver_lib_ready) {
        rc = ares_library_init(ARES_LIB_INIT_ALL);
        if (rc != ARES_SUCCESS) {
            sws_log_error(SWS_LOG_ALERT, log, 0, "ares_library_init() failed: %s",
                          ares_strerror(rc));
            return NULL;
        }
        sws_resolver_lib_ready = 1;
    }
    w = calloc(1, sizeof(sws_resolver_worker_t));
    if (w == NULL) {
        return NULL;
    }
    w->res = res;
    w->log = res->log;                 /* the cycle's: outlives any request */
    w->timer.data = w;
    w->timer.handler = sws_resolver_timer_handler;
    sws_queue_init(&w->lookups);

    memset(&o, 0, sizeof(o));
    /* Answers as they come (SERVFAIL is an answer: nginx logs it), no
     * search list, no hosts file, no aliases from the environment. */
    o.flags = ARES_FLAG_NOCHECKRESP | ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
    o.sock_state_cb = sws_resolver_sock_state;
    o.sock_state_cb_data = w;
    o.timeout = 2000;                   /* then 4, 8, 16 s: past any resolver_timeout */
    o.tries = 4;
    o.lookups = lookups;
    o.ndomains = 0;
    o.ndots = 1;
    mask = ARES_OPT_FLAGS | ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES
           | ARES_OPT_LOOKUPS | ARES_OPT_DOMAINS | ARES_OPT_NDOTS;
    rc = ares_init_options(&w->channel, &o, mask);
    if (rc == ARES_SUCCESS) {
        rc = ares_set_servers_ports_csv(w->channel, (const char *) res->servers.data);
        if (rc != ARES_SUCCESS) {
            ares_destroy(w->channel);
        }
    }
    if (rc != ARES_SUCCESS) {
        sws_log_error(SWS_LOG_ALERT, log, 0, "resolver \"%s\": c-ares: %s",
                      (const char *) res->servers.data, ares_strerror(rc));
        free(w);
        return NULL;
    }
    w->next = sws_resolver_workers;
    sws_resolver_workers = w;
    res->w = w;
    return w;
}

/* ---- lookups and their waiters ---- */

static void
sws_resolver_result_of(sws_resolver_lookup_t *lk, sws_resolver_result_t *r)
{
    memset(r, 0, sizeof(*r));
    r->name = &lk->name;
    r->naddrs = lk->naddrs;
    r->addrs = lk->addrs;
    r->ttl = lk->ttl == UINT32_MAX ? 0 : lk->ttl;
    if (lk->naddrs) {
        r->status = SWS_RESOLVE_OK;
    } else if (lk->q4.family) {
        r->status = lk->status4;        /* the A question's reason first */
    } else {
        r->status = lk->status6;
    }
}

static void
sws_resolver_lookup_free(sws_resolver_lookup_t *lk)
{
    sws_queue_remove(&lk->link);
    sws_delete_posted_event(&lk->done);
    free(lk);
}

/* Both answers are in: the cache, then every waiter. */
static void
sws_resolver_done_handler(sws_event_t *ev)
{
    sws_resolver_lookup_t *lk = ev->data;
    sws_resolver_query_t  *q;
    sws_resolver_result_t  r;
    sws_queue_t           *qq;

    sws_resolver_result_of(lk, &r);
    sws_resolver_cache_put(lk->w->res, &lk->name, &r);
    /* Out of the lookups before anyone is told: a handler that asks for
     * the name again (an error_page to another proxy) starts afresh. */
    sws_queue_remove(&lk->link);
    sws_queue_init(&lk->link);
    while (!sws_queue_empty(&lk->waiters)) {
        qq = sws_queue_head(&lk->waiters);
        q = sws_queue_data(qq, sws_resolver_query_t, link);
        sws_queue_remove(qq);
        if (q->timer.timer_set) {
            sws_del_timer(&q->timer);
        }
        q->handler(q->data, &r);
        free(q);
    }
    sws_resolver_lookup_free(lk);
}

/* A question asked or answered, in the resolver's status zone if any. */
static void
sws_resolver_count(sws_resolver_t *res, sws_uint_t what)
{
    if (res->status) {
        sws_keyed_zone_counters(res->status)[what]++;
    }
}

static void
sws_resolver_answer(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
    sws_resolver_question_t *qn = arg;
    sws_resolver_lookup_t   *lk = qn->lk;
    sws_int_t                st;

    (void) timeouts;
    if (status == ARES_EDESTRUCTION) {
        if (--lk->pending == 0) {
            sws_resolver_lookup_free(lk);    /* the worker exits: no one waits */
        }
        return;
    }
    if (status == ARES_SUCCESS && abuf) {
        st = sws_resolver_parse_reply(abuf, (size_t) alen, qn->family, lk->addrs,
                                      SWS_RESOLVER_MAX_ADDRS, &lk->naddrs, &lk->ttl);
    } else {
        st = sws_resolver_status(status);
    }
    if (st == SWS_RESOLVE_FORMERR) {
        sws_log_error(SWS_LOG_ERR, lk->w->log, 0, "resolver: invalid DNS response for \"%s\"",
                      (const char *) lk->name.data);
    }
    sws_resolver_count(lk->w->res, st == SWS_RESOLVE_OK ? SWS_RESOLVER_ANSWERS
                                   : st == SWS_RESOLVE_NXDOMAIN ? SWS_RESOLVER_NXDOMAIN
                                   : st == SWS_RESOLVE_SERVFAIL ? SWS_RESOLVER_SERVFAIL
                                   : st == SWS_RESOLVE_TIMEDOUT ? SWS_RESOLVER_TIMEOUTS
                                   : SWS_RESOLVER_ERRORS);
    if (qn->family == AF_INET6) {
        lk->status6 = st;
    } else {
        lk->status4 = st;
    }
    if (--lk->pending == 0) {
        sws_post_event(&lk->done);
    }
}

static void
sws_resolver_timeout_handler(sws_event_t *ev)
{
    sws_resolver_query_t  *q = ev->data;
    sws_resolver_result_t  r;

    sws_queue_remove(&q->link);
    memset(&r, 0, sizeof(r));
    r.status = SWS_RESOLVE_TIMEDOUT;
    r.name = &q->lk->name;
    q->handler(q->data, &r);
    free(q);
}

void
sws_resolver_cancel(sws_resolver_query_t *q)
{
    if (q == NULL) {
        return;
    }
    sws_queue_remove(&q->link);
    if (q->timer.timer_set) {
        sws_del_timer(&q->timer);
    }
    free(q);
}

/* An IP address needs no question. */
static int
sws_resolver_literal(const sws_str_t *name, sws_resolver_addr_t *a)
{
    char  buf[64];

    if (name->len == 0 || name->len >= sizeof(buf)) {
        return 0;
    }
    memcpy(buf, name->data, name->len);
    buf[name->len] = '\0';
    memset(a, 0, sizeof(*a));
    if (inet_pton(AF_INET, buf, &((struct sockaddr_in *) &a->sockaddr)->sin_addr) == 1) {
        a->sockaddr.ss_family = AF_INET;
        a->socklen = sizeof(struct sockaddr_in);
        return 1;
    }
    if (inet_pton(AF_INET6, buf, &((struct sockaddr_in6 *) &a->sockaddr)->sin6_addr) == 1) {
        a->sockaddr.ss_family = AF_INET6;
        a->socklen = sizeof(struct sockaddr_in6);
        return 1;
    }
    return 0;
}

static sws_resolver_lookup_t *
sws_resolver_lookup(sws_resolver_worker_t *w, const sws_str_t *name)
{
    sws_resolver_lookup_t *lk;
    sws_queue_t           *qq;

    for (qq = sws_queue_head(&w->lookups); qq != sws_queue_sentinel(&w->lookups);
         qq = sws_queue_next(qq))
    {
        lk = sws_queue_data(qq, sws_resolver_lookup_t, link);
        if (sws_str_eq(&lk->name, name)) {
            return lk;
        }
    }
    lk = calloc(1, sizeof(sws_resolver_lookup_t) + name->len + 1);
    if (lk == NULL) {
        return NULL;
    }
    lk->w = w;
    lk->name.data = (u_char *) (lk + 1);
    lk->name.len = name->len;
    memcpy(lk->name.data, name->data, name->len);
    lk->ttl = UINT32_MAX;
    lk->status4 = lk->status6 = SWS_RESOLVE_NXDOMAIN;
    lk->done.data = lk;
    lk->done.handler = sws_resolver_done_handler;
    sws_queue_init(&lk->waiters);
    sws_queue_insert_tail(&w->lookups, &lk->link);
    /* Both questions are counted before either is asked: c-ares may
     * answer one at once (no server), and done is posted, not run. */
    lk->q4.lk = lk->q6.lk = lk;
    lk->pending = (w->res->ipv4 ? 1 : 0) + (w->res->ipv6 ? 1 : 0);
    if (w->res->ipv4) {
        sws_resolver_count(w->res, SWS_RESOLVER_QUERIES);
        lk->q4.family = AF_INET;
        ares_query(w->channel, (const char *) lk->name.data, ns_c_in, ns_t_a,
                   sws_resolver_answer, &lk->q4);
    }
    if (w->res->ipv6) {
        sws_resolver_count(w->res, SWS_RESOLVER_QUERIES);
        lk->q6.family = AF_INET6;
        ares_query(w->channel, (const char *) lk->name.data, ns_c_in, ns_t_aaaa,
                   sws_resolver_answer, &lk->q6);
    }
    sws_resolver_arm(w);
    return lk;
}

sws_int_t
sws_resolver_resolve(sws_resolver_t *res, const sws_str_t *name, sws_msec_t timeout,
    sws_log_t *log, sws_resolver_handler_pt handler, void *data, sws_resolver_query_t **q)
{
    sws_resolver_addr_t    addrs[SWS_RESOLVER_MAX_ADDRS];
    sws_resolver_result_t  r;
    sws_resolver_worker_t *w;
    sws_resolver_lookup_t *lk;
    sws_resolver_query_t  *wq;
    u_char                 low[256];
    sws_str_t              lname;
    size_t                 i, len = name->len;

    *q = NULL;
    memset(&r, 0, sizeof(r));
    r.name = name;
    if (len && name->data[len - 1] == '.') {
        len--;                           /* "example.com." is "example.com" */
    }
    if (sws_resolver_literal(name, &addrs[0])) {
        r.naddrs = 1;
        r.addrs = addrs;
        handler(data, &r);
        return SWS_OK;
    }
    if (len == 0 || len > 253) {
        r.status = SWS_RESOLVE_FORMERR;
        handler(data, &r);
        return SWS_OK;
    }
    for (i = 0; i < len; i++) {
        low[i] = sws_tolower(name->data[i]);
    }
    low[len] = '\0';
    lname.data = low;
    lname.len = len;

    sws_resolver_cache_get(res, &lname, &r, addrs);
    if (r.status >= 0) {
        r.name = name;
        handler(data, &r);
        return SWS_OK;
    }

    w = sws_resolver_worker(res, log);
    if (w == NULL) {
        memset(&r, 0, sizeof(r));
        r.name = name;
        r.status = SWS_RESOLVE_SERVFAIL;
        handler(data, &r);
        return SWS_OK;
    }
    wq = calloc(1, sizeof(sws_resolver_query_t));
    if (wq == NULL) {
        return SWS_ERROR;
    }
    lk = sws_resolver_lookup(w, &lname);
    if (lk == NULL) {
        free(wq);
        return SWS_ERROR;
    }
    wq->lk = lk;
    wq->log = log;
    wq->handler = handler;
    wq->data = data;
    wq->timer.data = wq;
    wq->timer.handler = sws_resolver_timeout_handler;
    sws_queue_insert_tail(&lk->waiters, &wq->link);
    sws_add_timer(&wq->timer, timeout > 0 ? timeout : 1);
    *q = wq;
    return SWS_AGAIN;
}

/* The worker exits: every channel goes, with what it was asking. */
void
sws_resolver_exit_worker(void)
{
    sws_resolver_worker_t *w, *next;
    sws_resolver_lookup_t *lk;
    sws_resolver_query_t  *q;
    sws_queue_t           *qq;

    for (w = sws_resolver_workers; w; w = next) {
        next = w->next;
        /* the waiters' owners (requests) are going too: nothing is called */
        for (qq = sws_queue_head(&w->lookups); qq != sws_queue_sentinel(&w->lookups);
             qq = sws_queue_next(qq))
        {
            lk = sws_queue_data(qq, sws_resolver_lookup_t, link);
            while (!sws_queue_empty(&lk->waiters)) {
                q = sws_queue_data(sws_queue_head(&lk->waiters), sws_resolver_query_t, link);
                sws_resolver_cancel(q);
            }
        }
        ares_destroy(w->channel);        /* frees the lookups (EDESTRUCTION) */
        while (!sws_queue_empty(&w->lookups)) {   /* answered, not delivered */
            sws_resolver_lookup_free(sws_queue_data(sws_queue_head(&w->lookups),
                                                    sws_resolver_lookup_t, link));
        }
        if (w->timer.timer_set) {
            sws_del_timer(&w->timer);
        }
        w->res->w = NULL;
        free(w);
    }
    sws_resolver_workers = NULL;
    if (sws_resolver_lib_ready) {
        ares_library_cleanup();
        sws_resolver_lib_ready = 0;
    }
}
