/* The pid file: the master's pid in decimal and a newline. */
#ifndef SWS_PIDFILE_H
#define SWS_PIDFILE_H

#include <sys/types.h>
#include <scalws/sws_types.h>

/* Write (create or overwrite) path with pid. Logs failures at emerg. */
sws_int_t sws_pidfile_write(const char *path, pid_t pid, sws_log_t *log);

/* Read a pid from path: returns it (> 0), or SWS_ERROR after logging at
 * emerg why (missing file, unreadable, not a valid pid). */
pid_t sws_pidfile_read(const char *path, sws_log_t *log);

/* Remove path; a missing file is not an error. Logs failures at alert. */
sws_int_t sws_pidfile_delete(const char *path, sws_log_t *log);

#endif
