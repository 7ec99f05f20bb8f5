/*
 * expires: the Expires and Cache-Control fields, computed as nginx does.
 *
 *   max        Expires: Thu, 31 Dec 2037 23:55:55 GMT, Cache-Control: max-age=315360000
 *   epoch      Expires: Thu, 01 Jan 1970 00:00:01 GMT, Cache-Control: no-cache
 *   TIME       now + TIME; "modified TIME": Last-Modified + TIME (now + TIME
 *              when the response has no Last-Modified)
 *   @TIME      the next TIME of day, local time
 *
 * Cache-Control is max-age=SECONDS until that moment, or no-cache when the
 * time is negative or the moment has passed. An Expires of the response
 * (a proxied server's) is replaced, and so is its first Cache-Control;
 * further Cache-Control fields are removed.
 */
#include "sws_headers.h"

/* Units, largest first, in seconds. */
static const struct {
    u_char  unit;
    time_t  seconds;
} sws_headers_units[] = {
    { 'y', 365 * 24 * 3600 }, { 'M', 30 * 24 * 3600 }, { 'w', 7 * 24 * 3600 },
    { 'd', 24 * 3600 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 },
};

sws_int_t
sws_headers_parse_time(const sws_str_t *text, time_t *out)
{
    const u_char  *p = text->data, *end = text->data + text->len;
    time_t         total = 0, value, max = (time_t) 0x7fffffff;
    size_t         next = 0, u;
    int            neg = 0, terms = 0;

    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    for ( ;; ) {
        while (p < end && (*p == ' ' || *p == '\t')) {
            p++;
        }
        if (p == end) {
            break;
        }
        if (*p < '0' || *p > '9') {
            return SWS_ERROR;
        }
        value = 0;
        for (; p < end && *p >= '0' && *p <= '9'; p++) {
            value = value * 10 + (*p - '0');
            if (value > max) {
                return SWS_ERROR;
            }
        }
        if (p == end || *p == ' ' || *p == '\t') {
            u = sws_nelems(sws_headers_units) - 1;        /* bare: seconds */
        } else {
            for (u = 0; u < sws_nelems(sws_headers_units); u++) {
                if (sws_headers_units[u].unit == *p) {
                    break;
                }
            }
            if (u == sws_nelems(sws_headers_units)) {
                return SWS_ERROR;
            }
            p++;
        }
        /* each unit once, largest first: "1h30m", not "30m1h" */
        if (u < next) {
            return SWS_ERROR;
        }
        next = u + 1;
        if (value > (max - total) / sws_headers_units[u].seconds) {
            return SWS_ERROR;
        }
        total += value * sws_headers_units[u].seconds;
        terms++;
    }
    if (terms == 0) {
        return SWS_ERROR;
    }
    *out = neg ? -total : total;
    return SWS_OK;
}

time_t
sws_headers_next_time(time_t now, time_t daily)
{
    struct tm  tm;
    time_t     next;

    localtime_r(&now, &tm);
    tm.tm_hour = (int) (daily / 3600);
    tm.tm_min = (int) (daily / 60 % 60);
    tm.tm_sec = (int) (daily % 60);
    tm.tm_isdst = -1;
    next = mktime(&tm);
    if (next == (time_t) -1) {
        return -1;
    }
    if (next <= now) {
        tm.tm_mday++;
        tm.tm_isdst = -1;
        next = mktime(&tm);
    }
    return next;
}

/* Set name to value: the first field of that name gets it, the others go. */
static sws_int_t
sws_headers_replace(sws_http_request_t *r, const char *lcname, size_t len,
    const sws_str_t *name, const sws_str_t *value)
{
    sws_http_header_t  *h = sws_http_header_out(r, lcname, len);
    sws_str_t           keep;

    if (h == NULL) {
        return sws_http_header_out_add(r, name, value) ? SWS_OK : SWS_ERROR;
    }
    keep = h->name;
    sws_http_header_out_remove(r, lcname, len);
    return sws_http_header_out_add(r, &keep, value) ? SWS_OK : SWS_ERROR;
}

const char *
sws_headers_parse_expires(const sws_str_t *v, int modified, sws_uint_t *kind, time_t *t)
{
    sws_str_t  rest;            /* after the @ or + */

    *t = 0;
    if (!modified && sws_str_eq_cstr(v, "off")) {
        *kind = SWS_HEADERS_EXPIRES_OFF;
    } else if (!modified && sws_str_eq_cstr(v, "epoch")) {
        *kind = SWS_HEADERS_EXPIRES_EPOCH;
    } else if (!modified && sws_str_eq_cstr(v, "max")) {
        *kind = SWS_HEADERS_EXPIRES_MAX;
    } else if (v->len > 1 && v->data[0] == '@') {
        if (modified) {
            return "daily time cannot be used with \"modified\"";
        }
        rest.data = v->data + 1;
        rest.len = v->len - 1;
        if (rest.data[0] == '-' || sws_headers_parse_time(&rest, t) != SWS_OK) {
            return "invalid value";
        }
        if (*t >= 24 * 60 * 60) {
            return "daily time must be less than 24 hours";
        }
        *kind = SWS_HEADERS_EXPIRES_DAILY;
    } else if (v->len > 1 && v->data[0] == '+') {
        /* an explicit plus sign, as nginx takes it ("modified +24h") */
        rest.data = v->data + 1;
        rest.len = v->len - 1;
        if (rest.data[0] == '-' || sws_headers_parse_time(&rest, t) != SWS_OK) {
            return "invalid value";
        }
        *kind = modified ? SWS_HEADERS_EXPIRES_MODIFIED : SWS_HEADERS_EXPIRES_ACCESS;
    } else if (sws_headers_parse_time(v, t) == SWS_OK) {
        *kind = modified ? SWS_HEADERS_EXPIRES_MODIFIED : SWS_HEADERS_EXPIRES_ACCESS;
    } else {
        return "invalid value";
    }
    return NULL;
}

sws_int_t
sws_headers_set_expires(sws_http_request_t *r, sws_uint_t kind, time_t expires_time)
{
    static const sws_str_t  expires = sws_string("Expires"),
                            cache_control = sws_string("Cache-Control"),
                            no_cache = sws_string("no-cache"),
                            max_date = sws_string("Thu, 31 Dec 2037 23:55:55 GMT"),
                            max_age = sws_string("max-age=315360000"),
                            epoch_date = sws_string("Thu, 01 Jan 1970 00:00:01 GMT");
    sws_str_t               date, cc;
    time_t                  now, when, age;
    u_char                 *p;

    if (kind == SWS_HEADERS_EXPIRES_MAX) {
        if (sws_headers_replace(r, "expires", 7, &expires, &max_date) != SWS_OK) {
            return SWS_ERROR;
        }
        return sws_headers_replace(r, "cache-control", 13, &cache_control, &max_age);
    }
    if (kind == SWS_HEADERS_EXPIRES_EPOCH) {
        if (sws_headers_replace(r, "expires", 7, &expires, &epoch_date) != SWS_OK) {
            return SWS_ERROR;
        }
        return sws_headers_replace(r, "cache-control", 13, &cache_control, &no_cache);
    }

    now = sws_time_sec();
    if (kind == SWS_HEADERS_EXPIRES_DAILY) {
        when = sws_headers_next_time(now, expires_time);
        age = when - now;
    } else if (kind == SWS_HEADERS_EXPIRES_ACCESS
               || sws_http_last_modified(r) == -1)
    {
        when = now + expires_time;
        age = expires_time;
    } else {
        when = sws_http_last_modified(r) + expires_time;
        age = when - now;
    }

    p = sws_pnalloc(sws_http_pool(r), 29 + sizeof("max-age=") + 20);
    if (p == NULL) {
        return SWS_ERROR;
    }
    date.data = p;
    date.len = (size_t) (sws_http_time(p, when < 0 ? 0 : when) - p);
    if (sws_headers_replace(r, "expires", 7, &expires, &date) != SWS_OK) {
        return SWS_ERROR;
    }
    if (expires_time < 0 || age < 0) {
        return sws_headers_replace(r, "cache-control", 13, &cache_control, &no_cache);
    }
    cc.data = p + date.len;
    cc.len = (size_t) (sws_slprintf(cc.data, cc.data + sizeof("max-age=") + 20, "max-age=%lld",
                                    (long long) age) - cc.data);
    return sws_headers_replace(r, "cache-control", 13, &cache_control, &cc);
}
