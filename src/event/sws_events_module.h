/* The "events" built-in module: the events { } block. */
#ifndef SWS_EVENTS_MODULE_H
#define SWS_EVENTS_MODULE_H

#include <scalws/scalws.h>
#include "sws_cycle.h"

typedef struct {
    sws_uint_t  worker_connections;
} sws_events_conf_t;

extern sws_module_t sws_events_module;

#define sws_events_conf(cycle) \
    ((sws_events_conf_t *) (cycle)->conf_ctx[sws_events_module.index])

#endif
