/*
 * Listings in nginx's three formats. Names are bytes from the file
 * system: percent-escaped in links, and in text &<>"' as entities (HTML,
 * XML) or \" \\ \uXXXX (JSON). Control bytes cannot be written in HTML or
 * XML text at all: they show as '?' (the link keeps the exact name).
 */
#include <time.h>
#include "sws_autoindex.h"

#define SWS_AUTOINDEX_NAME_LEN  50     /* nginx's column */

static const char *const sws_autoindex_months[] = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
};

u_char *
sws_autoindex_reserve(sws_autoindex_out_t *o, size_t n)
{
    size_t  used = (size_t) (o->pos - o->start), size = (size_t) (o->end - o->start);
    u_char *p;

    if ((size_t) (o->end - o->pos) >= n) {
        return o->pos;
    }
    size = sws_max(size * 2, used + n + 4096);
    p = sws_pnalloc(o->pool, size);
    if (p == NULL) {
        return NULL;
    }
    if (used) {
        memcpy(p, o->start, used);
    }
    o->start = p;
    o->pos = p + used;
    o->end = p + size;
    return o->pos;
}

static sws_int_t
sws_out_add(sws_autoindex_out_t *o, const void *data, size_t len)
{
    if (sws_autoindex_reserve(o, len) == NULL) {
        return SWS_ERROR;
    }
    o->pos = sws_cpymem(o->pos, data, len);
    return SWS_OK;
}

#define sws_out_lit(o, s)  sws_out_add(o, s, sizeof(s) - 1)

/* Text for HTML and XML: the entities, control bytes as '?'. */
static sws_int_t
sws_out_markup(sws_autoindex_out_t *o, const u_char *s, size_t len)
{
    u_char *p;
    size_t  i;

    if ((p = sws_autoindex_reserve(o, len * 6)) == NULL) {
        return SWS_ERROR;
    }
    for (i = 0; i < len; i++) {
        switch (s[i]) {
        case '<':  p = sws_cpymem(p, "&lt;", 4); break;
        case '>':  p = sws_cpymem(p, "&gt;", 4); break;
        case '&':  p = sws_cpymem(p, "&amp;", 5); break;
        case '"':  p = sws_cpymem(p, "&quot;", 6); break;
        case '\'': p = sws_cpymem(p, "&#39;", 5); break;
        default:
            *p++ = (s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
        }
    }
    o->pos = p;
    return SWS_OK;
}

static sws_int_t
sws_out_json_string(sws_autoindex_out_t *o, const u_char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    u_char           *p;
    size_t            i;

    if ((p = sws_autoindex_reserve(o, len * 6 + 2)) == NULL) {
        return SWS_ERROR;
    }
    *p++ = '"';
    for (i = 0; i < len; i++) {
        if (s[i] == '"' || s[i] == '\\') {
            *p++ = '\\';
            *p++ = s[i];
        } else if (s[i] < 0x20 || s[i] == 0x7f) {
            p = sws_cpymem(p, "\\u00", 4);
            *p++ = (u_char) hex[s[i] >> 4];
            *p++ = (u_char) hex[s[i] & 0xf];
        } else {
            *p++ = s[i];
        }
    }
    *p++ = '"';
    o->pos = p;
    return SWS_OK;
}

/* Characters (UTF-8 sequences; any other byte counts one), and the byte
 * length of the first n of them. */
static size_t
sws_utf8_chars(const u_char *s, size_t len, size_t n, size_t *bytes)
{
    size_t i = 0, count = 0;

    if (bytes) {
        *bytes = len;
    }
    while (i < len) {
        if (count == n && bytes) {
            *bytes = i;
        }
        i++;
        while (i < len && (s[i] & 0xc0) == 0x80) {
            i++;
        }
        count++;
    }
    return count;
}

static u_char *
sws_autoindex_size(u_char *p, const sws_autoindex_entry_t *e, int exact)
{
    static const off_t g = 1024 * 1024 * 1024, m = 1024 * 1024;
    off_t               n = e->size, unit;
    char                scale = 0;

    if (exact) {
        if (e->dir) {
            return sws_cpymem(p, "                  -", 19);
        }
        return sws_slprintf(p, p + 64, "%19lld", (long long) n);
    }
    if (e->dir) {
        return sws_cpymem(p, "      -", 7);
    }
    /* nginx's rounding: to the nearest unit, half up */
    unit = n > g - 1 ? g : n > m - 1 ? m : n > 9999 ? 1024 : 1;
    scale = unit == g ? 'G' : unit == m ? 'M' : unit == 1024 ? 'K' : 0;
    if (scale) {
        n = n / unit + (n % unit > unit / 2 - 1 ? 1 : 0);
        return sws_slprintf(p, p + 64, "%6lld%c", (long long) n, scale);
    }
    return sws_slprintf(p, p + 64, " %6lld", (long long) n);
}

sws_int_t
sws_autoindex_html(sws_autoindex_out_t *o, const sws_str_t *uri,
    const sws_autoindex_entry_t *e, sws_uint_t n, const sws_autoindex_loc_conf_t *conf)
{
    sws_uint_t  i;
    size_t      len, cut, elen;
    struct tm   tm;
    u_char     *p;

    if (sws_out_lit(o, "<html>\r\n<head><title>Index of ") != SWS_OK
        || sws_out_markup(o, uri->data, uri->len) != SWS_OK
        || sws_out_lit(o, "</title></head>\r\n<body>\r\n<h1>Index of ") != SWS_OK
        || sws_out_markup(o, uri->data, uri->len) != SWS_OK
        || sws_out_lit(o, "</h1><hr><pre><a href=\"../\">../</a>\r\n") != SWS_OK)
    {
        return SWS_ERROR;
    }
    for (i = 0; i < n; i++) {
        elen = sws_escape_uri_len(e[i].name.data, e[i].name.len, SWS_ESCAPE_URI_COMPONENT);
        if ((p = sws_autoindex_reserve(o, elen + 16)) == NULL) {
            return SWS_ERROR;
        }
        p = sws_cpymem(p, "<a href=\"", 9);
        p = sws_escape_uri(p, e[i].name.data, e[i].name.len, SWS_ESCAPE_URI_COMPONENT);
        if (e[i].dir) {
            *p++ = '/';
        }
        p = sws_cpymem(p, "\">", 2);
        o->pos = p;

        len = sws_utf8_chars(e[i].name.data, e[i].name.len, SWS_AUTOINDEX_NAME_LEN - 3, &cut)
              + e[i].dir;
        if (len > SWS_AUTOINDEX_NAME_LEN) {
            if (sws_out_markup(o, e[i].name.data, cut) != SWS_OK
                || sws_out_lit(o, "..&gt;</a>") != SWS_OK)
            {
                return SWS_ERROR;
            }
        } else if (sws_out_markup(o, e[i].name.data, e[i].name.len) != SWS_OK
                   || (e[i].dir && sws_out_lit(o, "/") != SWS_OK)
                   || sws_out_lit(o, "</a>") != SWS_OK)
        {
            return SWS_ERROR;
        }
        if ((p = sws_autoindex_reserve(o, SWS_AUTOINDEX_NAME_LEN + 64)) == NULL) {
            return SWS_ERROR;
        }
        if (len < SWS_AUTOINDEX_NAME_LEN) {
            memset(p, ' ', SWS_AUTOINDEX_NAME_LEN - len);
            p += SWS_AUTOINDEX_NAME_LEN - len;
        }
        *p++ = ' ';
        if (conf->localtime) {
            localtime_r(&e[i].mtime, &tm);
        } else {
            gmtime_r(&e[i].mtime, &tm);
        }
        p = sws_slprintf(p, p + 64, "%02d-%s-%d %02d:%02d ", tm.tm_mday,
                     sws_autoindex_months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour,
                     tm.tm_min);
        p = sws_autoindex_size(p, &e[i], (int) conf->exact_size);
        *p++ = '\r';
        *p++ = '\n';
        o->pos = p;
    }
    return sws_out_lit(o, "</pre><hr></body>\r\n</html>\r\n");
}

sws_int_t
sws_autoindex_json(sws_autoindex_out_t *o, const sws_str_t *callback,
    const sws_autoindex_entry_t *e, sws_uint_t n)
{
    sws_uint_t  i;
    u_char     *p;

    if (callback != NULL
        && (sws_out_lit(o, "/* callback */\r\n") != SWS_OK
            || sws_out_add(o, callback->data, callback->len) != SWS_OK
            || sws_out_lit(o, "(") != SWS_OK))
    {
        return SWS_ERROR;
    }
    if (sws_out_lit(o, "[") != SWS_OK) {
        return SWS_ERROR;
    }
    for (i = 0; i < n; i++) {
        if (sws_out_lit(o, "\r\n{ \"name\":") != SWS_OK
            || sws_out_json_string(o, e[i].name.data, e[i].name.len) != SWS_OK
            || (p = sws_autoindex_reserve(o, 128)) == NULL)
        {
            return SWS_ERROR;
        }
        p = sws_slprintf(p, p + 64, ", \"type\":\"%s\", \"mtime\":\"",
                     e[i].dir ? "directory" : e[i].file ? "file" : "other");
        p = sws_http_time(p, e[i].mtime);
        *p++ = '"';
        if (e[i].file) {
            p = sws_slprintf(p, p + 64, ", \"size\":%lld", (long long) e[i].size);
        }
        p = sws_cpymem(p, " }", 2);
        if (i + 1 < n) {
            *p++ = ',';
        }
        o->pos = p;
    }
    /* nginx's bytes: no line end after the list */
    if (sws_out_lit(o, "\r\n]") != SWS_OK) {
        return SWS_ERROR;
    }
    return callback != NULL ? sws_out_lit(o, ");") : SWS_OK;
}

sws_int_t
sws_autoindex_xml(sws_autoindex_out_t *o, const sws_autoindex_entry_t *e, sws_uint_t n)
{
    const char *tag;
    sws_uint_t  i;
    struct tm   tm;
    u_char     *p;

    if (sws_out_lit(o, "<?xml version=\"1.0\"?>\r\n<list>\r\n") != SWS_OK) {
        return SWS_ERROR;
    }
    for (i = 0; i < n; i++) {
        tag = e[i].dir ? "directory" : e[i].file ? "file" : "other";
        if ((p = sws_autoindex_reserve(o, 128)) == NULL) {
            return SWS_ERROR;
        }
        gmtime_r(&e[i].mtime, &tm);
        p = sws_slprintf(p, p + 64, "<%s mtime=\"%04d-%02d-%02dT%02d:%02d:%02dZ\"", tag,
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec);
        if (e[i].file) {
            p = sws_slprintf(p, p + 64, " size=\"%lld\"", (long long) e[i].size);
        }
        *p++ = '>';
        o->pos = p;
        if (sws_out_markup(o, e[i].name.data, e[i].name.len) != SWS_OK
            || sws_out_lit(o, "</") != SWS_OK
            || sws_out_add(o, tag, strlen(tag)) != SWS_OK
            || sws_out_lit(o, ">\r\n") != SWS_OK)
        {
            return SWS_ERROR;
        }
    }
    return sws_out_lit(o, "</list>\r\n");
}
