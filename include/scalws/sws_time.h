/*
 * The time cache: updated once per event-loop iteration so the hot path never
 * calls time functions; preformatted HTTP, log and ISO 8601 strings.
 */
#ifndef SWS_TIME_H
#define SWS_TIME_H

#include <time.h>
#include <scalws/sws_types.h>

void        sws_time_init(void);
void        sws_time_update(void);
sws_msec_t  sws_current_msec(void);          /* monotonic milliseconds */
time_t      sws_time_sec(void);              /* wall clock seconds */
/* "Sun, 06 Nov 1994 08:49:37 GMT" (29 bytes) */
const sws_str_t *sws_cached_http_time(void);
/* "06/Nov/1994:08:49:37 +0000" (access log) */
const sws_str_t *sws_cached_log_time(void);
/* "1994/11/06 08:49:37" (error log) */
const sws_str_t *sws_cached_err_log_time(void);
/* "1994-11-06T08:49:37+00:00" */
const sws_str_t *sws_cached_iso8601_time(void);

/* Format t as an IMF-fixdate into buf (29 bytes); returns end. */
u_char     *sws_http_time(u_char *buf, time_t t);
/* Parse IMF-fixdate, RFC 850 and asctime dates; -1 on error. */
time_t      sws_parse_http_time(const u_char *value, size_t len);

#endif
