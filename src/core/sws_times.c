/*
 * The time cache and HTTP date formatting/parsing. sws_time_update() is cheap
 * when the second has not changed: two clock_gettime() calls (vDSO).
 * Formatted strings live in a small ring of slots and the published pointer
 * moves to a fully written slot, so a pointer taken before an update keeps
 * pointing at a complete (older) string for a few seconds.
 * Not async-signal-safe (localtime_r): call it from the loop, not a handler.
 */
#include <string.h>
#include <scalws/sws_time.h>
#include <scalws/sws_string.h>
#include "sws_core_module.h"
#include "sws_times_internal.h"

#define SWS_TIME_SLOTS  8

#define SWS_LOG_TIME_LEN      (sizeof("06/Nov/1994:08:49:37 +0000") - 1)
#define SWS_ERR_LOG_TIME_LEN  (sizeof("1994/11/06 08:49:37") - 1)
#define SWS_ISO8601_TIME_LEN  (sizeof("1994-11-06T08:49:37+00:00") - 1)

/* Largest time we format: 9999-12-31 23:59:59 (4-digit years only). */
#define SWS_TIME_MAX  ((time_t) 253402300799LL)

static u_char  sws_http_slots[SWS_TIME_SLOTS][SWS_HTTP_TIME_LEN];
static u_char  sws_log_slots[SWS_TIME_SLOTS][SWS_LOG_TIME_LEN];
static u_char  sws_err_slots[SWS_TIME_SLOTS][SWS_ERR_LOG_TIME_LEN];
static u_char  sws_iso_slots[SWS_TIME_SLOTS][SWS_ISO8601_TIME_LEN];
static u_char  sws_syslog_slots[SWS_TIME_SLOTS][SWS_SYSLOG_TIME_LEN];
static sws_uint_t  sws_time_slot;

static sws_str_t  sws_cached_http = { SWS_HTTP_TIME_LEN, NULL };
static sws_str_t  sws_cached_log = { SWS_LOG_TIME_LEN, NULL };
static sws_str_t  sws_cached_err = { SWS_ERR_LOG_TIME_LEN, NULL };
static sws_str_t  sws_cached_iso = { SWS_ISO8601_TIME_LEN, NULL };
static sws_str_t  sws_cached_syslog = { SWS_SYSLOG_TIME_LEN, NULL };

volatile time_t      sws_cached_sec = -1;        /* sws_times_internal.h */
volatile sws_msec_t  sws_cached_msec;

static const char  sws_wdays[7][4] = {
    "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"
};
static const char *const  sws_wdays_full[7] = {
    "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"
};
static const char  sws_months[12][4] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
};
/* Days before each month in a common year. */
static const int  sws_mdays_before[12] = {
    0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334
};


static inline int
sws_is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}


static inline int
sws_days_in_month(int64_t y, int mon)    /* mon 0..11 */
{
    static const int  mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

    return mdays[mon] + (mon == 1 && sws_is_leap(y));
}


/* Leap days in years [1, y). */
static inline int64_t
sws_leaps_before(int64_t y)
{
    y--;
    return y / 4 - y / 100 + y / 400;
}


/* Days since 1970-01-01 of a date (y >= 1, mon 0..11, mday 1..31). */
static int64_t
sws_days_from_date(int64_t y, int mon, int mday)
{
    int64_t  days;

    days = 365 * (y - 1970) + sws_leaps_before(y) - sws_leaps_before(1970);
    days += sws_mdays_before[mon] + (mon > 1 && sws_is_leap(y));
    return days + mday - 1;
}


typedef struct {
    int64_t  year;
    int      mon;     /* 0..11 */
    int      mday;    /* 1..31 */
    int      wday;    /* 0 = Sunday */
    int      hour, min, sec;
} sws_tm_t;


/* UTC broken-down time of t, 0 <= t <= SWS_TIME_MAX. */
static void
sws_gmtime(time_t t, sws_tm_t *tm)
{
    /* Count from 1601-01-01, the start of a 400-year Gregorian cycle. */
    int64_t  days = t / 86400, secs = t % 86400, d, n;
    int      mon, leap, before;

    tm->hour = (int) (secs / 3600);
    tm->min = (int) (secs % 3600 / 60);
    tm->sec = (int) (secs % 60);
    tm->wday = (int) ((days + 4) % 7);          /* 1970-01-01 was a Thursday */

    d = days + 134774;                         /* days from 1601-01-01 */
    tm->year = 1601 + 400 * (d / 146097);
    d %= 146097;
    n = sws_min(d / 36524, 3);                 /* centuries; the 4th is a day longer */
    tm->year += 100 * n;
    d -= 36524 * n;
    tm->year += 4 * (d / 1461);
    d %= 1461;
    n = sws_min(d / 365, 3);                   /* years; the 4th is the leap one */
    tm->year += n;
    d -= 365 * n;

    leap = sws_is_leap(tm->year);
    for (mon = 11; mon > 0; mon--) {
        before = sws_mdays_before[mon] + (mon > 1 && leap);
        if (d >= before) {
            break;
        }
    }
    tm->mon = mon;
    tm->mday = (int) (d - (sws_mdays_before[mon] + (mon > 1 && leap))) + 1;
}


static inline u_char *
sws_put2(u_char *p, int v)
{
    *p++ = (u_char) ('0' + v / 10);
    *p++ = (u_char) ('0' + v % 10);
    return p;
}


static inline u_char *
sws_put4(u_char *p, int v)
{
    p = sws_put2(p, v / 100);
    return sws_put2(p, v % 100);
}


static inline u_char *
sws_put_hms(u_char *p, int h, int m, int s)
{
    p = sws_put2(p, h);
    *p++ = ':';
    p = sws_put2(p, m);
    *p++ = ':';
    return sws_put2(p, s);
}


static u_char *
sws_http_time_format(u_char *buf, time_t t)
{
    sws_tm_t  tm;
    u_char   *p = buf;

    if (t < 0) {
        t = 0;
    } else if (t > SWS_TIME_MAX) {
        t = SWS_TIME_MAX;
    }
    sws_gmtime(t, &tm);

    p = sws_cpymem(p, sws_wdays[tm.wday], 3);
    *p++ = ',';
    *p++ = ' ';
    p = sws_put2(p, tm.mday);
    *p++ = ' ';
    p = sws_cpymem(p, sws_months[tm.mon], 3);
    *p++ = ' ';
    p = sws_put4(p, (int) tm.year);
    *p++ = ' ';
    p = sws_put_hms(p, tm.hour, tm.min, tm.sec);
    return sws_cpymem(p, " GMT", 4);
}

/* Formatting a date costs more than the rest of a small response head
 * (Last-Modified of every static answer): the last few are remembered, as
 * a site's hot files share few modification times. Per process: workers
 * are single-threaded. */
u_char *
sws_http_time(u_char *buf, time_t t)
{
    static struct {
        time_t  t;
        u_char  text[29];
    } memo[16] = { [0 ... 15] = { -1, { 0 } } };
    unsigned slot = (unsigned) t & 15;

    if (memo[slot].t != t || t == -1) {
        sws_http_time_format(memo[slot].text, t);
        memo[slot].t = t;
    }
    return sws_cpymem(buf, memo[slot].text, 29);
}


static void
sws_time_format(time_t sec)
{
    struct tm   lt;
    sws_uint_t  slot = (sws_time_slot + 1) % SWS_TIME_SLOTS;
    u_char     *p;
    long        off;
    int         year, offh, offm;
    u_char      sign;

    sws_http_time(sws_http_slots[slot], sec);

    if (localtime_r(&sec, &lt) == NULL) {
        memset(&lt, 0, sizeof(lt));
        lt.tm_year = 70;
        lt.tm_mday = 1;
    }
    year = sws_min(lt.tm_year + 1900, 9999);
    off = lt.tm_gmtoff;
    sign = off < 0 ? '-' : '+';
    off = off < 0 ? -off : off;
    offh = (int) sws_min(off / 3600, 99);
    offm = (int) (off % 3600 / 60);

    /* "06/Nov/1994:08:49:37 +0000" */
    p = sws_put2(sws_log_slots[slot], lt.tm_mday);
    *p++ = '/';
    p = sws_cpymem(p, sws_months[lt.tm_mon], 3);
    *p++ = '/';
    p = sws_put4(p, year);
    *p++ = ':';
    p = sws_put_hms(p, lt.tm_hour, lt.tm_min, lt.tm_sec);
    *p++ = ' ';
    *p++ = sign;
    p = sws_put2(p, offh);
    sws_put2(p, offm);

    /* "1994/11/06 08:49:37" */
    p = sws_put4(sws_err_slots[slot], year);
    *p++ = '/';
    p = sws_put2(p, lt.tm_mon + 1);
    *p++ = '/';
    p = sws_put2(p, lt.tm_mday);
    *p++ = ' ';
    sws_put_hms(p, lt.tm_hour, lt.tm_min, lt.tm_sec);

    /* "1994-11-06T08:49:37+00:00" */
    p = sws_put4(sws_iso_slots[slot], year);
    *p++ = '-';
    p = sws_put2(p, lt.tm_mon + 1);
    *p++ = '-';
    p = sws_put2(p, lt.tm_mday);
    *p++ = 'T';
    p = sws_put_hms(p, lt.tm_hour, lt.tm_min, lt.tm_sec);
    *p++ = sign;
    p = sws_put2(p, offh);
    *p++ = ':';
    sws_put2(p, offm);

    /* "Nov  6 08:49:37" (RFC 3164: the day padded with a space) */
    p = sws_cpymem(sws_syslog_slots[slot], sws_months[lt.tm_mon], 3);
    *p++ = ' ';
    *p++ = lt.tm_mday < 10 ? ' ' : (u_char) ('0' + lt.tm_mday / 10);
    *p++ = (u_char) ('0' + lt.tm_mday % 10);
    *p++ = ' ';
    sws_put_hms(p, lt.tm_hour, lt.tm_min, lt.tm_sec);

    /* Publish only fully written strings. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sws_cached_http.data = sws_http_slots[slot];
    sws_cached_log.data = sws_log_slots[slot];
    sws_cached_err.data = sws_err_slots[slot];
    sws_cached_iso.data = sws_iso_slots[slot];
    sws_cached_syslog.data = sws_syslog_slots[slot];
    sws_time_slot = slot;
}


void
sws_time_init(void)
{
    sws_time_update();
}


void
sws_time_zone_changed(void)
{
    tzset();
    sws_cached_sec = -1;               /* the local forms again, this second too */
    sws_time_update();
}


void
sws_time_update(void)
{
    struct timespec  rt, mt;

    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mt);

    sws_cached_msec = (sws_msec_t) mt.tv_sec * 1000 + mt.tv_nsec / 1000000;

    if (rt.tv_sec != sws_cached_sec) {
        sws_time_format(rt.tv_sec);
        sws_cached_sec = rt.tv_sec;
    }
}


sws_msec_t
sws_monotonic_msec(void)
{
    struct timespec  ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (sws_msec_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}


sws_msec_t
sws_current_msec(void)
{
    return sws_cached_msec;
}


time_t
sws_time_sec(void)
{
    return sws_cached_sec;
}


const sws_str_t *
sws_cached_http_time(void)
{
    return &sws_cached_http;
}


const sws_str_t *
sws_cached_log_time(void)
{
    return &sws_cached_log;
}


const sws_str_t *
sws_cached_err_log_time(void)
{
    return &sws_cached_err;
}


const sws_str_t *
sws_cached_iso8601_time(void)
{
    return &sws_cached_iso;
}


const sws_str_t *
sws_cached_syslog_time(void)
{
    return &sws_cached_syslog;
}


/* Parsing. Every helper returns -1 when the text does not match. */

static inline int
sws_digit(u_char c)
{
    return (c >= '0' && c <= '9') ? c - '0' : -1;
}


static int
sws_two_digits(const u_char *p)
{
    int  a = sws_digit(p[0]), b = sws_digit(p[1]);

    return (a < 0 || b < 0) ? -1 : a * 10 + b;
}


static int
sws_four_digits(const u_char *p)
{
    int  a = sws_two_digits(p), b = sws_two_digits(p + 2);

    return (a < 0 || b < 0) ? -1 : a * 100 + b;
}


static int
sws_match_wday3(const u_char *p)
{
    for (int i = 0; i < 7; i++) {
        if (memcmp(p, sws_wdays[i], 3) == 0) {
            return i;
        }
    }
    return -1;
}


static int
sws_match_month(const u_char *p)
{
    for (int i = 0; i < 12; i++) {
        if (memcmp(p, sws_months[i], 3) == 0) {
            return i;
        }
    }
    return -1;
}


/* "HH:MM:SS" */
static int
sws_parse_hms(const u_char *p, int *h, int *m, int *s)
{
    if (p[2] != ':' || p[5] != ':') {
        return -1;
    }
    *h = sws_two_digits(p);
    *m = sws_two_digits(p + 3);
    *s = sws_two_digits(p + 6);
    return (*h < 0 || *m < 0 || *s < 0) ? -1 : 0;
}


time_t
sws_parse_http_time(const u_char *v, size_t len)
{
    const u_char  *p, *comma;
    int            year, mon, mday, h, m, s, i;

    if (len < 24) {
        return -1;
    }

    if (v[3] == ',') {
        /* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
        if (len != 29 || sws_match_wday3(v) < 0 || v[4] != ' ' || v[7] != ' '
            || v[11] != ' ' || v[16] != ' ' || v[25] != ' '
            || memcmp(v + 26, "GMT", 3) != 0)
        {
            return -1;
        }
        mday = sws_two_digits(v + 5);
        mon = sws_match_month(v + 8);
        year = sws_four_digits(v + 12);
        if (sws_parse_hms(v + 17, &h, &m, &s) != 0) {
            return -1;
        }

    } else if (v[3] == ' ') {
        /* asctime: "Sun Nov  6 08:49:37 1994" (day padded with a space) */
        if (len != 24 || sws_match_wday3(v) < 0 || v[7] != ' ' || v[10] != ' '
            || v[19] != ' ')
        {
            return -1;
        }
        mon = sws_match_month(v + 4);
        mday = (v[8] == ' ') ? sws_digit(v[9]) : sws_two_digits(v + 8);
        year = sws_four_digits(v + 20);
        if (sws_parse_hms(v + 11, &h, &m, &s) != 0) {
            return -1;
        }

    } else {
        /* RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT" */
        comma = memchr(v, ',', sws_min(len, (size_t) 10));
        if (comma == NULL) {
            return -1;
        }
        for (i = 0; i < 7; i++) {
            if ((size_t) (comma - v) == strlen(sws_wdays_full[i])
                && memcmp(v, sws_wdays_full[i], comma - v) == 0)
            {
                break;
            }
        }
        p = comma + 1;
        if (i == 7 || (size_t) (v + len - p) != 23 || p[0] != ' ' || p[3] != '-'
            || p[7] != '-' || p[10] != ' ' || p[19] != ' '
            || memcmp(p + 20, "GMT", 3) != 0)
        {
            return -1;
        }
        mday = sws_two_digits(p + 1);
        mon = sws_match_month(p + 4);
        year = sws_two_digits(p + 8);
        if (year < 0 || sws_parse_hms(p + 11, &h, &m, &s) != 0) {
            return -1;
        }
        year += (year < 70) ? 2000 : 1900;
    }

    if (mon < 0 || year < 1970 || mday < 1 || mday > sws_days_in_month(year, mon)
        || h > 23 || m > 59 || s > 60)
    {
        return -1;
    }

    return (time_t) (sws_days_from_date(year, mon, mday) * 86400 + h * 3600 + m * 60 + s);
}
