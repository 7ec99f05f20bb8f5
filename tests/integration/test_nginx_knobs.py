"""nginx's process and tuning directives that scalwsd takes: env (set for the
processes a configuration starts, again on reload), pcre_jit (regexes work
with it off), and those checked without an effect here, each named in
docs/directives.md with the reason (accept_mutex, accept_mutex_delay,
timer_resolution, msie_padding, msie_refresh, log_subrequest, output_buffers,
postpone_output, subrequest_output_buffer_size): they load, and a bad value names its line."""
import signal

import conferr
import swsharness as h


def test_env_tz_gives_the_logs_local_time_and_follows_reloads(sws, tmp_path):
    # env NAME=VALUE is in the environment of the processes the
    # configuration starts; TZ is what nginx sites set it for
    inc = tmp_path / "main.inc"
    inc.write_text("env TZ=JST-9;\n")
    srv = sws(main="include %s;" % inc,
              http="log_format t '$time_local $uri';",
              server="access_log @TMP@/t.log t;")
    h.curl(srv.url("/respond?one"))
    assert h.wait_file_contains(srv.tmp / "t.log", "+0900 /respond", 3)
    inc.write_text("env TZ=UTC+5;\n")
    srv.signal(signal.SIGHUP)

    def reloaded():
        h.curl(srv.url("/respond?two"))
        return "-0500 /respond" in (srv.tmp / "t.log").read_text()
    assert h.wait_for(reloaded, timeout=5)


def test_pcre_jit_off_still_matches(sws):
    srv = sws(main="pcre_jit off;", server=r'location ~ ^/re/(\d+)$ { return 200 "n=$1"; }')
    r = h.curl(srv.url("/re/42"))
    assert (r.status, r.body) == (200, b"n=42")
    assert h.curl(srv.url("/re/x")).status == 404


def test_checked_only_directives_load(tmp_path):
    conferr.check_ok(tmp_path, main="timer_resolution 100ms; pcre_jit on; env PATH;",
                     events="accept_mutex off; accept_mutex_delay 500ms;",
                     http="msie_padding off; msie_refresh off; log_subrequest on; "
                          "output_buffers 2 32k; postpone_output 1460; "
                          "subrequest_output_buffer_size 64k; send_lowat 0;")


def test_send_lowat_loads_with_nginx_warning(sws):
    srv = sws(http="send_lowat 1k;")
    assert '"send_lowat" is not supported, ignored' in srv.stderr() + srv.error_log()
    assert h.curl(srv.url("/respond")).status == 200


def test_bad_values_name_their_line(tmp_path):
    conferr.check(tmp_path / "a", ["accept_mutex_delay", "invalid time"],
                  events="\naccept_mutex_delay soon;  # ERR\n")
    conferr.check(tmp_path / "b", ["output_buffers", "number of buffers"],
                  http="output_buffers x 32k;  # ERR")
    conferr.check(tmp_path / "c", ["postpone_output", "invalid size"],
                  http="postpone_output lots;  # ERR")
    conferr.check(tmp_path / "e", ["subrequest_output_buffer_size", "invalid size"],
                  http="subrequest_output_buffer_size big;  # ERR")
    conferr.check(tmp_path / "d", ["env", "variable name"], main="env =x;  # ERR")
    conferr.check(tmp_path / "f", ["send_lowat", "invalid size"], http="send_lowat low;  # ERR")
