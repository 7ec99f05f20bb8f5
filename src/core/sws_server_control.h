/*
 * The master's side of <scalws/sws_server.h>: a page shared by the master
 * and its workers (made before the first fork, like the workers' states)
 * where the master notes its reloads, and a worker what it asks for. A
 * worker may not signal its master (it runs as another user), so it wakes
 * the master through an eventfd the master sleeps on (sws_helpers_wait).
 */
#ifndef SWS_SERVER_CONTROL_H
#define SWS_SERVER_CONTROL_H

#include <scalws/scalws.h>

/* In the master, before the first worker starts; pid: the master's. */
void       sws_server_control_init(sws_log_t *log, pid_t pid);
/* In the master after a reload: done (ok) or refused (the last emerg
 * message says why); generation: the one serving now. */
void       sws_server_reloaded(int ok, uint64_t generation);
/* In the master, after each wake-up: the helpers' states for the workers
 * (sws_server_helper). */
void       sws_server_publish_helpers(void);
/* In the master: when a delayed quit is due (monotonic ms), 0 if none. */
sws_msec_t sws_server_quit_at(void);
/* In the master: the fd to sleep on (-1: none); once it woke, what the
 * workers asked for since: SWS_SERVER_RELOAD, _REOPEN, _QUIT bits
 * (1 << action). */
int        sws_server_control_fd(void);
sws_uint_t sws_server_control_take(void);

#endif
