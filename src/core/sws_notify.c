/*
 * sd_notify(3) through libsystemd. The master is the unit's main process
 * (scalwsd runs with "daemon off" under systemd), so the default
 * NotifyAccess=main accepts its messages and nothing else's. READY=1 also
 * names the master (MAINPID=): with "daemon on" the forked master is not the
 * process systemd started, and a unit with NotifyAccess=all follows it.
 *
 * RELOADING=1 carries MONOTONIC_USEC=: systemd 253 and newer (Type=
 * notify-reload) require it to match the reload to the request; systemd 252
 * (Debian 12) ignores the field and takes RELOADING=1 / READY=1 alone.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <scalws/sws_log.h>
#include "sws_notify.h"

#if defined(__has_include)
#if __has_include("sws_auto_config.h")
#include "sws_auto_config.h"
#endif
#endif

#if (SWS_HAVE_SYSTEMD)
#include <systemd/sd-daemon.h>
#endif

/* The states' lines; STATUS= follows. */
static const char  *sws_notify_lines[] = {
    [SWS_NOTIFY_STATUS] = "",
    [SWS_NOTIFY_READY] = "READY=1\n",
    [SWS_NOTIFY_RELOADING] = "RELOADING=1\n",
    [SWS_NOTIFY_STOPPING] = "STOPPING=1\n",
};


#if !(SWS_HAVE_SYSTEMD)
static int  sws_notify_said;
#endif


void
sws_notify(sws_log_t *log, sws_notify_e state, const char *fmt, ...)
{
    char             msg[512], status[256];
    va_list          args;
    struct timespec  ts;
    int              n;

    if (getenv("NOTIFY_SOCKET") == NULL) {
        return;
    }

    status[0] = '\0';
    if (fmt != NULL) {
        va_start(args, fmt);
        (void) vsnprintf(status, sizeof(status), fmt, args);
        va_end(args);
        /* one line: a newline would start another assignment */
        status[strcspn(status, "\n")] = '\0';
    }

    n = snprintf(msg, sizeof(msg), "%s", sws_notify_lines[state]);
    if (state == SWS_NOTIFY_READY) {
        n += snprintf(msg + n, sizeof(msg) - (size_t) n, "MAINPID=%ld\n", (long) getpid());
    } else if (state == SWS_NOTIFY_RELOADING) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        n += snprintf(msg + n, sizeof(msg) - (size_t) n, "MONOTONIC_USEC=%llu\n",
                      (unsigned long long) ts.tv_sec * 1000000ULL
                      + (unsigned long long) ts.tv_nsec / 1000);
    }
    if (fmt != NULL) {
        (void) snprintf(msg + n, sizeof(msg) - (size_t) n, "STATUS=%s", status);
    }

#if (SWS_HAVE_SYSTEMD)
    n = sd_notify(0, msg);
    if (n < 0) {
        sws_log_error(SWS_LOG_WARN, log, -n, "sd_notify(\"%.*s\") failed",
                      (int) strcspn(msg, "\n"), msg);
    }
#else
    /* Said once: a Type=notify unit would otherwise just time out. */
    if (!sws_notify_said) {
        sws_notify_said = 1;
        sws_log_error(SWS_LOG_WARN, log, 0, "NOTIFY_SOCKET is set, but scalwsd was built "
                      "without libsystemd: systemd is not told (use Type=simple)");
    }
#endif
}
