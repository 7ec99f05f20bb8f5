/* The modules compiled into scalwsd, in initialisation order. Filters
 * registered later run earlier: the range filter sees the body before the
 * core writer, the not-modified filter sees the head before the range one. */
#include "sws_cycle.h"

extern sws_module_t sws_core_module;
extern sws_module_t sws_events_module;
extern sws_module_t sws_http_module;
extern sws_module_t sws_http_core_module;
extern sws_module_t sws_http_ssl_module;
extern sws_module_t sws_http_v2_module;
extern sws_module_t sws_http_log_module;
extern sws_module_t sws_http_body_file_module;
extern sws_module_t sws_http_upstream_module;
extern sws_module_t sws_http_range_filter_module;
extern sws_module_t sws_http_not_modified_filter_module;

sws_module_t *sws_builtin_modules[] = {
    &sws_core_module,
    &sws_events_module,
    &sws_http_module,
    &sws_http_core_module,
    &sws_http_ssl_module,
    &sws_http_v2_module,
    &sws_http_log_module,
    &sws_http_body_file_module,
    &sws_http_upstream_module,
    &sws_http_range_filter_module,
    &sws_http_not_modified_filter_module,
};

sws_uint_t sws_builtin_modules_n = sizeof(sws_builtin_modules) / sizeof(sws_builtin_modules[0]);
