/*
 * Active health checks (health_check in an upstream block): every interval
 * each server gets one probe from one worker: the workers' timers race for
 * the probe with a compare-and-swap on the server's next due time in shared
 * memory, so whichever is awake takes it and no worker is special (one that
 * dies is simply not a candidate). What a probe says and what passes is the
 * protocol's (sws_http_upstream_probe_t, given by the module whose location
 * names the group first); by default HTTP: "GET uri" with "Connection:
 * close", passed by a 2xx or 3xx status. An error, a timeout or the
 * protocol's verdict fails it.
 * A group that a location reaches over TLS (proxy_pass https://) is probed
 * over TLS with that location's settings (sws_ups_ssl_probe_conf): the
 * handshake, its verification included, is part of the probe and of its
 * timeout.
 * `fails` failures in a row make the server unhealthy (not chosen by any
 * worker), `passes` passes in a row make it healthy again.
 */
#include <stdlib.h>
#include "sws_http_upstream.h"

#define SWS_UPS_PROBE_BUF  2048     /* each way */

typedef struct {
    sws_http_upstream_peer_t  *peer;
    sws_connection_t          *c;
    sws_buf_t                  out;
    sws_buf_t                  in;
    unsigned                   connecting:1;
    unsigned                   handshaking:1;
    u_char                     data[2 * SWS_UPS_PROBE_BUF];
} sws_ups_probe_t;

static void sws_ups_probe_handler(sws_event_t *ev);

/* ---- HTTP's probe (the default) ---- */

static sws_int_t
sws_ups_http_probe_create(void *data, const sws_str_t *uri, const sws_str_t *host,
    sws_buf_t *out)
{
    static const char  fmt[] = "GET %.*s HTTP/1.1\r\nHost: %.*s\r\n"
                               "User-Agent: scalws-health-check\r\nConnection: close\r\n\r\n";

    (void) data;
    if (uri->len + host->len + sizeof(fmt) > (size_t) (out->end - out->last)) {
        return SWS_ERROR;
    }
    out->last = sws_slprintf(out->last, out->end, fmt, (int) uri->len, uri->data,
                             (int) host->len, host->data);
    return SWS_OK;
}

/* Only the status line matters. */
static sws_int_t
sws_ups_http_probe_judge(void *data, sws_buf_t *in, int eof, const char **why)
{
    sws_uint_t  status, version;
    u_char     *line = in->pos, *nl;

    (void) data;
    nl = memchr(line, '\n', (size_t) (in->last - line));
    if (nl == NULL) {
        *why = "no status line";
        return eof ? SWS_DECLINED : SWS_AGAIN;
    }
    in->pos = nl + 1;
    if (nl > line && nl[-1] == '\r') {
        nl--;
    }
    if (sws_http_parse_status_line(line, nl, &status, &version) != SWS_OK) {
        *why = "invalid status line";
        return SWS_DECLINED;
    }
    if (status < 200 || status >= 400) {
        *why = "bad status";
        return SWS_DECLINED;
    }
    return SWS_OK;
}

static const sws_http_upstream_probe_t sws_ups_http_probe = {
    "http", sws_ups_http_probe_create, sws_ups_http_probe_judge, { NULL }
};

void
sws_http_upstream_conf_set_probe(sws_http_upstream_conf_t *conf,
    const sws_http_upstream_probe_t *probe, void *data)
{
    conf->probe = probe;
    conf->probe_data = data;
}

void
sws_ups_health_probe_conf(sws_conf_t *cf, sws_http_upstream_conf_t *conf)
{
    sws_http_upstream_srv_t         *us = conf->upstream;
    const sws_http_upstream_probe_t *probe;

    if (us == NULL) {
        return;
    }
    probe = conf->probe ? conf->probe : &sws_ups_http_probe;
    if (!us->hc_probe_set) {
        us->hc_probe = probe;
        us->hc_probe_data = conf->probe_data;
        us->hc_probe_set = 1;
        return;
    }
    if (us->hc_probe != probe && us->hc_interval && !us->hc_probe_warned) {
        us->hc_probe_warned = 1;
        sws_conf_log_error(SWS_LOG_WARN, cf, 0, "upstream \"%.*s\" is reached by "
                           "protocols with different health probes: its probes are %s",
                           (int) us->name.len, us->name.data, us->hc_probe->name);
    }
}

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
    sws_http_upstream_srv_t         *us = peer->us;
    const sws_http_upstream_probe_t *probe;
    sws_ups_probe_t                 *pr;
    sws_int_t                        rc;

    pr = sws_calloc(sizeof(sws_ups_probe_t), sws_ups_hc_log());
    if (pr == NULL) {
        return;
    }
    pr->peer = peer;
    probe = us->hc_probe ? us->hc_probe : &sws_ups_http_probe;
    pr->out.start = pr->out.pos = pr->out.last = pr->data;
    pr->out.end = pr->data + SWS_UPS_PROBE_BUF;
    pr->out.temporary = 1;
    pr->out.fd = -1;
    pr->in.start = pr->in.pos = pr->in.last = pr->data + SWS_UPS_PROBE_BUF;
    pr->in.end = pr->data + sizeof(pr->data);
    if (probe->create(us->hc_probe_data, &us->hc_uri, &peer->host, &pr->out) != SWS_OK) {
        sws_ups_probe_done(pr, 0, "no probe request");
        return;
    }

    rc = sws_ups_connect(peer, NULL, sws_ups_hc_log(), &pr->c);
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
    sws_connection_t                *c = ev->data;
    sws_ups_probe_t                 *pr = c->data;
    const sws_http_upstream_probe_t *probe;
    const char                      *why = "no verdict";
    sws_chain_t                      cl, *rest;
    sws_int_t                        rc;
    ssize_t                          n;

    probe = pr->peer->us->hc_probe ? pr->peer->us->hc_probe : &sws_ups_http_probe;

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
    while (c->read->ready) {
        if (pr->in.last == pr->in.end) {
            if (pr->in.pos == pr->in.start) {
                sws_ups_probe_done(pr, 0, "response too long");
                return;
            }
            /* What was judged goes; the rest moves to the start. */
            memmove(pr->in.start, pr->in.pos, (size_t) (pr->in.last - pr->in.pos));
            pr->in.last -= pr->in.pos - pr->in.start;
            pr->in.pos = pr->in.start;
        }
        n = c->recv(c, pr->in.last, pr->in.end - pr->in.last);
        if (n == SWS_AGAIN) {
            return;
        }
        if (n == SWS_ERROR) {
            n = 0;                   /* a reset: the end of what comes */
        }
        pr->in.last += n;
        rc = probe->judge(pr->peer->us->hc_probe_data, &pr->in, n == 0, &why);
        if (rc == SWS_AGAIN && n == 0) {
            rc = SWS_DECLINED;       /* closed without a verdict */
        }
        if (rc != SWS_AGAIN) {
            sws_ups_probe_done(pr, rc == SWS_OK, why);
            return;
        }
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
    if (us->list) {
        sws_ups_dyn_sync(us);          /* added servers are probed too */
    }
    for (i = 0; i < us->nused; i++) {       /* with those added at run time */
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
