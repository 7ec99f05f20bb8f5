/*
 * The empty_gif module: nginx's empty_gif, a location answered with a
 * transparent 1x1 GIF (43 bytes), for tracking pixels and spacers.
 *
 *   empty_gif;                     location
 *
 * GET and HEAD only (405 otherwise), with the fixed Last-Modified nginx
 * gives it, so that conditional requests get 304.
 */
#include <scalws/scalws.h>

static char *sws_empty_gif(sws_conf_t *cf, const sws_command_t *cmd, void *conf);

static const sws_command_t sws_empty_gif_commands[] = {
    { "empty_gif", SWS_HTTP_LOC_CONF | SWS_CONF_NOARGS, sws_empty_gif, 0, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "empty_gif",
    .commands = sws_empty_gif_commands,
};

/* GIF89a, 1x1, a two-colour table, colour 0 transparent, one LZW-coded
 * pixel of colour 0. */
static u_char  sws_empty_gif_data[] = {
    'G', 'I', 'F', '8', '9', 'a',
    0x01, 0x00, 0x01, 0x00,            /* width 1, height 1 */
    0x80, 0x00, 0x00,                  /* a global table of 2 colours */
    0x00, 0x00, 0x00, 0xff, 0xff, 0xff,
    0x21, 0xf9, 0x04, 0x01, 0x00, 0x00, 0x00, 0x00,   /* colour 0 transparent */
    0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
    0x02, 0x02, 0x44, 0x01, 0x00,      /* LZW: minimum code size 2, one block */
    0x3b
};

static const sws_str_t  sws_empty_gif_type = sws_string("image/gif");
static const sws_str_t  sws_empty_gif_body = { sizeof(sws_empty_gif_data),
                                               sws_empty_gif_data };

#define SWS_EMPTY_GIF_MTIME  23349600      /* nginx's: 28 Sep 1970 06:00:00 GMT */

static sws_int_t
sws_empty_gif_handler(sws_http_request_t *r)
{
    sws_int_t  rc;

    if (!(sws_http_method(r) & (SWS_HTTP_GET | SWS_HTTP_HEAD))) {
        return SWS_HTTP_NOT_ALLOWED;
    }
    rc = sws_http_discard_body(r);
    if (rc != SWS_OK && rc != SWS_AGAIN) {
        return rc;
    }
    sws_http_set_last_modified(r, SWS_EMPTY_GIF_MTIME);
    return sws_http_send_response(r, SWS_HTTP_OK, &sws_empty_gif_type, &sws_empty_gif_body);
}

static char *
sws_empty_gif(sws_conf_t *cf, const sws_command_t *cmd, void *conf)
{
    (void) cmd;
    (void) conf;
    if (sws_http_set_content_handler(cf, sws_empty_gif_handler, "empty_gif") != SWS_OK) {
        return "conflicts with the content handler already set here";
    }
    return SWS_CONF_OK;
}
