/*
 * libFuzzer target: the format compiler behind log_format, the access
 * log's lines and every value with variables (src/http/sws_http_format.c,
 * the variables of sws_http_variables.c), on arbitrary format strings,
 * rendered against a small fixed request. The first byte picks the escape
 * mode (default, json, none, or an invalid one that must be refused); the
 * rest is the format's text. A compiled format must render exactly the
 * length it measured, into a buffer of exactly that size (so that ASan
 * sees a byte written past it), and sws_http_format_string() the same
 * length; a refused one must say why.
 * Build and run: make fuzz (clang with -fsanitize=fuzzer,address,undefined).
 */
#include <stdlib.h>
#include <string.h>

#include "sws_http_core.h"
#include "sws_http_variables.h"
#include "../unit/sws_test_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The variables read the server's conf through the core module's index. */
sws_module_t  sws_http_core_module = { .index = 0 };

static sws_test_request_t  t;

/* The unit tests' request, with a cookie and bytes to escape. */
static void
request_init(sws_pool_t *pool)
{
    if (sws_test_request_init(&t, pool) != SWS_OK
        || sws_test_header_add(&t.req.headers_in, "x-odd", "\"x\"\x01\xff\\") != SWS_OK
        || sws_test_header_add(&t.req.headers_in, "cookie", "a=1; session=\\\"z\\\"; b=")
           != SWS_OK
        || sws_test_header_add(&t.req.headers_out, "content-type", "text/plain") != SWS_OK)
    {
        abort();
    }
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int          started;
    static const int    modes[4] = { SWS_HTTP_ESCAPE_DEFAULT, SWS_HTTP_ESCAPE_JSON,
                                     SWS_HTTP_ESCAPE_NONE, SWS_HTTP_ESCAPE_NONE + 1 };
    sws_pool_t         *pool;
    sws_http_format_t  *f;
    sws_str_t           text, out;
    const char         *err = NULL;
    size_t              len;
    u_char             *buf, *end;
    int                 escape;

    if (!started) {
        sws_time_init();
        started = 1;
    }
    if (size == 0) {
        return 0;
    }
    sws_time_update();
    escape = modes[data[0] & 3];
    text.data = (u_char *) data + 1;
    text.len = size - 1;

    pool = sws_pool_create(4096, NULL);
    if (pool == NULL) {
        abort();
    }
    request_init(pool);
    f = sws_http_format_compile(pool, &text, escape, &err);
    if (f == NULL) {
        if (err == NULL || *err == '\0') {
            abort();                      /* refused without a reason */
        }
    } else if (escape > SWS_HTTP_ESCAPE_NONE) {
        abort();                          /* an invalid mode accepted */
    } else {
        len = sws_http_format_len(f, &t.req);
        buf = malloc(len ? len : 1);      /* exactly: ASan sees one byte more */
        if (buf == NULL) {
            abort();
        }
        end = sws_http_format_render(f, &t.req, buf);
        if ((size_t) (end - buf) != len) {
            abort();
        }
        /* again in one call: the same length ($msec, read from the clock
         * at each evaluation, may change its digits but not their number) */
        if (sws_http_format_string(f, &t.req, pool, 0, NULL, 0, &out) != SWS_OK
            || out.len != len)
        {
            abort();
        }
        if (sws_http_format_is_static(f) && memchr(text.data, '$', text.len)) {
            abort();
        }
        free(buf);
    }
    sws_http_variables_reset();           /* the registry pointed into pool */
    sws_pool_destroy(pool);
    return 0;
}
