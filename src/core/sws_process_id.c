/*
 * Which process this is: the master, a worker (and its index), a helper.
 * Apart from the process code (sws_process.c) because the request path
 * reads them (per-worker counters): code that only needs to know where it
 * runs does not pull in the process model.
 */
#include "sws_process.h"

int         sws_process = SWS_PROCESS_SINGLE;
pid_t       sws_pid;
sws_uint_t  sws_worker;
sws_uint_t  sws_worker_slot;
sws_uint_t  sws_worker_generation;   /* a worker's (sws_process_internal.h) */
