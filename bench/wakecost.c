/*
 * bench/wakecost.c: what a server that sleeps between requests costs its
 * client. One loopback TCP write costs the writer more system time when
 * the reader waits asleep in epoll_wait (the write wakes it: on a VM an
 * IPI to a halted vCPU) than when the reader is running (here: polling
 * epoll_wait with timeout 0). A client that is the bottleneck pays that
 * difference for every write that finds the server asleep
 * (docs/benchmarks/2026-12-05-h2-client-cost.md).
 *
 *     cc -O2 -o /tmp/wakecost bench/wakecost.c && /tmp/wakecost [WRITES] [ROUNDS]
 *
 * The reader runs on CPU 0, the writer on CPU 1 (as bench/run pins server
 * and client). The writer sends one byte at a time and waits, spinning on
 * shared memory rather than in a system call, until the reader has read
 * it, then a little longer so that a sleeping reader is back in epoll_wait:
 * its only system calls are the writes. Rounds alternate the two readers;
 * the minimum of each is printed last (other processes' load only adds).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void
pin(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void) sched_setaffinity(0, sizeof(set), &set);
}

/* The reader: an event loop that reads n bytes, publishing its count. */
static void
reader(int ls, long n, int poll, volatile long *seen)
{
    struct epoll_event ev, out;
    char               buf[4096];
    ssize_t            r;
    long               k = 0;
    int                c, ep;

    pin(0);
    c = accept(ls, NULL, NULL);
    ep = epoll_create1(0);
    if (c < 0 || ep < 0) {
        _exit(1);
    }
    ev.events = EPOLLIN;
    ev.data.fd = c;
    (void) epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
    while (k < n) {
        if (epoll_wait(ep, &out, 1, poll ? 0 : -1) == 1) {
            r = read(c, buf, sizeof(buf));
            if (r <= 0) {
                _exit(1);
            }
            k += r;
            *seen = k;
        }
    }
    _exit(0);
}

/* One round: the writer's system time per write, in microseconds, or a
 * negative number on failure. */
static double
round_us(long n, int poll)
{
    struct sockaddr_in  a = { .sin_family = AF_INET };
    struct rusage       r0, r1;
    volatile long      *seen;
    socklen_t           alen = sizeof(a);
    pid_t               pid;
    long                i;
    int                 ls, s, one = 1, status;
    double              us;

    seen = mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (seen == MAP_FAILED) {
        return -1;
    }
    *seen = 0;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ls = socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0 || bind(ls, (struct sockaddr *) &a, sizeof(a)) != 0 || listen(ls, 1) != 0
        || getsockname(ls, (struct sockaddr *) &a, &alen) != 0)
    {
        return -1;
    }
    pid = fork();
    if (pid == 0) {
        reader(ls, n, poll, seen);
    }
    pin(1);
    s = socket(AF_INET, SOCK_STREAM, 0);
    (void) setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (pid < 0 || connect(s, (struct sockaddr *) &a, sizeof(a)) != 0) {
        return -1;
    }
    getrusage(RUSAGE_SELF, &r0);
    for (i = 1; i <= n; i++) {
        if (write(s, "x", 1) != 1) {
            return -1;
        }
        while (*seen < i) { /* the reader has not read it yet */ }
        for (volatile int d = 0; d < 20000; d++) { /* a sleeping reader sleeps again */ }
    }
    getrusage(RUSAGE_SELF, &r1);
    us = (double) (r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6
         + (double) (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec);
    close(s);
    close(ls);
    waitpid(pid, &status, 0);
    munmap((void *) seen, sizeof(long));
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? us / (double) n : -1;
}

int
main(int argc, char **argv)
{
    long   n = argc > 1 ? atol(argv[1]) : 50000;
    int    rounds = argc > 2 ? atoi(argv[2]) : 3, i, poll;
    double best[2] = { 1e30, 1e30 }, v;

    if (n <= 0 || rounds <= 0) {
        fprintf(stderr, "usage: wakecost [WRITES] [ROUNDS]\n");
        return 2;
    }
    for (i = 0; i < rounds; i++) {
        for (poll = 0; poll < 2; poll++) {
            v = round_us(n, poll);
            if (v < 0) {
                fprintf(stderr, "wakecost: a round failed\n");
                return 1;
            }
            printf("round %d, reader %s: %.2f us of the writer's system time a write\n",
                   i + 1, poll ? "polling" : "asleep ", v);
            if (v < best[poll]) {
                best[poll] = v;
            }
        }
    }
    printf("minimum: reader asleep %.2f us, polling %.2f us: a wake-up costs the writer %.2f us\n",
           best[0], best[1], best[0] - best[1]);
    return 0;
}
