/* The error log object and the core-only functions that open and manage it. */
#ifndef SWS_LOG_INTERNAL_H
#define SWS_LOG_INTERNAL_H

#include <sys/types.h>
#include <scalws/sws_log.h>
#include <scalws/sws_pool.h>
#include <scalws/sws_types.h>

/* Where a log's lines go instead of its fd (syslog): the line as the file
 * would have it, without the newline. */
typedef void (*sws_log_writer_pt)(sws_log_t *log, sws_uint_t level, const u_char *line,
    size_t len);

struct sws_log_s {
    int                 fd;
    sws_uint_t          level;      /* messages above this level are dropped */
    char               *path;       /* NULL for stderr (and a writer's log) */
    sws_log_writer_pt   writer;     /* NULL: written to fd */
    void               *wdata;
    sws_log_t          *next;       /* the other logs of the same level of the
                                     * configuration; no higher level than this */
};

/* A static log on fd 2 at level notice, for use before configuration. */
sws_log_t *sws_log_stderr(void);
/* Open path for appending ("stderr" means fd 2). The fd is closed by a pool
 * cleanup. NULL on failure with errno kept. */
sws_log_t *sws_log_open(sws_pool_t *pool, const char *path, sws_uint_t level);
/* A log whose lines go to writer (fd -1, nothing to reopen). */
sws_log_t *sws_log_create_writer(sws_pool_t *pool, sws_uint_t level, sws_log_writer_pt writer,
    void *wdata);
/* Several error_log at one level: add log to the chain at *head, which
 * stays ordered by level, the highest first (so that the head's level
 * says whether any of them takes a message). */
void       sws_log_chain(sws_log_t **head, sws_log_t *log);
/* Reopen the log's path and put it in place of the old fd (SIGUSR1);
 * SWS_ERROR with errno kept on failure, the old file stays in use. */
sws_int_t  sws_log_reopen(sws_log_t *log);
/* "debug".."emerg" -> SWS_LOG_*; SWS_ERROR if unknown. */
sws_int_t  sws_log_parse_level(const sws_str_t *name);
/* The last emerg message logged by this process, without its time and
 * level ("" after a clear): the refusal of a configuration. */
const char *sws_log_last_emerg(void);
void       sws_log_clear_emerg(void);
/* The pid printed in log lines (getpid() until set). */
void       sws_log_set_pid(pid_t pid);

#endif
