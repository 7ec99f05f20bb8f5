/*
 * systemd's readiness protocol (sd_notify(3)): the master tells a
 * Type=notify unit when it serves, reloads and stops. A no-op when
 * NOTIFY_SOCKET is not set, or when scalwsd was built without libsystemd.
 */
#ifndef SWS_NOTIFY_H
#define SWS_NOTIFY_H

#include <scalws/sws_types.h>

typedef enum {
    SWS_NOTIFY_STATUS = 0,    /* STATUS= only */
    SWS_NOTIFY_READY,         /* READY=1: the listeners are open, workers started */
    SWS_NOTIFY_RELOADING,     /* RELOADING=1 and MONOTONIC_USEC= */
    SWS_NOTIFY_STOPPING       /* STOPPING=1 */
} sws_notify_e;

/* Send the state and "STATUS=" with the formatted text (fmt may be NULL).
 * Failures are logged at warn on log; they never stop the server. */
void sws_notify(sws_log_t *log, sws_notify_e state, const char *fmt, ...)
    SWS_PRINTF(3, 4);

#endif
