/*
 * The server as a whole, for an admin module (ABI 1.8): what the master
 * did with the configuration it was asked to load, and asking it for a
 * reload, a log reopen or a graceful quit, as the signals HUP, USR1 and
 * QUIT do.
 */
#ifndef SWS_SERVER_H
#define SWS_SERVER_H

#include <scalws/sws_types.h>

#define SWS_SERVER_RELOAD  1        /* HUP */
#define SWS_SERVER_REOPEN  2        /* USR1 */
#define SWS_SERVER_QUIT    3        /* QUIT, delay ms from now */

/* From a worker of a server with a master process: SWS_OK when the master
 * was told; SWS_DECLINED without a master (master_process off), SWS_ERROR
 * when the master could not be told. A quit with a delay takes effect
 * then (a later call sets another time); the workers go on serving until
 * it. */
sws_int_t sws_server_control(sws_uint_t action, sws_msec_t delay);

typedef struct {
    size_t      size;          /* the caller's sizeof; set to what was filled */
    uint64_t    reloads;       /* reloads the master finished (done or refused) */
    uint64_t    reload_failures;
    uint64_t    generation;    /* of the running configuration: 1 the first */
    time_t      last_reload;   /* when the last one finished, 0: none yet */
    int         last_reload_ok;
    sws_msec_t  quit_in;       /* a delayed quit: ms to go (-1: none asked) */
    /* the refusal of the last reload that failed, as the error log has it
     * ("unknown directive \"x\" in /etc/scalws/scalws.conf:12") */
    char        last_error[512];
    uint64_t    reserved[4];
} sws_server_status_t;

/* SWS_OK, or SWS_DECLINED without a master; SWS_ERROR if st->size is too
 * small. */
sws_int_t sws_server_status(sws_server_status_t *st);

/* The helper processes (sws_helper.h) as the master last saw them, from
 * any process: what sws_helper_status() tells in the master. */
#define SWS_SERVER_HELPERS  32
typedef struct {
    size_t      size;          /* the caller's sizeof; set to what was filled */
    char        name[40];
    pid_t       pid;           /* 0: no process now */
    unsigned    running:1;
    unsigned    ready:1;
    unsigned    reserved_bits:30;
    uint64_t    starts;
    uint64_t    exits;
    int         last_code;     /* the last end: exit code, or the signal */
    int         last_signo;
    uint64_t    reserved[4];
} sws_server_helper_t;

/* The i-th helper (i < SWS_SERVER_HELPERS): SWS_OK, SWS_DECLINED past the
 * last one (or without a master), SWS_ERROR if h->size is too small. */
sws_int_t sws_server_helper(sws_uint_t i, sws_server_helper_t *h);

#endif
