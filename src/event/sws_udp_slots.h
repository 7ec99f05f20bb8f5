/*
 * The table of QUIC slots (sws_udp_steer.h), shared by the masters of a
 * binary upgrade: a small file in memory (memfd) that the old master
 * hands to the new binary with the QUIC groups' sockets and BPF maps
 * (sws_udp_steer_env). Each slot says which process holds it, of which
 * master (its epoch: the old binary's 1, the new one's 2, ...), and
 * whether it takes new connections. So a new binary's workers take slots
 * the old binary's do not hold, both masters steer every live slot, and
 * the first Initials go to the current workers of the newest master that
 * has any (the new binary's once they start; the old one's again when
 * the new master stops on a rollback). A master changes the table and
 * the BPF maps under one lock (a POSIX record lock of the file: it goes
 * with a master that dies).
 */
#ifndef SWS_UDP_SLOTS_H
#define SWS_UDP_SLOTS_H

#include "sws_event.h"

/* Master: the table (inherited from fd, -1: a new one). */
sws_int_t  sws_udp_slots_init(sws_log_t *log, int fd);
/* Its descriptor, for the new binary (-1: none). */
int        sws_udp_slots_fd(void);
/* Worker: close it. */
void       sws_udp_slots_worker(void);

/* Everything below under the lock (sws_udp_slots_lock). */
void       sws_udp_slots_lock(void);
void       sws_udp_slots_unlock(void);
/* Is slot free (no process, or its process is gone)? */
int        sws_udp_slots_free(sws_uint_t slot);
/* Slot held by pid of this master, current or not. */
void       sws_udp_slots_hold(sws_uint_t slot, pid_t pid, int current);
/* Slot given back: pid has exited (only if it is still pid's). */
void       sws_udp_slots_release(sws_uint_t slot, pid_t pid);
/* Every live slot, and the current slots of the newest master that has
 * some; each array of SWS_UDP_SLOTS_MAX. */
void       sws_udp_slots_steering(sws_uint_t *live, sws_uint_t *nlive, sws_uint_t *cur,
    sws_uint_t *ncur);
/* How the groups are steered (SWS_UDP_STEER_*): the program attached
 * last, by either master; sws_udp_slots_steer() gives own when none is
 * known. The other master updates that program's slots (a classic one
 * it makes again; the eBPF maps only if it has them: it steered with
 * eBPF too). */
void       sws_udp_slots_set_steer(sws_uint_t steer);
sws_uint_t sws_udp_slots_steer(sws_uint_t own);
/* This master's epoch (for the log). */
sws_uint_t sws_udp_slots_epoch(void);

#endif
