/*
 * For the libFuzzer targets that drive the core on a real configuration:
 * read it (written to dir, a private directory) as "scalwsd -t" would, and
 * return the first listening address's servers. abort() on any failure.
 */
#ifndef FUZZ_CYCLE_H
#define FUZZ_CYCLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sws_http_core.h"

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

#endif
