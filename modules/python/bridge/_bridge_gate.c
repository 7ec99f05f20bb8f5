/*
 * Gate(loop): where the ASGI runner's serving task waits for its
 * connection's next request (asgi.py's Connection.serve), one per serving
 * task, for all its waits. A future made, awaited and set per request, with
 * hand_over() reading its callbacks and removing the task's wake-up, was
 * about a tenth of a plain request (docs/benchmarks/2026-12-05-asgi6-notes.md).
 *
 * "await gate" yields one pending asyncio future of the gate's, made once,
 * which the task takes as it takes any future (asyncio's own, so the task's
 * quick path: no attribute look-ups); the future is never done: a request
 * is handed over by taking the task's wake-up off it again and calling that
 * with a second future of the gate's, done once and for all with None,
 * which wakes the task as a done future does; the await then gives the
 * request. The task's wake-up is kept from the first wait on (it is an
 * equal object each wait: removing it needs only an equal one): a
 * reference to the task, where the first step's handle was one (the
 * serving task counts the references to it).
 *
 *   gate.hand_over(value): the waiting task's wake-up called at once, in
 *       its context (the request runs in the read that brought it, no loop
 *       iteration); the await gives value
 *   gate.set_result(value): the same at the loop's next turn (call_soon)
 * When the task is cancelled while it waits, the pending future is
 * cancelled and the task gets CancelledError from the await, as from any
 * future's: the gate is not used again (the task ends).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "_bridge_gate.h"

enum { GATE_EMPTY, GATE_WAITING, GATE_DONE };

typedef struct {
    PyObject_HEAD
    PyObject *loop, *pending, *done, *wakeup, *context, *value;
    PyObject *remove;                   /* pending.remove_done_callback */
    int       state;
} GateObject;

static PyObject *s_call_soon, *s_context, *s_create_future, *s_set_result, *s_callbacks,
                *s_remove_done_callback, *s_blocking;

static PyObject *
Gate_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    GateObject *g;
    PyObject   *loop, *r;

    if (!PyArg_ParseTuple(args, "O:Gate", &loop) || (kw && PyDict_GET_SIZE(kw))) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "Gate(loop)");
        }
        return NULL;
    }
    g = (GateObject *) type->tp_alloc(type, 0);
    if (g == NULL) {
        return NULL;
    }
    Py_INCREF(loop);
    g->loop = loop;
    g->state = GATE_EMPTY;
    g->pending = PyObject_CallMethodNoArgs(loop, s_create_future);
    g->done = g->pending ? PyObject_CallMethodNoArgs(loop, s_create_future) : NULL;
    r = g->done ? PyObject_CallMethodOneArg(g->done, s_set_result, Py_None) : NULL;
    g->remove = r ? PyObject_GetAttr(g->pending, s_remove_done_callback) : NULL;
    if (g->remove == NULL) {
        Py_CLEAR(r);
    }
    if (r == NULL) {
        Py_DECREF(g);
        return NULL;
    }
    Py_DECREF(r);
    return (PyObject *) g;
}

static int
Gate_traverse(GateObject *g, visitproc visit, void *arg)
{
    Py_VISIT(g->loop);
    Py_VISIT(g->pending);
    Py_VISIT(g->done);
    Py_VISIT(g->wakeup);
    Py_VISIT(g->context);
    Py_VISIT(g->value);
    Py_VISIT(g->remove);
    return 0;
}

static int
Gate_clear(GateObject *g)
{
    Py_CLEAR(g->loop);
    Py_CLEAR(g->pending);
    Py_CLEAR(g->done);
    Py_CLEAR(g->wakeup);
    Py_CLEAR(g->context);
    Py_CLEAR(g->value);
    Py_CLEAR(g->remove);
    return 0;
}

static void
Gate_dealloc(GateObject *g)
{
    PyObject_GC_UnTrack(g);
    Gate_clear(g);
    Py_TYPE(g)->tp_free((PyObject *) g);
}

/* The waiting task's wake-up off the pending future (its remove_done_callback
 * with the kept one, an equal object; the first time, or when that is not
 * it, the one the future holds, kept): 0, or -1 with an exception set. */
static int
gate_take_wakeup(GateObject *g)
{
    PyObject   *r, *cbs, *item;
    Py_ssize_t  n;

    if (g->wakeup != NULL) {
        r = PyObject_CallOneArg(g->remove, g->wakeup);
        if (r == NULL) {
            return -1;
        }
        n = PyLong_AsSsize_t(r);
        Py_DECREF(r);
        if (n == 1) {
            return 0;
        }
        if (n == -1 && PyErr_Occurred()) {
            return -1;
        }
    }
    cbs = PyObject_GetAttr(g->pending, s_callbacks);
    if (cbs == NULL) {
        return -1;
    }
    if (!PyList_Check(cbs) || PyList_GET_SIZE(cbs) != 1
        || !PyTuple_Check(item = PyList_GET_ITEM(cbs, 0)) || PyTuple_GET_SIZE(item) != 2)
    {
        Py_DECREF(cbs);
        PyErr_SetString(PyExc_RuntimeError, "a gate is awaited by one asyncio task");
        return -1;
    }
    Py_INCREF(PyTuple_GET_ITEM(item, 0));
    Py_XSETREF(g->wakeup, PyTuple_GET_ITEM(item, 0));
    Py_INCREF(PyTuple_GET_ITEM(item, 1));
    Py_XSETREF(g->context, PyTuple_GET_ITEM(item, 1));
    Py_DECREF(cbs);
    r = PyObject_CallOneArg(g->remove, g->wakeup);
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

/* The gate done with value; the waiting task's wake-up taken (1) or none
 * waits (0); -1 with an exception set. */
static int
gate_set(GateObject *g, PyObject *value)
{
    int waiting = g->state == GATE_WAITING;

    if (g->state == GATE_DONE) {
        PyErr_SetString(PyExc_RuntimeError, "the gate is already done");
        return -1;
    }
    if (waiting && gate_take_wakeup(g) < 0) {
        return -1;
    }
    Py_INCREF(value);
    Py_XSETREF(g->value, value);
    g->state = GATE_DONE;
    return waiting;
}

/* loop.call_soon(wakeup, done, context=context): the task woken at the
 * loop's next turn. */
static int
gate_call_soon(GateObject *g)
{
    PyObject *meth, *names, *r, *argv[3] = { g->wakeup, g->done, g->context };

    meth = PyObject_GetAttr(g->loop, s_call_soon);
    if (meth == NULL) {
        return -1;
    }
    names = PyTuple_Pack(1, s_context);
    r = names ? PyObject_Vectorcall(meth, argv, 2, names) : NULL;
    Py_XDECREF(names);
    Py_DECREF(meth);
    if (r == NULL) {
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

static PyObject *
Gate_hand_over(GateObject *g, PyObject *value)
{
    PyObject *r, *type, *exc, *tb;
    int       rc = gate_set(g, value);

    if (rc <= 0) {
        return rc < 0 ? NULL : Py_NewRef(Py_None);
    }
    if (PyContext_CheckExact(g->context) && PyContext_Enter(g->context) < 0) {
        return NULL;
    }
    r = PyObject_CallOneArg(g->wakeup, g->done);
    if (PyContext_CheckExact(g->context) && PyContext_Exit(g->context) < 0) {
        Py_CLEAR(r);
    }
    if (r == NULL) {
        /* not woken (called from a task: asyncio enters no task within
         * another): at the next turn then, so that it is not left waiting */
        PyErr_Fetch(&type, &exc, &tb);
        if (gate_call_soon(g) < 0) {
            PyErr_Clear();
        }
        PyErr_Restore(type, exc, tb);
        return NULL;
    }
    Py_DECREF(r);
    Py_RETURN_NONE;
}

static PyObject *
Gate_set_result(GateObject *g, PyObject *value)
{
    int rc = gate_set(g, value);

    if (rc < 0 || (rc > 0 && gate_call_soon(g) < 0)) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
Gate_await(PyObject *self)
{
    return Py_NewRef(self);
}

/* "await gate": the pending future yielded (blocking, as a future's own
 * await yields it) until the gate is done; then its value, and the gate
 * empty for the next wait. */
static PySendResult
Gate_am_send(PyObject *self, PyObject *arg, PyObject **result)
{
    GateObject *g = (GateObject *) self;

    (void) arg;
    if (g->state == GATE_DONE) {
        *result = g->value;              /* its reference passed on */
        g->value = NULL;
        g->state = GATE_EMPTY;
        return PYGEN_RETURN;
    }
    if (PyObject_SetAttr(g->pending, s_blocking, Py_True) < 0) {
        *result = NULL;
        return PYGEN_ERROR;
    }
    g->state = GATE_WAITING;
    *result = Py_NewRef(g->pending);
    return PYGEN_NEXT;
}

static PyObject *
Gate_iternext(PyObject *self)
{
    return sws_pyb_next_by_send(self, Gate_am_send);
}

static PyMethodDef Gate_methods[] = {
    { "hand_over", (PyCFunction) Gate_hand_over, METH_O,
      "hand_over(value): the waiting task woken at once; its await gives value" },
    { "set_result", (PyCFunction) Gate_set_result, METH_O,
      "set_result(value): the waiting task woken at the loop's next turn" },
    { NULL, NULL, 0, NULL }
};

static PyAsyncMethods Gate_async = {
    .am_await = Gate_await,
    .am_send = Gate_am_send,
};

static PyTypeObject GateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "scalws_bridge._bridge.Gate",
    .tp_doc = "Gate(loop): where a serving task waits for its next request.",
    .tp_basicsize = sizeof(GateObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = Gate_new,
    .tp_dealloc = (destructor) Gate_dealloc,
    .tp_traverse = (traverseproc) Gate_traverse,
    .tp_clear = (inquiry) Gate_clear,
    .tp_as_async = &Gate_async,
    .tp_iter = Gate_await,
    .tp_iternext = Gate_iternext,
    .tp_methods = Gate_methods,
};

int
sws_pyb_gate_add(PyObject *module)
{
    if (s_call_soon == NULL) {
        s_call_soon = PyUnicode_InternFromString("call_soon");
        s_context = PyUnicode_InternFromString("context");
        s_create_future = PyUnicode_InternFromString("create_future");
        s_set_result = PyUnicode_InternFromString("set_result");
        s_callbacks = PyUnicode_InternFromString("_callbacks");
        s_remove_done_callback = PyUnicode_InternFromString("remove_done_callback");
        s_blocking = PyUnicode_InternFromString("_asyncio_future_blocking");
        if (s_call_soon == NULL || s_context == NULL || s_create_future == NULL
            || s_set_result == NULL || s_callbacks == NULL || s_remove_done_callback == NULL
            || s_blocking == NULL)
        {
            return -1;
        }
    }
    if (PyType_Ready(&GateType) < 0) {
        return -1;
    }
    Py_INCREF(&GateType);
    if (PyModule_AddObject(module, "Gate", (PyObject *) &GateType) < 0) {
        Py_DECREF(&GateType);
        return -1;
    }
    return 0;
}
