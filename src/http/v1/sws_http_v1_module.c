/*
 * The "http_v1" module: HTTP/1.x registers itself as the protocol of
 * plain and TLS listeners when ALPN chose none ("http/1.1" when it chose
 * that). It has no directives: the connection's are the core's.
 */
#include "sws_http_h1.h"

static sws_int_t sws_http_v1_postconfiguration(sws_conf_t *cf);

static const sws_http_protocol_t sws_http_v1_protocol = {
    .name = "HTTP/1.1",
    .alpn = sws_string("http/1.1"),
    .alpn_rank = 1,
    .listeners = SWS_HTTP_LISTENER_TCP | SWS_HTTP_LISTENER_TLS,
    .fallback = 1,
    .start = sws_http1_start,
};

sws_module_t sws_http_v1_module = {
    SWS_MODULE_ABI, .name = "http_v1",
    .postconfiguration = sws_http_v1_postconfiguration,
};

static sws_int_t
sws_http_v1_postconfiguration(sws_conf_t *cf)
{
    return sws_http_protocol_register(cf, &sws_http_v1_protocol);
}
