/* The server's reloads and a delayed quit, shared by the master and its
 * workers (sws_server_control.h, <scalws/sws_server.h>). */
#include <errno.h>
#include <sys/eventfd.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "sws_server_control.h"
#include "sws_helper_internal.h"
#include "sws_log_internal.h"
#include "sws_process.h"
#include "sws_times_internal.h"

typedef struct {
    uint64_t    reloads;
    uint64_t    failures;
    uint64_t    generation;
    time_t      last_reload;
    int         last_ok;
    sws_msec_t  quit_at;        /* monotonic ms; 0: none */
    sws_uint_t  asked;          /* 1 << SWS_SERVER_*, set by workers */
    char        last_error[512];
    /* the helpers: seq is odd while the master writes them */
    uint64_t             helpers_seq;
    sws_uint_t           nhelpers;
    sws_server_helper_t  helpers[SWS_SERVER_HELPERS];
} sws_server_shared_t;

static sws_server_shared_t *sws_server_shared;
/* The workers' wake-up for the master: an eventfd's counter (not a pipe:
 * the master keeps no end of a pipe for the workers to hold). */
static int                  sws_server_wake = -1;


void
sws_server_control_init(sws_log_t *log, pid_t pid)
{
    void *p = mmap(NULL, sizeof(sws_server_shared_t), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);

    (void) pid;
    if (p == MAP_FAILED) {
        sws_log_error(SWS_LOG_ALERT, log, errno, "mmap() of the server's control page failed");
        return;
    }
    sws_server_wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (sws_server_wake == -1) {
        sws_log_error(SWS_LOG_ALERT, log, errno, "eventfd() for the server's control failed");
        munmap(p, sizeof(sws_server_shared_t));
        return;
    }
    sws_server_shared = p;
    sws_server_shared->generation = 1;
}

int
sws_server_control_fd(void)
{
    return sws_server_wake;
}

sws_uint_t
sws_server_control_take(void)
{
    eventfd_t  n;

    (void) eventfd_read(sws_server_wake, &n);    /* back to 0: the bits say what */
    return sws_server_shared ? __atomic_exchange_n(&sws_server_shared->asked, 0,
                                                   __ATOMIC_ACQ_REL)
                             : 0;
}

void
sws_server_reloaded(int ok, uint64_t generation)
{
    sws_server_shared_t *sh = sws_server_shared;
    const char          *why = sws_log_last_emerg();

    if (sh == NULL) {
        return;
    }
    sh->last_ok = ok;
    sh->last_reload = time(NULL);
    sh->generation = generation;
    if (!ok) {
        sh->failures++;
        if (why[0] == '\0') {
            why = "the new configuration was refused (see the error log)";
        }
        strncpy(sh->last_error, why, sizeof(sh->last_error) - 1);
    } else {
        sh->last_error[0] = '\0';
    }
    /* Last: a worker waiting for it sees the rest filled. */
    __atomic_store_n(&sh->reloads, sh->reloads + 1, __ATOMIC_RELEASE);
}

void
sws_server_publish_helpers(void)
{
    sws_server_shared_t *sh = sws_server_shared;
    sws_server_helper_t  now[SWS_SERVER_HELPERS];
    sws_uint_t           n;

    if (sh == NULL) {
        return;
    }
    n = sws_helpers_snapshot(now, SWS_SERVER_HELPERS);
    if (n == sh->nhelpers && memcmp(now, sh->helpers, n * sizeof(now[0])) == 0) {
        return;                        /* as the workers have it */
    }
    __atomic_store_n(&sh->helpers_seq, sh->helpers_seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(sh->helpers, now, n * sizeof(now[0]));
    __atomic_store_n(&sh->nhelpers, n, __ATOMIC_RELAXED);
    __atomic_store_n(&sh->helpers_seq, sh->helpers_seq + 1, __ATOMIC_RELEASE);
}

sws_int_t
sws_server_helper(sws_uint_t i, sws_server_helper_t *h)
{
    sws_server_shared_t *sh = sws_server_shared;
    sws_server_helper_t  one;
    uint64_t             seq;
    size_t               size = h->size;
    int                  found;

    if (size < offsetof(sws_server_helper_t, reserved)) {
        return SWS_ERROR;
    }
    if (sh == NULL || i >= SWS_SERVER_HELPERS) {
        return SWS_DECLINED;
    }
    do {                               /* again if the master wrote meanwhile */
        seq = __atomic_load_n(&sh->helpers_seq, __ATOMIC_ACQUIRE);
        found = i < __atomic_load_n(&sh->nhelpers, __ATOMIC_RELAXED);
        if (found) {
            memcpy(&one, &sh->helpers[i], sizeof(one));
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
    } while ((seq & 1) || seq != __atomic_load_n(&sh->helpers_seq, __ATOMIC_RELAXED));
    if (!found) {
        return SWS_DECLINED;
    }
    size = sws_min(size, sizeof(one));
    one.size = size;
    memcpy(h, &one, size);
    return SWS_OK;
}

sws_msec_t
sws_server_quit_at(void)
{
    return sws_server_shared ? __atomic_load_n(&sws_server_shared->quit_at, __ATOMIC_ACQUIRE)
                             : 0;
}

sws_int_t
sws_server_control(sws_uint_t action, sws_msec_t delay)
{
    if (sws_server_shared == NULL || sws_process != SWS_PROCESS_WORKER) {
        return SWS_DECLINED;
    }
    if (action < SWS_SERVER_RELOAD || action > SWS_SERVER_QUIT) {
        return SWS_ERROR;
    }
    if (action == SWS_SERVER_QUIT) {
        __atomic_store_n(&sws_server_shared->quit_at, sws_monotonic_msec() + sws_max(delay, 1),
                         __ATOMIC_RELEASE);
    }
    __atomic_fetch_or(&sws_server_shared->asked, (sws_uint_t) 1 << action, __ATOMIC_ACQ_REL);
    /* (EAGAIN: the counter is full, the master is awake already) */
    return eventfd_write(sws_server_wake, 1) == 0 || errno == EAGAIN ? SWS_OK : SWS_ERROR;
}

sws_int_t
sws_server_status(sws_server_status_t *st)
{
    sws_server_shared_t *sh = sws_server_shared;
    sws_server_status_t  out;
    sws_msec_t           at;
    size_t               size = st->size;

    if (size < offsetof(sws_server_status_t, reserved)) {
        return SWS_ERROR;
    }
    if (sh == NULL) {
        return SWS_DECLINED;
    }
    sws_memzero(&out, sizeof(out));
    out.reloads = __atomic_load_n(&sh->reloads, __ATOMIC_ACQUIRE);
    out.reload_failures = sh->failures;
    out.generation = sh->generation;
    out.last_reload = sh->last_reload;
    out.last_reload_ok = sh->last_ok;
    at = __atomic_load_n(&sh->quit_at, __ATOMIC_ACQUIRE);
    out.quit_in = at == 0 ? -1 : sws_max(at - sws_monotonic_msec(), 0);
    memcpy(out.last_error, sh->last_error, sizeof(out.last_error));
    out.last_error[sizeof(out.last_error) - 1] = '\0';
    size = sws_min(size, sizeof(out));
    out.size = size;
    memcpy(st, &out, size);
    return SWS_OK;
}
