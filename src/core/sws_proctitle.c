/*
 * The process title (sws_proctitle.h). Linux shows as a process's command
 * line the memory its argv strings were in, and the environment strings
 * follow them: a longer title takes that room too, once the environment
 * has been copied elsewhere. Nothing here runs unless a process asks for a
 * title (a helper), so the master and the workers keep their argv.
 */
#include <stdlib.h>
#include <string.h>
#include "sws_proctitle.h"

extern char **environ;

static int     sws_title_argc;
static char  **sws_title_argv;


void
sws_proctitle_init(int argc, char **argv)
{
    sws_title_argc = argc;
    sws_title_argv = argv;
}


/* The environment into the heap, so that its strings' place is free. */
static int
sws_proctitle_move_environ(void)
{
    char   **env;
    size_t   n, i;

    for (n = 0; environ[n] != NULL; n++) {
        /* count */
    }
    env = malloc((n + 1) * sizeof(char *));
    if (env == NULL) {
        return -1;
    }
    for (i = 0; i < n; i++) {
        env[i] = strdup(environ[i]);
        if (env[i] == NULL) {
            return -1;          /* the room stops at argv: still correct */
        }
    }
    env[n] = NULL;
    environ = env;
    return 0;
}


void
sws_proctitle_set(const char *title)
{
    char    *start, *end;
    size_t   len;
    int      i;

    if (sws_title_argv == NULL || sws_title_argv[0] == NULL) {
        return;
    }
    start = sws_title_argv[0];
    end = start + strlen(start) + 1;
    for (i = 1; i < sws_title_argc && sws_title_argv[i] == end; i++) {
        end += strlen(end) + 1;
    }
    if (i == sws_title_argc && environ != NULL && environ[0] == end) {
        char  *env_end = end;

        for (i = 0; environ[i] != NULL && environ[i] == env_end; i++) {
            env_end += strlen(env_end) + 1;
        }
        if (sws_proctitle_move_environ() == 0) {
            end = env_end;
        }
    }

    len = strlen(title);
    if (len > (size_t) (end - start) - 1) {
        len = end - start - 1;
    }
    memcpy(start, title, len);
    memset(start + len, '\0', end - start - len);
    sws_title_argv[1] = NULL;
}
