/*
 * HPACK's static table (RFC 7541 Appendix A, spec data): the encoder finds
 * the names of the fields it sends there, the decoder what an index of 1
 * to 61 stands for.
 */
#include "sws_hpack_encoder.h"

const sws_hpack_static_t  sws_hpack_static[SWS_HPACK_STATIC_ENTRIES + 1] = {
#define N(n)     { sizeof(n) - 1, 0, n, "" }
#define NV(n, v) { sizeof(n) - 1, sizeof(v) - 1, n, v }
    { 0, 0, "", "" },
    N(":authority"), NV(":method", "GET"), NV(":method", "POST"), NV(":path", "/"),
    NV(":path", "/index.html"), NV(":scheme", "http"), NV(":scheme", "https"),
    NV(":status", "200"), NV(":status", "204"), NV(":status", "206"), NV(":status", "304"),
    NV(":status", "400"), NV(":status", "404"), NV(":status", "500"), N("accept-charset"),
    NV("accept-encoding", "gzip, deflate"), N("accept-language"), N("accept-ranges"),
    N("accept"), N("access-control-allow-origin"), N("age"), N("allow"), N("authorization"),
    N("cache-control"), N("content-disposition"), N("content-encoding"),
    N("content-language"), N("content-length"), N("content-location"), N("content-range"),
    N("content-type"), N("cookie"), N("date"), N("etag"), N("expect"), N("expires"),
    N("from"), N("host"), N("if-match"), N("if-modified-since"), N("if-none-match"),
    N("if-range"), N("if-unmodified-since"), N("last-modified"), N("link"), N("location"),
    N("max-forwards"), N("proxy-authenticate"), N("proxy-authorization"), N("range"),
    N("referer"), N("refresh"), N("retry-after"), N("server"), N("set-cookie"),
    N("strict-transport-security"), N("transfer-encoding"), N("user-agent"), N("vary"),
    N("via"), N("www-authenticate")
#undef N
#undef NV
};
