"""What is read from the kernel: process trees, CPU time and peak RSS from
/proc, per-CPU busy time from /proc/stat, and a CPU cap through a cgroup
(v1 cpu.cfs_quota_us or v2 cpu.max, whichever this machine has)."""

import os
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid):
    """Fields of /proc/PID/stat after the command name (index 0 = state)."""
    with open("/proc/%d/stat" % pid) as f:
        data = f.read()
    return data[data.rindex(")") + 2:].split()


def process_tree(root):
    """root and all its descendants that are alive, root first."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            ppid = int(_stat_fields(int(entry))[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop(0)
        if pid == root and not os.path.exists("/proc/%d" % pid):
            continue
        tree.append(pid)
        todo.extend(sorted(children.get(pid, [])))
    return tree


def exe_of(pid):
    try:
        return os.readlink("/proc/%d/exe" % pid)
    except OSError:
        return None


def workers_of(root, tree):
    """The processes that serve: descendants running the leader's binary
    (nginx, scalwsd workers); the leader itself when it has none (h2o,
    lighttpd, single-process mode). Helpers such as h2o's crash-handler perl
    script are not workers."""
    exe = exe_of(root)
    kids = [p for p in tree if p != root and exe is not None and exe_of(p) == exe]
    return kids or [root]


def cpu_ticks(pids):
    """{pid: (utime, stime)} in clock ticks; the reaped children's times
    (cutime, cstime) are added to their parent's."""
    out = {}
    for pid in pids:
        try:
            f = _stat_fields(pid)
        except OSError:
            continue
        # after the name: state=0 ppid=1 ... utime=11 stime=12 cutime=13 cstime=14
        out[pid] = (int(f[11]) + int(f[13]), int(f[12]) + int(f[14]))
    return out


def cpu_delta_seconds(before, after):
    """(user, sys) seconds spent between two cpu_ticks() samples; a process
    that appeared in between counts from zero."""
    user = sys_ = 0
    for pid, (u, s) in after.items():
        u0, s0 = before.get(pid, (0, 0))
        user += u - u0
        sys_ += s - s0
    return user / CLK_TCK, sys_ / CLK_TCK


def _status_kib(pid, field):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def vm_hwm_kib(pid):
    """Peak resident set size (VmHWM) of one process in KiB, 0 if gone."""
    return _status_kib(pid, "VmHWM:")


def vm_rss_kib(pid):
    """Resident set size now (VmRSS) of one process in KiB, 0 if gone."""
    return _status_kib(pid, "VmRSS:")


def open_fds(pid):
    """Descriptors open in one process, 0 if gone."""
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return 0


def _tcp_counter(name):
    with open("/proc/net/snmp") as f:
        lines = [l.split() for l in f if l.startswith("Tcp:")]
    names, values = lines[0], lines[1]
    return int(values[names.index(name)])


def tcp_out_segments():
    """Tcp OutSegs from /proc/net/snmp: TCP segments sent by the whole network
    namespace (on loopback: both directions of every connection)."""
    return _tcp_counter("OutSegs")


def tcp_active_opens():
    """Tcp ActiveOpens from /proc/net/snmp: connections opened by connect() in
    the whole namespace (wrk's are all open before a measured window, so in
    the proxy scenario these are the server's connections to the origin)."""
    return _tcp_counter("ActiveOpens")


def busy_percent(seconds=1.0):
    """CPU use of the whole machine over `seconds`, in % of one CPU."""
    t0 = cpu_ticks_by_cpu()
    time.sleep(seconds)
    t1 = cpu_ticks_by_cpu()
    return 100.0 * sum(t1[c][0] - t0[c][0] for c in t1 if c in t0) / CLK_TCK / seconds


def kernel_threads(prefix):
    """pids of the kernel threads whose name starts with prefix (ksoftirqd/)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/comm" % entry) as f:
                    if f.read().startswith(prefix):
                        out.append(int(entry))
            except OSError:
                pass
    return out


def cpu_ticks_by_cpu():
    """{cpu index: (busy, steal)} ticks from /proc/stat: busy = user, nice,
    system, irq and softirq time; steal = time the hypervisor gave away."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3:4].isdigit():
                parts = line.split()
                v = [int(x) for x in parts[1:]] + [0] * 8
                # user nice system idle iowait irq softirq steal (guest is in user)
                out[int(parts[0][3:])] = (v[0] + v[1] + v[2] + v[5] + v[6], v[7])
    return out


# ---- CPU cap ------------------------------------------------------------

class CpuCap:
    """A cgroup the server's process tree is started in, whose CPU quota is
    set to a fraction of one CPU for the capped window and lifted outside it.

    cgroup v1: /sys/fs/cgroup/cpu/NAME with cpu.cfs_quota_us / cpu.cfs_period_us.
    cgroup v2: /sys/fs/cgroup/NAME with cpu.max ("QUOTA PERIOD" or "max PERIOD").
    """

    PERIOD_US = 100000

    def __init__(self, name):
        self.path = None
        self.kind = None
        v1 = "/sys/fs/cgroup/cpu"
        v2 = "/sys/fs/cgroup"
        if os.path.exists(os.path.join(v1, "cpu.cfs_quota_us")):
            self.kind, base = "v1", v1
        elif os.path.exists(os.path.join(v2, "cgroup.controllers")):
            with open(os.path.join(v2, "cgroup.controllers")) as f:
                if "cpu" not in f.read().split():
                    raise OSError("cgroup v2 without the cpu controller")
            sub = os.path.join(v2, "cgroup.subtree_control")
            with open(sub) as f:
                if "cpu" not in f.read().split():
                    with open(sub, "w") as w:
                        w.write("+cpu")
            self.kind, base = "v2", v2
        else:
            raise OSError("no cgroup cpu controller (v1 cpu.cfs_quota_us or v2 cpu.max)")
        self.path = os.path.join(base, name)
        os.makedirs(self.path, exist_ok=True)
        self.set(None)

    def describe(self):
        if self.kind == "v1":
            return "cgroup v1 cpu controller (cpu.cfs_quota_us / cpu.cfs_period_us = %d)" % self.PERIOD_US
        return "cgroup v2 cpu.max (period %d µs)" % self.PERIOD_US

    def procs_file(self):
        return os.path.join(self.path, "cgroup.procs")

    def set(self, fraction):
        """fraction of one CPU (0.5 = 50 %), or None for no limit."""
        quota = -1 if fraction is None else max(1000, int(fraction * self.PERIOD_US))
        if self.kind == "v1":
            with open(os.path.join(self.path, "cpu.cfs_period_us"), "w") as f:
                f.write(str(self.PERIOD_US))
            with open(os.path.join(self.path, "cpu.cfs_quota_us"), "w") as f:
                f.write(str(quota))
        else:
            with open(os.path.join(self.path, "cpu.max"), "w") as f:
                f.write("%s %d" % ("max" if quota < 0 else quota, self.PERIOD_US))

    def throttled(self):
        """(periods throttled, total periods) so far, from cpu.stat."""
        stats = {}
        try:
            with open(os.path.join(self.path, "cpu.stat")) as f:
                for line in f:
                    k, v = line.split()
                    stats[k] = int(v)
        except (OSError, ValueError):
            pass
        return stats.get("nr_throttled", 0), stats.get("nr_periods", 0)

    def remove(self):
        if self.path and os.path.isdir(self.path):
            try:
                self.set(None)
                os.rmdir(self.path)
            except OSError:
                pass
