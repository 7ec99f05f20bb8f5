"""`nginx -t` on a small configuration: an http block's content with the
least around it, for comparing the forms nginx 1.22 accepts and refuses
(and its words) with scalwsd's."""
import subprocess
from pathlib import Path

from test_nginx_sites import NGINX


def nginx_t(tmp, http):
    """(exit status, stderr) of nginx -t for http { HTTP } in directory tmp."""
    conf = Path(tmp) / "nginx.conf"
    conf.write_text("error_log %s/e.log;\npid %s/pid;\nevents {}\nhttp {\n%s\n}\n"
                    % (tmp, tmp, http))
    r = subprocess.run([NGINX, "-t", "-p", str(tmp), "-c", str(conf)], capture_output=True,
                       timeout=10, stdin=subprocess.DEVNULL)
    return r.returncode, r.stderr.decode()
