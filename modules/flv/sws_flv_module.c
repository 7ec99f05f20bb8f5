/*
 * The flv module: nginx's pseudo-streaming of Flash video. A file asked
 * for with "?start=N" is sent from byte N (a keyframe the player found in
 * the file's metadata), after the 13 bytes of an FLV file header, so that
 * the player can play what it gets as a file of its own.
 *
 *   flv;                           location
 *
 * What nginx 1.22's ngx_http_flv_module answers:
 *   start=N, 0 < N < size          200, Content-Length 13 + size - N: the
 *                                  header, then the file from byte N
 *   no start, start=0, start past  the file as the static module sends it
 *   the end, or not a number
 * The file's Last-Modified; an ETag of its mtime and the length sent (each
 * start a representation of its own); Range applies to what is sent. Anything that is not a file to send (a directory, a missing
 * file) is the static module's, which answers as nginx's flv handler
 * does (301, 404, 403); another method than GET and HEAD is 405.
 */
#include <scalws/scalws.h>

typedef struct {
    sws_http_format_t  *start;       /* $arg_start; NULL: flv is off here */
} sws_flv_loc_conf_t;

static void *sws_flv_create_loc_conf(sws_conf_t *cf);
static char *sws_flv(sws_conf_t *cf, const sws_command_t *cmd, void *conf);
static sws_int_t sws_flv_init(sws_conf_t *cf);

static const sws_command_t sws_flv_commands[] = {
    { "flv", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, sws_flv, SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "flv",
    .commands = sws_flv_commands,
    .create_loc_conf = sws_flv_create_loc_conf,
    .postconfiguration = sws_flv_init,
};

/* "FLV", version 1, audio and video, a 9-byte header, then the first
 * PreviousTagSize (0). */
static u_char  sws_flv_header[] = { 'F', 'L', 'V', 1, 5, 0, 0, 0, 9, 0, 0, 0, 0 };

#define SWS_FLV_HEADER_LEN  ((off_t) sizeof(sws_flv_header))


/* The start=N asked for: N, or 0 when there is none or it is no number
 * (nginx's ngx_atoof: digits only). */
static off_t
sws_flv_start(sws_http_request_t *r, sws_flv_loc_conf_t *flcf)
{
    sws_str_t  v;
    off_t      start;

    if (sws_http_args(r)->len == 0
        || sws_http_format_string(flcf->start, r, sws_http_pool(r), 0, NULL, 0, &v) != SWS_OK
        || v.len == 0)
    {
        return 0;
    }
    start = sws_atoof(v.data, v.len);
    return start > 0 ? start : 0;
}


static sws_int_t
sws_flv_handler(sws_http_request_t *r)
{
    sws_flv_loc_conf_t  *flcf = sws_http_loc_conf(r, &sws_module);
    const sws_str_t     *uri = sws_http_uri(r);
    sws_http_file_t      f;
    sws_str_t            path, *etag;
    size_t               root_len;
    off_t                start, len;
    sws_int_t            rc;
    sws_buf_t           *head, *rest;
    sws_chain_t         *out;
    sws_pool_t          *pool = sws_http_pool(r);
    time_t               now;

    if (!(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD))) {
        return SWS_HTTP_NOT_ALLOWED;   /* nginx's flv: before anything */
    }
    if (uri->len == 0 || uri->data[uri->len - 1] == '/') {
        return SWS_DECLINED;
    }
    start = sws_flv_start(r, flcf);
    if (start == 0) {
        return SWS_DECLINED;           /* the plain file: static's */
    }
    if (sws_http_map_uri_to_path(r, &path, &root_len, 0) != SWS_OK) {
        return SWS_HTTP_INTERNAL_SERVER_ERROR;
    }
    if (sws_http_open_file(r, &path, &f) != SWS_OK || !f.is_file || start >= f.size) {
        return SWS_DECLINED;           /* static's answer, or the whole file */
    }
    if (sws_http_has_body(r)) {
        rc = sws_http_discard_body(r);
        if (rc != SWS_OK && rc != SWS_AGAIN) {
            return rc;
        }
    }

    /* Last-Modified the file's (never after the Date, as static's); the
     * ETag of the file's mtime and the length sent, as nginx makes it, so
     * that each start is its own representation */
    sws_http_set_status(r, SWS_HTTP_OK);
    len = SWS_FLV_HEADER_LEN + f.size - start;
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
    rest = sws_calloc_buf(pool);
    out = sws_alloc_chain_link(pool);
    if (head == NULL || rest == NULL || out == NULL) {
        return SWS_ERROR;
    }
    out->next = sws_alloc_chain_link(pool);
    if (out->next == NULL) {
        return SWS_ERROR;
    }
    head->memory = 1;
    head->start = head->pos = sws_flv_header;
    head->end = head->last = sws_flv_header + sizeof(sws_flv_header);

    if (f.data) {                      /* a small file the cache holds */
        rest->memory = 1;
        rest->start = rest->pos = (u_char *) f.data + start;
        rest->end = rest->last = (u_char *) f.data + f.size;
    } else {
        rest->in_file = 1;
        rest->fd = f.fd;
        rest->file_pos = start;
        rest->file_last = f.size;
    }
    rest->last_buf = 1;
    rest->last_in_chain = 1;

    out->buf = head;
    out->next->buf = rest;
    out->next->next = NULL;

    return sws_http_output(r, out);
}


/* ---- configuration ---- */

static void *
sws_flv_create_loc_conf(sws_conf_t *cf)
{
    return sws_pcalloc(sws_conf_pool(cf), sizeof(sws_flv_loc_conf_t));
}

static char *
sws_flv(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    sws_flv_loc_conf_t  *flcf = conf;
    static sws_str_t     start = sws_string("$arg_start");
    const char          *err;

    (void) cmd;
    if (flcf->start) {
        return SWS_CONF_OK;            /* said twice: nginx takes it */
    }
    flcf->start = sws_http_format_compile(sws_conf_pool(cf), &start, SWS_HTTP_ESCAPE_NONE, &err);
    return flcf->start ? SWS_CONF_OK : (char *) err;
}

static sws_uint_t
sws_flv_active(const void *conf)
{
    const sws_flv_loc_conf_t *flcf = conf;

    return flcf->start != NULL;
}

/* Before the static handler (and gzip_static's), after the index
 * handler, which is not ours: a URI ending in '/' is never a file. */
static sws_int_t
sws_flv_init(sws_conf_t *cf)
{
    static const sws_http_phase_handler_t  handler = {
        .phase = SWS_HTTP_CONTENT_PHASE, .order = SWS_HTTP_ORDER_INDEX + 50,
        .handler = sws_flv_handler, .module = &sws_module, .active = sws_flv_active
    };

    return sws_http_register_phase_handler(cf, &handler);
}
