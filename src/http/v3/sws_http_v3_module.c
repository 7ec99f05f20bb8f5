/*
 * The "http_v3" module: the QUIC listeners ("listen ... quic"), HTTP/3 in
 * the protocol registry, the http3* and quic_* directives (nginx's
 * names), and Alt-Svc on the TCP responses of servers with a QUIC
 * listener. Where no "listen ... quic" is configured, none of it is set
 * up: no socket, no protocol, no filter.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <gnutls/crypto.h>
#include "sws_http_v3.h"

static void *sws_http_v3_create_srv_conf(sws_conf_t *cf);
static char *sws_http_v3_merge_srv_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_http_v3_postconfiguration(sws_conf_t *cf);
static sws_int_t sws_http_v3_init_worker(sws_cycle_t *cycle);

#define HTTP_MS   (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF)
#define V3_SRV(name, args, set, field) \
    { name, HTTP_MS | (args), set, SWS_HTTP_SRV_CONF_OFFSET, \
      offsetof(sws_http_v3_srv_conf_t, field), NULL }

static const sws_command_t sws_http_v3_commands[] = {
    V3_SRV("http3", SWS_CONF_FLAG, sws_conf_set_flag_slot, enable),
    V3_SRV("http3_max_concurrent_streams", SWS_CONF_TAKE1, sws_conf_set_num_slot,
           max_concurrent_streams),
    V3_SRV("http3_stream_buffer_size", SWS_CONF_TAKE1, sws_conf_set_size_slot,
           stream_buffer_size),
    V3_SRV("quic_retry", SWS_CONF_FLAG, sws_conf_set_flag_slot, retry),
    V3_SRV("quic_gso", SWS_CONF_FLAG, sws_conf_set_flag_slot, gso),
    V3_SRV("quic_host_key", SWS_CONF_TAKE1, sws_conf_set_path_slot, host_key),
    V3_SRV("quic_max_handshakes", SWS_CONF_TAKE1, sws_conf_set_num_slot, max_handshakes),
    V3_SRV("quic_max_handshakes_per_address", SWS_CONF_TAKE1, sws_conf_set_num_slot,
           max_handshakes_addr),
    sws_null_command
};

sws_module_t sws_http_v3_module = {
    SWS_MODULE_ABI, .name = "http_v3", .commands = sws_http_v3_commands,
    .create_srv_conf = sws_http_v3_create_srv_conf,
    .merge_srv_conf = sws_http_v3_merge_srv_conf,
    .postconfiguration = sws_http_v3_postconfiguration,
    .init_worker = sws_http_v3_init_worker,
};

/* "http3 off" in the session's server (the address's default). */
static int
sws_http_v3_enabled(sws_http_session_t *s)
{
    sws_http_v3_srv_conf_t *h3scf = s->cscf->ctx->srv_conf[sws_http_v3_module.index];

    return h3scf->enable != 0;
}

static const sws_http_protocol_t sws_http_v3_protocol = {
    .name = "HTTP/3",
    .alpn = sws_string("h3"),
    .alpn_rank = 3,
    .listeners = SWS_HTTP_LISTENER_QUIC,
    .enabled = sws_http_v3_enabled,
    .start = sws_http_v3_start,
};

/* ---- Alt-Svc ---- */

static sws_http_header_filter_pt sws_http_v3_next_header_filter;

/* Does r's response get an Alt-Svc: over TCP, from a server with a QUIC
 * listener? */
static int
sws_http_v3_alt_svc_acts(sws_http_request_t *r)
{
    sws_http_v3_srv_conf_t *h3scf = r->srv_conf[sws_http_v3_module.index];

    return h3scf->alt_svc.len && r->http_version != SWS_HTTP_VERSION_30
           && !sws_http_is_subrequest(r);
}

static sws_int_t
sws_http_v3_alt_svc_filter(sws_http_request_t *r)
{
    static const sws_str_t  name = sws_string("Alt-Svc");
    sws_http_v3_srv_conf_t *h3scf;

    /* An Alt-Svc of add_header's (whose filter ran first) stays. */
    if (sws_http_v3_alt_svc_acts(r) && sws_http_header_out(r, "alt-svc", 7) == NULL) {
        h3scf = r->srv_conf[sws_http_v3_module.index];
        if (sws_http_header_out_add(r, &name, &h3scf->alt_svc) == NULL) {
            return SWS_ERROR;
        }
    }
    return sws_http_v3_next_header_filter(r);
}

/* The value for servers with a "listen ... quic": h3 on its port. */
static sws_int_t
sws_http_v3_alt_svc_values(sws_conf_t *cf, sws_http_core_main_conf_t *cmcf)
{
    sws_http_core_srv_conf_t **servers = cmcf->servers.elts;
    sws_http_v3_srv_conf_t    *h3scf;
    sws_http_listen_t         *lsn;
    sws_uint_t                 s, l, port;
    u_char                    *p;
    int                        any = 0;

    for (s = 0; s < cmcf->servers.nelts; s++) {
        lsn = servers[s]->listens.elts;
        for (l = 0; l < servers[s]->listens.nelts; l++) {
            if (!lsn[l].quic) {
                continue;
            }
            port = ntohs(lsn[l].sockaddr.ss_family == AF_INET6
                         ? ((struct sockaddr_in6 *) &lsn[l].sockaddr)->sin6_port
                         : ((struct sockaddr_in *) &lsn[l].sockaddr)->sin_port);
            h3scf = servers[s]->ctx->srv_conf[sws_http_v3_module.index];
            if (!h3scf->enable) {
                break;
            }
            p = sws_pnalloc(sws_conf_pool(cf), sizeof("h3=\":65535\"; ma=86400"));
            if (p == NULL) {
                return SWS_ERROR;
            }
            h3scf->alt_svc.data = p;
            h3scf->alt_svc.len = (size_t) snprintf((char *) p, sizeof("h3=\":65535\"; ma=86400"),
                                                   "h3=\":%u\"; ma=86400", (unsigned) port);
            any = 1;
            break;
        }
    }
    if (any) {
        sws_http_v3_next_header_filter = sws_http_insert_header_filter(
                                             sws_http_v3_alt_svc_filter);
        if (sws_http_filters_act_when(cf, sws_http_v3_alt_svc_acts) != SWS_OK) {
            return SWS_ERROR;
        }
    }
    return SWS_OK;
}

/* ---- the listeners ---- */

/* The stateless reset and Retry token secret: made of quic_host_key's
 * file (the same in every server of a cluster and across reloads), else
 * random at each configuration load (shared by the workers). */
static sws_int_t
sws_http_v3_host_key(sws_conf_t *cf, sws_http_v3_addr_t *qa)
{
    u_char   buf[4096];
    ssize_t  n;
    int      fd;

    if (qa->conf->host_key.len == 0) {
        return gnutls_rnd(GNUTLS_RND_KEY, qa->key, SWS_H3_KEY_LEN) == 0 ? SWS_OK : SWS_ERROR;
    }
    fd = open((char *) qa->conf->host_key.data, O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, errno, "cannot open quic_host_key \"%s\"",
                           (char *) qa->conf->host_key.data);
        return SWS_ERROR;
    }
    n = read(fd, buf, sizeof(buf));
    close(fd);
    if (n <= 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, n ? errno : 0,
                           "quic_host_key \"%s\" is empty or unreadable",
                           (char *) qa->conf->host_key.data);
        return SWS_ERROR;
    }
    /* SWS_H3_KEY_LEN is SHA-256's size */
    return gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, (size_t) n, qa->key) == 0 ? SWS_OK
                                                                             : SWS_ERROR;
}

static sws_int_t
sws_http_v3_postconfiguration(sws_conf_t *cf)
{
    sws_http_core_main_conf_t *cmcf = sws_conf_http_main_conf(cf, &sws_http_core_module);
    sws_http_addr_t          **addrs;
    sws_http_v3_addr_t        *qa;
    sws_listening_t           *ls;
    sws_uint_t                 i;
    int                        any = 0;

    if (cmcf == NULL) {
        return SWS_OK;
    }
    addrs = cmcf->addrs.elts;
    for (i = 0; i < cmcf->addrs.nelts; i++) {
        if (!addrs[i]->quic) {
            continue;
        }
        qa = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_http_v3_addr_t));
        if (qa == NULL) {
            return SWS_ERROR;
        }
        qa->addr = addrs[i];
        qa->conf = addrs[i]->default_server->ctx->srv_conf[sws_http_v3_module.index];
        if (sws_http_v3_host_key(cf, qa) != SWS_OK
            || sws_http_v3_tls_credentials(cf, qa) != SWS_OK)
        {
            return SWS_ERROR;
        }
        ls = sws_udp_listening_create(sws_conf_cycle(cf),
                                      (struct sockaddr *) &addrs[i]->lsn->sockaddr,
                                      addrs[i]->lsn->socklen, &addrs[i]->lsn->addr_text,
                                      sws_http_v3_read_handler);
        if (ls == NULL) {
            return SWS_ERROR;
        }
        ls->servers = qa;
        ls->rcvbuf = addrs[i]->options ? addrs[i]->options->rcvbuf : addrs[i]->lsn->rcvbuf;
        ls->sndbuf = addrs[i]->options ? addrs[i]->options->sndbuf : addrs[i]->lsn->sndbuf;
        addrs[i]->listening = ls;
        any = 1;
    }
    if (!any) {
        return SWS_OK;
    }
    if (sws_http_protocol_register(cf, &sws_http_v3_protocol) != SWS_OK) {
        return SWS_ERROR;
    }
    return sws_http_v3_alt_svc_values(cf, cmcf);
}

/* The worker's QUIC sockets end their connections when it stops. */
static sws_int_t
sws_http_v3_init_worker(sws_cycle_t *cycle)
{
    sws_listening_t **lss = cycle->listening.elts;
    sws_uint_t        i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        if (lss[i]->udp && lss[i]->udp_handler == sws_http_v3_read_handler
            && lss[i]->connection)
        {
            lss[i]->connection->shutdown = sws_http_v3_udp_shutdown;
            ((sws_http_v3_addr_t *) lss[i]->servers)->log = lss[i]->connection->log;
        }
    }
    return SWS_OK;
}

/* ---- configuration ---- */

static void *
sws_http_v3_create_srv_conf(sws_conf_t *cf)
{
    sws_http_v3_srv_conf_t *h3scf = sws_pcalloc(sws_conf_pool(cf), sizeof(*h3scf));

    if (h3scf) {
        h3scf->enable = SWS_UNSET;
        h3scf->max_concurrent_streams = SWS_UNSET_UINT;
        h3scf->stream_buffer_size = SWS_UNSET_SIZE;
        h3scf->retry = SWS_UNSET;
        h3scf->gso = SWS_UNSET;
        h3scf->max_handshakes = SWS_UNSET_UINT;
        h3scf->max_handshakes_addr = SWS_UNSET_UINT;
    }
    return h3scf;
}

static char *
sws_http_v3_merge_srv_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_v3_srv_conf_t *prev = parent, *conf = child;

    (void) cf;

    sws_conf_merge_value(conf->enable, prev->enable, 1);
    sws_conf_merge_uint_value(conf->max_concurrent_streams, prev->max_concurrent_streams, 128);
    sws_conf_merge_size_value(conf->stream_buffer_size, prev->stream_buffer_size, 64 * 1024);
    sws_conf_merge_value(conf->retry, prev->retry, 0);
    sws_conf_merge_value(conf->gso, prev->gso, 0);
    sws_conf_merge_uint_value(conf->max_handshakes, prev->max_handshakes, 1024);
    sws_conf_merge_uint_value(conf->max_handshakes_addr, prev->max_handshakes_addr, 32);
    if (conf->host_key.data == NULL) {
        conf->host_key = prev->host_key;
    }
    if (conf->max_concurrent_streams < 1 || conf->max_concurrent_streams > 65536) {
        return "http3_max_concurrent_streams must be between 1 and 65536";
    }
    if (conf->stream_buffer_size < 4096 || conf->stream_buffer_size > 64 * 1024 * 1024) {
        return "http3_stream_buffer_size must be between 4k and 64m";
    }
    if (conf->max_handshakes < 1 || conf->max_handshakes_addr < 1) {
        return "quic_max_handshakes and quic_max_handshakes_per_address must be 1 or more";
    }
    return SWS_CONF_OK;
}
