"""Configuration errors that must name their file and line: the blocks are
put into the default template, the line that must be named carries the
marker "# ERR", and `scalwsd -t` must fail naming FILE:LINE and the words."""
from pathlib import Path

import swsharness as h


def check(tmp, words, **blocks):
    tmp = Path(tmp)
    (tmp / "html").mkdir(parents=True, exist_ok=True)
    h.make_traversable(tmp)
    text = h.render(h.MAIN_TEMPLATE, tmp, [h.free_port()], **blocks)
    conf = tmp / "scalws.conf"
    conf.write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "# ERR" in ln)
    r = h.run_scalwsd(["-t", "-p", str(tmp) + "/", "-c", str(conf)])
    err = r.stderr.decode("utf-8", "replace")
    assert r.returncode != 0, "exit 0:\n" + err
    assert "%s:%d" % (conf, line) in err, "expected %s:%d in:\n%s" % (conf, line, err)
    for w in words:
        assert w in err, "expected %r in:\n%s" % (w, err)
    return err


def check_ok(tmp, **blocks):
    """The same blocks without errors: -t passes (so that a check above
    fails for the value, not for a neighbour)."""
    tmp = Path(tmp)
    (tmp / "html").mkdir(parents=True, exist_ok=True)
    h.make_traversable(tmp)
    conf = tmp / "scalws.conf"
    conf.write_text(h.render(h.MAIN_TEMPLATE, tmp, [h.free_port()], **blocks))
    r = h.run_scalwsd(["-t", "-p", str(tmp) + "/", "-c", str(conf)])
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
