/*
 * The built-in paths (./configure's --pid-path, --error-log-path, ...):
 * the defaults of the directives that name files, made relative to the
 * prefix when they lie under the built-in one. A file of its own so that
 * the modules that need a default (the access log) do not pull in the core
 * module.
 */
#include <string.h>
#include <scalws/scalws.h>
#include "sws_core_module.h"

/* The generated configure header defines the install paths. */
#if defined(__has_include)
#if __has_include("sws_auto_config.h")
#include "sws_auto_config.h"
#endif
#endif

#ifndef SWS_MODULES_PATH
#define SWS_MODULES_PATH  "modules"
#endif
#ifndef SWS_PID_PATH
#define SWS_PID_PATH  "logs/scalws.pid"
#endif
#ifndef SWS_ERROR_LOG_PATH
#define SWS_ERROR_LOG_PATH  "logs/error.log"
#endif
#ifndef SWS_HTTP_LOG_PATH
#define SWS_HTTP_LOG_PATH  "logs/access.log"
#endif
#ifndef SWS_HTTP_CLIENT_BODY_TEMP_PATH
#define SWS_HTTP_CLIENT_BODY_TEMP_PATH  "client_body_temp"
#endif
#ifndef SWS_HTTP_PROXY_TEMP_PATH
#define SWS_HTTP_PROXY_TEMP_PATH  "proxy_temp"
#endif
#ifndef SWS_HTML_PATH
#define SWS_HTML_PATH  "html"
#endif


/* A built-in path under the built-in prefix becomes relative to the prefix,
 * so that "scalwsd -p DIR" moves it too. */
void
sws_core_strip_prefix(sws_str_t *path)
{
#ifdef SWS_PREFIX
    size_t  len = sizeof(SWS_PREFIX) - 1;

    if (len > 1 && path->len > len && strncmp((char *) path->data, SWS_PREFIX, len) == 0
        && (SWS_PREFIX[len - 1] == '/' || path->data[len] == '/'))
    {
        path->data += len;
        path->len -= len;
        while (path->len > 0 && path->data[0] == '/') {
            path->data++;
            path->len--;
        }
    }
#else
    (void) path;
#endif
}


sws_int_t
sws_core_default_path(sws_conf_t *cf, sws_core_path_e which, sws_str_t *path)
{
    static const char *const  paths[] = {
        [SWS_CORE_PATH_PID] = SWS_PID_PATH,
        [SWS_CORE_PATH_ERROR_LOG] = SWS_ERROR_LOG_PATH,
        [SWS_CORE_PATH_MODULES] = SWS_MODULES_PATH,
        [SWS_CORE_PATH_HTTP_LOG] = SWS_HTTP_LOG_PATH,
        [SWS_CORE_PATH_CLIENT_BODY_TEMP] = SWS_HTTP_CLIENT_BODY_TEMP_PATH,
        [SWS_CORE_PATH_PROXY_TEMP] = SWS_HTTP_PROXY_TEMP_PATH,
        [SWS_CORE_PATH_HTML] = SWS_HTML_PATH,
    };

    path->data = (u_char *) paths[which];
    path->len = strlen(paths[which]);
    sws_core_strip_prefix(path);
    return sws_conf_full_name(cf, path, 0);
}
