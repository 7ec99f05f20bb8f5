/*
 * gunzip: nginx's ngx_http_gunzip_module.
 *
 *   gunzip on | off;                   (off)
 *   gunzip_buffers NUMBER SIZE;        (32 4k)
 *
 * A response with "Content-Encoding: gzip" (an upstream's, or a
 * precompressed file's with gzip_static always) goes to a client that
 * does not accept gzip decompressed: its Content-Encoding and length go,
 * its ETag becomes weak, ranges are off. A client that accepts gzip gets
 * it as it is. Either way the response varies on Accept-Encoding, which
 * the compress module says with "Vary: Accept-Encoding" where gzip_vary
 * is on (sws_http_set_gzip_vary), as nginx.
 *
 * The body goes through the core's body transform with zlib's inflate as
 * the coder, streaming: at most gunzip_buffers of output, the producer
 * held back while they wait for the client. Several gzip members follow
 * each other as one body. A stream that is corrupt, or ends before its
 * end, is logged and the response is cut there (the client sees a
 * truncated response: its length or last chunk never comes).
 *
 * The module requires sub_filter so that it comes after it in the module
 * order, and its filters run before sub_filter's (and compress's): the
 * body is decompressed, then rewritten, then compressed again, as in
 * nginx.
 */
#include <zlib.h>
#include <scalws/scalws.h>

typedef struct {
    sws_int_t   enable;
    sws_int_t   bufs_num;
    size_t      bufs_size;
} sws_gunzip_loc_conf_t;

typedef struct {
    z_stream    z;
    unsigned    started:1;      /* inflateInit2 done */
    unsigned    ended:1;        /* a member's end was the last thing seen */
} sws_gunzip_ctx_t;

typedef struct {
    sws_uint_t  used;           /* gunzip on somewhere: the filters */
} sws_gunzip_main_conf_t;

static char *sws_gunzip_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_gunzip_create_main_conf(sws_conf_t *cf);
static char *sws_gunzip_buffers(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static void *sws_gunzip_create_loc_conf(sws_conf_t *cf);
static char *sws_gunzip_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static sws_int_t sws_gunzip_init(sws_conf_t *cf);

#define SWS_GUNZIP_HTTP  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_gunzip_commands[] = {
    { "gunzip", SWS_GUNZIP_HTTP | SWS_CONF_FLAG, sws_gunzip_set,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_gunzip_loc_conf_t, enable), NULL },
    { "gunzip_buffers", SWS_GUNZIP_HTTP | SWS_CONF_TAKE2, sws_gunzip_buffers,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

static const char *const  sws_gunzip_requires[] = { "sub_filter", NULL };

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "gunzip",
    .requires = sws_gunzip_requires,
    .commands = sws_gunzip_commands,
    .create_main_conf = sws_gunzip_create_main_conf,
    .create_loc_conf = sws_gunzip_create_loc_conf,
    .merge_loc_conf = sws_gunzip_merge_loc_conf,
    .postconfiguration = sws_gunzip_init,
};

static sws_http_header_filter_pt  sws_gunzip_next_header_filter;
static sws_http_body_filter_pt    sws_gunzip_next_body_filter;


/* ---- the header filter ------------------------------------------------ */

/*
 * Does the client take gzip, in nginx's terms (ngx_http_gzip_ok without
 * gzip_disable and gzip_proxied): HTTP/1.1 or later, and "gzip" in
 * Accept-Encoding, not followed by a q-value of 0 ("gzip;q=0", "q=0.0").
 */
static int
sws_gunzip_client_takes_gzip(sws_http_request_t *r)
{
    const sws_str_t  *ae = sws_http_header_in(r, "accept-encoding", 15);
    u_char           *p, *end;

    if (ae == NULL || sws_http_version(r) < SWS_HTTP_VERSION_11) {
        return 0;
    }
    end = ae->data + ae->len;
    p = sws_strlcasestrn(ae->data, end, (const u_char *) "gzip", 3);
    if (p == NULL) {
        return 0;
    }
    for (p += 4; p < end && (*p == ' ' || *p == '\t'); p++) { /* skip */ }
    if (p == end || *p != ';') {
        return 1;
    }
    for (p++; p < end && (*p == ' ' || *p == '\t'); p++) { /* skip */ }
    if (end - p < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=') {
        return 1;
    }
    /* "q=0", "q=0.", "q=0.000": refused; any other digit: taken */
    for (p += 2; p < end && (*p == '0' || *p == '.'); p++) { /* skip */ }
    return p < end && *p >= '1' && *p <= '9';
}


static void
sws_gunzip_cleanup(void *data)
{
    sws_gunzip_ctx_t  *ctx = data;

    if (ctx->started) {
        inflateEnd(&ctx->z);
    }
}


static sws_int_t
sws_gunzip_inflate(sws_http_request_t *r, void *data, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode);


static sws_int_t
sws_gunzip_header_filter(sws_http_request_t *r)
{
    const sws_gunzip_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);
    sws_http_header_t            *ce;
    sws_gunzip_ctx_t             *ctx;
    sws_http_transform_t         *t;
    sws_pool_t                   *pool;

    if (!lcf->enable
        || (ce = sws_http_header_out(r, "content-encoding", 16)) == NULL
        || ce->value.len != 4 || sws_strncasecmp(ce->value.data, (u_char *) "gzip", 4) != 0)
    {
        return sws_gunzip_next_header_filter(r);
    }

    sws_http_set_gzip_vary(r);
    if (sws_gunzip_client_takes_gzip(r)) {
        return sws_gunzip_next_header_filter(r);
    }

    pool = sws_http_pool(r);
    if (!sws_http_header_only(r) && sws_http_method(r) != SWS_HTTP_HEAD) {
        ctx = sws_pcalloc(pool, sizeof(sws_gunzip_ctx_t));
        if (ctx == NULL || sws_pool_cleanup_add(pool, sws_gunzip_cleanup, ctx) != SWS_OK) {
            return SWS_ERROR;
        }
        /* 16 + MAX_WBITS: a gzip header and trailer, not a zlib one */
        if (inflateInit2(&ctx->z, 16 + MAX_WBITS) != Z_OK) {
            sws_log_error(SWS_LOG_ALERT, sws_http_log(r), 0, "inflateInit2() failed");
            return SWS_ERROR;
        }
        ctx->started = 1;
        t = sws_http_transform_create(r, (sws_uint_t) lcf->bufs_num, lcf->bufs_size,
                                      sws_gunzip_inflate, ctx);
        if (t == NULL) {
            return SWS_ERROR;
        }
        sws_http_set_ctx(r, &sws_module, t);
    }

    sws_http_header_out_remove(r, "content-encoding", 16);
    sws_http_set_content_length(r, -1);
    sws_http_allow_ranges(r, 0);
    sws_http_header_out_remove(r, "accept-ranges", 13);

    /* W/"x" for "x": the body is no longer the bytes the tag was for */
    if (sws_http_weak_etag(r) != SWS_OK) {
        return SWS_ERROR;
    }
    return sws_gunzip_next_header_filter(r);
}


/* ---- the body ---------------------------------------------------------- */

/* The coder of the body transform: zlib's inflate. */
static sws_int_t
sws_gunzip_inflate(sws_http_request_t *r, void *data, const u_char **in, const u_char *in_end,
    u_char **out, u_char *out_end, int mode)
{
    sws_gunzip_ctx_t  *ctx = data;
    z_stream          *z = &ctx->z;
    int                rc;

    for ( ;; ) {
        z->next_in = (Bytef *) (*in ? *in : (const u_char *) "");
        z->avail_in = *in ? (uInt) (in_end - *in) : 0;
        z->next_out = *out;
        z->avail_out = (uInt) (out_end - *out);

        if (ctx->ended && z->avail_in) {
            /* another gzip member follows */
            if (inflateReset(z) != Z_OK) {
                return SWS_ERROR;
            }
            ctx->ended = 0;
        }
        rc = inflate(z, Z_NO_FLUSH);

        if (*in) {
            *in = z->next_in;
        }
        *out = z->next_out;

        if (rc == Z_STREAM_END) {
            ctx->ended = 1;
            if (*in && *in < in_end) {
                continue;
            }
            return SWS_OK;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                          "inflate() failed: %d (%s): the gzip response is corrupt", rc,
                          z->msg ? z->msg : "no message");
            return SWS_ERROR;
        }
        if (z->avail_out == 0) {
            return SWS_AGAIN;           /* more may come out: room first */
        }
        /* all the input is in, and what it gave is out */
        if (mode == SWS_HTTP_TRANSFORM_FINISH && !ctx->ended) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0,
                          "inflate() returned %d on response end: the gzip response "
                          "is truncated", rc);
            return SWS_ERROR;
        }
        return SWS_OK;
    }
}


static sws_int_t
sws_gunzip_body_filter(sws_http_request_t *r, sws_chain_t *in)
{
    sws_http_transform_t  *t = sws_http_get_ctx(r, &sws_module);

    if (t == NULL) {
        return sws_gunzip_next_body_filter(r, in);
    }
    return sws_http_transform_filter(r, t, in, sws_gunzip_next_body_filter);
}


/* A fixed response has no Content-Encoding: nothing to do where gunzip is off. */
static int
sws_gunzip_acts(sws_http_request_t *r)
{
    const sws_gunzip_loc_conf_t  *lcf = sws_http_loc_conf(r, &sws_module);

    return lcf->enable == 1;
}


static sws_int_t
sws_gunzip_init(sws_conf_t *cf)
{
    sws_gunzip_main_conf_t  *mcf = sws_conf_http_main_conf(cf, &sws_module);

    /* Without "gunzip on" anywhere the filters stay out of the chain. */
    if (mcf == NULL || !mcf->used) {
        return SWS_OK;
    }
    sws_gunzip_next_header_filter = sws_http_insert_header_filter(sws_gunzip_header_filter);
    sws_gunzip_next_body_filter = sws_http_insert_body_filter(sws_gunzip_body_filter);
    return sws_http_filters_act_when(cf, sws_gunzip_acts);
}


/* ---- configuration ------------------------------------------------------ */

/* gunzip on|off; */
static char *
sws_gunzip_set(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_gunzip_loc_conf_t   *lcf = conf;
    sws_gunzip_main_conf_t  *mcf = sws_conf_http_main_conf(cf, &sws_module);
    char                    *rv = sws_conf_set_flag_slot(cf, cmd, conf);

    if (rv == SWS_CONF_OK && lcf->enable == 1 && mcf != NULL) {
        mcf->used = 1;
    }
    return rv;
}


/* gunzip_buffers NUMBER SIZE; */
static char *
sws_gunzip_buffers(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_gunzip_loc_conf_t  *lcf = conf;
    sws_str_t              *n = sws_conf_arg(cf, 1), *s = sws_conf_arg(cf, 2);
    sws_int_t               num;
    ssize_t                 size;

    (void) cmd;
    if (lcf->bufs_num != SWS_UNSET) {
        return "is duplicate";
    }
    num = sws_atoi(n->data, n->len);
    size = sws_parse_size(s);
    if (num <= 0 || size <= 0) {
        sws_conf_log_error(SWS_LOG_EMERG, cf, 0, "invalid value \"%.*s\" in \"%s\" directive",
                           (int) (num <= 0 ? n->len : s->len), num <= 0 ? n->data : s->data,
                           "gunzip_buffers");
        return SWS_CONF_ERROR;
    }
    lcf->bufs_num = num;
    lcf->bufs_size = (size_t) size;
    return SWS_CONF_OK;
}


static void *
sws_gunzip_create_main_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_gunzip_main_conf_t));
}


static void *
sws_gunzip_create_loc_conf(sws_conf_t *cf)
{
    sws_gunzip_loc_conf_t  *lcf = sws_pcalloc(sws_conf_pool(cf), sizeof(*lcf));

    if (lcf == NULL) {
        return NULL;
    }
    lcf->enable = SWS_UNSET;
    lcf->bufs_num = SWS_UNSET;
    return lcf;
}


static char *
sws_gunzip_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_gunzip_loc_conf_t  *prev = parent, *conf = child;

    (void) cf;
    sws_conf_merge_value(conf->enable, prev->enable, 0);
    if (conf->bufs_num == SWS_UNSET) {
        conf->bufs_num = prev->bufs_num;
        conf->bufs_size = prev->bufs_size;
    }
    if (conf->bufs_num == SWS_UNSET) {
        /* nginx's default: 32 4k (one memory page) */
        conf->bufs_num = 32;
        conf->bufs_size = 4096;
    }
    return SWS_CONF_OK;
}
