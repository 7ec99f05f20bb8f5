"""The Debian packages the harness needs, installed with apt-get when they
are missing (as root), or the apt-get line to run (otherwise)."""

import os
import shutil
import subprocess

# tool -> Debian package
TOOLS = {
    "wrk": "wrk",
    "taskset": "util-linux",
    "gnuplot": "gnuplot-nox",
    "h2load": "nghttp2-client",     # tls-h2-static-small
    "openssl": "openssl",           # the TLS certificate, s_time
}
CALLGRIND_TOOLS = {
    "valgrind": "valgrind",
    "callgrind_annotate": "valgrind",
}

# Installing a server package must not start it as a service (it would sit on
# port 80 and use CPU during the measurements): invoke-rc.d and
# deb-systemd-invoke ask policy-rc.d, and exit status 101 means "do not start".
POLICY_RC_D = "/usr/sbin/policy-rc.d"
POLICY_TEXT = "#!/bin/sh\n# written by ScalWS bench/deps.py during apt-get install; removed after\nexit 101\n"


def missing(servers, scenarios, callgrind, extra=()):
    """Packages to install: the tools, the servers' and `extra` (what the
    scenarios' backends need)."""
    pkgs = [p for i, p in enumerate(extra) if p not in extra[:i]]
    tools = dict(TOOLS)
    if callgrind:
        tools.update(CALLGRIND_TOOLS)
    for tool, pkg in tools.items():
        if shutil.which(tool) is None and pkg not in pkgs:
            pkgs.append(pkg)
    for s in servers:
        for pkg in s.missing_packages(scenarios):
            if pkg not in pkgs:
                pkgs.append(pkg)
    return pkgs


def _apt_install(pkgs, log):
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    argv = ["apt-get", "install", "-y", "--no-install-recommends"] + pkgs
    log("+ " + " ".join(argv))
    return subprocess.run(argv, env=env, timeout=1800, check=False).returncode == 0


def ensure(pkgs, log):
    """Installs pkgs; True when there is nothing left to install."""
    if not pkgs:
        return True
    line = "apt-get install -y --no-install-recommends " + " ".join(pkgs)
    if os.geteuid() != 0:
        log("bench: missing packages; as root run:\n    apt-get update && " + line)
        return False
    wrote_policy = False
    if not os.path.exists(POLICY_RC_D):
        with open(POLICY_RC_D, "w") as f:
            f.write(POLICY_TEXT)
        os.chmod(POLICY_RC_D, 0o755)
        wrote_policy = True
    try:
        ok = _apt_install(pkgs, log)
        if not ok:
            # a fresh machine has no package lists yet, or stale ones
            log("+ apt-get update")
            subprocess.run(["apt-get", "update"], timeout=1800, check=False)
            ok = _apt_install(pkgs, log)
    finally:
        if wrote_policy:
            try:
                os.unlink(POLICY_RC_D)
            except OSError:
                pass
    if not ok:
        log("bench: apt-get could not install: " + " ".join(pkgs))
    return ok
