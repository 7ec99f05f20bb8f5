/*
 * The list of inherited sockets of a binary upgrade, "fd;fd;" in the
 * SCALWS environment variable (sws_listening.c): one number at a time.
 * Inline and alone here so that its fuzz target (tests/fuzz/) needs
 * nothing else.
 */
#ifndef SWS_LISTENING_ENV_H
#define SWS_LISTENING_ENV_H

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

/* The next descriptor of the list at *p: 1 with *fd set and *p moved past
 * it, 0 at the end, -1 for something that is not "number;" (*p stays). */
static inline int
sws_listening_env_next(const char **p, int *fd)
{
    const char *s = *p;
    char       *end;
    long        n;

    while (*s == ';') {
        s++;
    }
    if (*s == '\0') {
        *p = s;
        return 0;
    }
    if (*s < '0' || *s > '9') {
        return -1;                  /* strtol would take a sign or spaces */
    }
    errno = 0;
    n = strtol(s, &end, 10);
    if (errno || n > INT_MAX || (*end != ';' && *end != '\0')) {
        return -1;
    }
    *fd = (int) n;
    *p = end;
    return 1;
}

#endif
