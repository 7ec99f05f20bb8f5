/*
 * Active health checks (health_check in an upstream block): every interval
 * each server gets one probe, "GET uri" with "Connection: close", from one
 * worker: the workers' timers race for the probe with a compare-and-swap on
 * the server's next due time in shared memory, so whichever is awake takes
 * it and no worker is special (one that dies is simply not a candidate).
 * A 2xx or 3xx status passes; an error, a timeout or another status fails.
 * A group that a location reaches over TLS (proxy_pass https://) is probed
 * over TLS with that location's settings (sws_ups_ssl_probe_conf): the
 * handshake, its verification included, is part of the probe and of its
 * timeout.
 * `fails` failures in a row make the server unhealthy (not chosen by any
 * worker), `passes` passes in a row make it healthy again.
 */
#include <stdlib.h>
#include "sws_http_upstream.h"

typedef struct {
    sws_http_upstream_peer_t  *peer;
    sws_connection_t          *c;
    sws_buf_t                  out;
    sws_buf_t                  in;
    unsigned                   connecting:1;
    unsigned                   handshaking:1;
    u_char                     data[1024];
} sws_ups_probe_t;

static void sws_ups_probe_handler(sws_event_t *ev);

static sws_log_t *
sws_ups_hc_log(void)
{
    sws_http_upstream_main_conf_t *umcf = sws_http_upstream_main();
    return umcf->log;
}

static void
sws_ups_probe_done(sws_ups_probe_t *pr, int ok, const char *why)
{
    sws_http_upstream_peer_t *peer = pr->peer;
    sws_http_upstream_srv_t  *us = peer->us;
    sws_ups_shared_t         *sh = peer->sh;
    uint32_t                  n;

    if (pr->c) {
        sws_ups_close_conn(pr->c);
    }
    sws_ups_atomic_add(&sh->hc_checks, 1);
    if (ok) {
        sws_ups_atomic_store(&sh->hc_fails, 0);
        n = sws_ups_atomic_add(&sh->hc_passes, 1);
        if (sws_ups_atomic_load(&sh->unhealthy) && n >= us->hc_passes) {
            sws_ups_atomic_store(&sh->unhealthy, 0);
            sws_log_error(SWS_LOG_NOTICE, sws_ups_hc_log(), 0, "upstream server %.*s of "
                          "\"%.*s\" passed its health checks: healthy",
                          (int) peer->name.len, peer->name.data, (int) us->name.len,
                          us->name.data);
        }
    } else {
        sws_ups_atomic_add(&sh->hc_failed, 1);
        sws_ups_atomic_store(&sh->hc_passes, 0);
        n = sws_ups_atomic_add(&sh->hc_fails, 1);
        if (!sws_ups_atomic_load(&sh->unhealthy) && n >= us->hc_fails) {
            sws_ups_atomic_store(&sh->unhealthy, 1);
            sws_log_error(SWS_LOG_WARN, sws_ups_hc_log(), 0, "upstream server %.*s of "
                          "\"%.*s\" failed its health check (%s): unhealthy",
                          (int) peer->name.len, peer->name.data, (int) us->name.len,
                          us->name.data, why);
        }
    }
    free(pr);
}

/* TLS to a group reached over https: SWS_OK (the handshake follows), or
 * SWS_ERROR (the probe failed and is over). */
static sws_int_t
sws_ups_probe_tls_start(sws_ups_probe_t *pr)
{
    sws_http_upstream_srv_t *us = pr->peer->us;

    if (sws_ups_ssl_client(pr->c, us->hc_ssl, &us->hc_ssl_name, us->hc_ssl_sni, pr->peer)
        != SWS_OK)
    {
        sws_ups_probe_done(pr, 0, "cannot start TLS");
        return SWS_ERROR;
    }
    pr->handshaking = 1;
    return SWS_OK;
}

/* SWS_OK: the handshake is done; SWS_AGAIN: it waits for the socket;
 * SWS_ERROR: it failed, and the probe with it (over). */
static sws_int_t
sws_ups_probe_tls_step(sws_ups_probe_t *pr)
{
    sws_connection_t *c = pr->c;
    sws_int_t         rc;
    long              v;

    rc = sws_ssl_handshake(c);
    if (rc == SWS_AGAIN) {
        /* sws_ssl.c set its own (server side) handlers: ours again. */
        c->read->handler = sws_ups_probe_handler;
        c->write->handler = sws_ups_probe_handler;
        return SWS_AGAIN;
    }
    c->read->handler = sws_ups_probe_handler;
    c->write->handler = sws_ups_probe_handler;
    if (rc != SWS_OK) {
        v = sws_ups_ssl_forget(c);
        sws_ups_probe_done(pr, 0, v != X509_V_OK ? X509_verify_cert_error_string(v)
                                                 : "TLS handshake failed");
        return SWS_ERROR;
    }
    pr->handshaking = 0;
    return SWS_OK;
}

static void
sws_ups_probe_start(sws_http_upstream_peer_t *peer)
{
    sws_http_upstream_srv_t *us = peer->us;
    sws_ups_probe_t         *pr;
    sws_int_t                rc;
    u_char                  *p;

    pr = sws_calloc(sizeof(sws_ups_probe_t), sws_ups_hc_log());
    if (pr == NULL) {
        return;
    }
    pr->peer = peer;
    p = sws_slprintf(pr->data, pr->data + sizeof(pr->data) / 2,
                     "GET %.*s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: scalws-health-check\r\n"
                     "Connection: close\r\n\r\n", (int) us->hc_uri.len, us->hc_uri.data,
                     (int) peer->host.len, peer->host.data);
    pr->out.start = pr->out.pos = pr->data;
    pr->out.last = pr->out.end = p;
    pr->out.temporary = 1;
    pr->out.fd = -1;
    pr->in.start = pr->in.pos = pr->in.last = pr->data + sizeof(pr->data) / 2;
    pr->in.end = pr->data + sizeof(pr->data);

    rc = sws_ups_connect(peer, sws_ups_hc_log(), &pr->c);
    if (rc == SWS_BUSY) {
        free(pr);                     /* no verdict: our shortage, not its */
        return;
    }
    if (rc == SWS_ERROR) {
        pr->c = NULL;
        sws_ups_probe_done(pr, 0, "connect failed");
        return;
    }
    pr->c->data = pr;
    pr->c->read->handler = sws_ups_probe_handler;
    pr->c->write->handler = sws_ups_probe_handler;
    /* Connected at once or not, the handler does the rest (TLS too). */
    pr->connecting = 1;
    sws_add_timer(pr->c->read, us->hc_timeout);
    if (rc == SWS_OK) {
        sws_ups_probe_handler(pr->c->write);
    }
}

static void
sws_ups_probe_handler(sws_event_t *ev)
{
    sws_connection_t *c = ev->data;
    sws_ups_probe_t  *pr = c->data;
    sws_chain_t       cl, *rest;
    sws_uint_t        status, version;
    ssize_t           n;
    u_char           *nl;

    if (ev->timedout) {
        if (c->ssl && pr->handshaking) {
            c->ssl->no_shutdown = 1;
        }
        sws_ups_probe_done(pr, 0, pr->handshaking ? "timed out in the TLS handshake"
                                                  : "timed out");
        return;
    }
    if (pr->connecting) {
        if (sws_ups_connect_test(c, pr->peer) != SWS_OK) {
            sws_ups_probe_done(pr, 0, "connect failed");
            return;
        }
        pr->connecting = 0;
        if (pr->peer->us->hc_ssl && sws_ups_probe_tls_start(pr) != SWS_OK) {
            return;
        }
    }
    if (pr->handshaking && sws_ups_probe_tls_step(pr) != SWS_OK) {
        return;
    }
    if (pr->out.pos < pr->out.last) {
        if (!c->write->ready) {
            return;
        }
        cl.buf = &pr->out;
        cl.next = NULL;
        rest = c->send_chain(c, &cl, 0);
        if (rest == SWS_CHAIN_ERROR) {
            sws_ups_probe_done(pr, 0, "send failed");
            return;
        }
        if (rest) {
            return;
        }
    }
    while (c->read->ready && pr->in.last < pr->in.end) {
        n = c->recv(c, pr->in.last, pr->in.end - pr->in.last);
        if (n == SWS_AGAIN) {
            return;
        }
        if (n == 0 || n == SWS_ERROR) {
            sws_ups_probe_done(pr, 0, "no status line");
            return;
        }
        pr->in.last += n;
        nl = memchr(pr->in.pos, '\n', pr->in.last - pr->in.pos);
        if (nl == NULL) {
            continue;
        }
        if (nl > pr->in.pos && nl[-1] == '\r') {
            nl--;
        }
        if (sws_http_parse_status_line(pr->in.pos, nl, &status, &version) != SWS_OK) {
            sws_ups_probe_done(pr, 0, "invalid status line");
        } else if (status < 200 || status >= 400) {
            sws_ups_probe_done(pr, 0, "bad status");
        } else {
            sws_ups_probe_done(pr, 1, NULL);
        }
        return;
    }
    if (pr->in.last == pr->in.end) {
        sws_ups_probe_done(pr, 0, "status line too long");
    }
}

static void
sws_ups_hc_timer(sws_event_t *ev)
{
    sws_http_upstream_srv_t  *us = ev->data;
    sws_http_upstream_peer_t *peer;
    sws_msec_t                now = sws_current_msec();
    int64_t                   due;
    sws_uint_t                i;

    ev->timedout = 0;
    if (sws_exiting) {
        return;
    }
    for (i = 0; i < us->npeers; i++) {
        peer = &us->peers[i];
        if (peer->down || peer->sh == NULL) {
            continue;
        }
        due = sws_ups_atomic_load(&peer->sh->hc_next);
        if (now < due) {
            continue;
        }
        /* Whoever moves the due time forward does the probe. */
        if (__atomic_compare_exchange_n(&peer->sh->hc_next, &due,
                                        (int64_t) (now + us->hc_interval), 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        {
            sws_ups_probe_start(peer);
        }
    }
    sws_add_timer(ev, sws_max(us->hc_interval / 4, 50));
}

sws_int_t
sws_ups_health_init_worker(sws_cycle_t *cycle, sws_http_upstream_srv_t *us)
{
    if (us->hc_interval == 0) {
        return SWS_OK;
    }
    us->hc_timer = sws_calloc(sizeof(sws_event_t), cycle->log);
    if (us->hc_timer == NULL) {
        return SWS_ERROR;
    }
    us->hc_timer->data = us;
    us->hc_timer->handler = sws_ups_hc_timer;
    /* The first round soon after start. */
    sws_add_timer(us->hc_timer, 10 + random() % 100);
    return SWS_OK;
}
