/*
 * The QUIC slots shared by the masters of a binary upgrade
 * (sws_udp_slots.h).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "sws_event.h"
#include "sws_udp_slots.h"
#include "sws_udp_steer.h"

#define SWS_UDP_SLOTS_MAGIC  0x51534c32     /* "QSL2": the layout below */

typedef struct {
    pid_t     pid;          /* 0: free; the master's own while it forks */
    uint32_t  epoch;        /* of the master that gave it */
    uint32_t  current;      /* takes new connections */
} sws_udp_slot_t;

typedef struct {
    uint32_t        magic;
    uint32_t        epochs; /* masters that used the table so far */
    uint32_t        steer;  /* SWS_UDP_STEER_* + 1 attached last, 0: none yet */
    uint32_t        spare;
    sws_udp_slot_t  slot[SWS_UDP_SLOTS_MAX];
} sws_udp_slots_t;

static sws_udp_slots_t  *sws_slots;
static int               sws_slots_fd = -1;
static uint32_t          sws_slots_epoch;


static sws_udp_slots_t *
sws_udp_slots_map(int fd)
{
    void  *p;

    p = mmap(NULL, sizeof(sws_udp_slots_t), PROT_READ | PROT_WRITE,
             fd == -1 ? MAP_SHARED | MAP_ANONYMOUS : MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}


sws_int_t
sws_udp_slots_init(sws_log_t *log, int fd)
{
    struct stat  st;
    sws_uint_t   i, held;

    if (sws_slots != NULL) {
        return SWS_OK;
    }
    if (fd != -1) {
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
            && st.st_size == (off_t) sizeof(sws_udp_slots_t)
            && (sws_slots = sws_udp_slots_map(fd)) != NULL
            && sws_slots->magic == SWS_UDP_SLOTS_MAGIC)
        {
            (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
            sws_slots_fd = fd;
            sws_udp_slots_lock();
            sws_slots_epoch = ++sws_slots->epochs;
            for (i = 0, held = 0; i < SWS_UDP_SLOTS_MAX; i++) {
                held += !sws_udp_slots_free(i);
            }
            sws_udp_slots_unlock();
            sws_log_error(SWS_LOG_NOTICE, log, 0, "binary upgrade: QUIC slots of the old "
                          "binary inherited, %lu held (this master's epoch %lu)",
                          (unsigned long) held, (unsigned long) sws_slots_epoch);
            return SWS_OK;
        }
        sws_log_error(SWS_LOG_EMERG, log, 0, "binary upgrade: descriptor %d is not "
                      "a table of QUIC slots, ignored", fd);
        if (sws_slots != NULL) {
            munmap(sws_slots, sizeof(sws_udp_slots_t));
            sws_slots = NULL;
        }
        close(fd);
    }
    fd = memfd_create("scalws-quic-slots", MFD_CLOEXEC);
    if (fd != -1 && ftruncate(fd, sizeof(sws_udp_slots_t)) == -1) {
        close(fd);
        fd = -1;
    }
    if (fd == -1) {
        /* Still a table for this master; a new binary gets none. */
        sws_log_error(SWS_LOG_WARN, log, errno, "memfd_create() of the QUIC slots failed: "
                      "a binary upgrade will not keep QUIC connections");
    }
    sws_slots = sws_udp_slots_map(fd);
    if (sws_slots == NULL) {
        sws_log_error(SWS_LOG_ALERT, log, errno, "mmap() of the QUIC slots failed");
        if (fd != -1) {
            close(fd);
        }
        return SWS_ERROR;
    }
    sws_slots_fd = fd;
    sws_slots->magic = SWS_UDP_SLOTS_MAGIC;
    sws_slots->epochs = 1;
    sws_slots_epoch = 1;
    return SWS_OK;
}


int
sws_udp_slots_fd(void)
{
    return sws_slots_fd;
}


sws_uint_t
sws_udp_slots_epoch(void)
{
    return sws_slots_epoch;
}


void
sws_udp_slots_worker(void)
{
    if (sws_slots != NULL) {
        munmap(sws_slots, sizeof(sws_udp_slots_t));
        sws_slots = NULL;
    }
    if (sws_slots_fd != -1) {
        close(sws_slots_fd);
        sws_slots_fd = -1;
    }
}


static void
sws_udp_slots_fcntl(short type)
{
    struct flock  fl;

    if (sws_slots_fd == -1) {
        return;
    }
    memset(&fl, 0, sizeof(fl));
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    while (fcntl(sws_slots_fd, F_SETLKW, &fl) == -1 && errno == EINTR) {
        /* again */
    }
}

void
sws_udp_slots_lock(void)
{
    sws_udp_slots_fcntl(F_WRLCK);
}

void
sws_udp_slots_unlock(void)
{
    sws_udp_slots_fcntl(F_UNLCK);
}


int
sws_udp_slots_free(sws_uint_t slot)
{
    sws_udp_slot_t  *s;

    if (sws_slots == NULL || slot >= SWS_UDP_SLOTS_MAX) {
        return 0;
    }
    s = &sws_slots->slot[slot];
    if (s->pid != 0 && kill(s->pid, 0) == -1 && errno == ESRCH) {
        s->pid = 0;                 /* of a master that died (SIGKILL) */
    }
    return s->pid == 0;
}


void
sws_udp_slots_hold(sws_uint_t slot, pid_t pid, int current)
{
    if (sws_slots == NULL || slot >= SWS_UDP_SLOTS_MAX) {
        return;
    }
    sws_slots->slot[slot].pid = pid;
    sws_slots->slot[slot].epoch = sws_slots_epoch;
    sws_slots->slot[slot].current = current != 0;
}


void
sws_udp_slots_release(sws_uint_t slot, pid_t pid)
{
    if (sws_slots != NULL && slot < SWS_UDP_SLOTS_MAX && sws_slots->slot[slot].pid == pid) {
        sws_slots->slot[slot].pid = 0;
        sws_slots->slot[slot].current = 0;
    }
}


void
sws_udp_slots_steering(sws_uint_t *live, sws_uint_t *nlive, sws_uint_t *cur,
    sws_uint_t *ncur)
{
    sws_uint_t  s;
    uint32_t    newest = 0;

    *nlive = *ncur = 0;
    if (sws_slots == NULL) {
        return;
    }
    for (s = 0; s < SWS_UDP_SLOTS_MAX; s++) {
        if (sws_udp_slots_free(s)) {
            continue;
        }
        live[(*nlive)++] = s;
        if (sws_slots->slot[s].current && sws_slots->slot[s].epoch > newest) {
            newest = sws_slots->slot[s].epoch;
        }
    }
    for (s = 0; s < *nlive && newest != 0; s++) {
        if (sws_slots->slot[live[s]].current && sws_slots->slot[live[s]].epoch == newest) {
            cur[(*ncur)++] = live[s];
        }
    }
}


void
sws_udp_slots_set_steer(sws_uint_t steer)
{
    if (sws_slots != NULL) {
        sws_slots->steer = (uint32_t) steer + 1;
    }
}


sws_uint_t
sws_udp_slots_steer(sws_uint_t own)
{
    return sws_slots != NULL && sws_slots->steer != 0 ? sws_slots->steer - 1 : own;
}
