/*
 * The adaptive runtime with `reuseport` listening sockets (one socket per
 * worker): retiring a worker without losing what waits in its socket's
 * queue (sws_reuseport.c says how).
 */
#ifndef SWS_REUSEPORT_H
#define SWS_REUSEPORT_H

#include "sws_event.h"

/* How long a retired worker goes on accepting on its own socket after the
 * program stopped giving it new connections (ms): the handshakes begun
 * before end in its queue within a round trip. */
#define SWS_REUSEPORT_DRAIN  1000

/* net.ipv4.tcp_migrate_req is 1: a closed socket's queue moves to the
 * others of its group. */
int       sws_reuseport_migrates(void);
/* cycle has per-worker TCP (resp. UDP) sockets. */
int       sws_reuseport_tcp(sws_cycle_t *cycle);
int       sws_reuseport_udp(sws_cycle_t *cycle);
/* New connections of every per-worker TCP socket group go to the sockets
 * of workers 0 .. n-1 only (a classic BPF program on the group). */
sws_int_t sws_reuseport_steer(sws_cycle_t *cycle, sws_uint_t n);
/* Back to the kernel's hash over every socket of each group. */
void      sws_reuseport_unsteer(sws_cycle_t *cycle);
/* A connection waits in the accept queue of worker's own TCP sockets. */
int       sws_reuseport_queued(sws_cycle_t *cycle, sws_uint_t worker);

#endif
