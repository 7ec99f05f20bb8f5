"""The profile-training load of `make pgo` (and so of `make deb`) runs the
server on a configuration of its own: it must start wherever the build
happens, whatever system paths configure compiled in (the package's
--http-proxy-temp-path=/var/cache/scalws/proxy_temp does not exist on a
machine where the package was never installed)."""
import subprocess
import sys

import swsharness as h


def test_training_load_runs_on_this_build():
    r = subprocess.run([sys.executable, "%s/bench/pgo_train.py" % h.SRC, h.SCALWSD,
                        h.MODULES, h.SRC], capture_output=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    out = r.stdout.decode() + r.stderr.decode()
    assert r.returncode == 0, out
    assert "pgo training done" in out, out
