/*
 * The ASGI runner's gate (_bridge_gate.c): _bridge.Gate, added to the
 * extension's module by its init.
 */
#ifndef SWS_PYB_BRIDGE_GATE_H
#define SWS_PYB_BRIDGE_GATE_H

#include <Python.h>

/* Gate into the module: 0, or -1 with an exception set */
int sws_pyb_gate_add(PyObject *module);

/* (_bridge.c's) next() of an awaitable's iterator by its am_send */
PyObject *sws_pyb_next_by_send(PyObject *self, sendfunc send);

#endif
