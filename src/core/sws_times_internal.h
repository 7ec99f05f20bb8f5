/*
 * Core-private: the event loop's cached clock (sws_times.c) read in place,
 * for the per-request paths; modules ask sws_current_msec and sws_time_sec.
 */
#ifndef SWS_TIMES_INTERNAL_H
#define SWS_TIMES_INTERNAL_H

#include <time.h>
#include <scalws/sws_time.h>

/* The length of every sws_cached_http_time() (RFC 9110's IMF-fixdate) */
#define SWS_HTTP_TIME_LEN     (sizeof("Sun, 06 Nov 1994 08:49:37 GMT") - 1)

/* "Nov  6 08:49:37": RFC 3164's TIMESTAMP, local time */
#define SWS_SYSLOG_TIME_LEN   (sizeof("Nov  6 08:49:37") - 1)
const sws_str_t *sws_cached_syslog_time(void);

extern volatile time_t      sws_cached_sec;
extern volatile sws_msec_t  sws_cached_msec;

/* The monotonic clock now, in ms, read afresh (not the loop's cached one):
 * the master's and helpers' timers, which run outside a worker's loop. */
sws_msec_t  sws_monotonic_msec(void);

/* sws_current_msec() without the call */
static inline sws_msec_t
sws_now_msec(void)
{
    return sws_cached_msec;
}

/* sws_time_sec() without the call */
static inline time_t
sws_now_sec(void)
{
    return sws_cached_sec;
}

#endif
