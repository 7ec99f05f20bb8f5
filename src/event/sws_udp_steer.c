/*
 * QUIC datagrams to the worker that owns their connection (sws_udp_steer.h
 * for slots). The program of a group reads the destination connection ID
 * of each datagram (the UDP payload):
 *
 *   short header  byte 0 (0x40 set, 0x80 clear), the ID from byte 1:
 *                 byte 1 is the magic 0x5c, bytes 2-3 the slot
 *   long header   byte 0 (0x80 set), the version (1-4), the ID's length
 *                 (5, 16 for ours), the ID from byte 6: byte 6 the magic,
 *                 bytes 7-8 the slot
 *
 * An ID of ours that names a live slot goes to that slot's socket. Any
 * other (a client's first Initial and its 0-RTT, of an ID it chose; an ID
 * of a process that has exited) goes to one of the current slots, picked
 * by a hash that stays the same for the client's first flight; with no
 * current slot, to the kernel's hash of the addresses.
 *
 * Two ways, the first the kernel allows (quic_steering; the master is
 * root: kernel.unprivileged_bpf_disabled does not stop it):
 *
 *  - eBPF: a BPF_PROG_TYPE_SK_REUSEPORT program with two maps: a
 *    REUSEPORT_SOCKARRAY of the group (key: the slot, value: its socket,
 *    present while the slot is live) and an ARRAY shared by all groups
 *    (entry 0 the number of current slots, entries 1.. the slots). The
 *    pick is the kernel's hash of the addresses (sk_reuseport_md.hash)
 *    modulo the number of current slots. The master only updates the maps.
 *  - classic BPF (SO_ATTACH_REUSEPORT_CBPF): the program returns an index
 *    into the group's sockets, which are in the order they were opened:
 *    slot s is opened s-th and no socket is closed while the group lives
 *    (a closed one's place would be taken by the last). The live and
 *    current slots are constants of the program, which the master makes
 *    again at each change; the pick is the first 4 bytes of the ID
 *    modulo their number.
 *
 * The bytecode is written here with the kernel's uapi (linux/bpf.h,
 * linux/filter.h).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include "sws_event.h"
#include "sws_listening_env.h"
#include "sws_udp_slots.h"
#include "sws_udp_steer.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF  51
#endif
#ifndef SO_ATTACH_REUSEPORT_EBPF
#define SO_ATTACH_REUSEPORT_EBPF  52
#endif
#ifndef SO_DETACH_REUSEPORT_BPF
#define SO_DETACH_REUSEPORT_BPF   68
#endif

#define SWS_CID_MAGIC      0x5c      /* SWS_H3_CID_MAGIC */
#define SWS_CID_LEN        16        /* SWS_H3_CID_LEN */
#define SWS_STEER_MIN_LEN  10        /* bytes the programs read */

/* The current slots, shared by every group's eBPF program. */
static int  sws_steer_current = -1;

/* A binary upgrade: the old master's groups' REUSEPORT_SOCKARRAY maps,
 * each taken by the group whose sockets it holds (sws_ebpf_inherited). */
#define SWS_STEER_INHERIT_MAX  64
static int         sws_steer_inherited[SWS_STEER_INHERIT_MAX];
static sws_uint_t  sws_steer_inherited_n;


const char *
sws_udp_steer_name(sws_uint_t steer)
{
    switch (steer) {
    case SWS_UDP_STEER_EBPF:
        return "eBPF (SK_REUSEPORT, REUSEPORT_SOCKARRAY by connection ID)";
    case SWS_UDP_STEER_CBPF:
        return "classic BPF (by connection ID)";
    default:
        return "the kernel's hash of the addresses";
    }
}


static long
sws_bpf(int cmd, union bpf_attr *attr)
{
    return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}


/* ---- eBPF ---- */

#define SWS_INSN(c, d, s, o, i) \
    ((struct bpf_insn) { .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

typedef struct {
    struct bpf_insn  insn[80];
    sws_uint_t       n;
    sws_uint_t       label[8];
    struct {
        sws_uint_t   at;
        sws_uint_t   label;
    }                fix[16];
    sws_uint_t       nfix;
} sws_ebpf_t;

static void
sws_ebpf_emit(sws_ebpf_t *p, struct bpf_insn insn)
{
    p->insn[p->n++] = insn;
}

/* A jump to a label placed later (patched by sws_ebpf_link). */
static void
sws_ebpf_jump(sws_ebpf_t *p, uint8_t op, uint8_t reg, int32_t imm, sws_uint_t label)
{
    p->fix[p->nfix].at = p->n;
    p->fix[p->nfix++].label = label;
    sws_ebpf_emit(p, SWS_INSN(BPF_JMP | op | BPF_K, reg, 0, 0, imm));
}

static void
sws_ebpf_link(sws_ebpf_t *p)
{
    sws_uint_t  i, at;

    for (i = 0; i < p->nfix; i++) {
        at = p->fix[i].at;
        p->insn[at].off = (int16_t) (p->label[p->fix[i].label] - at - 1);
    }
}

static void
sws_ebpf_map(sws_ebpf_t *p, uint8_t reg, int fd)
{
    sws_ebpf_emit(p, SWS_INSN(BPF_LD | BPF_DW | BPF_IMM, reg, BPF_PSEUDO_MAP_FD, 0, fd));
    sws_ebpf_emit(p, SWS_INSN(0, 0, 0, 0, 0));
}

/* bpf_sk_select_reuseport(ctx = r6, map, &key at fp-4, 0) */
static void
sws_ebpf_select(sws_ebpf_t *p, int map)
{
    sws_ebpf_map(p, BPF_REG_2, map);
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_6, 0, 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -4));
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_sk_select_reuseport));
}

/* r0 = bpf_map_lookup_elem(current, &key at fp-4) */
static void
sws_ebpf_lookup(sws_ebpf_t *p)
{
    sws_ebpf_map(p, BPF_REG_1, sws_steer_current);
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4));
    sws_ebpf_emit(p, SWS_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem));
}

enum { SWS_L_LONG = 0, SWS_L_SLOT, SWS_L_PICK, SWS_L_PASS };

/* The program of a group whose sockets are in map (sws_udp_steer.c's
 * first comment). The first 9 bytes of the payload go to fp-16..fp-8. */
static void
sws_ebpf_program(sws_ebpf_t *p, int map)
{
    sws_memzero(p, sizeof(*p));

    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0));
    /* bpf_skb_load_bytes(ctx, 8: past the UDP header, fp-16, 9) */
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 8));
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_10, 0, 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_3, 0, 0, -16));
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_4, 0, 0, 9));
    sws_ebpf_emit(p, SWS_INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_skb_load_bytes));
    sws_ebpf_jump(p, BPF_JNE, BPF_REG_0, 0, SWS_L_PICK);
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_B | BPF_MEM, BPF_REG_1, BPF_REG_10, -16, 0));
    sws_ebpf_jump(p, BPF_JSET, BPF_REG_1, 0x80, SWS_L_LONG);
    /* short header */
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_B | BPF_MEM, BPF_REG_1, BPF_REG_10, -15, 0));
    sws_ebpf_jump(p, BPF_JNE, BPF_REG_1, SWS_CID_MAGIC, SWS_L_PICK);
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_B | BPF_MEM, BPF_REG_7, BPF_REG_10, -14, 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_B | BPF_MEM, BPF_REG_1, BPF_REG_10, -13, 0));
    sws_ebpf_jump(p, BPF_JA, 0, 0, SWS_L_SLOT);
    /* long header */
    p->label[SWS_L_LONG] = p->n;
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_B | BPF_MEM, BPF_REG_1, BPF_REG_10, -11, 0));
    sws_ebpf_jump(p, BPF_JNE, BPF_REG_1, SWS_CID_LEN, SWS_L_PICK);
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_B | BPF_MEM, BPF_REG_1, BPF_REG_10, -10, 0));
    sws_ebpf_jump(p, BPF_JNE, BPF_REG_1, SWS_CID_MAGIC, SWS_L_PICK);
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_B | BPF_MEM, BPF_REG_7, BPF_REG_10, -9, 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_B | BPF_MEM, BPF_REG_1, BPF_REG_10, -8, 0));
    /* r7 = the slot: its socket, if the slot is live */
    p->label[SWS_L_SLOT] = p->n;
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_LSH | BPF_K, BPF_REG_7, 0, 0, 8));
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_OR | BPF_X, BPF_REG_7, BPF_REG_1, 0, 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_STX | BPF_W | BPF_MEM, BPF_REG_10, BPF_REG_7, -4, 0));
    sws_ebpf_select(p, map);
    sws_ebpf_jump(p, BPF_JEQ, BPF_REG_0, 0, SWS_L_PASS);
    /* the pick: current[1 + hash % current[0]] */
    p->label[SWS_L_PICK] = p->n;
    sws_ebpf_emit(p, SWS_INSN(BPF_ST | BPF_W | BPF_MEM, BPF_REG_10, 0, -4, 0));
    sws_ebpf_lookup(p);
    sws_ebpf_jump(p, BPF_JEQ, BPF_REG_0, 0, SWS_L_PASS);
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_7, BPF_REG_0, 0, 0));
    sws_ebpf_jump(p, BPF_JEQ, BPF_REG_7, 0, SWS_L_PASS);
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_8, BPF_REG_6,
                              offsetof(struct sk_reuseport_md, hash), 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU | BPF_MOD | BPF_X, BPF_REG_8, BPF_REG_7, 0, 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU | BPF_ADD | BPF_K, BPF_REG_8, 0, 0, 1));
    sws_ebpf_emit(p, SWS_INSN(BPF_STX | BPF_W | BPF_MEM, BPF_REG_10, BPF_REG_8, -4, 0));
    sws_ebpf_lookup(p);
    sws_ebpf_jump(p, BPF_JEQ, BPF_REG_0, 0, SWS_L_PASS);
    sws_ebpf_emit(p, SWS_INSN(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_7, BPF_REG_0, 0, 0));
    sws_ebpf_emit(p, SWS_INSN(BPF_STX | BPF_W | BPF_MEM, BPF_REG_10, BPF_REG_7, -4, 0));
    sws_ebpf_select(p, map);
    /* SK_PASS: the socket selected, else the kernel's hash */
    p->label[SWS_L_PASS] = p->n;
    sws_ebpf_emit(p, SWS_INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, SK_PASS));
    sws_ebpf_emit(p, SWS_INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
    sws_ebpf_link(p);
}

static int
sws_ebpf_map_create(uint32_t type, uint32_t value_size, uint32_t entries)
{
    union bpf_attr  attr;

    sws_memzero(&attr, sizeof(attr));
    attr.map_type = type;
    attr.key_size = sizeof(uint32_t);
    attr.value_size = value_size;
    attr.max_entries = entries;
    return (int) sws_bpf(BPF_MAP_CREATE, &attr);
}

/* The old binary's map of ls's group (taken: no longer offered), or -1:
 * the one whose entries are the cookies of ls's sockets of those slots;
 * a map with no entry (no process of the old binary at any slot) when it
 * is the only one. */
static int
sws_ebpf_inherited(sws_listening_t *ls)
{
    union bpf_attr  attr;
    uint64_t        value, cookie;
    uint32_t        key;
    socklen_t       len;
    sws_uint_t      i, s, found;
    int             map;

    for (i = 0; i < sws_steer_inherited_n; i++) {
        map = sws_steer_inherited[i];
        if (map == -1) {
            continue;
        }
        for (s = 0, found = 0; s < sws_min(ls->worker_fds_n, SWS_UDP_SLOTS_MAX); s++) {
            if (ls->worker_fds[s] == -1) {
                continue;
            }
            key = (uint32_t) s;
            sws_memzero(&attr, sizeof(attr));
            attr.map_fd = (uint32_t) map;
            attr.key = (uint64_t) (uintptr_t) &key;
            attr.value = (uint64_t) (uintptr_t) &value;
            if (sws_bpf(BPF_MAP_LOOKUP_ELEM, &attr) == -1) {
                continue;               /* ENOENT: no process at that slot */
            }
            len = sizeof(cookie);
            if (getsockopt(ls->worker_fds[s], SOL_SOCKET, SO_COOKIE, &cookie, &len) == -1
                || cookie != value)
            {
                found = 0;              /* another group's map */
                break;
            }
            found++;
        }
        if (found > 0 || (s == sws_min(ls->worker_fds_n, SWS_UDP_SLOTS_MAX)
                          && sws_steer_inherited_n == 1))
        {
            sws_steer_inherited[i] = -1;
            return map;
        }
    }
    return -1;
}

/* Attach the eBPF program to ls's group; its map in ls->steer_map. */
static sws_int_t
sws_ebpf_attach(sws_cycle_t *cycle, sws_listening_t *ls)
{
    static char     log[65536];
    sws_ebpf_t      p;
    union bpf_attr  attr;
    int             map, prog, err;

    if (sws_steer_current == -1) {
        sws_steer_current = sws_ebpf_map_create(BPF_MAP_TYPE_ARRAY, sizeof(uint32_t),
                                                1 + SWS_UDP_SLOTS_MAX);
        if (sws_steer_current == -1) {
            sws_log_error(SWS_LOG_INFO, cycle->log, errno, "bpf(BPF_MAP_CREATE) of an "
                          "array failed");
            return SWS_ERROR;
        }
        (void) fcntl(sws_steer_current, F_SETFD, FD_CLOEXEC);
    }
    /* A REUSEPORT_SOCKARRAY's values are 8 bytes: socket descriptors in,
     * socket cookies out. A socket is in one such map at most: the group's
     * map stays across a rollback, and a new binary takes the old one's. */
    map = ls->steer_map != -1 ? ls->steer_map : sws_ebpf_inherited(ls);
    if (map == -1) {
        map = sws_ebpf_map_create(BPF_MAP_TYPE_REUSEPORT_SOCKARRAY, sizeof(uint64_t),
                                  SWS_UDP_SLOTS_MAX);
    }
    if (map == -1) {
        sws_log_error(SWS_LOG_INFO, cycle->log, errno, "bpf(BPF_MAP_CREATE) of a "
                      "REUSEPORT_SOCKARRAY failed");
        return SWS_ERROR;
    }
    (void) fcntl(map, F_SETFD, FD_CLOEXEC);

    sws_ebpf_program(&p, map);
    sws_memzero(&attr, sizeof(attr));
    attr.prog_type = BPF_PROG_TYPE_SK_REUSEPORT;
    attr.insns = (uint64_t) (uintptr_t) p.insn;
    attr.insn_cnt = p.n;
    attr.license = (uint64_t) (uintptr_t) "GPL";    /* sk_select_reuseport wants it */
    prog = (int) sws_bpf(BPF_PROG_LOAD, &attr);
    if (prog == -1) {
        /* Again with the verifier's log, to say why. */
        err = errno;
        log[0] = '\0';
        attr.log_buf = (uint64_t) (uintptr_t) log;
        attr.log_size = sizeof(log);
        attr.log_level = 1;
        prog = (int) sws_bpf(BPF_PROG_LOAD, &attr);
    }
    if (prog == -1) {
        sws_log_error(SWS_LOG_NOTICE, cycle->log, err, "bpf(BPF_PROG_LOAD) of the QUIC "
                      "steering program failed: %.300s", log);
        if (map != ls->steer_map) {
            close(map);
        }
        return SWS_ERROR;
    }
    if (setsockopt(ls->worker_fds[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &prog,
                   sizeof(prog)) == -1)
    {
        sws_log_error(SWS_LOG_INFO, cycle->log, errno, "setsockopt(SO_ATTACH_REUSEPORT_EBPF)"
                      " on %s failed", (char *) ls->addr_text.data);
        close(prog);
        if (map != ls->steer_map) {
            close(map);
        }
        return SWS_ERROR;
    }
    close(prog);                        /* the group holds it */
    ls->steer_map = map;
    return SWS_OK;
}

static void
sws_ebpf_update(sws_cycle_t *cycle, sws_listening_t *ls, const sws_uint_t *live,
    sws_uint_t nlive)
{
    union bpf_attr  attr;
    uint32_t        key;
    uint64_t        value;
    sws_uint_t      s, i;
    int             on;

    for (s = 0; s < sws_min(ls->worker_fds_n, SWS_UDP_SLOTS_MAX); s++) {
        for (i = 0, on = 0; i < nlive && !on; i++) {
            on = live[i] == s;
        }
        key = (uint32_t) s;
        sws_memzero(&attr, sizeof(attr));
        attr.map_fd = (uint32_t) ls->steer_map;
        attr.key = (uint64_t) (uintptr_t) &key;
        if (on && ls->worker_fds[s] == -1) {
            continue;                   /* the other master's socket (an upgrade) */
        }
        if (on) {
            value = (uint64_t) ls->worker_fds[s];
            attr.value = (uint64_t) (uintptr_t) &value;
            attr.flags = BPF_ANY;
            /* EBUSY: the socket is in the map already (at its slot) */
            if (sws_bpf(BPF_MAP_UPDATE_ELEM, &attr) == -1 && errno != EBUSY) {
                sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "bpf(BPF_MAP_UPDATE_ELEM) "
                              "of QUIC slot %lu on %s failed", (unsigned long) s,
                              (char *) ls->addr_text.data);
            }
        } else if (sws_bpf(BPF_MAP_DELETE_ELEM, &attr) == -1 && errno != ENOENT) {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "bpf(BPF_MAP_DELETE_ELEM) "
                          "of QUIC slot %lu on %s failed", (unsigned long) s,
                          (char *) ls->addr_text.data);
        }
    }
}

static void
sws_ebpf_current(sws_cycle_t *cycle, const sws_uint_t *cur, sws_uint_t ncur)
{
    union bpf_attr  attr;
    uint32_t        key, value;
    sws_uint_t      i;

    ncur = sws_min(ncur, SWS_UDP_SLOTS_MAX);
    /* The slots first, their number last: a program that runs meanwhile
     * sees the old number with slots valid for it or the new ones. */
    for (i = 0; i <= ncur; i++) {
        key = (uint32_t) ((i + 1) % (ncur + 1));
        value = key ? (uint32_t) cur[key - 1] : (uint32_t) ncur;
        sws_memzero(&attr, sizeof(attr));
        attr.map_fd = (uint32_t) sws_steer_current;
        attr.key = (uint64_t) (uintptr_t) &key;
        attr.value = (uint64_t) (uintptr_t) &value;
        attr.flags = BPF_ANY;
        if (sws_bpf(BPF_MAP_UPDATE_ELEM, &attr) == -1) {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "bpf(BPF_MAP_UPDATE_ELEM) of "
                          "the current QUIC slots failed");
            return;
        }
    }
}


/* ---- classic BPF ---- */

typedef struct {
    struct sock_filter  insn[BPF_MAXINSNS];
    sws_uint_t          n;
} sws_cbpf_t;

static void
sws_cbpf_emit(sws_cbpf_t *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
    if (p->n < BPF_MAXINSNS) {
        p->insn[p->n++] = (struct sock_filter) BPF_JUMP(code, k, jt, jf);
    }
}

/* Unless the condition holds, go to the instruction that a later
 * sws_cbpf_here(p, returned value) names. */
static sws_uint_t
sws_cbpf_unless(sws_cbpf_t *p, uint16_t code, uint32_t k)
{
    sws_cbpf_emit(p, BPF_JMP | code | BPF_K, 1, 0, k);
    sws_cbpf_emit(p, BPF_JMP | BPF_JA, 0, 0, 0);
    return p->n - 1;
}

static sws_uint_t
sws_cbpf_ja(sws_cbpf_t *p)
{
    sws_cbpf_emit(p, BPF_JMP | BPF_JA, 0, 0, 0);
    return p->n - 1;
}

static void
sws_cbpf_here(sws_cbpf_t *p, sws_uint_t ja)
{
    p->insn[ja].k = (uint32_t) (p->n - ja - 1);
}

/* The program for these slots: it returns a socket's index (= its slot),
 * or past the end (the kernel's hash) when no slot is current. */
static void
sws_cbpf_program(sws_cbpf_t *p, const sws_uint_t *live, sws_uint_t nlive,
    const sws_uint_t *cur, sws_uint_t ncur)
{
    sws_uint_t  tiny, shrt, check, unknown[4], ushort, mod[2], i;

    p->n = 0;
    /* The payload starts at 0 (the kernel pulls the UDP header); a load
     * past its end would end the program with 0: the length first. */
    sws_cbpf_emit(p, BPF_LD | BPF_W | BPF_LEN, 0, 0, 0);
    tiny = sws_cbpf_unless(p, BPF_JGE, SWS_STEER_MIN_LEN);
    sws_cbpf_emit(p, BPF_LD | BPF_B | BPF_ABS, 0, 0, 0);
    shrt = sws_cbpf_unless(p, BPF_JSET, 0x80);
    /* long header */
    sws_cbpf_emit(p, BPF_LD | BPF_B | BPF_ABS, 0, 0, 5);
    unknown[0] = sws_cbpf_unless(p, BPF_JEQ, SWS_CID_LEN);
    sws_cbpf_emit(p, BPF_LD | BPF_B | BPF_ABS, 0, 0, 6);
    unknown[1] = sws_cbpf_unless(p, BPF_JEQ, SWS_CID_MAGIC);
    sws_cbpf_emit(p, BPF_LD | BPF_H | BPF_ABS, 0, 0, 7);
    check = sws_cbpf_ja(p);
    /* short header */
    sws_cbpf_here(p, shrt);
    sws_cbpf_emit(p, BPF_LD | BPF_B | BPF_ABS, 0, 0, 1);
    unknown[2] = sws_cbpf_unless(p, BPF_JEQ, SWS_CID_MAGIC);
    sws_cbpf_emit(p, BPF_LD | BPF_H | BPF_ABS, 0, 0, 2);
    /* A = a slot: its socket if it is live */
    sws_cbpf_here(p, check);
    for (i = 0; i < nlive; i++) {
        sws_cbpf_emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, (uint32_t) live[i]);
        sws_cbpf_emit(p, BPF_RET | BPF_A, 0, 0, 0);
    }
    unknown[3] = sws_cbpf_ja(p);
    /* the pick: A = the ID's first 4 bytes (an Initial's are >= 8) */
    for (i = 0; i < 4; i++) {
        sws_cbpf_here(p, unknown[i]);
    }
    if (ncur == 0) {
        sws_cbpf_emit(p, BPF_RET | BPF_K, 0, 0, 0xffffffff);
    }
    sws_cbpf_emit(p, BPF_LD | BPF_B | BPF_ABS, 0, 0, 0);
    ushort = sws_cbpf_unless(p, BPF_JSET, 0x80);
    sws_cbpf_emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, 6);
    mod[0] = sws_cbpf_ja(p);
    sws_cbpf_here(p, ushort);
    sws_cbpf_emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, 1);
    mod[1] = sws_cbpf_ja(p);
    sws_cbpf_here(p, tiny);
    sws_cbpf_emit(p, BPF_LD | BPF_IMM, 0, 0, 0);
    sws_cbpf_here(p, mod[0]);
    sws_cbpf_here(p, mod[1]);
    if (ncur == 0) {
        sws_cbpf_emit(p, BPF_RET | BPF_K, 0, 0, 0xffffffff);
        return;
    }
    sws_cbpf_emit(p, BPF_ALU | BPF_MOD | BPF_K, 0, 0, (uint32_t) ncur);
    for (i = 0; i < ncur; i++) {
        sws_cbpf_emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, (uint32_t) i);
        sws_cbpf_emit(p, BPF_RET | BPF_K, 0, 0, (uint32_t) cur[i]);
    }
    sws_cbpf_emit(p, BPF_RET | BPF_K, 0, 0, 0xffffffff);
}

static sws_int_t
sws_cbpf_attach(sws_listening_t *ls, const sws_uint_t *live, sws_uint_t nlive,
    const sws_uint_t *cur, sws_uint_t ncur)
{
    static sws_cbpf_t   p;              /* BPF_MAXINSNS: not on the stack */
    struct sock_fprog   prog;

    /* Two instructions per slot: keep within BPF_MAXINSNS. */
    nlive = sws_min(nlive, SWS_UDP_SLOTS_MAX);
    ncur = sws_min(ncur, (BPF_MAXINSNS - 40) / 2 - nlive);
    sws_cbpf_program(&p, live, nlive, cur, ncur);
    prog.len = (unsigned short) p.n;
    prog.filter = p.insn;
    return setsockopt(ls->worker_fds[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog,
                      sizeof(prog)) == 0 ? SWS_OK : SWS_ERROR;
}


/* ---- groups ---- */

static int
sws_udp_steer_group(sws_listening_t *ls)
{
    return ls->udp && ls->worker_fds_n > 0 && ls->worker_fds[0] != -1;
}

int
sws_udp_steer_attach(sws_cycle_t *cycle, sws_uint_t want)
{
    static sws_uint_t  live[SWS_UDP_SLOTS_MAX], cur[SWS_UDP_SLOTS_MAX];
    sws_listening_t  **lss = cycle->listening.elts, *ls;
    sws_uint_t         i, steer, nlive, ncur;
    int                all = 1, one = 1, err, attached = -1;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (!sws_udp_steer_group(ls)) {
            continue;
        }
        if (ls->steer == SWS_UDP_STEER_EBPF && want == SWS_UDP_STEER_AUTO) {
            continue;                   /* kept from the configuration before */
        }
        if (ls->steer == SWS_UDP_STEER_CBPF && want == SWS_UDP_STEER_WANT_CBPF) {
            continue;
        }
        /* Its map stays for eBPF: its sockets are in it (a program of a new
         * binary that was rolled back replaced ours). */
        if (ls->steer_map != -1 && want != SWS_UDP_STEER_AUTO) {
            close(ls->steer_map);
            ls->steer_map = -1;
        }
        steer = SWS_UDP_STEER_NONE;
        err = 0;
        if (want == SWS_UDP_STEER_AUTO && sws_ebpf_attach(cycle, ls) == SWS_OK) {
            steer = SWS_UDP_STEER_EBPF;
        } else if (want != SWS_UDP_STEER_OFF) {
            /* The slots live now: those of the other master of a binary
             * upgrade too (none: the kernel's hash until the first update). */
            sws_udp_slots_lock();
            sws_udp_slots_steering(live, &nlive, cur, &ncur);
            if (sws_cbpf_attach(ls, live, nlive, cur, ncur) == SWS_OK) {
                steer = SWS_UDP_STEER_CBPF;
            } else {
                err = errno;
            }
            sws_udp_slots_unlock();
        }
        if (steer == SWS_UDP_STEER_NONE) {
            /* ENOENT: there was none */
            (void) setsockopt(ls->worker_fds[0], SOL_SOCKET, SO_DETACH_REUSEPORT_BPF,
                              &one, sizeof(one));
            all = 0;
        }
        if (steer != ls->steer || steer == SWS_UDP_STEER_NONE) {
            sws_log_error(SWS_LOG_NOTICE, cycle->log, err, "QUIC steering on %s: %s%s",
                          (char *) ls->addr_text.data, sws_udp_steer_name(steer),
                          steer == SWS_UDP_STEER_NONE && want != SWS_UDP_STEER_OFF
                          ? " (no BPF program could be attached)" : "");
        }
        ls->steer = steer;
        attached = (int) steer;
    }
    if (attached != -1) {
        /* What the groups run now, for the other master of an upgrade. */
        sws_udp_slots_lock();
        sws_udp_slots_set_steer((sws_uint_t) attached);
        sws_udp_slots_unlock();
    }
    sws_udp_steer_inherited_close();
    return all;
}

void
sws_udp_steer_update(sws_cycle_t *cycle, const sws_uint_t *live, sws_uint_t nlive,
    const sws_uint_t *cur, sws_uint_t ncur)
{
    sws_listening_t **lss = cycle->listening.elts, *ls;
    sws_uint_t        i, steer;
    int               ebpf = 0;

    for (i = 0; i < cycle->listening.nelts; i++) {
        ls = lss[i];
        if (!sws_udp_steer_group(ls) || ls->steer == SWS_UDP_STEER_NONE) {
            continue;
        }
        /* The program attached is of the master that attached last: the
         * other master of a binary upgrade may steer otherwise. */
        steer = sws_udp_slots_steer(ls->steer);
        if (steer == SWS_UDP_STEER_EBPF && ls->steer_map != -1) {
            sws_ebpf_update(cycle, ls, live, nlive);
            ebpf = 1;
        } else if (steer == SWS_UDP_STEER_CBPF
                   && sws_cbpf_attach(ls, live, nlive, cur, ncur) != SWS_OK)
        {
            sws_log_error(SWS_LOG_ALERT, cycle->log, errno, "setsockopt("
                          "SO_ATTACH_REUSEPORT_CBPF) on %s failed",
                          (char *) ls->addr_text.data);
        }
    }
    if (ebpf && sws_steer_current != -1) {
        sws_ebpf_current(cycle, cur, ncur);
    }
}

void
sws_udp_steer_forget(sws_cycle_t *cycle)
{
    sws_listening_t **lss = cycle->listening.elts;
    sws_uint_t        i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        lss[i]->steer = SWS_UDP_STEER_NONE;
    }
}

void
sws_udp_steer_worker(sws_cycle_t *cycle)
{
    sws_listening_t **lss = cycle->listening.elts;
    sws_uint_t        i;

    for (i = 0; i < cycle->listening.nelts; i++) {
        if (lss[i]->steer_map != -1) {
            close(lss[i]->steer_map);
            lss[i]->steer_map = -1;
        }
    }
    if (sws_steer_current != -1) {
        close(sws_steer_current);
        sws_steer_current = -1;
    }
    sws_udp_steer_inherited_close();
    sws_udp_slots_worker();
}


/* ---- binary upgrade ---- */

char *
sws_udp_steer_env(sws_cycle_t *cycle)
{
    sws_listening_t **lss = cycle->listening.elts;
    sws_uint_t        i, n = 2;
    size_t            size;
    char             *env, *p;

    for (i = 0; i < cycle->listening.nelts; i++) {
        n += lss[i]->steer_map != -1;
    }
    size = sizeof(SWS_QUIC_ENV "=") + n * 12;
    env = malloc(size);
    if (env == NULL) {
        return NULL;
    }
    p = env + snprintf(env, size, SWS_QUIC_ENV "=");
    if (sws_udp_slots_fd() != -1) {
        p += snprintf(p, env + size - p, "%d;", sws_udp_slots_fd());
    }
    if (sws_steer_current != -1) {
        p += snprintf(p, env + size - p, "%d;", sws_steer_current);
    }
    for (i = 0; i < cycle->listening.nelts; i++) {
        if (lss[i]->steer_map != -1) {
            p += snprintf(p, env + size - p, "%d;", lss[i]->steer_map);
        }
    }
    return env;
}

void
sws_udp_steer_keep(sws_cycle_t *cycle)
{
    sws_listening_t **lss = cycle->listening.elts;
    sws_uint_t        i;

    if (sws_udp_slots_fd() != -1) {
        (void) fcntl(sws_udp_slots_fd(), F_SETFD, 0);
    }
    if (sws_steer_current != -1) {
        (void) fcntl(sws_steer_current, F_SETFD, 0);
    }
    for (i = 0; i < cycle->listening.nelts; i++) {
        if (lss[i]->steer_map != -1) {
            (void) fcntl(lss[i]->steer_map, F_SETFD, 0);
        }
    }
}

sws_int_t
sws_udp_steer_inherit(sws_log_t *log)
{
    const char          *env = getenv(SWS_QUIC_ENV), *p;
    struct bpf_map_info  info;
    union bpf_attr       attr;
    int                  fd, table = -1, rc;

    for (p = env ? env : ""; (rc = sws_listening_env_next(&p, &fd)) != 0; ) {
        if (rc == -1) {
            sws_log_error(SWS_LOG_EMERG, log, 0, "invalid descriptor in the " SWS_QUIC_ENV
                          " environment variable: \"%s\", ignored", p);
            break;
        }
        /* A BPF map (by its type), else the table of slots. */
        sws_memzero(&info, sizeof(info));
        sws_memzero(&attr, sizeof(attr));
        attr.info.bpf_fd = (uint32_t) fd;
        attr.info.info_len = sizeof(info);
        attr.info.info = (uint64_t) (uintptr_t) &info;
        if (sws_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr) == -1) {
            if (table == -1) {
                table = fd;
            } else {
                close(fd);
            }
            continue;
        }
        (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
        if (info.type == BPF_MAP_TYPE_ARRAY && sws_steer_current == -1) {
            sws_steer_current = fd;
        } else if (info.type == BPF_MAP_TYPE_REUSEPORT_SOCKARRAY
                   && sws_steer_inherited_n < SWS_STEER_INHERIT_MAX)
        {
            sws_steer_inherited[sws_steer_inherited_n++] = fd;
        } else {
            close(fd);
        }
    }
    unsetenv(SWS_QUIC_ENV);
    return sws_udp_slots_init(log, table);
}

void
sws_udp_steer_inherited_close(void)
{
    sws_uint_t  i;

    for (i = 0; i < sws_steer_inherited_n; i++) {
        if (sws_steer_inherited[i] != -1) {
            close(sws_steer_inherited[i]);
        }
    }
    sws_steer_inherited_n = 0;
}
