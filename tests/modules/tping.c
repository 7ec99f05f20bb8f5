/*
 * tping: a protocol module's health probe in its own terms, for the tests
 * (tests/integration/test_upstream_probe.py), built against the SDK only.
 *
 *   tping_pass ADDR;    (location) the location names the upstream ADDR
 *                       (no requests go there: only the group's probes
 *                       matter) and its probes are "PING uri\r\n",
 *                       passed by a "PONG" line, failed by anything else
 */
#include <string.h>
#include <scalws/scalws.h>

extern sws_module_t sws_module;

typedef struct {
    sws_http_upstream_conf_t  *upstream;     /* first: the framework's setters */
} tping_conf_t;

static sws_int_t
tping_create(void *data, const sws_str_t *uri, const sws_str_t *host, sws_buf_t *out)
{
    (void) data;
    (void) host;
    if (uri->len + 7 > (size_t) (out->end - out->last)) {
        return SWS_ERROR;
    }
    out->last = sws_cpymem(out->last, "PING ", 5);
    out->last = sws_cpymem(out->last, uri->data, uri->len);
    out->last = sws_cpymem(out->last, "\r\n", 2);
    return SWS_OK;
}

static sws_int_t
tping_judge(void *data, sws_buf_t *in, int eof, const char **why)
{
    u_char *nl = memchr(in->pos, '\n', (size_t) (in->last - in->pos));

    (void) data;
    if (nl == NULL) {
        *why = "no line";
        return eof ? SWS_DECLINED : SWS_AGAIN;
    }
    if (nl - in->pos >= 4 && memcmp(in->pos, "PONG", 4) == 0) {
        in->pos = nl + 1;
        return SWS_OK;
    }
    in->pos = nl + 1;
    *why = "no pong";
    return SWS_DECLINED;
}

static const sws_http_upstream_probe_t tping_probe = {
    .name = "tping",
    .create = tping_create,
    .judge = tping_judge,
};

static char *
tping_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    tping_conf_t *tc = conf;
    char         *rv;

    (void) cmd;
    rv = sws_http_upstream_conf_set_target(cf, tc->upstream, sws_conf_arg(cf, 1), 7000);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    sws_http_upstream_conf_set_probe(tc->upstream, &tping_probe, tc);
    return SWS_CONF_OK;
}

static void *
tping_create_loc(sws_conf_t *cf)
{
    tping_conf_t *tc = sws_pcalloc(sws_conf_pool(cf), sizeof(tping_conf_t));

    if (tc == NULL) {
        return NULL;
    }
    tc->upstream = sws_http_upstream_conf_create(cf);
    return tc->upstream ? tc : NULL;
}

static char *
tping_merge_loc(sws_conf_t *cf, void *parent, void *child)
{
    tping_conf_t *prev = parent, *conf = child;

    return sws_http_upstream_conf_merge(cf, prev->upstream, conf->upstream);
}

static const sws_command_t tping_commands[] = {
    { "tping_pass", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1, tping_pass, SWS_HTTP_LOC_CONF_OFFSET, 0,
      NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "tping",
    .commands = tping_commands,
    .create_loc_conf = tping_create_loc,
    .merge_loc_conf = tping_merge_loc,
};
