/* The "http_v2" module: http2 and the http2_* directives (nginx names). */
#include "sws_http_v2.h"

static void *sws_http_v2_create_main_conf(sws_conf_t *cf);
static char *sws_http_v2_init_main_conf(sws_conf_t *cf, void *conf);
static void *sws_http_v2_create_srv_conf(sws_conf_t *cf);
static char *sws_http_v2_merge_srv_conf(sws_conf_t *cf, void *parent, void *child);
static void *sws_http_v2_create_loc_conf(sws_conf_t *cf);
static sws_int_t sws_http_v2_postconfiguration(sws_conf_t *cf);
static char *sws_http_v2_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static char *sws_http_v2_obsolete(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

#define HTTP_ALL  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)
#define HTTP_MS   (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF)
#define V2_SRV(name, args, set, field) \
    { name, HTTP_MS | (args), set, SWS_HTTP_SRV_CONF_OFFSET, \
      offsetof(sws_http_v2_srv_conf_t, field), NULL }

static const sws_command_t sws_http_v2_commands[] = {
    V2_SRV("http2", SWS_CONF_FLAG, sws_conf_set_flag_slot, enable),
    V2_SRV("http2_max_concurrent_streams", SWS_CONF_TAKE1, sws_conf_set_num_slot,
           concurrent_streams),
    V2_SRV("http2_body_preread_size", SWS_CONF_TAKE1, sws_conf_set_size_slot, preread_size),
    V2_SRV("http2_idle_timeout", SWS_CONF_TAKE1, sws_conf_set_msec_slot, idle_timeout),
    V2_SRV("http2_max_field_size", SWS_CONF_TAKE1, sws_conf_set_size_slot, max_field_size),
    V2_SRV("http2_max_header_size", SWS_CONF_TAKE1, sws_conf_set_size_slot, max_header_size),
    V2_SRV("http2_max_requests", SWS_CONF_TAKE1, sws_conf_set_num_slot, max_requests),
    { "http2_recv_buffer_size", SWS_HTTP_MAIN_CONF | SWS_CONF_TAKE1, sws_conf_set_size_slot,
      SWS_HTTP_MAIN_CONF_OFFSET, offsetof(sws_http_v2_main_conf_t, recv_buffer_size), NULL },
    { "http2_chunk_size", HTTP_ALL | SWS_CONF_TAKE1, sws_conf_set_size_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_http_v2_loc_conf_t, chunk_size), NULL },
    /* nginx 1.22 takes these; server push is gone from browsers (and from
     * nginx 1.25.1), the others have no effect there either */
    { "http2_push", HTTP_ALL | SWS_CONF_TAKE1, sws_http_v2_obsolete,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "http2_push_preload", HTTP_ALL | SWS_CONF_FLAG, sws_http_v2_obsolete,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "http2_recv_timeout", HTTP_MS | SWS_CONF_TAKE1, sws_http_v2_obsolete,
      SWS_HTTP_SRV_CONF_OFFSET, 0, NULL },
    { "http2_streams_index_size", HTTP_MS | SWS_CONF_TAKE1, sws_http_v2_obsolete,
      SWS_HTTP_SRV_CONF_OFFSET, 0, NULL },
    sws_null_command
};

sws_module_t sws_http_v2_module = {
    SWS_MODULE_ABI, .name = "http_v2", .commands = sws_http_v2_commands,
    .create_main_conf = sws_http_v2_create_main_conf,
    .init_main_conf = sws_http_v2_init_main_conf,
    .create_srv_conf = sws_http_v2_create_srv_conf,
    .merge_srv_conf = sws_http_v2_merge_srv_conf,
    .create_loc_conf = sws_http_v2_create_loc_conf,
    .merge_loc_conf = sws_http_v2_merge_loc_conf,
    .postconfiguration = sws_http_v2_postconfiguration,
};

/* A directive nginx 1.22 takes that does nothing here: a warning, so
 * that a configuration brought from nginx starts. */
static char *
sws_http_v2_obsolete(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) conf;
    sws_conf_log_error(SWS_LOG_WARN, cf, 0, "the \"%s\" directive is obsolete, ignored",
                       cmd->name);
    return SWS_CONF_OK;
}

/* "listen ... http2", or "http2 on" in the session's server (the
 * address's default, or the one SNI chose). */
static int
sws_http_v2_enabled(sws_http_session_t *s)
{
    sws_http_v2_srv_conf_t *h2scf = s->cscf->ctx->srv_conf[sws_http_v2_module.index];

    return s->addr->http2 || h2scf->enable == 1;
}

/* RFC 9113 3.4: an invalid preface is a connection error of type
 * PROTOCOL_ERROR: a GOAWAY saying so (best effort); the caller closes. */
static void
sws_http_v2_bad_preface(sws_http_session_t *s)
{
    static const u_char goaway[] = {
        0, 0, 8, 7, 0, 0, 0, 0, 0,          /* GOAWAY, 8 bytes, stream 0 */
        0, 0, 0, 0, 0, 0, 0, 1              /* last stream 0, PROTOCOL_ERROR */
    };

    sws_connection_t *c = s->connection;
    sws_buf_t         b;
    sws_chain_t       cl;

    sws_memzero(&b, sizeof(sws_buf_t));
    b.pos = b.start = (u_char *) goaway;
    b.last = b.end = (u_char *) goaway + sizeof(goaway);
    b.fd = -1;
    b.memory = 1;
    cl.buf = &b;
    cl.next = NULL;
    (void) c->send_chain(c, &cl, 0);
}

/* HTTP/2 on TLS listeners by ALPN "h2", on plain ones by the preface
 * (prior knowledge, RFC 9113 3.3). */
static const sws_http_protocol_t sws_http_v2_protocol = {
    .name = "HTTP/2",
    .alpn = sws_string("h2"),
    .alpn_rank = 2,
    .listeners = SWS_HTTP_LISTENER_TCP | SWS_HTTP_LISTENER_TLS,
    .preface = sws_string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
    .enabled = sws_http_v2_enabled,
    .start = sws_http_v2_init,
    .bad_preface = sws_http_v2_bad_preface,
};

static sws_int_t
sws_http_v2_postconfiguration(sws_conf_t *cf)
{
    return sws_http_protocol_register(cf, &sws_http_v2_protocol);
}

static void *
sws_http_v2_create_main_conf(sws_conf_t *cf)
{
    sws_http_v2_main_conf_t *h2mcf = sws_pcalloc(sws_conf_pool(cf), sizeof(*h2mcf));

    if (h2mcf) {
        h2mcf->recv_buffer_size = SWS_UNSET_SIZE;
    }
    return h2mcf;
}

static char *
sws_http_v2_init_main_conf(sws_conf_t *cf, void *conf)
{
    sws_http_v2_main_conf_t *h2mcf = conf;

    (void) cf;

    if (h2mcf->recv_buffer_size == SWS_UNSET_SIZE) {
        h2mcf->recv_buffer_size = 256 * 1024;
    }
    if (h2mcf->recv_buffer_size < 16384) {
        return "http2_recv_buffer_size must be at least 16k";
    }
    return SWS_CONF_OK;
}

static void *
sws_http_v2_create_srv_conf(sws_conf_t *cf)
{
    sws_http_v2_srv_conf_t *h2scf = sws_pcalloc(sws_conf_pool(cf), sizeof(*h2scf));

    if (h2scf) {
        h2scf->enable = SWS_UNSET;
        h2scf->concurrent_streams = SWS_UNSET_UINT;
        h2scf->preread_size = SWS_UNSET_SIZE;
        h2scf->idle_timeout = SWS_UNSET_MSEC;
        h2scf->max_field_size = SWS_UNSET_SIZE;
        h2scf->max_header_size = SWS_UNSET_SIZE;
        h2scf->max_requests = SWS_UNSET_UINT;
    }
    return h2scf;
}

static char *
sws_http_v2_merge_srv_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_v2_srv_conf_t *prev = parent, *conf = child;

    (void) cf;

    sws_conf_merge_value(conf->enable, prev->enable, 0);
    sws_conf_merge_uint_value(conf->concurrent_streams, prev->concurrent_streams, 128);
    sws_conf_merge_size_value(conf->preread_size, prev->preread_size, 65536);
    /* Unset, these follow keepalive_timeout, large_client_header_buffers
     * and keepalive_requests (as in nginx since 1.19.7). */
    sws_conf_merge_msec_value(conf->idle_timeout, prev->idle_timeout, SWS_UNSET_MSEC);
    sws_conf_merge_size_value(conf->max_field_size, prev->max_field_size, SWS_UNSET_SIZE);
    sws_conf_merge_size_value(conf->max_header_size, prev->max_header_size, SWS_UNSET_SIZE);
    sws_conf_merge_uint_value(conf->max_requests, prev->max_requests, SWS_UNSET_UINT);

    if (conf->concurrent_streams < 1 || conf->concurrent_streams > 65536) {
        return "http2_max_concurrent_streams must be between 1 and 65536";
    }
    if (conf->preread_size > SWS_H2_MAX_WINDOW) {
        return "http2_body_preread_size is too large";
    }
    return SWS_CONF_OK;
}

static void *
sws_http_v2_create_loc_conf(sws_conf_t *cf)
{
    sws_http_v2_loc_conf_t *h2lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(*h2lcf));

    if (h2lcf) {
        h2lcf->chunk_size = SWS_UNSET_SIZE;
    }
    return h2lcf;
}

static char *
sws_http_v2_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_http_v2_loc_conf_t *prev = parent, *conf = child;

    (void) cf;

    sws_conf_merge_size_value(conf->chunk_size, prev->chunk_size, 8192);
    if (conf->chunk_size == 0) {
        return "http2_chunk_size must not be zero";
    }
    if (conf->chunk_size > 16384) {
        conf->chunk_size = 16384;      /* the peer's default max frame size */
    }
    return SWS_CONF_OK;
}
