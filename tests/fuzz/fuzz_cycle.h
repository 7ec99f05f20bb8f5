/*
 * For the libFuzzer targets that drive the core on a real configuration:
 * read it (written to dir, a private directory) as "scalwsd -t" would, and
 * return the first listening address's servers. abort() on any failure.
 * And a fake transport for their sessions.
 */
#ifndef FUZZ_CYCLE_H
#define FUZZ_CYCLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sws_http_core.h"
#include "sws_log_internal.h"

/* What every such target does first: the clock, a log on stderr that
 * says only emergencies, and a private directory (dir: a mkdtemp
 * template, filled in). */
static sws_log_t *
fuzz_start(char *dir)
{
    sws_log_t *log;

    sws_time_init();
    log = sws_log_stderr();
    log->level = SWS_LOG_EMERG;
    if (mkdtemp(dir) == NULL) {
        abort();
    }
    return log;
}

static sws_http_addr_t *
fuzz_read_conf(const char *dir, const char *text, sws_cycle_t **cyclep)
{
    char              path[256];
    sws_cycle_args_t  args;
    sws_cycle_t      *cycle;
    sws_listening_t **ls;
    FILE             *f;

    snprintf(path, sizeof(path), "%s/fuzz.conf", dir);
    f = fopen(path, "w");
    if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0) {
        abort();
    }
    memset(&args, 0, sizeof(args));
    args.prefix = dir;
    args.conf_file = path;
    args.test_only = 1;
    cycle = sws_cycle_init(NULL, &args);
    unlink(path);
    if (cycle == NULL || cycle->listening.nelts == 0) {
        abort();
    }
    if (cyclep) {
        *cyclep = cycle;
    }
    ls = cycle->listening.elts;
    return ls[0]->servers;
}

/* A session's transport (every request's start asks it whether it is TLS
 * early data; variables ask it the rest). */
static inline sws_int_t
fz_info(sws_http_session_t *s, sws_http_transport_info_t *ti)
{
    ti->rtt = 1000;
    ti->rttvar = 500;
    ti->snd_cwnd = 10;
    ti->rcv_space = 65536;
    return SWS_OK;
}

static inline sws_int_t
fz_local_addr(sws_http_session_t *s, struct sockaddr_storage *sa)
{
    return SWS_ERROR;
}

static inline int
fz_tls_early(sws_http_session_t *s)
{
    return 0;
}

static const sws_http_transport_t fuzz_transport = {
    .name = "fuzz", .info = fz_info, .local_addr = fz_local_addr, .tls_early = fz_tls_early,
};

#endif
