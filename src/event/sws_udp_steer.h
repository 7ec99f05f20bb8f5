/*
 * Steering the datagrams of a QUIC (UDP reuseport) socket group to the
 * worker process that owns their connection (sws_udp_steer.c says how).
 *
 * Each worker process that serves QUIC has a slot: its own socket in every
 * QUIC group (slot s is the s-th socket of the group) and the number its
 * server connection IDs carry (bytes 1-2 after the magic byte, see
 * sws_http_v3.h). The master assigns slots (a new process takes the
 * lowest free one), keeps every socket open, and tells the program of
 * each group which slots are live (a process runs there: their IDs are
 * steered to them) and which are current (the workers that take new
 * connections: an Initial, whose ID names nobody yet, goes to one of
 * them).
 */
#ifndef SWS_UDP_STEER_H
#define SWS_UDP_STEER_H

#include "sws_event.h"

/* How a group is steered (sws_listening_t.steer; quic_steering). */
enum {
    SWS_UDP_STEER_NONE = 0,    /* the kernel's hash of the addresses */
    SWS_UDP_STEER_CBPF,        /* classic BPF: SO_ATTACH_REUSEPORT_CBPF */
    SWS_UDP_STEER_EBPF         /* SK_REUSEPORT + REUSEPORT_SOCKARRAY */
};

/* quic_steering auto|cbpf|off: what the master tries. */
enum {
    SWS_UDP_STEER_AUTO = 0,    /* eBPF, else classic BPF, else none */
    SWS_UDP_STEER_WANT_CBPF,
    SWS_UDP_STEER_OFF
};

/* The slots a QUIC group has room for: a few generations of workers at
 * once (each reload, each added worker takes a new one while the old
 * ones finish their connections). */
#define SWS_UDP_SLOTS(workers)  sws_min(4 * (workers) + 4, SWS_UDP_SLOTS_MAX)
#define SWS_UDP_SLOTS_MAX       1000
#define SWS_UDP_NO_SLOT         ((sws_uint_t) -1)

/* Master: attach a program to each QUIC group of cycle that has none yet
 * (want: SWS_UDP_STEER_*; one notice line per group says which). Returns
 * 1 when every group is steered, 0 else (the kernel hash). */
int       sws_udp_steer_attach(sws_cycle_t *cycle, sws_uint_t want);
/* Master: the live slots (processes run there) and the current ones (new
 * connections), to every steered group. */
void      sws_udp_steer_update(sws_cycle_t *cycle, const sws_uint_t *live, sws_uint_t nlive,
    const sws_uint_t *cur, sws_uint_t ncur);
/* Master: open slot's socket in every QUIC group that has none yet (in
 * slot order: slot s is the group's s-th). */
sws_int_t sws_udp_steer_slot_open(sws_cycle_t *cycle, sws_uint_t slot);
/* Master: forget the groups' programs (a new binary attached its own and
 * was rolled back); sws_udp_steer_attach then attaches them again. */
void      sws_udp_steer_forget(sws_cycle_t *cycle);
/* Worker: close the master's maps (only the master updates them). */
void      sws_udp_steer_worker(sws_cycle_t *cycle);
/* Binary upgrade: what a new binary takes over (sws_udp_slots.h), in
 * SWS_QUIC_ENV "fd;fd;": the table of slots and the BPF maps.
 * sws_udp_steer_env() formats the variable (malloc'ed), and
 * sws_udp_steer_keep() (the child, before exec) keeps those descriptors
 * open; in the new binary sws_udp_steer_inherit() takes them (and makes
 * the table: a new one when there was none) and the groups' eBPF
 * programs are attached again over the old maps, whose sockets they
 * hold. sws_udp_steer_inherited_close(): maps no group took. */
#define SWS_QUIC_ENV  "SCALWS_QUIC"
char     *sws_udp_steer_env(sws_cycle_t *cycle);
void      sws_udp_steer_keep(sws_cycle_t *cycle);
sws_int_t sws_udp_steer_inherit(sws_log_t *log);
void      sws_udp_steer_inherited_close(void);
/* What a group's steering is called, for the log. */
const char *sws_udp_steer_name(sws_uint_t steer);

#endif
