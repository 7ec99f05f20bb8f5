"""Starting and always stopping the processes the harness runs.

Every server is started in a session of its own (setsid), so the whole tree
it forks can be signalled without touching anything else on the machine.
`Registry.cleanup` runs from a finally block, atexit and the signal handlers
in run.py: nothing the harness started outlives it.
"""

import os
import signal
import socket
import subprocess
import time

from measure import process_tree


def free_port():
    """A free TCP port on 127.0.0.1 (bound to port 0, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, timeout):
    """True once 127.0.0.1:port accepts a connection; False if the process
    exited or the time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


class Running:
    """A started server (or backend) and the file its output goes to."""

    def __init__(self, name, popen, log_path, stop_signal):
        self.name = name
        self.popen = popen
        self.pid = popen.pid
        self.log_path = log_path
        self.stop_signal = stop_signal

    def tree(self):
        return process_tree(self.pid)

    def log_tail(self, n=15):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def stop(self, timeout=10.0):
        """The server's own stop signal, then SIGKILL to its session and any
        descendant that left it. Returns the exit status (None if killed)."""
        if self.popen.poll() is None:
            tree = self.tree()
            try:
                os.kill(self.pid, self.stop_signal)
            except ProcessLookupError:
                pass
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
        else:
            tree = []
        # whatever is left of the session or the tree seen before the signal
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in tree:
            if pid != self.pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        return self.popen.returncode


class Registry:
    def __init__(self):
        self.running = []

    def start(self, name, argv, log_path, stop_signal=signal.SIGTERM, env=None, cwd=None):
        log = open(log_path, "ab")
        try:
            popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     env=env, cwd=cwd)
        finally:
            log.close()
        r = Running(name, popen, log_path, stop_signal)
        self.running.append(r)
        return r

    def stop(self, r, timeout=10.0):
        try:
            return r.stop(timeout)
        finally:
            if r in self.running:
                self.running.remove(r)

    def cleanup(self):
        while self.running:
            self.stop(self.running[-1], timeout=5.0)
