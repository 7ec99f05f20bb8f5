/*
 * The native Python bridge's runner, its C part (scalws_bridge._bridge):
 * the frames from scalwsd read and the request turned into an ASGI scope
 * or a WSGI environ here, so that Python parses nothing; the response
 * frames written here. The framing is the module's own file
 * (modules/python/sws_python_bridge_frame.c), compiled into this object.
 *
 *   Parser(on_request, on_body, on_body_end, mode, base)
 *       mode MODE_ASGI: on_request(scope, flags), base the scope's
 *       "asgi" value; MODE_WSGI: on_request(environ, flags), base the
 *       dict each environ starts as a copy of; flags: the REQUEST's
 *       (REQUEST_BODY: body frames follow; REQUEST_UPGRADE; REQUEST_FILE:
 *       the response may be a FILE). .state: an ASGI lifespan
 *       state dict, copied into each scope (None: no "state").
 *       .feed(bytes[, n]): calls the callbacks (n: the first n bytes only);
 *       ValueError on invalid framing. With on_request None, feed returns
 *       the REQUEST it completed as (environ or scope, flags), or None: one
 *       per call (a second in the same data is a framing error); the WSGI
 *       runner's way, without a Python call per request.
 *       .read_from(fd): one recv(2) that does not wait, fed: feed()'s
 *       result (None also when there was nothing); EOFError at the end
 *   response(status, headers, body=None, end=-1): a RESPONSE frame, a
 *       DATA frame of body (if not empty), an END of flags end (if >= 0)
 *   data(body), data_head(n), end(flags): DATA and END frames
 *   file(offset, length): a FILE frame (sent with its descriptor)
 *   send_some(fd, data): one send(2) that does not wait; bytes sent
 *   DONE: an awaitable already done (to None), stateless, that asyncio also
 *       takes for a coroutine (it has send, throw and close): what the ASGI
 *       send() returns when it did not have to wait
 *   Cycle(conn, scope, has_body): an ASGI http request's state and its
 *       send() (asgi.py's Cycle subclasses it); set_coroutine_marker(m):
 *       what its send's _is_coroutine gives (asyncio's marker)
 *   in_context(app, cycle, base): an awaitable that calls the application
 *       and runs each of its steps in a new copy of the contextvars
 *       context base
 *   Gate(loop): where the ASGI serving task waits for its next request
 *       (_bridge_gate.c)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include "sws_python_bridge_frame.h"
#include "_bridge_gate.h"

#define MODE_ASGI  0
#define MODE_WSGI  1

/* Interned keys. */
static PyObject *k_type, *k_asgi, *k_http_version, *k_method, *k_scheme, *k_path,
                *k_raw_path, *k_query_string, *k_root_path, *k_headers, *k_client,
                *k_server, *k_state, *k_http, *k_https, *k_empty,
                *k_REQUEST_METHOD, *k_SCRIPT_NAME, *k_PATH_INFO, *k_QUERY_STRING,
                *k_SERVER_NAME, *k_SERVER_PORT, *k_SERVER_PROTOCOL, *k_REMOTE_ADDR,
                *k_REMOTE_PORT, *k_REQUEST_URI, *k_CONTENT_LENGTH, *k_CONTENT_TYPE,
                *k_url_scheme, *k_v10, *k_v11, *k_v20, *k_HTTP10, *k_HTTP11, *k_HTTP20;

/*
 * The field names most requests have: their ASGI name (bytes) and WSGI key
 * (HTTP_...) made once, and per parser the last value of each, reused
 * while the next request's is the same (a client's User-Agent, Accept,
 * Host ... repeat from request to request), so that a common request
 * allocates only what changes.
 */
static const char *const common_names[] = {
    "host", "user-agent", "accept", "accept-encoding", "accept-language", "connection",
    "content-type", "content-length", "cookie", "x-forwarded-for", "x-forwarded-proto",
    "x-request-id", "x-real-ip", "referer", "origin", "cache-control", "pragma",
    "upgrade", "authorization", "if-none-match", "if-modified-since", "range",
    "sec-fetch-mode", "sec-fetch-site", "sec-fetch-dest", "upgrade-insecure-requests",
    "dnt", "te",
};
#define NCOMMON  (sizeof(common_names) / sizeof(common_names[0]))
static PyObject *common_bytes[NCOMMON];     /* b"host" ... */
static PyObject *common_keys[NCOMMON];      /* "HTTP_HOST" ... */

/* Per parser, the last objects made from the request's strings. */
enum {
    C_METHOD, C_PATH, C_QUERY, C_RAW, C_CLIENT, C_SERVER, C_SERVER_ADDR, C_SERVER_PORT,
    C_HOST, C_SCOPE, C_ENV, C_NFIXED
};

/* The scope's values that the parser's first scope (fixed[C_SCOPE], which
 * each scope is a copy of) holds: the first request's. */
enum { S_VERSION, S_METHOD, S_PATH, S_RAW, S_QUERY, S_SERVER, S_N };
/* The environ's keys whose values the kept environ (fixed[C_ENV]) holds. */
enum { E_METHOD, E_PATH, E_QUERY, E_URI, E_SNAME, E_SPORT, E_PROTO, E_RADDR, E_RPORT,
       E_SCHEME, E_N };

typedef struct {
    PyObject_HEAD
    sws_pyb_reader_t  rd;
    PyObject         *on_request, *on_body, *on_body_end, *base, *state;
    int               mode;
    int               in_body;        /* between a REQUEST with a body and BODY_END */
    unsigned char    *head;           /* a REQUEST being collected */
    size_t            head_len, head_size;
    PyObject         *fixed[C_NFIXED];      /* the last of each string (or tuple) */
    PyObject         *values[NCOMMON];      /* the last value of each common field */
    PyObject         *pairs[NCOMMON];       /* ASGI: its last (name, value) */
    PyObject         *scope_vals[S_N];      /* ASGI: fixed[C_SCOPE]'s values (S_*) */
    unsigned          server_port;          /* fixed[C_SERVER]'s and [C_SERVER_PORT]'s */
    /* fixed[C_ENV]'s request: its field names (each a 2-byte length and
     * the name), and whether CONTENT_LENGTH came from the frame */
    unsigned char    *env_names;
    size_t            env_names_len, env_names_size;
    unsigned          env_nfields;
    int               env_cl, env_cl_added;
    /* fixed[C_ENV]'s values: of the keys E_* and of its fields, in order */
    PyObject         *env_vals[E_N];
    PyObject        **env_fvals;
    size_t            env_fvals_n;
    unsigned char    *rbuf;           /* read_from()'s */
    int               reading;        /* in read_from() */
} ParserObject;

/* o (bytes, or a latin-1 str) holds these bytes. */
static int
same_text(PyObject *o, const unsigned char *data, size_t len, int str)
{
    return str ? (PyUnicode_GET_LENGTH(o) == (Py_ssize_t) len
                  && PyUnicode_KIND(o) == PyUnicode_1BYTE_KIND
                  && memcmp(PyUnicode_1BYTE_DATA(o), data, len) == 0)
               : (PyBytes_GET_SIZE(o) == (Py_ssize_t) len
                  && memcmp(PyBytes_AS_STRING(o), data, len) == 0);
}

/* *slot's object if it holds these bytes (bytes or a latin-1 str), else
 * a new one kept in *slot; a new reference, NULL on error. */
static PyObject *
cached(PyObject **slot, const unsigned char *data, size_t len, int str)
{
    PyObject *o = *slot;

    if (o != NULL && same_text(o, data, len, str)) {
        Py_INCREF(o);
        return o;
    }
    o = str ? PyUnicode_DecodeLatin1((const char *) data, (Py_ssize_t) len, NULL)
            : PyBytes_FromStringAndSize((const char *) data, (Py_ssize_t) len);
    if (o == NULL) {
        return NULL;
    }
    Py_INCREF(o);
    Py_XSETREF(*slot, o);
    return o;
}

/* The index of a common field name, or -1. */
static int
common_index(const sws_pyb_str_t *name)
{
    size_t i;

    for (i = 0; i < NCOMMON; i++) {
        if (PyBytes_GET_SIZE(common_bytes[i]) == (Py_ssize_t) name->len
            && memcmp(PyBytes_AS_STRING(common_bytes[i]), name->data, name->len) == 0)
        {
            return (int) i;
        }
    }
    return -1;
}

/* A number as a str (ports, lengths): no format parsing. */
static PyObject *
decimal_str(unsigned long long v)
{
    char  buf[24], *p = buf + sizeof(buf);

    do {
        *--p = (char) ('0' + v % 10);
        v /= 10;
    } while (v);
    return PyUnicode_DecodeLatin1(p, buf + sizeof(buf) - p, NULL);
}

static PyObject *
latin1(const sws_pyb_str_t *s)
{
    return PyUnicode_DecodeLatin1((const char *) s->data, (Py_ssize_t) s->len, NULL);
}

/* ASGI's http_version ("1.1", "2") or WSGI's SERVER_PROTOCOL ("HTTP/1.1"). */
static PyObject *
version_str(unsigned major, unsigned minor, int wsgi)
{
    PyObject *v;

    if (major == 1 && minor == 1) {
        v = wsgi ? k_HTTP11 : k_v11;
    } else if (major == 1 && minor == 0) {
        v = wsgi ? k_HTTP10 : k_v10;
    } else if (major == 2 && (minor == 0 || !wsgi)) {
        v = wsgi ? k_HTTP20 : k_v20;
    } else {
        return wsgi ? PyUnicode_FromFormat("HTTP/%u.%u", major, minor)
                    : PyUnicode_FromFormat("%u.%u", major, minor);
    }
    Py_INCREF(v);
    return v;
}

/* d[key] = value, value's reference taken; -1 on error. */
static int
set_steal(PyObject *d, PyObject *key, PyObject *value)
{
    int rc;

    if (value == NULL) {
        return -1;
    }
    rc = PyDict_SetItem(d, key, value);
    Py_DECREF(value);
    return rc;
}

/* (host, port), or None without a host; the host's str kept in *slot. */
static PyObject *
addr_tuple(PyObject **slot, const sws_pyb_str_t *host, unsigned port)
{
    PyObject *t, *h, *n;

    if (host->len == 0) {
        Py_RETURN_NONE;
    }
    h = cached(slot, host->data, host->len, 1);
    n = h ? PyLong_FromLong((long) port) : NULL;
    t = n ? PyTuple_New(2) : NULL;
    if (t == NULL) {
        Py_XDECREF(h);
        Py_XDECREF(n);
        return NULL;
    }
    PyTuple_SET_ITEM(t, 0, h);
    PyTuple_SET_ITEM(t, 1, n);
    return t;
}

/* The scope's "server": the same tuple while the address stays. */
static PyObject *
asgi_server(ParserObject *p, const sws_pyb_request_t *rq)
{
    PyObject *t = p->fixed[C_SERVER];

    if (t != NULL && PyTuple_CheckExact(t) && p->server_port == rq->server_port
        && same_text(PyTuple_GET_ITEM(t, 0), rq->server.data, rq->server.len, 1))
    {
        Py_INCREF(t);
        return t;
    }
    t = addr_tuple(&p->fixed[C_SERVER_ADDR], &rq->server, rq->server_port);
    if (t == NULL) {
        return NULL;
    }
    Py_INCREF(t);
    Py_XSETREF(p->fixed[C_SERVER], t);
    p->server_port = rq->server_port;
    return t;
}

static PyObject *wsgi_key(const sws_pyb_str_t *name);

/* A field's name and value as ASGI's bytes or WSGI's key and str: a
 * common name's (k: its common_index) made once, its value the previous one while equal. 0, or
 * -1 with both NULL. */
static int
field_objects(ParserObject *p, int k, const sws_pyb_str_t *name, const sws_pyb_str_t *value,
    int wsgi, PyObject **n, PyObject **v)
{
    if (k >= 0) {
        *n = wsgi ? common_keys[k] : common_bytes[k];
        Py_INCREF(*n);
        *v = cached(&p->values[k], value->data, value->len, wsgi);
    } else {
        *n = wsgi ? wsgi_key(name)
                  : PyBytes_FromStringAndSize((const char *) name->data,
                                              (Py_ssize_t) name->len);
        *v = wsgi ? latin1(value)
                  : PyBytes_FromStringAndSize((const char *) value->data,
                                              (Py_ssize_t) value->len);
    }
    if (*n == NULL || *v == NULL) {
        Py_CLEAR(*n);
        Py_CLEAR(*v);
        return -1;
    }
    return 0;
}

/* [(name, value), ...] of bytes, names and repeated values shared. */
static PyObject *
asgi_headers(ParserObject *p, const sws_pyb_request_t *rq)
{
    PyObject            *headers, *pair, *n, *v;
    const unsigned char *cur = rq->fields;
    sws_pyb_str_t        name, value;
    Py_ssize_t           i = 0;

    headers = PyList_New((Py_ssize_t) rq->nfields);
    if (headers == NULL) {
        return NULL;
    }
    while (sws_pyb_field_next(&cur, rq->end, &name, &value)) {
        int k = common_index(&name);

        if (field_objects(p, k, &name, &value, 0, &n, &v) < 0) {
            Py_DECREF(headers);
            return NULL;
        }
        if (k >= 0 && p->pairs[k] != NULL && PyTuple_GET_ITEM(p->pairs[k], 1) == v) {
            /* a common field with the value of the last: its (name, value) */
            Py_DECREF(n);
            Py_DECREF(v);
            pair = p->pairs[k];
            Py_INCREF(pair);
        } else {
            pair = PyTuple_New(2);
            if (pair == NULL) {
                Py_DECREF(n);
                Py_DECREF(v);
                Py_DECREF(headers);
                return NULL;
            }
            PyTuple_SET_ITEM(pair, 0, n);
            PyTuple_SET_ITEM(pair, 1, v);
            if (k >= 0) {
                Py_INCREF(pair);
                Py_XSETREF(p->pairs[k], pair);
            }
        }
        PyList_SET_ITEM(headers, i++, pair);
    }
    return headers;
}

/* A new scope with every key: a copy of the parser's first one (copying a
 * dict is a copy of its table; inserting each key into a new one was a
 * third of making a scope). (The environ gains nothing so: its field keys
 * vary and grow the copy's table.) */
static PyObject *
asgi_scope_copy(ParserObject *p)
{
    PyObject *const keys[] = { k_type, k_asgi, k_http_version, k_method, k_scheme, k_path,
                               k_raw_path, k_query_string, k_root_path, k_headers,
                               k_client, k_server };
    PyObject       *t = p->fixed[C_SCOPE], *v;
    size_t          i;

    if (t == NULL) {
        t = PyDict_New();
        if (t == NULL) {
            return NULL;
        }
        for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
            v = keys[i] == k_type || keys[i] == k_scheme ? k_http
                : keys[i] == k_asgi ? p->base : keys[i] == k_root_path ? k_empty : Py_None;
            if (PyDict_SetItem(t, keys[i], v) < 0) {
                Py_DECREF(t);
                return NULL;
            }
        }
        p->fixed[C_SCOPE] = t;
    }
    return PyDict_Copy(t);
}

static PyObject *const *scope_keys[S_N] = {
    &k_http_version, &k_method, &k_path, &k_raw_path, &k_query_string, &k_server
};

/* scope[S_* i's key] = value (its reference taken), unless the scope
 * already has that object: a copy of the first scope, whose values repeat
 * (the method, the version, the server; the path and query while the
 * first's repeat); -1 on error. */
static int
scope_set(ParserObject *p, PyObject *scope, int i, PyObject *value)
{
    if (value != NULL && value == p->scope_vals[i]) {
        Py_DECREF(value);
        return 0;
    }
    return set_steal(scope, *scope_keys[i], value);
}

/* The first scope's values become those of fixed[C_SCOPE] and so of every
 * later scope's copy. */
static int
scope_keep(ParserObject *p, PyObject *scope)
{
    PyObject *v;
    int       i;

    for (i = 0; i < S_N; i++) {
        v = PyDict_GetItemWithError(scope, *scope_keys[i]);
        if (v == NULL) {
            return PyErr_Occurred() ? -1 : 0;
        }
        if (PyDict_SetItem(p->fixed[C_SCOPE], *scope_keys[i], v) < 0) {
            return -1;
        }
        Py_INCREF(v);
        Py_XSETREF(p->scope_vals[i], v);
    }
    return 0;
}

/* ASGI's path, UTF-8 (surrogateescape): the previous str while an ASCII
 * path repeats (an ASCII str's bytes are the bytes it was decoded from;
 * bytes that match them are ASCII and decode to it). */
static PyObject *
asgi_path(ParserObject *p, const sws_pyb_str_t *path)
{
    PyObject *o = p->fixed[C_PATH];

    if (o != NULL && PyUnicode_IS_ASCII(o) && same_text(o, path->data, path->len, 1)) {
        Py_INCREF(o);
        return o;
    }
    o = PyUnicode_DecodeUTF8((const char *) path->data, (Py_ssize_t) path->len,
                             "surrogateescape");
    if (o == NULL) {
        return NULL;
    }
    Py_INCREF(o);
    Py_XSETREF(p->fixed[C_PATH], o);
    return o;
}

static PyObject *
asgi_scope(ParserObject *p, const sws_pyb_request_t *rq)
{
    PyObject            *scope;
    const unsigned char *q;
    sws_pyb_str_t        raw;

    scope = asgi_scope_copy(p);
    if (scope == NULL) {
        return NULL;
    }
    raw = rq->raw;
    q = memchr(raw.data, '?', raw.len);
    if (q) {
        raw.len = (size_t) (q - raw.data);
    }
    if (scope_set(p, scope, S_VERSION, version_str(rq->major, rq->minor, 0)) < 0
        || scope_set(p, scope, S_METHOD, cached(&p->fixed[C_METHOD], rq->method.data,
                                                rq->method.len, 1)) < 0
        || ((rq->flags & SWS_PYB_HTTPS) && PyDict_SetItem(scope, k_scheme, k_https) < 0)
        || scope_set(p, scope, S_PATH, asgi_path(p, &rq->path)) < 0
        || scope_set(p, scope, S_RAW, cached(&p->fixed[C_RAW], raw.data, raw.len, 0)) < 0
        || scope_set(p, scope, S_QUERY, cached(&p->fixed[C_QUERY], rq->query.data,
                                               rq->query.len, 0)) < 0
        || set_steal(scope, k_headers, asgi_headers(p, rq)) < 0
        || set_steal(scope, k_client, addr_tuple(&p->fixed[C_CLIENT], &rq->client,
                                                 rq->client_port)) < 0
        || scope_set(p, scope, S_SERVER, asgi_server(p, rq)) < 0)
    {
        goto failed;
    }
    if (p->scope_vals[S_VERSION] == NULL && scope_keep(p, scope) < 0) {
        goto failed;
    }
    if (p->state != Py_None && set_steal(scope, k_state, PyDict_Copy(p->state)) < 0) {
        goto failed;
    }
    return scope;

failed:
    Py_DECREF(scope);
    return NULL;
}

/* HTTP_NAME for a field (CONTENT_TYPE and CONTENT_LENGTH without it). */
static PyObject *
wsgi_key(const sws_pyb_str_t *name)
{
    char    buf[256], *k;
    size_t  i, n;
    int     plain;

    plain = (name->len == 12 && memcmp(name->data, "content-type", 12) == 0)
            || (name->len == 14 && memcmp(name->data, "content-length", 14) == 0);
    n = (plain ? 0 : 5) + name->len;
    k = n <= sizeof(buf) ? buf : PyMem_Malloc(n);
    if (k == NULL) {
        return PyErr_NoMemory();
    }
    if (!plain) {
        memcpy(k, "HTTP_", 5);
    }
    for (i = 0; i < name->len; i++) {
        unsigned char c = name->data[i];
        k[n - name->len + i] = c == '-' ? '_' : (c >= 'a' && c <= 'z') ? (char) (c - 32)
                                                                         : (char) c;
    }
    PyObject *key = PyUnicode_DecodeLatin1(k, (Py_ssize_t) n, NULL);
    if (k != buf) {
        PyMem_Free(k);
    }
    return key;
}

/* SERVER_PORT: the same str while the port stays. */
static PyObject *
wsgi_server_port(ParserObject *p, unsigned port)
{
    PyObject *o;

    if (p->fixed[C_SERVER_PORT] == NULL || p->server_port != port) {
        o = decimal_str(port);
        if (o == NULL) {
            return NULL;
        }
        Py_XSETREF(p->fixed[C_SERVER_PORT], o);
        Py_CLEAR(p->fixed[C_SERVER]);           /* its port was the old one */
        p->server_port = port;
    }
    Py_INCREF(p->fixed[C_SERVER_PORT]);
    return p->fixed[C_SERVER_PORT];
}

/*
 * The environ of a request whose field names are the previous one's (a
 * client's requests mostly are) starts as a copy of the previous environ
 * (fixed[C_ENV], its keys in the same order): copying a dict's table and
 * replacing values costs less than inserting 25 keys one by one. Only an
 * environ without repeated fields is kept so (their values are joined).
 */
static int
env_same_keys(ParserObject *p, const sws_pyb_request_t *rq, int cl)
{
    const unsigned char *cur = rq->fields, *s = p->env_names, *end;
    sws_pyb_str_t        name, value;

    if (p->fixed[C_ENV] == NULL || rq->nfields != p->env_nfields || cl != p->env_cl) {
        return 0;
    }
    end = s + p->env_names_len;
    while (sws_pyb_field_next(&cur, rq->end, &name, &value)) {
        if ((size_t) (end - s) < 2 + name.len || s[0] != (name.len >> 8)
            || s[1] != (name.len & 0xff) || memcmp(s + 2, name.data, name.len) != 0)
        {
            return 0;
        }
        s += 2 + name.len;
    }
    return s == end;
}

static void
env_vals_clear(ParserObject *p)
{
    size_t i;

    for (i = 0; i < E_N; i++) {
        Py_CLEAR(p->env_vals[i]);
    }
    for (i = 0; i < p->env_fvals_n; i++) {
        Py_CLEAR(p->env_fvals[i]);
    }
    p->env_fvals_n = 0;
}

static PyObject *const *env_keys[E_N] = {
    &k_REQUEST_METHOD, &k_PATH_INFO, &k_QUERY_STRING, &k_REQUEST_URI, &k_SERVER_NAME,
    &k_SERVER_PORT, &k_SERVER_PROTOCOL, &k_REMOTE_ADDR, &k_REMOTE_PORT, &k_url_scheme
};

/* The kept environ's values, to know which of the next request's are
 * already in its copy (the same objects: a value that repeats is the
 * previous request's, see cached()). Any failure: none known. */
static void
env_vals_keep(ParserObject *p, const sws_pyb_request_t *rq)
{
    PyObject            *env = p->fixed[C_ENV], *key, *v, **f;
    const unsigned char *cur = rq->fields;
    sws_pyb_str_t        name, value;
    size_t               i, n = 0;
    int                  k;

    env_vals_clear(p);
    for (i = 0; i < E_N; i++) {
        v = PyDict_GetItem(env, *env_keys[i]);
        Py_XINCREF(v);
        p->env_vals[i] = v;
    }
    if (rq->nfields == 0) {
        return;
    }
    f = PyMem_Realloc(p->env_fvals, rq->nfields * sizeof(PyObject *));
    if (f == NULL) {
        return;
    }
    p->env_fvals = f;
    while (n < rq->nfields && sws_pyb_field_next(&cur, rq->end, &name, &value)) {
        k = common_index(&name);
        key = k >= 0 ? (Py_INCREF(common_keys[k]), common_keys[k]) : wsgi_key(&name);
        if (key == NULL) {
            PyErr_Clear();
            break;
        }
        v = PyDict_GetItem(env, key);
        Py_DECREF(key);
        Py_XINCREF(v);
        f[n++] = v;
    }
    p->env_fvals_n = n;
}

/* env[key] = value (its reference taken), unless env, a copy of the kept
 * environ, already has that object (kept: the kept environ's value for
 * this key, or NULL); -1 on error. */
static int
env_set(PyObject *env, PyObject *key, PyObject *value, PyObject *kept)
{
    if (value != NULL && value == kept) {
        Py_DECREF(value);
        return 0;
    }
    return set_steal(env, key, value);
}

/* env (just made, before the application has it) is the next one's start. */
static void
env_keep(ParserObject *p, PyObject *env, const sws_pyb_request_t *rq, int cl, int cl_added)
{
    const unsigned char *cur = rq->fields;
    sws_pyb_str_t        name, value;
    size_t               n = 0;
    unsigned char       *s;

    Py_CLEAR(p->fixed[C_ENV]);
    while (sws_pyb_field_next(&cur, rq->end, &name, &value)) {
        n += 2 + name.len;
    }
    if (n > p->env_names_size) {
        s = PyMem_Realloc(p->env_names, n);
        if (s == NULL) {
            return;                       /* not kept: the next is made anew */
        }
        p->env_names = s;
        p->env_names_size = n;
    }
    s = p->env_names;
    cur = rq->fields;
    while (sws_pyb_field_next(&cur, rq->end, &name, &value)) {
        *s++ = (unsigned char) (name.len >> 8);
        *s++ = (unsigned char) (name.len & 0xff);
        memcpy(s, name.data, name.len);
        s += name.len;
    }
    p->fixed[C_ENV] = PyDict_Copy(env);
    if (p->fixed[C_ENV] == NULL) {
        PyErr_Clear();                    /* not kept: the next is made anew */
        return;
    }
    env_vals_keep(p, rq);
    p->env_names_len = n;
    p->env_nfields = rq->nfields;
    p->env_cl = cl;
    p->env_cl_added = cl_added;
}

static PyObject *
wsgi_environ(ParserObject *p, const sws_pyb_request_t *rq)
{
    PyObject            *env, *key, *value, *old, *joined, *k, *v, *scheme;
    PyObject            *none[E_N] = { NULL }, *const *kept;
    const unsigned char *cur = rq->fields;
    sws_pyb_str_t        name, val;
    const sws_pyb_str_t *sname;
    Py_ssize_t           pos = 0;
    size_t               nf = 0;
    int                  same, repeated = 0, cl_added;
    int                  cl = rq->content_length != UINT64_MAX && rq->content_length;

    same = env_same_keys(p, rq, cl);
    if (same) {
        env = PyDict_Copy(p->fixed[C_ENV]);
        if (env == NULL) {
            return NULL;
        }
    } else {
        /* the base's entries and ours without a resize (a copy of the base
         * would grow twice) */
        env = _PyDict_NewPresized(PyDict_GET_SIZE(p->base) + 12 + (Py_ssize_t) rq->nfields);
        if (env == NULL) {
            return NULL;
        }
        while (PyDict_Next(p->base, &pos, &k, &v)) {
            if (PyDict_SetItem(env, k, v) < 0) {
                goto failed;
            }
        }
    }
    sname = rq->host.len ? &rq->host : &rq->server;
    kept = same ? p->env_vals : none;
    scheme = (rq->flags & SWS_PYB_HTTPS) ? k_https : k_http;
    if (env_set(env, k_REQUEST_METHOD, cached(&p->fixed[C_METHOD], rq->method.data,
                                              rq->method.len, 1), kept[E_METHOD]) < 0
        || (!same && PyDict_SetItem(env, k_SCRIPT_NAME, k_empty) < 0)
        || env_set(env, k_PATH_INFO, cached(&p->fixed[C_PATH], rq->path.data,
                                            rq->path.len, 1), kept[E_PATH]) < 0
        || env_set(env, k_QUERY_STRING, cached(&p->fixed[C_QUERY], rq->query.data,
                                               rq->query.len, 1), kept[E_QUERY]) < 0
        || env_set(env, k_REQUEST_URI, cached(&p->fixed[C_RAW], rq->raw.data,
                                              rq->raw.len, 1), kept[E_URI]) < 0
        || env_set(env, k_SERVER_NAME, cached(&p->fixed[C_HOST], sname->data,
                                              sname->len, 1), kept[E_SNAME]) < 0
        || env_set(env, k_SERVER_PORT, wsgi_server_port(p, rq->server_port),
                   kept[E_SPORT]) < 0
        || env_set(env, k_SERVER_PROTOCOL, version_str(rq->major, rq->minor, 1),
                   kept[E_PROTO]) < 0
        || env_set(env, k_REMOTE_ADDR, cached(&p->fixed[C_CLIENT], rq->client.data,
                                              rq->client.len, 1), kept[E_RADDR]) < 0
        || env_set(env, k_REMOTE_PORT, decimal_str(rq->client_port), kept[E_RPORT]) < 0
        || env_set(env, k_url_scheme, (Py_INCREF(scheme), scheme), kept[E_SCHEME]) < 0)
    {
        goto failed;
    }
    while (sws_pyb_field_next(&cur, rq->end, &name, &val)) {
        if (field_objects(p, common_index(&name), &name, &val, 1, &key, &value) < 0) {
            goto failed;
        }
        if (same && nf < p->env_fvals_n && value == p->env_fvals[nf++]) {
            /* the copy has it */
            Py_DECREF(key);
            Py_DECREF(value);
            continue;
        }
        if (!same) {
            old = PyDict_GetItemWithError(env, key);
            if (old == NULL && PyErr_Occurred()) {
                Py_DECREF(key);
                Py_DECREF(value);
                goto failed;
            }
            if (old) {
                /* a repeated field: its values joined (RFC 9110 5.3) */
                repeated = 1;
                joined = PyUnicode_FromFormat(
                    (name.len == 6 && memcmp(name.data, "cookie", 6) == 0) ? "%U; %U"
                                                                            : "%U,%U",
                    old, value);
                Py_DECREF(value);
                value = joined;
            }
        }
        if (set_steal(env, key, value) < 0) {
            Py_DECREF(key);
            goto failed;
        }
        Py_DECREF(key);
    }
    cl_added = same ? p->env_cl_added : cl && PyDict_GetItem(env, k_CONTENT_LENGTH) == NULL;
    if (cl_added) {
        if (set_steal(env, k_CONTENT_LENGTH, decimal_str(rq->content_length)) < 0) {
            goto failed;
        }
    }
    if (!same) {
        if (repeated) {
            Py_CLEAR(p->fixed[C_ENV]);
        } else {
            env_keep(p, env, rq, cl, cl_added);
        }
    }
    return env;

failed:
    Py_DECREF(env);
    return NULL;
}

static PyObject *
framing_error(const char *why)
{
    PyErr_Format(PyExc_ValueError, "python bridge: %s", why);
    return NULL;
}

/* A complete REQUEST payload. */
static PyObject *
parser_request(ParserObject *p, const unsigned char *data, size_t len, unsigned flags)
{
    sws_pyb_request_t  rq;
    PyObject          *req, *rv;

    if (sws_pyb_request_decode(data, len, &rq) != 0) {
        return framing_error("a malformed REQUEST frame");
    }
    req = p->mode == MODE_ASGI ? asgi_scope(p, &rq) : wsgi_environ(p, &rq);
    if (req == NULL) {
        return NULL;
    }
    {
        PyObject *args[2] = { req, PyLong_FromLong((long) flags) };   /* a small int */

        if (args[1] == NULL) {
            rv = NULL;
        } else if (p->on_request == Py_None) {
            rv = PyTuple_Pack(2, req, args[1]);   /* feed's to return */
        } else {
            rv = PyObject_Vectorcall(p->on_request, args, 2, NULL);
        }
        Py_XDECREF(args[1]);
    }
    Py_DECREF(req);
    return rv;
}

/* The frames in pos..last: feed()'s result, or NULL (an error set). */
static PyObject *
parser_feed(ParserObject *p, const unsigned char *pos, const unsigned char *last)
{
    const unsigned char *piece;
    size_t               n;
    PyObject            *rv = NULL, *r, *request = NULL;
    int                  rc;

    for ( ;; ) {
        rc = sws_pyb_read(&p->rd, &pos, last, &piece, &n);
        if (rc == SWS_PYB_AGAIN) {
            break;
        }
        if (rc == SWS_PYB_INVALID) {
            framing_error("an invalid frame");
            goto done;
        }
        if (rc == SWS_PYB_FRAME) {
            switch (p->rd.type) {
            case SWS_PYB_REQUEST:
                if (p->in_body || p->head) {
                    framing_error("a REQUEST frame out of place");
                    goto done;
                }
                p->head = PyMem_Malloc(p->rd.len);
                if (p->head == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                p->head_len = 0;
                p->head_size = p->rd.len;
                break;
            case SWS_PYB_BODY:
                if (!p->in_body) {
                    framing_error("a BODY frame out of place");
                    goto done;
                }
                break;
            default:                           /* BODY_END */
                if (!p->in_body) {
                    framing_error("a BODY_END frame out of place");
                    goto done;
                }
                p->in_body = 0;
                r = PyObject_CallNoArgs(p->on_body_end);
                if (r == NULL) {
                    goto done;
                }
                Py_DECREF(r);
                continue;
            }
            if (p->rd.rest) {
                continue;
            }
            if (p->rd.type == SWS_PYB_BODY) {
                continue;                      /* an empty BODY: nothing */
            }
        } else if (p->rd.type == SWS_PYB_BODY) {
            PyObject *chunk = PyBytes_FromStringAndSize((const char *) piece, (Py_ssize_t) n);

            if (chunk == NULL) {
                goto done;
            }
            r = PyObject_CallOneArg(p->on_body, chunk);
            Py_DECREF(chunk);
            if (r == NULL) {
                goto done;
            }
            Py_DECREF(r);
            continue;
        } else {
            memcpy(p->head + p->head_len, piece, n);
            p->head_len += n;
            if (p->rd.rest) {
                continue;
            }
        }
        /* a REQUEST is complete */
        {
            unsigned char *head = p->head;

            p->head = NULL;
            p->in_body = (p->rd.flags & SWS_PYB_REQUEST_BODY) != 0;
            r = parser_request(p, head, p->head_len, p->rd.flags);
            PyMem_Free(head);
            if (r == NULL) {
                goto done;
            }
            if (p->on_request != Py_None) {
                Py_DECREF(r);
            } else if (request != NULL) {
                Py_DECREF(r);
                framing_error("a REQUEST before the previous one ended");
                goto done;
            } else {
                request = r;
            }
        }
    }
    rv = request ? request : Py_None;
    Py_INCREF(rv);

done:
    Py_XDECREF(request);
    return rv;
}

static PyObject *
Parser_feed(ParserObject *p, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer   view;
    Py_ssize_t  len;
    PyObject   *rv = NULL;

    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "feed(data[, n])");
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    len = view.len;
    if (nargs == 2) {
        len = PyLong_AsSsize_t(args[1]);
        if (len == -1 && PyErr_Occurred()) {
            goto done;
        }
        if (len < 0 || len > view.len) {
            PyErr_SetString(PyExc_ValueError, "feed: n is outside the data");
            goto done;
        }
    }
    rv = parser_feed(p, view.buf, (const unsigned char *) view.buf + len);

done:
    PyBuffer_Release(&view);
    return rv;
}

/*
 * read_from(fd): one recv(2) of what a ready socket holds, fed as feed()
 * does. For the WSGI loop after epoll said the socket is readable: the
 * read does not wait (MSG_DONTWAIT), so the GIL is kept; the arguments'
 * parsing, the GIL's release and retaking and the buffer object of
 * socket.recv_into were a tenth of a plain request. Nothing to read
 * (EAGAIN): None; the end of the stream: EOFError; an error: OSError.
 */
#define READ_FROM_SIZE  (64 * 1024)

static PyObject *
Parser_read_from(ParserObject *p, PyObject *arg)
{
    long      fd = PyLong_AsLong(arg);
    ssize_t   n;
    PyObject *rv;

    if (fd == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (p->rbuf == NULL) {
        p->rbuf = PyMem_Malloc(READ_FROM_SIZE);
        if (p->rbuf == NULL) {
            return PyErr_NoMemory();
        }
    }
    if (p->reading) {
        PyErr_SetString(PyExc_RuntimeError, "read_from() called from a callback of its own");
        return NULL;
    }
    do {
        n = recv((int) fd, p->rbuf, READ_FROM_SIZE, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR && PyErr_CheckSignals() == 0);
    if (n < 0) {
        if (PyErr_Occurred()) {
            return NULL;                    /* a signal handler raised */
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            Py_RETURN_NONE;
        }
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    if (n == 0) {
        PyErr_SetNone(PyExc_EOFError);
        return NULL;
    }
    p->reading = 1;
    rv = parser_feed(p, p->rbuf, p->rbuf + n);
    p->reading = 0;
    return rv;
}

static void
Parser_clear_cache(ParserObject *p)
{
    size_t i;

    for (i = 0; i < C_NFIXED; i++) {
        Py_CLEAR(p->fixed[i]);
    }
    for (i = 0; i < NCOMMON; i++) {
        Py_CLEAR(p->values[i]);
        Py_CLEAR(p->pairs[i]);
    }
    for (i = 0; i < S_N; i++) {
        Py_CLEAR(p->scope_vals[i]);
    }
    env_vals_clear(p);
}

static int
Parser_init(ParserObject *p, PyObject *args, PyObject *kw)
{
    static char *names[] = { "on_request", "on_body", "on_body_end", "mode", "base", NULL };
    PyObject    *on_request, *on_body, *on_body_end, *base;
    int          mode;

    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOiO!", names, &on_request, &on_body,
                                     &on_body_end, &mode, &PyDict_Type, &base))
    {
        return -1;
    }
    if (mode != MODE_ASGI && mode != MODE_WSGI) {
        PyErr_SetString(PyExc_ValueError, "mode must be MODE_ASGI or MODE_WSGI");
        return -1;
    }
    sws_pyb_reader_init(&p->rd, SWS_PYB_TO_RUNNER);
    Py_INCREF(on_request);
    Py_INCREF(on_body);
    Py_INCREF(on_body_end);
    Py_INCREF(base);
    Py_XSETREF(p->on_request, on_request);
    Py_XSETREF(p->on_body, on_body);
    Py_XSETREF(p->on_body_end, on_body_end);
    Py_XSETREF(p->base, base);
    if (p->state == NULL) {
        Py_INCREF(Py_None);
        p->state = Py_None;
    }
    p->mode = mode;
    Parser_clear_cache(p);         /* bytes in one mode are str in the other */
    return 0;
}

static void
Parser_dealloc(ParserObject *p)
{
    PyObject_GC_UnTrack(p);
    Py_CLEAR(p->on_request);
    Py_CLEAR(p->on_body);
    Py_CLEAR(p->on_body_end);
    Py_CLEAR(p->base);
    Py_CLEAR(p->state);
    Parser_clear_cache(p);
    PyMem_Free(p->head);
    PyMem_Free(p->env_names);
    PyMem_Free(p->env_fvals);
    PyMem_Free(p->rbuf);
    Py_TYPE(p)->tp_free((PyObject *) p);
}

static int
Parser_traverse(ParserObject *p, visitproc visit, void *arg)
{
    Py_VISIT(p->fixed[C_SCOPE]);          /* holds base */
    Py_VISIT(p->fixed[C_ENV]);            /* holds base's values */
    Py_VISIT(p->on_request);
    Py_VISIT(p->on_body);
    Py_VISIT(p->on_body_end);
    Py_VISIT(p->base);
    Py_VISIT(p->state);
    return 0;
}

static int
Parser_clear(ParserObject *p)
{
    Parser_clear_cache(p);
    Py_CLEAR(p->on_request);
    Py_CLEAR(p->on_body);
    Py_CLEAR(p->on_body_end);
    Py_CLEAR(p->base);
    Py_CLEAR(p->state);
    return 0;
}

static PyObject *
Parser_get_state(ParserObject *p, void *closure)
{
    (void) closure;
    Py_INCREF(p->state);
    return p->state;
}

static int
Parser_set_state(ParserObject *p, PyObject *v, void *closure)
{
    (void) closure;
    if (v == NULL || (v != Py_None && !PyDict_Check(v))) {
        PyErr_SetString(PyExc_TypeError, "state must be a dict or None");
        return -1;
    }
    Py_INCREF(v);
    Py_XSETREF(p->state, v);
    return 0;
}

static PyObject *
Parser_in_body(ParserObject *p, void *closure)
{
    (void) closure;
    return PyBool_FromLong(p->in_body);
}

static PyMethodDef Parser_methods[] = {
    { "feed", (PyCFunction) (void (*)(void)) Parser_feed, METH_FASTCALL,
      "feed(data[, n]): read frames from data (its first n bytes)." },
    { "read_from", (PyCFunction) Parser_read_from, METH_O,
      "read_from(fd): feed what one recv(MSG_DONTWAIT) from fd brings." },
    { NULL, NULL, 0, NULL }
};

static PyGetSetDef Parser_getset[] = {
    { "state", (getter) Parser_get_state, (setter) Parser_set_state, NULL, NULL },
    { "in_body", (getter) Parser_in_body, NULL, "a request's body is still coming", NULL },
    { NULL, NULL, NULL, NULL, NULL }
};

static PyTypeObject ParserType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scalws_bridge._bridge.Parser",
    .tp_basicsize = sizeof(ParserObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc) Parser_init,
    .tp_dealloc = (destructor) Parser_dealloc,
    .tp_traverse = (traverseproc) Parser_traverse,
    .tp_clear = (inquiry) Parser_clear,
    .tp_methods = Parser_methods,
    .tp_getset = Parser_getset,
};

/* ---- the response ---- */

/* bytes or str (latin-1) as a view; -1 on error (set). */
static int
as_bytes(PyObject *o, PyObject **hold, const char **data, Py_ssize_t *len)
{
    if (PyBytes_Check(o)) {
        *hold = NULL;
        *data = PyBytes_AS_STRING(o);
        *len = PyBytes_GET_SIZE(o);
        return 0;
    }
    if (PyUnicode_Check(o)) {
        if (PyUnicode_IS_READY(o) && PyUnicode_KIND(o) == PyUnicode_1BYTE_KIND) {
            /* latin-1 already: its own bytes, no copy (WSGI's str headers) */
            *hold = NULL;
            *data = (const char *) PyUnicode_1BYTE_DATA(o);
            *len = PyUnicode_GET_LENGTH(o);
            return 0;
        }
        *hold = PyUnicode_AsLatin1String(o);
        if (*hold == NULL) {
            return -1;
        }
        *data = PyBytes_AS_STRING(*hold);
        *len = PyBytes_GET_SIZE(*hold);
        return 0;
    }
    if (PyByteArray_Check(o)) {
        *hold = NULL;
        *data = PyByteArray_AS_STRING(o);
        *len = PyByteArray_GET_SIZE(o);
        return 0;
    }
    PyErr_SetString(PyExc_TypeError, "header names and values must be bytes or str");
    return -1;
}

/* A response's fields as views (a common head: on the stack). */
#define RESPONSE_STACK_FIELDS  16

typedef struct {
    PyObject    *hold;         /* a str's latin-1 bytes, or NULL */
    const char  *data;
    Py_ssize_t   len;
} field_view_t;

/* response(status, headers, body=None, end=-1): positional or by keyword. */
static int
response_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **argv)
{
    static const char *const names[] = { "status", "headers", "body", "end" };
    Py_ssize_t i, k, nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;

    if (nargs > 4) {
        PyErr_SetString(PyExc_TypeError, "response() takes at most 4 arguments");
        return -1;
    }
    for (i = 0; i < nargs; i++) {
        argv[i] = args[i];
    }
    for (k = 0; k < nkw; k++) {
        PyObject *kw = PyTuple_GET_ITEM(kwnames, k);

        for (i = 0; i < 4; i++) {
            if (PyUnicode_CompareWithASCIIString(kw, names[i]) == 0) {
                break;
            }
        }
        if (i == 4 || argv[i] != NULL) {
            PyErr_Format(PyExc_TypeError, "response() got an unexpected or repeated "
                         "argument %R", kw);
            return -1;
        }
        argv[i] = args[nargs + k];
    }
    if (argv[0] == NULL || argv[1] == NULL) {
        PyErr_SetString(PyExc_TypeError, "response() needs status and headers");
        return -1;
    }
    return 0;
}

static PyObject *
bridge_response(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject      *argv[4] = { NULL, NULL, NULL, NULL };
    long           status, end = -1;
    PyObject      *seq = NULL, *body, *out = NULL;
    field_view_t   stack[2 * RESPONSE_STACK_FIELDS], *f = stack;
    Py_buffer      bview = { 0 };
    Py_ssize_t     i, n = 0, size, blen = 0;
    unsigned char *p;

    (void) self;
    if (response_args(args, nargs, kwnames, argv) < 0) {
        return NULL;
    }
    status = PyLong_AsLong(argv[0]);
    if (status == -1 && PyErr_Occurred()) {
        return NULL;
    }
    body = argv[2] ? argv[2] : Py_None;
    if (argv[3] != NULL) {
        end = PyLong_AsLong(argv[3]);
        if (end == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    if (status < 100 || status > 999) {
        PyErr_SetString(PyExc_ValueError, "status must be 100..999");
        return NULL;
    }
    seq = PySequence_Fast(argv[1], "headers must be a sequence of pairs");
    if (seq == NULL) {
        return NULL;
    }
    n = PySequence_Fast_GET_SIZE(seq);
    if (n > SWS_PYB_MAX_FIELDS) {
        PyErr_SetString(PyExc_ValueError, "too many header fields");
        n = 0;
        goto done;
    }
    if (n > RESPONSE_STACK_FIELDS) {
        f = PyMem_Calloc((size_t) n * 2, sizeof(field_view_t));
        if (f == NULL) {
            PyErr_NoMemory();
            n = 0;
            goto done;
        }
    } else {
        memset(f, 0, (size_t) n * 2 * sizeof(field_view_t));
    }
    size = SWS_PYB_RESPONSE_FIXED;
    for (i = 0; i < n; i++) {
        PyObject *pair = PySequence_Fast_GET_ITEM(seq, i), *nm, *vl;

        if (PyTuple_CheckExact(pair) && PyTuple_GET_SIZE(pair) == 2) {
            nm = PyTuple_GET_ITEM(pair, 0);
            vl = PyTuple_GET_ITEM(pair, 1);
        } else if ((PyTuple_Check(pair) || PyList_Check(pair)) && PySequence_Size(pair) == 2) {
            /* a list's items: kept by the list, which seq keeps */
            nm = PyTuple_Check(pair) ? PyTuple_GET_ITEM(pair, 0) : PyList_GET_ITEM(pair, 0);
            vl = PyTuple_Check(pair) ? PyTuple_GET_ITEM(pair, 1) : PyList_GET_ITEM(pair, 1);
        } else {
            PyErr_SetString(PyExc_TypeError, "a header must be a (name, value) pair");
            goto done;
        }
        if (as_bytes(nm, &f[2 * i].hold, &f[2 * i].data, &f[2 * i].len) < 0
            || as_bytes(vl, &f[2 * i + 1].hold, &f[2 * i + 1].data, &f[2 * i + 1].len) < 0)
        {
            goto done;
        }
        if (f[2 * i].len == 0 || f[2 * i].len > SWS_PYB_MAX_STRING
            || f[2 * i + 1].len > SWS_PYB_MAX_STRING)
        {
            PyErr_SetString(PyExc_ValueError, "a header name or value of an invalid length");
            goto done;
        }
        size += 4 + f[2 * i].len + f[2 * i + 1].len;
    }
    if (size > SWS_PYB_MAX_HEAD) {
        PyErr_SetString(PyExc_ValueError, "the response head is too big");
        goto done;
    }
    if (body != Py_None) {
        if (PyObject_GetBuffer(body, &bview, PyBUF_SIMPLE) < 0) {
            goto done;
        }
        blen = bview.len;
        if ((uint64_t) blen > UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "the body is too big for one frame");
            goto done;
        }
    }
    out = PyBytes_FromStringAndSize(NULL, SWS_PYB_HEAD_LEN + size
                                          + (blen ? SWS_PYB_HEAD_LEN + blen : 0)
                                          + (end >= 0 ? SWS_PYB_HEAD_LEN : 0));
    if (out == NULL) {
        goto done;
    }
    p = (unsigned char *) PyBytes_AS_STRING(out);
    p = sws_pyb_put_head(p, SWS_PYB_RESPONSE, 0, (uint32_t) size);
    p = sws_pyb_put16(p, (unsigned) status);
    p = sws_pyb_put16(p, (unsigned) n);
    for (i = 0; i < 2 * n; i++) {
        p = sws_pyb_put_str(p, f[i].data, (size_t) f[i].len);
    }
    if (blen) {
        p = sws_pyb_put_head(p, SWS_PYB_DATA, 0, (uint32_t) blen);
        memcpy(p, bview.buf, (size_t) blen);
        p += blen;
    }
    if (end >= 0) {
        sws_pyb_put_head(p, SWS_PYB_END, (unsigned) end & SWS_PYB_END_KEEP, 0);
    }

done:
    for (i = 0; i < 2 * n; i++) {
        Py_XDECREF(f[i].hold);
    }
    if (f != stack) {
        PyMem_Free(f);
    }
    if (bview.obj) {
        PyBuffer_Release(&bview);
    }
    Py_DECREF(seq);
    return out;
}

static PyObject *data_frames(PyObject *body, long end);

static PyObject *
bridge_data(PyObject *self, PyObject *arg)
{
    (void) self;
    return data_frames(arg, -1);
}

static PyObject *
bridge_data_head(PyObject *self, PyObject *arg)
{
    unsigned char      buf[SWS_PYB_HEAD_LEN];
    unsigned long long n = PyLong_AsUnsignedLongLong(arg);

    (void) self;
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (n > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "too big for one frame");
        return NULL;
    }
    sws_pyb_put_head(buf, SWS_PYB_DATA, 0, (uint32_t) n);
    return PyBytes_FromStringAndSize((const char *) buf, SWS_PYB_HEAD_LEN);
}

static PyObject *
bridge_end(PyObject *self, PyObject *arg)
{
    unsigned char buf[SWS_PYB_HEAD_LEN];
    long          flags = PyLong_AsLong(arg);

    (void) self;
    if (flags == -1 && PyErr_Occurred()) {
        return NULL;
    }
    sws_pyb_put_head(buf, SWS_PYB_END, (unsigned) flags & SWS_PYB_END_KEEP, 0);
    return PyBytes_FromStringAndSize((const char *) buf, SWS_PYB_HEAD_LEN);
}

static PyObject *
bridge_file(PyObject *self, PyObject *args)
{
    unsigned char       buf[SWS_PYB_HEAD_LEN + SWS_PYB_FILE_LEN], *p;
    unsigned long long  offset, length;
    uint64_t            o, l;

    (void) self;
    if (!PyArg_ParseTuple(args, "KK", &offset, &length)) {
        return NULL;
    }
    p = sws_pyb_put_head(buf, SWS_PYB_FILE, 0, SWS_PYB_FILE_LEN);
    p = sws_pyb_put64(p, offset);
    sws_pyb_put64(p, length);
    if (sws_pyb_file_decode(buf + SWS_PYB_HEAD_LEN, SWS_PYB_FILE_LEN, &o, &l) != 0) {
        PyErr_SetString(PyExc_ValueError, "offset and length too big");
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *) buf, sizeof(buf));
}

/*
 * DONE: "await send(message)" without a coroutine per call. The ASGI
 * runner's send() does its work when called and returns this when nothing
 * is left to wait for; making, running and freeing a coroutine for each
 * send cost more than the rest of it. It has __await__, send, throw and
 * close, so that collections.abc.Coroutine (and with it asyncio's
 * iscoroutine, create_task, gather ...) takes it for a coroutine that
 * returns None at its first step; it has no state, so one is shared.
 */
static PyObject *
done_await(PyObject *self)
{
    Py_INCREF(self);
    return self;
}

static PyObject *
done_next(PyObject *self)
{
    (void) self;
    return NULL;                      /* ended: StopIteration(None) */
}

#if PY_VERSION_HEX >= 0x030A0000
static PySendResult
done_am_send(PyObject *self, PyObject *arg, PyObject **result)
{
    (void) self;
    (void) arg;
    Py_INCREF(Py_None);
    *result = Py_None;
    return PYGEN_RETURN;
}
#endif

static PyObject *
done_send(PyObject *self, PyObject *arg)
{
    (void) self;
    (void) arg;
    PyErr_SetNone(PyExc_StopIteration);
    return NULL;
}

static PyObject *
done_throw(PyObject *self, PyObject *args)
{
    PyObject *typ, *val = NULL, *tb = NULL;

    (void) self;
    if (!PyArg_UnpackTuple(args, "throw", 1, 3, &typ, &val, &tb)) {
        return NULL;
    }
    if (PyExceptionInstance_Check(typ)) {
        PyErr_SetObject((PyObject *) Py_TYPE(typ), typ);
    } else if (PyExceptionClass_Check(typ)) {
        PyErr_SetObject(typ, val);
    } else {
        PyErr_SetString(PyExc_TypeError, "throw() needs an exception");
    }
    return NULL;
}

static PyObject *
done_close(PyObject *self, PyObject *unused)
{
    (void) self;
    (void) unused;
    Py_RETURN_NONE;
}

static PyMethodDef Done_methods[] = {
    { "send", done_send, METH_O, "Ends at once: StopIteration(None)." },
    { "throw", done_throw, METH_VARARGS, "Raises what it is given." },
    { "close", done_close, METH_NOARGS, "Nothing to close." },
    { NULL, NULL, 0, NULL }
};

static PyAsyncMethods Done_async = {
    .am_await = done_await,
#if PY_VERSION_HEX >= 0x030A0000
    .am_send = done_am_send,
#endif
};

static PyTypeObject DoneType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scalws_bridge._bridge.Done",
    .tp_basicsize = sizeof(PyObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_as_async = &Done_async,
    .tp_iter = done_await,
    .tp_iternext = done_next,
    .tp_methods = Done_methods,
};


/*
 * Cycle: one ASGI http request's state, and its send() in C. asgi.py's
 * Cycle subclasses it (receive(), run() and the rare paths stay there);
 * send() was two Python calls per plain request and most of its lines
 * looked up attributes. It does what asgi.py's did, line for line: the
 * head is kept until the first body message, which goes out with it as
 * one write; the last one completes the response (the connection's
 * bookkeeping as Connection.response_done does it).
 */
typedef struct {
    PyObject_HEAD
    PyObject   *conn, *scope, *chunks, *waiter, *status, *headers;
    Py_ssize_t  size;
    char        more_body, final_given, started, head_sent, complete, disconnected;
    /* the connection's transport, socket and parser, when Cycle() was
     * given them (the connection's for its life; else looked up) */
    PyObject   *transport, *parser;
    long        fd;
} CycleObject;

static PyObject *done_obj;           /* DONE */
static PyObject *client_disconnected;   /* ClientDisconnected, an OSError */
static PyObject *k_status, *k_body, *k_more_body, *k_start_type, *k_body_type,
                *k_trailers_type, *a_closed, *a_transport, *a_write, *a_write_paused,
                *a_drain, *a_cycle, *a_parser, *a_read_paused, *a_resume_reading, *a_wake,
                *a_get, *a_in_body, *a_throw, *a_close, *k_scope_attr, *a_receive, *a_send,
                *a_fd, *a_get_write_buffer_size,
                *empty_bytes, *empty_tuple;

static int
Cycle_init(CycleObject *c, PyObject *args, PyObject *kw)
{
    PyObject *conn, *scope;
    int       has_body;

    /* (no PyArg_ParseTuple: a tenth of making a cycle) */
    if ((kw != NULL && PyDict_GET_SIZE(kw) != 0) || !PyTuple_Check(args)
        || (PyTuple_GET_SIZE(args) != 3 && PyTuple_GET_SIZE(args) != 6))
    {
        PyErr_SetString(PyExc_TypeError,
                        "Cycle(conn, scope, has_body[, transport, fd, parser])");
        return -1;
    }
    c->fd = -2;
    Py_CLEAR(c->transport);
    Py_CLEAR(c->parser);
    if (PyTuple_GET_SIZE(args) == 6) {
        c->fd = PyLong_AsLong(PyTuple_GET_ITEM(args, 4));
        if (c->fd == -1 && PyErr_Occurred()) {
            return -1;
        }
        c->transport = Py_NewRef(PyTuple_GET_ITEM(args, 3));
        c->parser = Py_NewRef(PyTuple_GET_ITEM(args, 5));
    }
    conn = PyTuple_GET_ITEM(args, 0);
    scope = PyTuple_GET_ITEM(args, 1);
    has_body = PyObject_IsTrue(PyTuple_GET_ITEM(args, 2));
    if (has_body < 0) {
        return -1;
    }
    Py_INCREF(conn);
    Py_XSETREF(c->conn, conn);
    Py_INCREF(scope);
    Py_XSETREF(c->scope, scope);
    Py_XSETREF(c->chunks, PyList_New(0));
    if (c->chunks == NULL) {
        return -1;
    }
    Py_CLEAR(c->waiter);
    Py_XSETREF(c->status, PyLong_FromLong(200));
    Py_INCREF(empty_tuple);
    Py_XSETREF(c->headers, empty_tuple);
    c->size = 0;
    c->more_body = (char) has_body;
    c->final_given = c->started = c->head_sent = c->complete = c->disconnected = 0;
    return 0;
}

static int
Cycle_traverse(CycleObject *c, visitproc visit, void *arg)
{
    Py_VISIT(c->conn);
    Py_VISIT(c->scope);
    Py_VISIT(c->chunks);
    Py_VISIT(c->waiter);
    Py_VISIT(c->status);
    Py_VISIT(c->headers);
    Py_VISIT(c->transport);
    Py_VISIT(c->parser);
    return 0;
}

static int
Cycle_clear(CycleObject *c)
{
    Py_CLEAR(c->conn);
    Py_CLEAR(c->scope);
    Py_CLEAR(c->chunks);
    Py_CLEAR(c->waiter);
    Py_CLEAR(c->status);
    Py_CLEAR(c->headers);
    Py_CLEAR(c->transport);
    Py_CLEAR(c->parser);
    return 0;
}

static void
Cycle_dealloc(CycleObject *c)
{
    PyObject_GC_UnTrack(c);
    Cycle_clear(c);
    Py_TYPE(c)->tp_free((PyObject *) c);
}

/* message[key] (KeyError when missing), or message.get(key, dflt) when
 * dflt is given: new references. */
static PyObject *
message_item(PyObject *msg, PyObject *key, PyObject *dflt)
{
    PyObject *v;

    if (PyDict_CheckExact(msg)) {
        v = PyDict_GetItemWithError(msg, key);
        if (v != NULL) {
            Py_INCREF(v);
            return v;
        }
        if (PyErr_Occurred()) {
            return NULL;
        }
        if (dflt == NULL) {
            PyErr_SetObject(PyExc_KeyError, key);
            return NULL;
        }
        Py_INCREF(dflt);
        return dflt;
    }
    if (dflt == NULL) {
        return PyObject_GetItem(msg, key);
    }
    {
        PyObject *args[3] = { msg, key, dflt };

        return PyObject_VectorcallMethod(a_get, args, 3, NULL);
    }
}

/* An attribute's truth; -1 on error. */
static int
attr_true(PyObject *o, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(o, name);
    int       t;

    if (v == NULL) {
        return -1;
    }
    t = v == Py_True ? 1 : v == Py_False || v == Py_None ? 0 : PyObject_IsTrue(v);
    Py_DECREF(v);
    return t;
}

/* A DATA frame of body (none if empty), then an END (if end >= 0). */
static PyObject *
data_frames(PyObject *body, long end)
{
    Py_buffer      view;
    PyObject      *out;
    unsigned char *p;

    if (PyObject_GetBuffer(body, &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    if ((uint64_t) view.len > UINT32_MAX) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "the body is too big for one frame");
        return NULL;
    }
    out = PyBytes_FromStringAndSize(NULL, (view.len ? SWS_PYB_HEAD_LEN + view.len : 0)
                                          + (end >= 0 ? SWS_PYB_HEAD_LEN : 0));
    if (out != NULL) {
        p = (unsigned char *) PyBytes_AS_STRING(out);
        if (view.len) {
            p = sws_pyb_put_head(p, SWS_PYB_DATA, 0, (uint32_t) view.len);
            memcpy(p, view.buf, (size_t) view.len);
            p += view.len;
        }
        if (end >= 0) {
            sws_pyb_put_head(p, SWS_PYB_END, (unsigned) end & SWS_PYB_END_KEEP, 0);
        }
    }
    PyBuffer_Release(&view);
    return out;
}

/*
 * transport.write(data), or, when the transport holds nothing (so that
 * nothing written goes before what it holds), one send(2) to its socket
 * that does not wait, and the transport only for the rest, if any: uvloop
 * queues every write until the end of the loop's iteration, which cost more
 * than the send. conn.fd: the socket (-1: always the transport).
 */
static PyObject *
transport_write(PyObject *conn, long fd, PyObject *transport, PyObject *data)
{
    PyObject   *o, *rest, *v;
    Py_ssize_t  len = PyBytes_GET_SIZE(data), held;
    ssize_t     n;

    if (fd == -2) {                  /* not given to the cycle */
        o = PyObject_GetAttr(conn, a_fd);
        if (o == NULL) {
            return NULL;
        }
        fd = PyLong_AsLong(o);
        Py_DECREF(o);
        if (fd == -1 && PyErr_Occurred()) {
            return NULL;
        }
    }
    if (fd < 0) {
        return PyObject_CallMethodOneArg(transport, a_write, data);
    }
    o = PyObject_CallMethodNoArgs(transport, a_get_write_buffer_size);
    if (o == NULL) {
        return NULL;
    }
    held = PyLong_AsSsize_t(o);
    Py_DECREF(o);
    if (held == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (held != 0) {
        return PyObject_CallMethodOneArg(transport, a_write, data);
    }
    do {
        n = send((int) fd, PyBytes_AS_STRING(data), (size_t) len, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n == len) {
        Py_RETURN_NONE;
    }
    if (n <= 0) {
        /* full, or an error: the transport's to deal with */
        return PyObject_CallMethodOneArg(transport, a_write, data);
    }
    rest = PyBytes_FromStringAndSize(PyBytes_AS_STRING(data) + n, len - n);
    if (rest == NULL) {
        return NULL;
    }
    v = PyObject_CallMethodOneArg(transport, a_write, rest);
    Py_DECREF(rest);
    return v;
}

/* o is the str interned (an ASCII constant): the same object, or the same
 * characters (the application's literal, not interned when it has dots:
 * "http.response.start"), compared without PyUnicode_Compare's dispatch. */
static int
same_str(PyObject *o, PyObject *interned)
{
    Py_ssize_t n;

    if (o == interned) {
        return 1;
    }
    if (!PyUnicode_Check(o) || !PyUnicode_IS_ASCII(o)) {
        return 0;
    }
    n = PyUnicode_GET_LENGTH(o);
    return n == PyUnicode_GET_LENGTH(interned)
           && memcmp(PyUnicode_DATA(o), PyUnicode_DATA(interned), (size_t) n) == 0;
}

/* A send after the client went away raises (ASGI 2.4: an OSError, so
 * that an application that streams learns it and stops). */
static PyObject *
client_gone(void)
{
    PyErr_SetString(client_disconnected, "the client went away");
    return NULL;
}

static PyObject *
Cycle_send(CycleObject *c, PyObject *message)
{
    PyObject *kind, *body = NULL, *more_o = NULL, *data = NULL, *conn, *v, *rv = NULL;
    int       more, t;

    kind = message_item(message, k_type, NULL);
    if (kind == NULL) {
        return NULL;
    }
    if (same_str(kind, k_start_type)) {
        Py_DECREF(kind);
        if (c->started) {
            PyErr_SetString(PyExc_RuntimeError, "http.response.start sent twice");
            return NULL;
        }
        if (c->disconnected) {
            return client_gone();
        }
        v = message_item(message, k_status, NULL);
        if (v == NULL) {
            return NULL;
        }
        c->started = 1;
        Py_XSETREF(c->status, v);
        v = message_item(message, k_headers, empty_tuple);
        if (v == NULL) {
            return NULL;
        }
        Py_XSETREF(c->headers, v);
        Py_INCREF(done_obj);
        return done_obj;
    }
    if (!same_str(kind, k_body_type)) {
        if (same_str(kind, k_trailers_type)) {
            Py_DECREF(kind);
            if (c->disconnected) {
                return client_gone();
            }
            Py_INCREF(done_obj);
            return done_obj;
        }
        PyErr_Format(PyExc_RuntimeError, "unexpected ASGI message %R", kind);
        Py_DECREF(kind);
        return NULL;
    }
    Py_DECREF(kind);
    if (!c->started || c->complete) {
        PyErr_SetString(PyExc_RuntimeError, "http.response.body out of place");
        return NULL;
    }
    if (c->disconnected) {
        return client_gone();
    }
    body = message_item(message, k_body, empty_bytes);
    if (body == NULL) {
        return NULL;
    }
    more_o = message_item(message, k_more_body, Py_False);
    if (more_o == NULL) {
        goto done;
    }
    more = PyObject_IsTrue(more_o);
    if (more < 0) {
        goto done;
    }
    conn = c->conn;
    if (!c->head_sent) {
        PyObject *args[4] = { c->status, c->headers, body, NULL };

        c->head_sent = 1;
        args[3] = PyLong_FromLong(more ? -1 : SWS_PYB_END_KEEP);
        if (args[3] == NULL) {
            goto done;
        }
        data = bridge_response(NULL, args, 4, NULL);
        Py_DECREF(args[3]);
    } else if (more) {
        data = data_frames(body, -1);
    } else {
        t = PyObject_IsTrue(body);
        if (t < 0) {
            goto done;
        }
        data = data_frames(t ? body : empty_bytes, SWS_PYB_END_KEEP);
    }
    if (data == NULL) {
        goto done;
    }
    if (PyBytes_GET_SIZE(data)) {
        t = attr_true(conn, a_closed);
        if (t < 0) {
            goto done;
        }
        if (!t) {
            PyObject *transport = c->transport ? Py_NewRef(c->transport)
                                               : PyObject_GetAttr(conn, a_transport);

            if (transport == NULL) {
                goto done;
            }
            v = transport_write(conn, c->fd, transport, data);
            Py_DECREF(transport);
            if (v == NULL) {
                goto done;
            }
            Py_DECREF(v);
        }
    }
    if (more) {
        t = attr_true(conn, a_write_paused);
        if (t < 0) {
            goto done;
        }
        if (t) {
            rv = PyObject_CallMethodNoArgs(conn, a_drain);
        } else {
            Py_INCREF(done_obj);
            rv = done_obj;
        }
        goto done;
    }
    /* the response is complete (response_complete(), inline: the common path) */
    c->complete = 1;
    if (c->waiter != NULL && c->waiter != Py_None) {
        v = PyObject_CallMethodNoArgs((PyObject *) c, a_wake);   /* a receive() gets the disconnect */
        if (v == NULL) {
            goto done;
        }
        Py_DECREF(v);
    }
    v = PyObject_GetAttr(conn, a_cycle);
    if (v == NULL) {
        goto done;
    }
    Py_DECREF(v);                    /* only compared */
    if (v == (PyObject *) c) {
        PyObject *parser = c->parser ? Py_NewRef(c->parser) : PyObject_GetAttr(conn, a_parser);

        if (parser == NULL) {
            goto done;
        }
        if (Py_IS_TYPE(parser, &ParserType)) {
            t = ((ParserObject *) parser)->in_body;
        } else {
            t = attr_true(parser, a_in_body);
        }
        Py_DECREF(parser);
        if (t < 0) {
            goto done;
        }
        if (!t && PyObject_SetAttr(conn, a_cycle, Py_None) < 0) {
            goto done;
        }
        /* else: the body's rest is read and dropped until BODY_END */
    }
    t = attr_true(conn, a_read_paused);
    if (t < 0) {
        goto done;
    }
    if (t) {
        v = PyObject_CallMethodNoArgs(conn, a_resume_reading);
        if (v == NULL) {
            goto done;
        }
        Py_DECREF(v);
    }
    Py_INCREF(done_obj);
    rv = done_obj;

done:
    Py_XDECREF(data);
    Py_XDECREF(more_o);
    Py_DECREF(body);
    return rv;
}


/*
 * cycle.send: a Sender, the bound send() that asyncio.iscoroutinefunction
 * takes for a coroutine function (its _is_coroutine is asyncio's marker,
 * given by set_coroutine_marker()), as the async def send of other
 * servers is (what some frameworks check before awaiting).
 */
typedef struct {
    PyObject_HEAD
    CycleObject    *cycle;
    vectorcallfunc  vectorcall;
} SenderObject;

static PyObject *coroutine_marker;   /* asyncio.coroutines._is_coroutine, or NULL */
static PyTypeObject SenderType;

static PyObject *
Sender_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "send(message) takes one argument");
        return NULL;
    }
    return Cycle_send(((SenderObject *) self)->cycle, args[0]);
}

static void
Sender_dealloc(SenderObject *s)
{
    PyObject_GC_UnTrack(s);
    Py_CLEAR(s->cycle);
    PyObject_GC_Del(s);
}

static int
Sender_traverse(SenderObject *s, visitproc visit, void *arg)
{
    Py_VISIT(s->cycle);
    return 0;
}

static PyObject *
Sender_marker(SenderObject *s, void *closure)
{
    (void) s;
    (void) closure;
    if (coroutine_marker == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_is_coroutine");
        return NULL;
    }
    Py_INCREF(coroutine_marker);
    return coroutine_marker;
}

static PyObject *
Sender_self(SenderObject *s, void *closure)
{
    (void) closure;
    Py_INCREF(s->cycle);
    return (PyObject *) s->cycle;
}

static PyGetSetDef Sender_getset[] = {
    { "_is_coroutine", (getter) Sender_marker, NULL, NULL, NULL },
    { "__self__", (getter) Sender_self, NULL, NULL, NULL },
    { NULL, NULL, NULL, NULL, NULL }
};

static PyTypeObject SenderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scalws_bridge._bridge.Sender",
    .tp_basicsize = sizeof(SenderObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(SenderObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = (destructor) Sender_dealloc,
    .tp_traverse = (traverseproc) Sender_traverse,
    .tp_getset = Sender_getset,
};

static PyObject *
Cycle_get_send(CycleObject *c, void *closure)
{
    SenderObject *s = PyObject_GC_New(SenderObject, &SenderType);

    (void) closure;
    if (s == NULL) {
        return NULL;
    }
    Py_INCREF(c);
    s->cycle = c;
    s->vectorcall = Sender_vectorcall;
    PyObject_GC_Track(s);
    return (PyObject *) s;
}

static PyGetSetDef Cycle_getset[] = {
    { "send", (getter) Cycle_get_send, NULL,
      "send(message): ASGI send(); returns DONE or the wait for the transport to drain",
      NULL },
    { NULL, NULL, NULL, NULL, NULL }
};

/* set_coroutine_marker(marker): what Sender._is_coroutine gives. */
static PyObject *
bridge_set_coroutine_marker(PyObject *self, PyObject *marker)
{
    (void) self;
    Py_INCREF(marker);
    Py_XSETREF(coroutine_marker, marker);
    Py_RETURN_NONE;
}

#define CYCLE_MEMBER(name, type)  { #name, type, offsetof(CycleObject, name), 0, NULL }

static PyMemberDef Cycle_members[] = {
    CYCLE_MEMBER(conn, T_OBJECT),
    CYCLE_MEMBER(scope, T_OBJECT),
    CYCLE_MEMBER(chunks, T_OBJECT),
    CYCLE_MEMBER(waiter, T_OBJECT),
    CYCLE_MEMBER(status, T_OBJECT),
    CYCLE_MEMBER(headers, T_OBJECT),
    CYCLE_MEMBER(size, T_PYSSIZET),
    CYCLE_MEMBER(more_body, T_BOOL),
    CYCLE_MEMBER(final_given, T_BOOL),
    CYCLE_MEMBER(started, T_BOOL),
    CYCLE_MEMBER(head_sent, T_BOOL),
    CYCLE_MEMBER(complete, T_BOOL),
    CYCLE_MEMBER(disconnected, T_BOOL),
    { NULL, 0, 0, 0, NULL }
};

static PyTypeObject CycleType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scalws_bridge._bridge.Cycle",
    .tp_doc = "Cycle(conn, scope, has_body): an ASGI http request's state and send().",
    .tp_basicsize = sizeof(CycleObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc) Cycle_init,
    .tp_dealloc = (destructor) Cycle_dealloc,
    .tp_traverse = (traverseproc) Cycle_traverse,
    .tp_clear = (inquiry) Cycle_clear,
    .tp_getset = Cycle_getset,
    .tp_members = Cycle_members,
};


/*
 * in_context(app, cycle, base): an awaitable that calls
 * app(cycle.scope, cycle.receive, cycle.send) at its first step and runs
 * every step of what that returns in a new copy of the contextvars
 * context base, as a task of the request's own would: the ASGI runner's
 * serving task runs one request after another, each in a fresh copy of
 * the context, so that what one request sets is not seen by the next
 * (asgi.py's Connection.serve; the copy made here, not by a Python call).
 * No coroutine of the runner's between the task and the application's.
 */
typedef struct {
    PyObject_HEAD
    PyObject *app, *cycle, *coro, *ctx;    /* app and cycle until the start */
} InContextObject;

static PyTypeObject InContextType;

static PyObject *
bridge_in_context(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    InContextObject *ic;
    PyObject        *ctx;

    (void) self;
    if (nargs != 3 || !PyContext_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "in_context(app, cycle, context)");
        return NULL;
    }
    ctx = PyContext_Copy(args[2]);
    if (ctx == NULL) {
        return NULL;
    }
    ic = PyObject_GC_New(InContextObject, &InContextType);
    if (ic == NULL) {
        Py_DECREF(ctx);
        return NULL;
    }
    Py_INCREF(args[0]);
    ic->app = args[0];
    Py_INCREF(args[1]);
    ic->cycle = args[1];
    ic->coro = NULL;
    ic->ctx = ctx;
    PyObject_GC_Track(ic);
    return (PyObject *) ic;
}

/* The application's call (in the context): its awaitable's iterator. */
static int
InContext_start(InContextObject *ic)
{
    PyObject *args[3] = { NULL, NULL, NULL }, *r = NULL, *it;
    int       i;

    if (PyObject_TypeCheck(ic->cycle, &CycleType)) {
        args[0] = ((CycleObject *) ic->cycle)->scope;     /* no look-up */
        Py_XINCREF(args[0]);
        if (args[0] == NULL) {
            PyErr_SetString(PyExc_AttributeError, "scope");
        }
    } else {
        args[0] = PyObject_GetAttr(ic->cycle, k_scope_attr);
    }
    args[1] = args[0] ? PyObject_GetAttr(ic->cycle, a_receive) : NULL;
    args[2] = args[1] ? PyObject_GetAttr(ic->cycle, a_send) : NULL;
    if (args[2] != NULL) {
        r = PyObject_Vectorcall(ic->app, args, 3, NULL);
    }
    for (i = 0; i < 3; i++) {
        Py_XDECREF(args[i]);
    }
    Py_CLEAR(ic->app);
    Py_CLEAR(ic->cycle);
    if (r == NULL) {
        return -1;
    }
    if (PyCoro_CheckExact(r)) {
        ic->coro = r;
        return 0;
    }
    /* another awaitable: its __await__'s iterator, as "await" takes it */
    if (Py_TYPE(r)->tp_as_async == NULL || Py_TYPE(r)->tp_as_async->am_await == NULL) {
        PyErr_Format(PyExc_TypeError, "the application returned %.100s, not an awaitable",
                     Py_TYPE(r)->tp_name);
        Py_DECREF(r);
        return -1;
    }
    it = Py_TYPE(r)->tp_as_async->am_await(r);
    Py_DECREF(r);
    if (it == NULL) {
        return -1;
    }
    if (!PyIter_Check(it)) {
        PyErr_Format(PyExc_TypeError, "__await__() returned non-iterator of type '%.100s'",
                     Py_TYPE(it)->tp_name);
        Py_DECREF(it);
        return -1;
    }
    ic->coro = it;
    return 0;
}

static void
InContext_dealloc(InContextObject *ic)
{
    PyObject_GC_UnTrack(ic);
    Py_CLEAR(ic->app);
    Py_CLEAR(ic->cycle);
    Py_CLEAR(ic->coro);
    Py_CLEAR(ic->ctx);
    PyObject_GC_Del(ic);
}

static int
InContext_traverse(InContextObject *ic, visitproc visit, void *arg)
{
    Py_VISIT(ic->app);
    Py_VISIT(ic->cycle);
    Py_VISIT(ic->coro);
    Py_VISIT(ic->ctx);
    return 0;
}

static PySendResult
InContext_am_send(PyObject *self, PyObject *arg, PyObject **result)
{
    InContextObject *ic = (InContextObject *) self;
    PySendResult     r;

    if (PyContext_Enter(ic->ctx) < 0) {
        *result = NULL;
        return PYGEN_ERROR;
    }
    if (ic->coro == NULL && InContext_start(ic) < 0) {
        *result = NULL;
        r = PYGEN_ERROR;
    } else {
        r = PyIter_Send(ic->coro, arg, result);
    }
    if (PyContext_Exit(ic->ctx) < 0) {
        Py_CLEAR(*result);
        return PYGEN_ERROR;
    }
    return r;
}

/* StopIteration(value) raised (public API only: an instance, so that a
 * tuple value is not taken for the arguments) */
static void
stop_iteration(PyObject *value)
{
    PyObject *e = PyObject_CallOneArg(PyExc_StopIteration, value);

    if (e != NULL) {
        PyErr_SetObject(PyExc_StopIteration, e);
        Py_DECREF(e);
    }
}

/* next() of an awaitable's iterator that has am_send: send(None), its
 * return as StopIteration (the extension's awaitables, _bridge_gate.h) */
PyObject *
sws_pyb_next_by_send(PyObject *self, sendfunc send)
{
    PyObject *result;

    switch (send(self, Py_None, &result)) {
    case PYGEN_NEXT:
        return result;
    case PYGEN_RETURN:
        if (result != Py_None) {
            stop_iteration(result);
        }
        Py_DECREF(result);
        return NULL;
    default:
        return NULL;
    }
}

static PyObject *
InContext_iternext(PyObject *self)
{
    return sws_pyb_next_by_send(self, InContext_am_send);
}

static PyObject *
InContext_send(PyObject *self, PyObject *arg)
{
    PyObject *result;

    switch (InContext_am_send(self, arg, &result)) {
    case PYGEN_NEXT:
        return result;
    case PYGEN_RETURN:
        stop_iteration(result);
        Py_DECREF(result);
        return NULL;
    default:
        return NULL;
    }
}

/* throw() and close(): the coroutine's own, called in the context */
static PyObject *
InContext_call(InContextObject *ic, PyObject *name, PyObject *args)
{
    PyObject *meth, *r;

    if (ic->coro == NULL) {
        /* not started: the application is not called */
        Py_CLEAR(ic->app);
        Py_CLEAR(ic->cycle);
        if (name == a_close) {
            Py_RETURN_NONE;
        }
        return done_throw(NULL, args);
    }
    if (PyContext_Enter(ic->ctx) < 0) {
        return NULL;
    }
    meth = PyObject_GetAttr(ic->coro, name);
    r = meth ? PyObject_Call(meth, args, NULL) : NULL;
    Py_XDECREF(meth);
    if (PyContext_Exit(ic->ctx) < 0) {
        Py_CLEAR(r);
    }
    return r;
}

static PyObject *
InContext_throw(InContextObject *ic, PyObject *args)
{
    return InContext_call(ic, a_throw, args);
}

static PyObject *
InContext_close(InContextObject *ic, PyObject *unused)
{
    (void) unused;
    return InContext_call(ic, a_close, empty_tuple);
}

static PyObject *
InContext_await(PyObject *self)
{
    Py_INCREF(self);
    return self;
}

static PyMethodDef InContext_methods[] = {
    { "send", (PyCFunction) InContext_send, METH_O, NULL },
    { "throw", (PyCFunction) InContext_throw, METH_VARARGS, NULL },
    { "close", (PyCFunction) InContext_close, METH_NOARGS, NULL },
    { NULL, NULL, 0, NULL }
};

static PyAsyncMethods InContext_async = {
    .am_await = InContext_await,
    .am_send = InContext_am_send,
};

static PyTypeObject InContextType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scalws_bridge._bridge.InContext",
    .tp_basicsize = sizeof(InContextObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_as_async = &InContext_async,
    .tp_iter = InContext_await,
    .tp_iternext = InContext_iternext,
    .tp_methods = InContext_methods,
    .tp_dealloc = (destructor) InContext_dealloc,
    .tp_traverse = (traverseproc) InContext_traverse,
};

/*
 * send_some(fd, data): what one send(2) of data takes without waiting
 * (MSG_DONTWAIT, the GIL kept): the number of bytes; 0 when the socket's
 * buffer is full. The WSGI runner sends a response so and the rest, if
 * any, with socket.sendall (which waits, the GIL released).
 */
static PyObject *
bridge_send_some(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    Py_buffer  view;
    long       fd;
    ssize_t    n;

    (void) self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "send_some(fd, data)");
        return NULL;
    }
    fd = PyLong_AsLong(args[0]);
    if (fd == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (PyObject_GetBuffer(args[1], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    do {
        n = send((int) fd, view.buf, (size_t) view.len, MSG_DONTWAIT | MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR && PyErr_CheckSignals() == 0);
    PyBuffer_Release(&view);
    if (n < 0) {
        if (PyErr_Occurred()) {
            return NULL;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            n = 0;
        } else {
            return PyErr_SetFromErrno(PyExc_OSError);
        }
    }
    return PyLong_FromSsize_t(n);
}

static PyMethodDef bridge_methods[] = {
    { "response", (PyCFunction) (void (*)(void)) bridge_response, METH_FASTCALL | METH_KEYWORDS,
      "response(status, headers, body=None, end=-1) -> bytes" },
    { "send_some", (PyCFunction) (void (*)(void)) bridge_send_some, METH_FASTCALL,
      "send_some(fd, data) -> bytes sent by one send(2) that does not wait" },
    { "data", bridge_data, METH_O, "data(body) -> a DATA frame (b'' for an empty body)" },
    { "data_head", bridge_data_head, METH_O, "data_head(n) -> a DATA frame's header" },
    { "end", bridge_end, METH_O, "end(flags) -> an END frame" },
    { "in_context", (PyCFunction) (void (*)(void)) bridge_in_context, METH_FASTCALL,
      "in_context(app, cycle, base): app(cycle.scope, cycle.receive, cycle.send)\n"
      "awaited, each step in ctx" },
    { "set_coroutine_marker", bridge_set_coroutine_marker, METH_O,
      "set_coroutine_marker(m): Cycle.send's _is_coroutine (asyncio's marker)" },
    { "file", bridge_file, METH_VARARGS,
      "file(offset, length) -> a FILE frame (its descriptor goes with it: SCM_RIGHTS)" },
    { NULL, NULL, 0, NULL }
};

static struct PyModuleDef bridge_module = {
    PyModuleDef_HEAD_INIT, "_bridge", "The native Python bridge's frames.", -1,
    bridge_methods, NULL, NULL, NULL, NULL
};

#define INTERN(var, text)                                  \
    if ((var = PyUnicode_InternFromString(text)) == NULL) { \
        return NULL;                                       \
    }

PyMODINIT_FUNC PyInit__bridge(void);

PyMODINIT_FUNC
PyInit__bridge(void)
{
    PyObject *m, *done;
    size_t    i;

    INTERN(k_type, "type");
    INTERN(k_asgi, "asgi");
    INTERN(k_http_version, "http_version");
    INTERN(k_method, "method");
    INTERN(k_scheme, "scheme");
    INTERN(k_path, "path");
    INTERN(k_raw_path, "raw_path");
    INTERN(k_query_string, "query_string");
    INTERN(k_root_path, "root_path");
    INTERN(k_headers, "headers");
    INTERN(k_client, "client");
    INTERN(k_server, "server");
    INTERN(k_state, "state");
    INTERN(k_http, "http");
    INTERN(k_https, "https");
    INTERN(k_empty, "");
    INTERN(k_REQUEST_METHOD, "REQUEST_METHOD");
    INTERN(k_SCRIPT_NAME, "SCRIPT_NAME");
    INTERN(k_PATH_INFO, "PATH_INFO");
    INTERN(k_QUERY_STRING, "QUERY_STRING");
    INTERN(k_SERVER_NAME, "SERVER_NAME");
    INTERN(k_SERVER_PORT, "SERVER_PORT");
    INTERN(k_SERVER_PROTOCOL, "SERVER_PROTOCOL");
    INTERN(k_REMOTE_ADDR, "REMOTE_ADDR");
    INTERN(k_REMOTE_PORT, "REMOTE_PORT");
    INTERN(k_REQUEST_URI, "REQUEST_URI");
    INTERN(k_CONTENT_LENGTH, "CONTENT_LENGTH");
    INTERN(k_CONTENT_TYPE, "CONTENT_TYPE");
    INTERN(k_url_scheme, "wsgi.url_scheme");
    INTERN(k_v10, "1.0");
    INTERN(k_v11, "1.1");
    INTERN(k_v20, "2");
    INTERN(k_HTTP10, "HTTP/1.0");
    INTERN(k_HTTP11, "HTTP/1.1");
    INTERN(k_HTTP20, "HTTP/2.0");
    INTERN(k_status, "status");
    INTERN(k_body, "body");
    INTERN(k_more_body, "more_body");
    INTERN(k_start_type, "http.response.start");
    INTERN(k_body_type, "http.response.body");
    INTERN(k_trailers_type, "http.response.trailers");
    INTERN(a_closed, "closed");
    INTERN(a_transport, "transport");
    INTERN(a_write, "write");
    INTERN(a_write_paused, "write_paused");
    INTERN(a_drain, "drain");
    INTERN(a_cycle, "cycle");
    INTERN(a_parser, "parser");
    INTERN(a_read_paused, "read_paused");
    INTERN(a_resume_reading, "resume_reading");
    INTERN(a_wake, "wake");
    INTERN(a_get, "get");
    INTERN(a_in_body, "in_body");
    INTERN(a_throw, "throw");
    INTERN(a_close, "close");
    INTERN(k_scope_attr, "scope");
    INTERN(a_receive, "receive");
    INTERN(a_send, "send");
    INTERN(a_fd, "fd");
    INTERN(a_get_write_buffer_size, "get_write_buffer_size");
    if ((empty_bytes = PyBytes_FromStringAndSize(NULL, 0)) == NULL
        || (empty_tuple = PyTuple_New(0)) == NULL)
    {
        return NULL;
    }
    for (i = 0; i < NCOMMON; i++) {
        sws_pyb_str_t n = { (const unsigned char *) common_names[i], strlen(common_names[i]) };

        common_bytes[i] = PyBytes_FromString(common_names[i]);
        if (common_bytes[i] == NULL) {
            return NULL;
        }
        common_keys[i] = wsgi_key(&n);
        if (common_keys[i] == NULL) {
            return NULL;
        }
        PyUnicode_InternInPlace(&common_keys[i]);
    }
    (void) k_CONTENT_TYPE;

    if (PyType_Ready(&ParserType) < 0 || PyType_Ready(&DoneType) < 0
        || PyType_Ready(&CycleType) < 0 || PyType_Ready(&SenderType) < 0
        || PyType_Ready(&InContextType) < 0)
    {
        return NULL;
    }
    m = PyModule_Create(&bridge_module);
    if (m == NULL) {
        return NULL;
    }
    Py_INCREF(&ParserType);
    done = PyObject_New(PyObject, &DoneType);         /* the only one */
    if (done == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    done_obj = done;                                  /* the module keeps it */
    if (PyModule_AddObject(m, "DONE", done) < 0) {
        Py_DECREF(done);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(done_obj);                              /* and so does Cycle.send */
    client_disconnected = PyErr_NewExceptionWithDoc(
        "scalws_bridge._bridge.ClientDisconnected",
        "send() after the client went away (ASGI 2.4 asks for an OSError: an\n"
        "application that only sends, a stream or a feed, learns it and stops).",
        PyExc_OSError, NULL);
    if (client_disconnected == NULL) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(client_disconnected);                   /* the module's, and send()'s */
    if (PyModule_AddObject(m, "ClientDisconnected", client_disconnected) < 0) {
        Py_DECREF(client_disconnected);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&CycleType);
    if (PyModule_AddObject(m, "Cycle", (PyObject *) &CycleType) < 0) {
        Py_DECREF(&CycleType);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddObject(m, "Parser", (PyObject *) &ParserType) < 0
        || PyModule_AddIntConstant(m, "MODE_ASGI", MODE_ASGI) < 0
        || PyModule_AddIntConstant(m, "MODE_WSGI", MODE_WSGI) < 0
        || PyModule_AddIntConstant(m, "END_KEEP", SWS_PYB_END_KEEP) < 0
        || PyModule_AddIntConstant(m, "REQUEST_BODY", SWS_PYB_REQUEST_BODY) < 0
        || PyModule_AddIntConstant(m, "REQUEST_UPGRADE", SWS_PYB_REQUEST_UPGRADE) < 0
        || PyModule_AddIntConstant(m, "REQUEST_FILE", SWS_PYB_REQUEST_FILE) < 0
        || PyModule_AddIntConstant(m, "MAX_HEAD", SWS_PYB_MAX_HEAD) < 0
        || sws_pyb_gate_add(m) < 0)
    {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
