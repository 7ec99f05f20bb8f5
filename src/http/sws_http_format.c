/*
 * Formats built from variables ("text $var text ${var}text", see
 * sws_http_variables.h): compiled once at configuration time into an array
 * of operations (literal text, or a variable getter with its argument), then
 * evaluated, measured, escaped and rendered per request.
 */
#include "sws_http_core.h"
#include "sws_http_variables.h"
#include "sws_swar.h"

struct sws_http_format_s {
    sws_http_fop_t      *ops;
    sws_uint_t           nops;
    sws_uint_t           nvars;
    int                  escape;
    sws_http_request_t  *primed;       /* values in ops are those of this request */
};

/* ---- compiling ---- */

static int
sws_http_var_char(u_char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || c == '_';
}

static const char *
sws_http_format_error(sws_pool_t *pool, const char *fmt, const u_char *name, size_t len)
{
    size_t   size = strlen(fmt) + len + 1;
    u_char  *buf = sws_pnalloc(pool, size);

    if (buf == NULL) {
        return "out of memory";
    }
    *sws_slprintf(buf, buf + size - 1, fmt, (int) len, name) = '\0';
    return (const char *) buf;
}

sws_http_format_t *
sws_http_format_compile(sws_pool_t *pool, const sws_str_t *text, int escape,
    const char **err)
{
    sws_http_format_t  *f;
    sws_http_fop_t     *op;
    u_char             *p, *end, *name, *lit;
    size_t              n, len;
    sws_uint_t          dollars = 0;
    int                 braced;
    sws_int_t           rc;

    if (escape < SWS_HTTP_ESCAPE_DEFAULT || escape > SWS_HTTP_ESCAPE_NONE) {
        *err = "invalid escape mode";
        return NULL;
    }

    f = sws_pcalloc(pool, sizeof(sws_http_format_t));
    p = sws_pnalloc(pool, text->len ? text->len : 1);
    if (f == NULL || p == NULL) {
        *err = "out of memory";
        return NULL;
    }
    if (text->len) {
        sws_memcpy(p, text->data, text->len);
    }
    end = p + text->len;
    f->escape = escape;

    for (n = 0; n < text->len; n++) {
        dollars += (p[n] == '$');
    }
    /* at most a literal before each variable, and one after the last */
    f->ops = sws_pcalloc(pool, (2 * dollars + 1) * sizeof(sws_http_fop_t));
    if (f->ops == NULL) {
        *err = "out of memory";
        return NULL;
    }

    lit = p;
    while (p < end) {
        if (*p != '$') {
            p++;
            continue;
        }

        if (p > lit) {
            op = &f->ops[f->nops++];
            op->text.data = lit;
            op->text.len = (size_t) (p - lit);
        }

        p++;
        braced = (p < end && *p == '{');
        if (braced) {
            p++;
        }
        name = p;
        if (p < end && *p >= '0' && *p <= '9') {
            p++;                 /* $1..$9: one digit, "$1st" is $1 "st" */
        } else {
            while (p < end && sws_http_var_char(*p)) {
                p++;
            }
        }
        len = (size_t) (p - name);

        if (braced) {
            if (p == end || *p != '}') {
                if (p == end) {
                    *err = sws_http_format_error(pool, "missing \"}\" after \"${%.*s\"",
                                                 name, len);
                } else {
                    *err = sws_http_format_error(pool,
                                                 "invalid variable name in \"${%.*s\"",
                                                 name, len + 1);
                }
                return NULL;
            }
        }
        if (len == 0) {
            *err = braced ? "empty variable name \"${}\""
                          : "invalid variable name: \"$\" must be followed by a name";
            return NULL;
        }

        op = &f->ops[f->nops++];
        rc = sws_http_var_resolve(pool, op, name, len);
        if (rc == SWS_DECLINED) {
            *err = sws_http_format_error(pool, "unknown variable \"$%.*s\"", name, len);
            return NULL;
        }
        if (rc != SWS_OK) {
            *err = "out of memory";
            return NULL;
        }
        f->nvars++;

        if (braced) {
            p++;     /* '}' */
        }
        lit = p;
    }

    if (p > lit) {
        op = &f->ops[f->nops++];
        op->text.data = lit;
        op->text.len = (size_t) (p - lit);
    }

    return f;
}


int
sws_http_format_is_static(const sws_http_format_t *f)
{
    return f->nvars == 0;
}


/* ---- escaping ---- */

/* Default mode: 1 for the bytes written as \xHH. */
static const uint8_t  sws_http_esc_default[256] = {
    [0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x7f ... 0xff] = 1
};

/* JSON: extra bytes each byte needs (\" \\ \n ..: 1, \u00XX: 5). */
static const uint8_t  sws_http_esc_json[256] = {
    [0x00 ... 0x07] = 5, ['\b'] = 1, ['\t'] = 1, ['\n'] = 1, [0x0b] = 5,
    ['\f'] = 1, ['\r'] = 1, [0x0e ... 0x1f] = 5, ['"'] = 1, ['\\'] = 1
};

static const u_char  sws_http_hex[] = "0123456789ABCDEF";

static size_t
sws_http_escaped_len(const sws_str_t *v, int escape)
{
    size_t  n = v->len, i;

    switch (escape) {
    case SWS_HTTP_ESCAPE_DEFAULT:
        if (v->len == 0) {
            return 1;                       /* "-" */
        }
        for (i = 0; i < v->len; i++) {
            n += 3 * sws_http_esc_default[v->data[i]];
        }
        return n;

    case SWS_HTTP_ESCAPE_JSON:
        for (i = 0; i < v->len; i++) {
            n += sws_http_esc_json[v->data[i]];
        }
        return n;

    default:
        return n;
    }
}

static u_char *
sws_http_escape(u_char *p, const sws_str_t *v, int escape)
{
    size_t  i;
    u_char  c;

    switch (escape) {
    case SWS_HTTP_ESCAPE_DEFAULT:
        if (v->len == 0) {
            *p++ = '-';
            return p;
        }
        for (i = 0; i < v->len; i++) {
            c = v->data[i];
            if (sws_http_esc_default[c]) {
                *p++ = '\\';
                *p++ = 'x';
                *p++ = sws_http_hex[c >> 4];
                *p++ = sws_http_hex[c & 0xf];
            } else {
                *p++ = c;
            }
        }
        return p;

    case SWS_HTTP_ESCAPE_JSON:
        for (i = 0; i < v->len; i++) {
            c = v->data[i];
            switch (sws_http_esc_json[c]) {
            case 0:
                *p++ = c;
                break;
            case 1:
                *p++ = '\\';
                *p++ = c == '\b' ? 'b' : c == '\t' ? 't' : c == '\n' ? 'n'
                     : c == '\f' ? 'f' : c == '\r' ? 'r' : c;
                break;
            default:
                p = sws_cpymem(p, "\\u00", 4);
                *p++ = sws_http_hex[c >> 4];
                *p++ = sws_http_hex[c & 0xf];
                break;
            }
        }
        return p;

    default:
        return v->len ? sws_cpymem(p, v->data, v->len) : p;
    }
}


/* ---- rendering ---- */

static void
sws_http_format_eval(sws_http_format_t *f, sws_http_request_t *r)
{
    sws_http_fop_t  *op = f->ops, *last = f->ops + f->nops;

    for ( ; op < last; op++) {
        if (op->get) {
            op->get(r, op, &op->value);
        }
    }
}

size_t
sws_http_format_len(sws_http_format_t *f, sws_http_request_t *r)
{
    sws_http_fop_t  *op = f->ops, *last = f->ops + f->nops;
    size_t           n = 0;

    /* evaluated and measured in one walk (render writes these values) */
    if (f->escape == SWS_HTTP_ESCAPE_NONE) {
        for ( ; op < last; op++) {
            if (op->get) {
                op->get(r, op, &op->value);
                n += op->value.len;
            } else {
                n += op->text.len;
            }
        }
        f->primed = r;
        return n;
    }
    for ( ; op < last; op++) {
        if (op->get) {
            op->get(r, op, &op->value);
            n += sws_http_escaped_len(&op->value, f->escape);
        } else {
            n += op->text.len;
        }
    }
    f->primed = r;
    return n;
}

u_char *
sws_http_format_render(sws_http_format_t *f, sws_http_request_t *r, u_char *buf)
{
    sws_http_fop_t  *op = f->ops, *last = f->ops + f->nops;

    if (f->primed != r) {
        sws_http_format_eval(f, r);
    }
    f->primed = NULL;

    if (f->escape == SWS_HTTP_ESCAPE_NONE) {
        for ( ; op < last; op++) {
            if (op->get) {
                buf = sws_swar_copy(buf, op->value.data, op->value.len);
            } else {
                buf = sws_swar_copy(buf, op->text.data, op->text.len);
            }
        }
        return buf;
    }
    for ( ; op < last; op++) {
        if (op->get) {
            buf = sws_http_escape(buf, &op->value, f->escape);
        } else {
            buf = sws_cpymem(buf, op->text.data, op->text.len);
        }
    }
    return buf;
}
