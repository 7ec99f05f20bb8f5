/*
 * reuseport_probe: which reuseport steering does this kernel allow (for
 * QUIC: see docs/benchmarks/2026-12-05-quic-steering-notes.md)?
 * cc -O1 -Wall -o reuseport_probe bench/reuseport_probe.c && ./reuseport_probe
 */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/bpf.h>

static int mk(int port) {
    int s = socket(AF_INET, SOCK_DGRAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(s, (void *)&a, sizeof a) < 0) perror("bind");
    struct timeval tv = { 0, 200000 };
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return s;
}

static long bpf(int cmd, union bpf_attr *a) { return syscall(__NR_bpf, cmd, a, sizeof *a); }

int main(void) {
    int port = 40000 + getpid() % 20000;
    int s[4];
    for (int i = 0; i < 4; i++) s[i] = mk(port);
    /* cBPF: A = payload[0] (UDP payload starts at offset 0); return A & 3 */
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 3),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct sock_fprog prog = { 3, code };
    int r = setsockopt(s[0], SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog);
    printf("SO_ATTACH_REUSEPORT_CBPF: %s\n", r ? strerror(errno) : "ok");
    int c = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int ok = 0;
    for (int k = 0; k < 16; k++) {
        unsigned char b = k;
        sendto(c, &b, 1, 0, (void *)&a, sizeof a);
        unsigned char got;
        if (recv(s[k & 3], &got, 1, 0) == 1 && got == k) ok++;
    }
    printf("cBPF steering by payload byte: %d/16 on the expected socket\n", ok);

    /* eBPF: a REUSEPORT_SOCKARRAY map and an SK_REUSEPORT program */
    union bpf_attr m = { 0 };
    m.map_type = BPF_MAP_TYPE_REUSEPORT_SOCKARRAY;
    m.key_size = 4; m.value_size = 8; m.max_entries = 4;
    int mfd = bpf(BPF_MAP_CREATE, &m);
    printf("BPF_MAP_TYPE_REUSEPORT_SOCKARRAY: %s\n", mfd < 0 ? strerror(errno) : "ok");
    union bpf_attr pa = { 0 };
    struct bpf_insn insns[] = {
        /* r0 = SK_PASS; minimal program: no selection (kernel falls back to hash) */
        { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1 },
        { .code = BPF_JMP | BPF_EXIT },
    };
    char log[4096] = "";
    pa.prog_type = BPF_PROG_TYPE_SK_REUSEPORT;
    pa.insns = (unsigned long)insns; pa.insn_cnt = 2;
    pa.license = (unsigned long)"GPL";
    pa.log_buf = (unsigned long)log; pa.log_size = sizeof log; pa.log_level = 1;
    int pfd = bpf(BPF_PROG_LOAD, &pa);
    printf("BPF_PROG_TYPE_SK_REUSEPORT load: %s %s\n", pfd < 0 ? strerror(errno) : "ok", log);
    if (pfd >= 0) {
        r = setsockopt(s[1], SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &pfd, sizeof pfd);
        printf("SO_ATTACH_REUSEPORT_EBPF: %s\n", r ? strerror(errno) : "ok");
    }

    /* A binary upgrade (the new master of the same group): can it build
     * its own map of the same sockets, or must it take the old one's? */
    if (mfd >= 0) {
        union bpf_attr u = { 0 };
        unsigned key = 0;
        unsigned long long v = s[0], cookie = 0, got = 0;
        socklen_t len = sizeof cookie;
        u.map_fd = mfd; u.key = (unsigned long)&key; u.value = (unsigned long)&v;
        r = bpf(BPF_MAP_UPDATE_ELEM, &u);
        printf("socket 0 into the map: %s\n", r ? strerror(errno) : "ok");
        int m2 = bpf(BPF_MAP_CREATE, &m);
        u.map_fd = m2;
        r = bpf(BPF_MAP_UPDATE_ELEM, &u);
        printf("the same socket into a second map: %s\n", r ? strerror(errno) : "ok");
        u.map_fd = mfd; u.value = (unsigned long)&got;
        r = bpf(BPF_MAP_LOOKUP_ELEM, &u);
        getsockopt(s[0], SOL_SOCKET, SO_COOKIE, &cookie, &len);
        printf("lookup from user space: %s, the socket's SO_COOKIE: %s\n",
               r ? strerror(errno) : "ok", got == cookie ? "the same" : "not the same");
        struct bpf_map_info info = { 0 };
        union bpf_attr i = { 0 };
        i.info.bpf_fd = mfd; i.info.info_len = sizeof info; i.info.info = (unsigned long)&info;
        r = bpf(BPF_OBJ_GET_INFO_BY_FD, &i);
        printf("BPF_OBJ_GET_INFO_BY_FD of the map: %s, type %u (REUSEPORT_SOCKARRAY %d)\n",
               r ? strerror(errno) : "ok", info.type, BPF_MAP_TYPE_REUSEPORT_SOCKARRAY);
        close(mfd);
        usleep(100000);     /* the map is freed after an RCU grace period */
        u.map_fd = m2; u.value = (unsigned long)&v;
        r = bpf(BPF_MAP_UPDATE_ELEM, &u);
        printf("into the second map once the first is gone: %s\n", r ? strerror(errno) : "ok");
    }
    return 0;
}
