/*
 * The lines of a CGI response head: a field "Name: value" (a token name,
 * a value without control characters but tab, blanks around it dropped),
 * the empty line, and for uwsgi and SCGI an HTTP status line first.
 * Nothing here knows a request; see sws_http_upstream_cgi_lines.h.
 */
#include <string.h>
#include "sws_http_upstream_cgi_lines.h"

static int
sws_cgi_token(u_char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int
sws_cgi_digits3(const u_char *p)
{
    return p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9'
           && p[2] >= '0' && p[2] <= '9';
}

sws_uint_t
sws_cgi_status_value(const sws_str_t *v)
{
    sws_uint_t n;

    if (v->len < 3 || (v->len > 3 && v->data[3] != ' ') || !sws_cgi_digits3(v->data)) {
        return 0;
    }
    n = (sws_uint_t) ((v->data[0] - '0') * 100 + (v->data[1] - '0') * 10 + (v->data[2] - '0'));
    return n >= 200 && n <= 599 ? n : 0;
}

/* "HTTP/d.d NNN[ reason]" */
static sws_int_t
sws_cgi_status_line(u_char *p, size_t len, sws_cgi_line_t *line)
{
    sws_str_t code;

    if (len < 12 || p[6] != '.' || p[5] < '0' || p[5] > '9' || p[7] < '0' || p[7] > '9'
        || p[8] != ' ')
    {
        line->why = "an invalid status line";
        return SWS_CGI_LINE_INVALID;
    }
    code.data = p + 9;
    code.len = len - 9;
    line->status = sws_cgi_status_value(&code);
    if (line->status == 0) {
        line->why = "an invalid status line";
        return SWS_CGI_LINE_INVALID;
    }
    line->kind = SWS_CGI_LINE_STATUS;
    return SWS_OK;
}

sws_int_t
sws_cgi_line_next(u_char **pos, u_char *last, int status_line, sws_cgi_line_t *line)
{
    u_char *p = *pos, *nl, *colon, *v, *end;
    size_t  len, i;

    nl = memchr(p, '\n', (size_t) (last - p));
    if (nl == NULL) {
        return SWS_AGAIN;
    }
    *pos = nl + 1;
    len = (size_t) (nl - p);
    if (len && p[len - 1] == '\r') {
        len--;
    }
    if (len == 0) {
        line->kind = SWS_CGI_LINE_END;
        return SWS_OK;
    }
    if (status_line && len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
        return sws_cgi_status_line(p, len, line);
    }
    end = p + len;
    colon = memchr(p, ':', len);
    if (colon == NULL || colon == p) {
        line->why = "an invalid header line";
        return SWS_CGI_LINE_INVALID;
    }
    for (i = 0; p + i < colon; i++) {
        if (!sws_cgi_token(p[i])) {
            line->why = "an invalid header line";
            return SWS_CGI_LINE_INVALID;
        }
    }
    v = colon + 1;
    while (v < end && (*v == ' ' || *v == '\t')) {
        v++;
    }
    while (end > v && (end[-1] == ' ' || end[-1] == '\t')) {
        end--;
    }
    for (i = 0; v + i < end; i++) {
        if ((v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f) {
            line->why = "an invalid header line";
            return SWS_CGI_LINE_INVALID;
        }
    }
    line->kind = SWS_CGI_LINE_FIELD;
    line->name.data = p;
    line->name.len = (size_t) (colon - p);
    line->value.data = v;
    line->value.len = (size_t) (end - v);
    return SWS_OK;
}
