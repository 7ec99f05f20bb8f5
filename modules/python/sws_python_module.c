/*
 * The python module: Python web applications behind scalwsd.
 *
 *   python_app NAME { ... }     an application the master runs, under
 *                               uvicorn, gunicorn or the native bridge's
 *                               runner (sws_python_app.c, docs/apps.md)
 *   python_bridge_pass ADDR;    requests handed, already parsed, to the
 *                               native bridge's runner: an app's NAME, an
 *                               upstream { }, unix:/path (the bridge:
 *                               sws_python_bridge_module.c,
 *                               docs/python-bridge.md)
 *   python_bridge_*             the upstream framework's settings for it,
 *                               as uwsgi_* has them
 *
 * python_pass (HTTP to uvicorn and gunicorn) is the proxy module's.
 */
#include "sws_python_module.h"
#include "sws_python_bridge.h"

#define ALL  (SWS_HTTP_MAIN_CONF | SWS_HTTP_SRV_CONF | SWS_HTTP_LOC_CONF)
#define UPS(suffix, args, id)  SWS_HTTP_CGI_UPS_("python_bridge", suffix, args, id)

static const sws_command_t sws_python_commands[] = {
    { "python_app", SWS_HTTP_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_TAKE1, sws_python_app,
      SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    { "python_bridge_pass", SWS_HTTP_LOC_CONF | SWS_CONF_TAKE1, sws_python_bridge_pass,
      SWS_HTTP_LOC_CONF_OFFSET, 0, NULL },
    { "python_bridge_pass_request_headers", ALL | SWS_CONF_FLAG, sws_conf_set_flag_slot,
      SWS_HTTP_LOC_CONF_OFFSET, offsetof(sws_pyb_loc_conf_t, cgi.pass_request_headers), NULL },
    UPS("_connect_timeout", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_CONNECT_TIMEOUT),
    UPS("_send_timeout", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_SEND_TIMEOUT),
    UPS("_read_timeout", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_READ_TIMEOUT),
    UPS("_next_upstream", SWS_CONF_1MORE, SWS_UPSTREAM_CONF_NEXT_UPSTREAM),
    UPS("_next_upstream_tries", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_NEXT_UPSTREAM_TRIES),
    UPS("_next_upstream_timeout", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_NEXT_UPSTREAM_TIMEOUT),
    UPS("_buffering", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_BUFFERING),
    UPS("_buffers", SWS_CONF_TAKE2, SWS_UPSTREAM_CONF_BUFFERS),
    UPS("_buffer_size", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_BUFFER_SIZE),
    UPS("_temp_path", SWS_CONF_TAKE1234, SWS_UPSTREAM_CONF_TEMP_PATH),
    UPS("_max_temp_file_size", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_MAX_TEMP_FILE_SIZE),
    UPS("_temp_file_write_size", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_TEMP_FILE_WRITE_SIZE),
    UPS("_request_buffering", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_REQUEST_BUFFERING),
    UPS("_pass_request_body", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_PASS_REQUEST_BODY),
    UPS("_ignore_client_abort", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_IGNORE_CLIENT_ABORT),
    UPS("_socket_keepalive", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_SOCKET_KEEPALIVE),
    UPS("_limit_rate", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_LIMIT_RATE),
    UPS("_hide_header", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_HIDE_HEADER),
    UPS("_pass_header", SWS_CONF_TAKE1, SWS_UPSTREAM_CONF_PASS_HEADER),
    UPS("_intercept_errors", SWS_CONF_FLAG, SWS_UPSTREAM_CONF_INTERCEPT_ERRORS),
    UPS("_upgrade", SWS_CONF_1MORE, SWS_UPSTREAM_CONF_UPGRADE),
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "python",
    .commands = sws_python_commands,
    .create_loc_conf = sws_python_bridge_create_loc_conf,
    .merge_loc_conf = sws_python_bridge_merge_loc_conf,
};
