/*
 * The lock of a shared memory zone: one 32-bit word in the zone's header
 * that holds the pid of the process owning it (0 when free), with a bit
 * that says others sleep on it (a futex).
 *
 * Why not a robust pthread mutex: every lock of a robust mutex enqueues it
 * on the thread's robust list and every unlock takes it off again (about
 * 110 instructions a cache hit), to cover the rare owner that dies inside.
 * Here a free lock costs one compare-and-swap and an unlock one exchange,
 * and the dead owner is found two other ways: the master unlocks what a
 * child it reaps held (sws_shm_unlock_dead), and a waiter that slept long
 * without the lock coming free asks whether its owner still lives.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <stdint.h>
#include "sws_shm_internal.h"

#define SWS_SHM_MUTEX_WAITERS  0x80000000u  /* pids are below 2^22 */
#define SWS_SHM_MUTEX_SPINS    100          /* brief holds: spin before sleeping */
#define SWS_SHM_MUTEX_CHECK_NS 50000000     /* how long a sleep lasts before the owner is checked */

/* This process's pid, as the lock stores it; fork() renews it in the child. */
static uint32_t  sws_shm_mutex_me;

static void
sws_shm_mutex_renew_pid(void)
{
    sws_shm_mutex_me = (uint32_t) getpid();
}

static uint32_t
sws_shm_mutex_pid(void)
{
    if (sws_shm_mutex_me == 0) {
        sws_shm_mutex_renew_pid();
        (void) pthread_atfork(NULL, NULL, sws_shm_mutex_renew_pid);
    }
    return sws_shm_mutex_me;
}

static long
sws_shm_futex(uint32_t *word, int op, uint32_t val, const struct timespec *timeout)
{
    /* Not FUTEX_PRIVATE_FLAG: the word is shared between processes. */
    return syscall(SYS_futex, word, op, val, timeout, NULL, 0);
}

void
sws_shm_mutex_init(void *mutex)
{
    (void) sws_shm_mutex_pid();
    __atomic_store_n((uint32_t *) mutex, 0, __ATOMIC_RELEASE);
}

/* A spinning CPU's hint to its sibling thread and the memory system. */
static inline void
sws_shm_mutex_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline int
sws_shm_mutex_take(uint32_t *word, uint32_t from, uint32_t to)
{
    return __atomic_compare_exchange_n(word, &from, to, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

/* The lock is held: spin a little, then sleep until it comes free. Who
 * takes it after sleeping marks it as waited on, since another may still
 * sleep, so that its unlock wakes the next one. */
static void
sws_shm_mutex_wait(uint32_t *word, uint32_t me)
{
    static const struct timespec  check = { 0, SWS_SHM_MUTEX_CHECK_NS };
    uint32_t                      v, owner;
    int                           i, err = errno;

    for (i = 0; i < SWS_SHM_MUTEX_SPINS; i++) {
        sws_shm_mutex_relax();
        if (__atomic_load_n(word, __ATOMIC_RELAXED) == 0 && sws_shm_mutex_take(word, 0, me)) {
            return;
        }
    }
    for ( ;; ) {
        v = __atomic_load_n(word, __ATOMIC_RELAXED);
        if (v == 0) {
            if (sws_shm_mutex_take(word, 0, me | SWS_SHM_MUTEX_WAITERS)) {
                break;
            }
            continue;
        }
        if (!(v & SWS_SHM_MUTEX_WAITERS)) {
            if (!sws_shm_mutex_take(word, v, v | SWS_SHM_MUTEX_WAITERS)) {
                continue;
            }
            v |= SWS_SHM_MUTEX_WAITERS;
        }
        if (sws_shm_futex(word, FUTEX_WAIT, v, &check) == -1 && errno == ETIMEDOUT) {
            /* Held for long: is its owner gone (killed inside, and not yet
             * reaped by the master)? Its data may be half updated, but the
             * zones keep counters, trees and states that tolerate it. */
            owner = v & ~SWS_SHM_MUTEX_WAITERS;
            if (owner != me && kill((pid_t) owner, 0) == -1 && errno == ESRCH
                && sws_shm_mutex_take(word, v, me | SWS_SHM_MUTEX_WAITERS))
            {
                break;
            }
        }
    }
    errno = err;
}

void
sws_shm_mutex_lock(void *mutex)
{
    uint32_t *word = mutex, me = sws_shm_mutex_pid();

    if (sws_likely(sws_shm_mutex_take(word, 0, me))) {
        return;
    }
    sws_shm_mutex_wait(word, me);
}

void
sws_shm_mutex_unlock(void *mutex)
{
    uint32_t *word = mutex;

    if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) & SWS_SHM_MUTEX_WAITERS) {
        (void) sws_shm_futex(word, FUTEX_WAKE, 1, NULL);
    }
}

int
sws_shm_mutex_unlock_dead(void *mutex, pid_t pid)
{
    uint32_t *word = mutex, v;

    v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    if ((v & ~SWS_SHM_MUTEX_WAITERS) != (uint32_t) pid
        || !__atomic_compare_exchange_n(word, &v, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    {
        return 0;
    }
    if (v & SWS_SHM_MUTEX_WAITERS) {
        (void) sws_shm_futex(word, FUTEX_WAKE, 1, NULL);
    }
    return 1;
}
