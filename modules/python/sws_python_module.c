/*
 * The python module's descriptor. python_pass, the location's side, is
 * the proxy module's (docs/apps.md).
 */
#include "sws_python_module.h"

static const sws_command_t sws_python_commands[] = {
    { "python_app", SWS_HTTP_MAIN_CONF | SWS_CONF_BLOCK | SWS_CONF_TAKE1, sws_python_app,
      SWS_HTTP_MAIN_CONF_OFFSET, 0, NULL },
    sws_null_command
};

SWS_EXPORT sws_module_t sws_module = {
    SWS_MODULE_ABI,
    .name = "python",
    .commands = sws_python_commands,
};
