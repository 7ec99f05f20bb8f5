/*
 * delayline: a path with a fixed one-way delay between two TUN devices,
 * for kernels without sch_netem (bench/delay.py --path tun).
 *
 *   delayline --dev-a NAME [--ns-a NETNS] --dev-b NAME [--ns-b NETNS]
 *             [--delay-ms D] [--queue-packets N] [--fifo PRIORITY]
 *
 * It makes two TUN devices (IFF_TUN | IFF_NO_PI: whole IP packets, no
 * offload metadata, so the kernel hands over one packet of at most the
 * device's MTU per read), each in the named network namespace
 * (/run/netns/NETNS, or a path) or in its own. Every packet read from one
 * device is written to the other D ms after it was read: one FIFO per
 * direction, each entry stamped with its arrival time (CLOCK_MONOTONIC),
 * one ppoll() whose timeout is the earliest head's due time. Nothing is
 * reordered or changed; TCP, UDP and ICMP pass alike. Each queue is
 * bounded (--queue-packets slots of SLOT_BYTES); a packet that finds its
 * queue full is dropped and counted, so memory cannot grow without bound.
 * The slots are mmap()ed, so only the pages a queue has used are resident.
 *
 * On stdout, one JSON object per line: {"ready": ...} once both devices
 * exist (the caller then gives them addresses), the counters on SIGUSR1,
 * and the counters at exit (SIGTERM, SIGINT, or the parent's death). The
 * counters: per direction packets, bytes, drops (queue full), oversize
 * (larger than a slot), write errors and the deepest queue; the process's
 * own user and system CPU time and the time it was runnable but waited
 * for a CPU (/proc/thread-self/schedstat), so the caller can show that
 * the delay line was not the bottleneck. Note that a write to a TUN
 * device runs the receiving stack (and whatever it sends in answer, up to
 * the other device's queue) in this process: its system time includes
 * that kernel work. --fifo runs it under SCHED_FIFO so that, on a busy
 * machine, packets are not held longer because it waits for a CPU.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define SLOT_BYTES   2048     /* one packet: the MTU (1500) with room to spare */
#define READ_BURST   64       /* packets read from one device per wake-up */

struct queue {
    unsigned char *slots;     /* cap * SLOT_BYTES, a ring */
    uint64_t      *due;       /* when each packet leaves, ns */
    uint16_t      *len;
    uint32_t       cap, head, count, max_count;
    uint64_t       packets, bytes, drops, oversize, write_errors;
};

struct side {
    const char *dev;
    const char *ns;
    int         fd;
};

static volatile sig_atomic_t stop, report;

static void die(const char *fmt, ...)
{
    va_list ap;

    fputs("delayline: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void on_signal(int sig)
{
    if (sig == SIGUSR1)
        report = 1;
    else
        stop = 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* The TUN device, made in netns `ns` when one is named: a TUN device
 * belongs to the namespace its /dev/net/tun file was opened in. */
static int tun_open(const char *dev, const char *ns)
{
    struct ifreq ifr;
    int self = -1, fd;

    if (ns) {
        char path[256];
        int nsfd;

        snprintf(path, sizeof(path), strchr(ns, '/') ? "%s" : "/run/netns/%s", ns);
        nsfd = open(path, O_RDONLY | O_CLOEXEC);
        if (nsfd < 0)
            die("%s: %s", path, strerror(errno));
        self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        if (self < 0)
            die("/proc/self/ns/net: %s", strerror(errno));
        if (setns(nsfd, CLONE_NEWNET) != 0)
            die("setns %s: %s", path, strerror(errno));
        close(nsfd);
    }
    fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        die("/dev/net/tun: %s", strerror(errno));
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    if (strlen(dev) >= IFNAMSIZ)
        die("%s: a device name has at most %d characters", dev, IFNAMSIZ - 1);
    strcpy(ifr.ifr_name, dev);
    if (ioctl(fd, TUNSETIFF, &ifr) != 0)
        die("TUNSETIFF %s: %s", dev, strerror(errno));
    if (self >= 0) {
        if (setns(self, CLONE_NEWNET) != 0)
            die("setns back: %s", strerror(errno));
        close(self);
    }
    return fd;
}

static void queue_init(struct queue *q, uint32_t cap)
{
    q->cap = cap;
    q->slots = mmap(NULL, (size_t) cap * SLOT_BYTES, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    q->due = calloc(cap, sizeof(*q->due));
    q->len = calloc(cap, sizeof(*q->len));
    if (q->slots == MAP_FAILED || !q->due || !q->len)
        die("cannot allocate a queue of %u packets", cap);
}

static void queue_free(struct queue *q)
{
    munmap(q->slots, (size_t) q->cap * SLOT_BYTES);
    free(q->due);
    free(q->len);
}

/* Read what the device has (up to READ_BURST packets) into the queue's tail. */
static void queue_fill(struct queue *q, int fd, uint64_t delay)
{
    static unsigned char scratch[65536];
    int i;

    for (i = 0; i < READ_BURST; i++) {
        int full = q->count == q->cap;
        uint32_t tail = (q->head + q->count) % q->cap;
        unsigned char *buf = full ? scratch : q->slots + (size_t) tail * SLOT_BYTES;
        ssize_t n = read(fd, buf, full ? sizeof(scratch) : SLOT_BYTES);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                die("read: %s", strerror(errno));
            return;
        }
        if (n == 0)
            return;
        if (full) {
            q->drops++;
            continue;
        }
        if (n == SLOT_BYTES) {       /* perhaps cut short: not a packet we can pass */
            q->oversize++;
            continue;
        }
        q->due[tail] = now_ns() + delay;
        q->len[tail] = (uint16_t) n;
        q->count++;
        if (q->count > q->max_count)
            q->max_count = q->count;
    }
}

/* Write every packet whose time has come; the next one's due time, or 0. */
static uint64_t queue_drain(struct queue *q, int fd, uint64_t now)
{
    while (q->count) {
        uint32_t h = q->head;

        if (q->due[h] > now)
            return q->due[h];
        if (write(fd, q->slots + (size_t) h * SLOT_BYTES, q->len[h]) == (ssize_t) q->len[h]) {
            q->packets++;
            q->bytes += q->len[h];
        } else {
            q->write_errors++;
        }
        q->head = (h + 1) % q->cap;
        q->count--;
    }
    return 0;
}

static void print_queue(const char *name, const struct queue *q)
{
    printf("\"%s\": {\"packets\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"drops\": %" PRIu64
           ", \"oversize\": %" PRIu64 ", \"write_errors\": %" PRIu64 ", \"max_queue\": %u"
           ", \"queue\": %u}",
           name, q->packets, q->bytes, q->drops, q->oversize, q->write_errors, q->max_count,
           q->count);
}

/* How long this thread was runnable but not running, in seconds (-1: unknown). */
static double sched_wait_s(void)
{
    unsigned long long run, wait;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    int n;

    if (f == NULL)
        return -1;
    n = fscanf(f, "%llu %llu", &run, &wait);
    fclose(f);
    return n == 2 ? wait / 1e9 : -1;
}

static void print_counters(const char *what, const struct queue *ab, const struct queue *ba)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    printf("{\"%s\": true, ", what);
    print_queue("a_to_b", ab);
    fputs(", ", stdout);
    print_queue("b_to_a", ba);
    printf(", \"cpu_user_s\": %.6f, \"cpu_sys_s\": %.6f, \"sched_wait_s\": %.6f}\n",
           ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
           ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, sched_wait_s());
    fflush(stdout);
}

static void usage(FILE *f)
{
    fputs("usage: delayline --dev-a NAME [--ns-a NETNS] --dev-b NAME [--ns-b NETNS]\n"
          "                 [--delay-ms D] [--queue-packets N] [--fifo PRIORITY]\n"
          "  --delay-ms D        one-way delay added each way (25)\n"
          "  --queue-packets N   each direction's queue, packets (65536)\n"
          "  --fifo PRIORITY     run under SCHED_FIFO at this priority (1-99)\n", f);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "dev-a", required_argument, NULL, 'a' },
        { "dev-b", required_argument, NULL, 'b' },
        { "ns-a", required_argument, NULL, 'A' },
        { "ns-b", required_argument, NULL, 'B' },
        { "delay-ms", required_argument, NULL, 'd' },
        { "queue-packets", required_argument, NULL, 'q' },
        { "fifo", required_argument, NULL, 'f' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    struct side a = { 0 }, b = { 0 };
    struct queue ab = { 0 }, ba = { 0 };
    struct sigaction sa;
    double delay_ms = 25;
    unsigned long cap = 65536, fifo = 0;
    uint64_t delay;
    sigset_t block, none;
    int ch;

    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end = NULL;

        switch (ch) {
        case 'a': a.dev = optarg; break;
        case 'b': b.dev = optarg; break;
        case 'A': a.ns = optarg; break;
        case 'B': b.ns = optarg; break;
        case 'd': delay_ms = strtod(optarg, &end); break;
        case 'q': cap = strtoul(optarg, &end, 10); break;
        case 'f': fifo = strtoul(optarg, &end, 10); break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
        if (end && (*end || end == optarg))
            die("--%s takes a number",
                ch == 'd' ? "delay-ms" : ch == 'q' ? "queue-packets" : "fifo");
    }
    if (!a.dev || !b.dev || optind != argc) {
        usage(stderr);
        return 2;
    }
    if (delay_ms < 0 || delay_ms > 10000 || cap < 16 || cap > (1u << 22) || fifo > 99)
        die("--delay-ms is 0 to 10000, --queue-packets 16 to %u, --fifo 0 to 99", 1u << 22);
    delay = (uint64_t) (delay_ms * 1e6);

    /* Gone with the bench that started it, even when that is killed. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    /* Wake-ups on time: the default 50 us of slack is not needed here. */
    prctl(PR_SET_TIMERSLACK, 1UL);
    if (fifo) {
        struct sched_param sp = { .sched_priority = (int) fifo };

        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
            die("SCHED_FIFO %lu: %s", fifo, strerror(errno));
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* The signals arrive only inside ppoll(), so no flag is missed. */
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGHUP);
    sigprocmask(SIG_BLOCK, &block, &none);
    sigdelset(&none, SIGTERM);
    sigdelset(&none, SIGINT);
    sigdelset(&none, SIGUSR1);
    sigdelset(&none, SIGHUP);
    signal(SIGPIPE, SIG_IGN);

    a.fd = tun_open(a.dev, a.ns);
    b.fd = tun_open(b.dev, b.ns);
    queue_init(&ab, (uint32_t) cap);
    queue_init(&ba, (uint32_t) cap);
    printf("{\"ready\": true, \"dev_a\": \"%s\", \"dev_b\": \"%s\", \"delay_ms\": %g"
           ", \"queue_packets\": %lu, \"slot_bytes\": %d, \"fifo\": %lu}\n",
           a.dev, b.dev, delay_ms, cap, SLOT_BYTES, fifo);
    fflush(stdout);

    while (!stop) {
        struct pollfd pfd[2] = { { a.fd, POLLIN, 0 }, { b.fd, POLLIN, 0 } };
        struct timespec ts, *tsp = NULL;
        uint64_t now = now_ns(), next_ab, next_ba, next;

        next_ab = queue_drain(&ab, b.fd, now);
        next_ba = queue_drain(&ba, a.fd, now);
        next = next_ab && next_ba ? (next_ab < next_ba ? next_ab : next_ba)
                                  : next_ab | next_ba;
        if (next) {
            uint64_t wait = next - now;

            ts.tv_sec = (time_t) (wait / 1000000000u);
            ts.tv_nsec = (long) (wait % 1000000000u);
            tsp = &ts;
        }
        if (report) {
            report = 0;
            print_counters("counters", &ab, &ba);
        }
        if (ppoll(pfd, 2, tsp, &none) < 0) {
            if (errno == EINTR)
                continue;
            die("ppoll: %s", strerror(errno));
        }
        if (pfd[0].revents & POLLIN)
            queue_fill(&ab, a.fd, delay);
        if (pfd[1].revents & POLLIN)
            queue_fill(&ba, b.fd, delay);
        if ((pfd[0].revents | pfd[1].revents) & (POLLERR | POLLHUP | POLLNVAL))
            die("a device went away");
    }
    print_counters("exit", &ab, &ba);
    queue_free(&ab);
    queue_free(&ba);
    close(a.fd);
    close(b.fd);
    return 0;
}
