/*
 * The mp4 module: nginx's pseudo-streaming of MP4 files. A file asked for
 * with "?start=S" and/or "?end=E" (seconds, to the millisecond) is sent as
 * an MP4 file of its own holding that interval: its ftyp, a new moov with
 * the sample tables cut (sws_mp4_parse.c), and the part of the mdat the
 * interval needs, straight from the file (sendfile).
 *
 *   mp4;                           location
 *   mp4_buffer_size SIZE;          512k, http server location
 *   mp4_max_buffer_size SIZE;      10m: a bigger moov is a 500
 *   mp4_start_key_frame on|off;    off: from the key frame before S
 *
 * Without a usable start or end the file is the static module's (ranges
 * and all). The answers and error log lines are nginx 1.22's: see
 * docs/mp4.md.
 */
#include <unistd.h>
#include <scalws/scalws.h>
#include "sws_mp4_parse.h"

typedef struct {
    sws_http_format_t  *start;       /* $arg_start; NULL: mp4 is off here */
    sws_http_format_t  *end;         /* $arg_end */
    size_t              buffer_size;
    size_t              max_buffer_size;
    sws_int_t           start_key_frame;
} sws_mp4_loc_conf_t;

static void *sws_mp4_create_loc_conf(sws_conf_t *cf);
static char *sws_mp4_merge_loc_conf(sws_conf_t *cf, void *parent, void *child);
static char *sws_mp4(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static sws_int_t sws_mp4_init(sws_conf_t *cf);

#define SWS_MP4_ANY  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)

static const sws_command_t sws_mp4_commands[] = {
    { "mp4", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, sws_mp4, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "mp4_buffer_size", SWS_MP4_ANY | SWS_CONF_TAKE1, sws_conf_set_size_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_mp4_loc_conf_t, buffer_size), NULL },
    { "mp4_max_buffer_size", SWS_MP4_ANY | SWS_CONF_TAKE1, sws_conf_set_size_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_mp4_loc_conf_t, max_buffer_size), NULL },
    { "mp4_start_key_frame", SWS_MP4_ANY | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_mp4_loc_conf_t, start_key_frame), NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "mp4",
    .commands = sws_mp4_commands,
    .create_loc_conf = sws_mp4_create_loc_conf,
    .merge_loc_conf = sws_mp4_merge_loc_conf,
    .postconfiguration = sws_mp4_init,
};


/* The argument's value in milliseconds; -1 when there is none or it is
 * no time. */
static int64_t
sws_mp4_arg_time(sws_http_request_t *r, sws_http_format_t *arg)
{
    sws_str_t  v;

    if (sws_http_format_string(arg, r, sws_http_pool(r), 0, NULL, 0, &v) != SWS_OK
        || v.len == 0)
    {
        return -1;
    }
    return sws_mp4_parse_time(v.data, v.len);
}

typedef struct {
    const sws_http_file_t  *f;
} sws_mp4_file_ctx_t;

static ssize_t
sws_mp4_read(void *ctx, u_char *buf, size_t n, off_t off)
{
    const sws_http_file_t  *f = ((sws_mp4_file_ctx_t *) ctx)->f;
    ssize_t                 got, total = 0;

    if (off >= f->size) {
        return 0;
    }
    if ((off_t) n > f->size - off) {
        n = (size_t) (f->size - off);
    }
    if (f->data) {                     /* a small file the cache holds */
        sws_memcpy(buf, f->data + off, n);
        return (ssize_t) n;
    }
    while ((size_t) total < n) {
        got = pread(f->fd, buf + total, n - (size_t) total, off + total);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return got < 0 ? -1 : total;
        }
        total += got;
    }
    return total;
}

static sws_int_t
sws_mp4_handler(sws_http_request_t *r)
{
    sws_mp4_loc_conf_t  *mcf = sws_http_loc_conf(r, &sws_module);
    const sws_str_t     *uri = sws_http_uri(r);
    sws_pool_t          *pool = sws_http_pool(r);
    sws_http_file_t      f;
    sws_mp4_file_ctx_t   fctx;
    sws_mp4_request_t    req;
    sws_mp4_result_t     res;
    sws_str_t            path, *etag;
    size_t               root_len;
    sws_int_t            rc;
    int64_t              start, end;
    off_t                len;
    sws_buf_t           *head, *data;
    sws_chain_t         *out;
    time_t               now;

    if (!(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD))) {
        return SWS_HTTP_NOT_ALLOWED;
    }
    if (uri->len == 0 || uri->data[uri->len - 1] == '/' || sws_http_args(r)->len == 0) {
        return SWS_DECLINED;
    }
    start = sws_mp4_arg_time(r, mcf->start);
    end = sws_mp4_arg_time(r, mcf->end);
    if (start < 0 && end <= 0) {
        return SWS_DECLINED;           /* the plain file: static's */
    }
    /* a start of 0 is a cut too (the moov first, as players ask for it);
     * an end not after the start is none */
    if (start < 0) {
        start = 0;
    }
    if (end <= start) {
        end = 0;
    }
    if (sws_http_map_uri_to_path(r, &path, &root_len, 0) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sws_http_open_file(r, &path, &f) != SWS_OK || !f.is_file) {
        return SWS_DECLINED;           /* static's answer (404, 301, 403) */
    }
    if (sws_http_has_body(r)) {
        rc = sws_http_discard_body(r);
        if (rc != SWS_OK && rc != SWS_AGAIN) {
            return rc;
        }
    }

    fctx.f = &f;
    sws_memzero(&req, sizeof(req));
    req.read = sws_mp4_read;
    req.ctx = &fctx;
    req.size = f.size;
    req.max_moov = mcf->max_buffer_size;
    req.start_ms = (uint64_t) start;
    req.end_ms = (uint64_t) end;
    req.start_key_frame = mcf->start_key_frame ? 1 : 0;
    if (sws_mp4_cut(pool, &req, &res) != SWS_OK) {
        if (res.err_suffix) {
            sws_log_error(SWS_LOG_ERR, sws_http_log(r), 0, "%s\"%s\"%s",
                          res.err_prefix, path.data, res.err_suffix);
        }
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }

    /* as flv: the file's Last-Modified, an ETag of its mtime and the
     * length sent (each interval a representation of its own) */
    len = (off_t) res.head_len + res.data_end - res.data_start;
    sws_http_set_status(r, SWS_HTTP_OK);
    sws_http_set_content_length(r, len);
    now = sws_time_sec();
    sws_http_set_last_modified(r, f.mtime > now ? now : f.mtime);
    sws_http_set_content_type(r, sws_http_mime_type(r, sws_http_exten(r)));
    etag = sws_palloc(pool, sizeof(sws_str_t) + SWS_HTTP_ETAG_LEN);
    if (etag == NULL) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    etag->data = (u_char *) (etag + 1);
    etag->len = (size_t) (sws_http_etag_make(etag->data, f.mtime, len) - etag->data);
    sws_http_set_etag(r, etag);
    sws_http_allow_ranges(r, 1);

    rc = sws_http_send_header(r);
    if (rc != SWS_OK || sws_http_header_only(r)) {
        return rc;
    }

    head = sws_calloc_buf(pool);
    data = sws_calloc_buf(pool);
    out = sws_alloc_chain_link(pool);
    if (head == NULL || data == NULL || out == NULL
        || (out->next = sws_alloc_chain_link(pool)) == NULL)
    {
        return SWS_ERROR;
    }
    head->memory = 1;
    head->start = head->pos = res.head;
    head->end = head->last = res.head + res.head_len;
    if (f.data) {
        data->memory = 1;
        data->start = data->pos = (u_char *) f.data + res.data_start;
        data->end = data->last = (u_char *) f.data + res.data_end;
    } else {
        data->in_file = 1;             /* the mdat's part: sendfile, no copy */
        data->fd = f.fd;
        data->file_pos = res.data_start;
        data->file_last = res.data_end;
    }
    data->last_buf = 1;
    data->last_in_chain = 1;
    out->buf = head;
    out->next->buf = data;
    out->next->next = NULL;
    return sws_http_output(r, out);
}


/* ---- configuration ---- */

static void *
sws_mp4_create_loc_conf(sws_conf_t *cf)
{
    sws_mp4_loc_conf_t  *mcf = sws_pcalloc(sws_conf_pool(cf), sizeof(sws_mp4_loc_conf_t));

    if (mcf == NULL) {
        return NULL;
    }
    mcf->buffer_size = SWS_UNSET_SIZE;
    mcf->max_buffer_size = SWS_UNSET_SIZE;
    mcf->start_key_frame = SWS_UNSET;
    return mcf;
}

static char *
sws_mp4_merge_loc_conf(sws_conf_t *cf, void *parent, void *child)
{
    sws_mp4_loc_conf_t  *prev = parent, *conf = child;

    (void) cf;
    sws_conf_merge_size_value(conf->buffer_size, prev->buffer_size, 512 * 1024);
    sws_conf_merge_size_value(conf->max_buffer_size, prev->max_buffer_size, 10 * 1024 * 1024);
    sws_conf_merge_value(conf->start_key_frame, prev->start_key_frame, 0);
    return SWS_CONF_OK;
}

static char *
sws_mp4(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_mp4_loc_conf_t  *mcf = conf;
    static sws_str_t     start = sws_string("$arg_start");
    static sws_str_t     end = sws_string("$arg_end");
    const char          *err;

    (void) cmd;
    if (mcf->start) {
        return SWS_CONF_OK;            /* said twice: nginx takes it */
    }
    mcf->start = sws_http_format_compile(sws_conf_pool(cf), &start, SWS_HTTP_ESCAPE_NONE, &err);
    if (mcf->start == NULL) {
        return (char *) err;
    }
    mcf->end = sws_http_format_compile(sws_conf_pool(cf), &end, SWS_HTTP_ESCAPE_NONE, &err);
    return mcf->end ? SWS_CONF_OK : (char *) err;
}

static sws_uint_t
sws_mp4_active(const void *conf)
{
    const sws_mp4_loc_conf_t *mcf = conf;

    return mcf->start != NULL;
}

/* Before the static handler, as flv's. */
static sws_int_t
sws_mp4_init(sws_conf_t *cf)
{
    static const sws_http_phase_handler_t  handler = {
        .phase = SWS_HTTP_CONTENT_PHASE, .order = SWS_HTTP_ORDER_INDEX + 50,
        .handler = sws_mp4_handler, .module = &sws_module, .active = sws_mp4_active
    };

    return sws_http_register_phase_handler(cf, &handler);
}
