/* Error logging with levels debug..emerg. */
#ifndef SWS_LOG_H
#define SWS_LOG_H

#include <errno.h>
#include <scalws/sws_types.h>

#define SWS_LOG_STDERR  0
#define SWS_LOG_EMERG   1
#define SWS_LOG_ALERT   2
#define SWS_LOG_CRIT    3
#define SWS_LOG_ERR     4
#define SWS_LOG_WARN    5
#define SWS_LOG_NOTICE  6
#define SWS_LOG_INFO    7
#define SWS_LOG_DEBUG   8

/* Writes "YYYY/MM/DD HH:MM:SS [level] pid#0: message[: strerror(err)]\n".
 * err is an errno value or 0. Nothing is written above the log's level. */
void sws_log_error(sws_uint_t level, sws_log_t *log, int err, const char *fmt, ...)
    SWS_PRINTF(4, 5);
void sws_log_verror(sws_uint_t level, sws_log_t *log, int err, const char *fmt, va_list args);
int  sws_log_enabled(sws_log_t *log, sws_uint_t level);

#define sws_log_debug(log, ...) \
    do { if (sws_unlikely(sws_log_enabled(log, SWS_LOG_DEBUG))) \
             sws_log_error(SWS_LOG_DEBUG, log, 0, __VA_ARGS__); } while (0)

#endif
