/*
 * th1: an HTTP/1 protocol module made only of the framework's exported
 * HTTP/1 client (sws_http_upstream_h1_*), as node and python are meant to
 * be, for the tests (tests/integration/test_upstream_h1.py).
 *
 *   th1_pass ADDR;      (location) the request goes to ADDR over HTTP/1.1
 *                       with the client's target, "Host: th1" and
 *                       "X-Th1: yes" (which replaces the client's X-Th1)
 *   th1_http10;         (location) HTTP/1.0 instead
 */
#include <scalws/scalws.h>

extern sws_module_t sws_module;

typedef struct {
    sws_http_upstream_conf_t  *upstream;     /* first: the framework's setters */
    sws_int_t                  http10;
} th1_conf_t;

static sws_int_t
th1_create_request(sws_http_request_t *r, void *ctx, sws_chain_t **out)
{
    static const sws_http_header_t  field = { sws_string("X-Th1"), sws_string("yes"), 1 };
    th1_conf_t                     *conf = ctx;
    sws_http_upstream_h1_request_t  rq;

    sws_memzero(&rq, sizeof(rq));
    rq.target = *sws_http_unparsed_uri(r);
    sws_str_set(&rq.host, "th1");
    rq.fields = &field;
    rq.nfields = 1;
    rq.http10 = conf->http10 == 1;
    return sws_http_upstream_h1_create_request(sws_http_upstream_get(r), &rq, out);
}

static const sws_http_upstream_proto_t th1_proto = {
    .name = "th1",
    .create_request = th1_create_request,
    .reinit = sws_http_upstream_h1_reinit,
    .process_header = sws_http_upstream_h1_process_header,
    .input_filter = sws_http_upstream_h1_input_filter,
    .frame_head = SWS_UPSTREAM_H1_FRAME_HEAD,
    .frame_tail = SWS_UPSTREAM_H1_FRAME_TAIL,
    .frame_body = sws_http_upstream_h1_frame_body,
};

static sws_int_t
th1_handler(sws_http_request_t *r)
{
    th1_conf_t *conf = sws_http_loc_conf(r, &sws_module);

    if (sws_http_upstream_create(r, &th1_proto, conf, conf->upstream) == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    return sws_http_upstream_start(r);
}

static char *
th1_pass(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    th1_conf_t *tc = conf;
    char       *rv;

    (void) cmd;
    rv = sws_http_upstream_conf_set_target(cf, tc->upstream, sws_conf_arg(cf, 1), 80);
    if (rv != SWS_CONF_OK) {
        return rv;
    }
    return sws_http_set_content_handler(cf, th1_handler, "th1_pass") == SWS_OK
           ? SWS_CONF_OK : SWS_CONF_ERROR;
}

static char *
th1_http10(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) cf;
    (void) cmd;
    ((th1_conf_t *) conf)->http10 = 1;
    return SWS_CONF_OK;
}

static void *
th1_create_loc(sws_conf_t *cf)
{
    th1_conf_t *tc = sws_pcalloc(sws_conf_pool(cf), sizeof(th1_conf_t));

    if (tc == NULL) {
        return NULL;
    }
    tc->upstream = sws_http_upstream_conf_create(cf);
    return tc->upstream ? tc : NULL;
}

static char *
th1_merge_loc(sws_conf_t *cf, void *parent, void *child)
{
    th1_conf_t *prev = parent, *conf = child;

    return sws_http_upstream_conf_merge(cf, prev->upstream, conf->upstream);
}

static const sws_command_t th1_commands[] = {
    { "th1_pass", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1, th1_pass, SWS_HTTP_LOC_CONF_OFFSET, 0,
      NULL },
    { "th1_http10", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, th1_http10, SWS_HTTP_LOC_CONF_OFFSET,
      0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "th1",
    .commands = th1_commands,
    .create_loc_conf = th1_create_loc,
    .merge_loc_conf = th1_merge_loc,
};
