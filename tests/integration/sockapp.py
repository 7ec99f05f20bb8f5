"""A program run as a helper by test_helper_socket.py: an application that
takes its listening socket as systemd's socket activation hands it over
(fd 3, LISTEN_FDS, LISTEN_PID, LISTEN_FDNAMES). Usage:

  sockapp.py serve [DELAY]   check the variables, wait DELAY seconds, then
                             answer HTTP on fd 3: "app PID FDNAME TARGET"
  sockapp.py bind PORT [DELAY]  the same on a port it opens itself (a
                             helper with a ready probe), after DELAY
  sockapp.py exit CODE       exit with CODE at once
  sockapp.py stall           never accept

It prints what it found to stdout (the master logs it) and answers one
request per connection (Connection: close)."""
import os
import socket
import sys
import time


def fail(msg):
    print("sockapp: " + msg, file=sys.stderr, flush=True)
    sys.exit(2)


def inherited():
    if os.environ.get("LISTEN_PID") != str(os.getpid()):
        fail("LISTEN_PID %r is not my pid %d" % (os.environ.get("LISTEN_PID"), os.getpid()))
    if os.environ.get("LISTEN_FDS") != "1":
        fail("LISTEN_FDS %r" % os.environ.get("LISTEN_FDS"))
    s = socket.socket(fileno=3)
    if s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN) != 1:
        fail("fd 3 is not listening")
    return s, os.environ.get("LISTEN_FDNAMES", "")


def answer(conn, name):
    conn.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        try:
            got = conn.recv(4096)
        except OSError:
            return
        if not got:
            return                  # the master's probe, or a client gone
        data += got
    parts = data.split(b"\r\n", 1)[0].split()
    target = parts[1].decode() if len(parts) > 1 else "?"
    body = ("app %d %s %s\n" % (os.getpid(), name, target)).encode()
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-App-Pid: %d\r\n"
                 b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                 % (os.getpid(), len(body), body))


def serve(s, name):
    while True:
        conn, _ = s.accept()
        try:
            answer(conn, name)
        finally:
            conn.close()


def main():
    mode = sys.argv[1]
    if mode == "serve":
        s, name = inherited()
        print("serving fd 3 as %s, pid %d" % (name, os.getpid()), flush=True)
        time.sleep(float(sys.argv[2]) if len(sys.argv) > 2 else 0)
        serve(s, name)
    elif mode == "bind":
        time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 0)
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", int(sys.argv[2])))
        s.listen(16)
        print("serving port %s, pid %d" % (sys.argv[2], os.getpid()), flush=True)
        serve(s, "bound")
    elif mode == "exit":
        print("exiting with %s" % sys.argv[2], flush=True)
        sys.exit(int(sys.argv[2]))
    elif mode == "stall":
        inherited()
        print("stalling", flush=True)
        while True:
            time.sleep(1)
    else:
        fail("unknown mode %s" % mode)


if __name__ == "__main__":
    main()
