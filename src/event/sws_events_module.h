/* The "events" built-in module: the events { } block. */
#ifndef SWS_EVENTS_MODULE_H
#define SWS_EVENTS_MODULE_H

#include <scalws/scalws.h>
#include "sws_cycle.h"

#define SWS_EVENTS_EPOLL     0
#define SWS_EVENTS_IO_URING  1

/* The longest wait_pause: a pause delays what comes meanwhile by as much. */
#define SWS_EVENTS_MAX_PAUSE_US  10000

typedef struct {
    sws_uint_t  worker_connections;
    sws_uint_t  method;             /* use: SWS_EVENTS_EPOLL (the default) */
    sws_uint_t  wait_pause_us;      /* wait_pause: 0 (off, the default) */
} sws_events_conf_t;

extern sws_module_t sws_events_module;

#define sws_events_conf(cycle) \
    ((sws_events_conf_t *) (cycle)->conf_ctx[sws_events_module.index])

#endif
