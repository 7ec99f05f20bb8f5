/*
 * The process title: what ps shows as the command line
 * (/proc/PID/cmdline), rewritten in place of the original argv.
 */
#ifndef SWS_PROCTITLE_H
#define SWS_PROCTITLE_H

/* In main(), before anything else looks at argv: remember where it is. */
void sws_proctitle_init(int argc, char **argv);

/* Replace the command line by title (truncated to the room that argv and
 * the environment strings after it had). Only in a child that no longer
 * needs its argv: the master's options point into it. */
void sws_proctitle_set(const char *title);

#endif
