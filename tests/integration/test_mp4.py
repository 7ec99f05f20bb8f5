"""mp4: ?start=/?end= on an .mp4 file send an MP4 of that interval (a new
moov with the sample tables cut, the part of the mdat it needs), as nginx
1.22's ngx_http_mp4_module; the plain file otherwise. Each answer is
compared with nginx's by reading both moovs into their samples (durations,
composition offsets, sizes, key frames and the bytes each chunk offset
points at), not byte by byte (docs/compat.md says where the bytes differ).
The files are written by mp4util.py: a video track with key frames every
ten frames and B-frame offsets, and an audio track."""
import random
import re
import struct
import subprocess

import mp4util as m
import swsharness as h
from test_nginx_sites import fetch, pair, same  # noqa: F401 (fixture)

GOOD = m.make_mp4()
FILES = {
    "video/a.mp4": GOOD,
    "video/last.mp4": m.make_mp4(moov_last=True),        # moov after the mdat
    "video/wide.mp4": m.make_mp4(co64=True),             # co64 chunk offsets
    "video/dir/x.mp4": GOOD,
    "video/compact.mp4": m.make_mp4(stz2=True),          # the audio's sizes in stz2
}


def corrupt(at_name, rel, value, fmt=">I"):
    """GOOD with the field rel bytes after the first atom name at_name
    replaced."""
    d = bytearray(GOOD)
    i = d.find(at_name) + rel
    d[i:i + struct.calcsize(fmt)] = struct.pack(fmt, value)
    return bytes(d)


MDAT = GOOD.find(b"mdat") - 4
BAD = {
    "video/trunc-moov.mp4": GOOD[:100],                      # ends inside the moov
    "video/trunc-mdat.mp4": GOOD[:len(GOOD) // 2],           # ends inside the mdat
    "video/moov-size.mp4": corrupt(b"moov", -4, 0x7fffffff),
    "video/stco-count.mp4": corrupt(b"stco", 8, 0x7fffffff),  # more entries than bytes
    "video/stsc-zero.mp4": corrupt(b"stsc", 8, 0),
    "video/no-mdat.mp4": GOOD[:MDAT],
    "video/garbage.mp4": b"hello, this is not an mp4 file at all",
}
ACCEPT = ("accept-ranges",)


def answers(ports, path, headers=()):
    return [fetch(p, "GET", path, headers) for p in ports]


def same_cut(ports, path):
    """Both answer 200 with the same tracks and samples; scalwsd's
    Content-Length and ETag are right for what it sent."""
    (rn, bn), (rs, bs) = answers(ports, path)
    assert (rn.status, rs.status) == (200, 200), (path, rn, rs)
    for name in ("content-type", "last-modified", "accept-ranges"):
        assert rs.header(name) == rn.header(name), (path, name, rn.headers, rs.headers)
    assert rs.header("content-length") == str(len(bs)), (path, rs.headers)
    mtime = rn.header("etag").strip('"').split("-")[0]
    assert rs.header("etag") == '"%s-%x"' % (mtime, len(bs)), (path, rs.headers)
    assert [k for k, _, _ in m.top(bs)] == [k for k, _, _ in m.top(bn)] == [b"ftyp", b"moov", b"mdat"]
    tn, ts = m.read_tracks(bn), m.read_tracks(bs)
    assert [t["kind"] for t in ts] == [t["kind"] for t in tn], path
    for a, b in zip(tn, ts):
        assert (b["timescale"], b["duration"]) == (a["timescale"], a["duration"]), (path, a["kind"])
        assert b["samples"] == a["samples"], (path, a["kind"], len(a["samples"]), len(b["samples"]))
    # the movie's and the tracks' header durations
    assert movie_durations(bs) == movie_durations(bn), path
    return rs, bs


def movie_durations(data):
    moov = [(s, e) for k, s, e in m.boxes(data) if k == b"moov"][0]
    mv = m.child(data, *moov, b"mvhd")
    out = [struct.unpack(">I", data[mv[0] + 16:mv[0] + 20])[0]]
    for k, s, e in m.boxes(data, *moov):
        if k == b"trak":
            tk = m.child(data, s, e, b"tkhd")
            out.append(struct.unpack(">I", data[tk[0] + 20:tk[0] + 24])[0])
    return out


def test_cuts_as_nginx(pair):
    ports = pair("mp4.conf", FILES)
    for name in ("a", "last", "wide"):
        for q in ("start=0", "start=0.0&end=0", "start=0&end=1.3", "start=1.5", "end=2", "start=1&end=2.5", "end=10", "start=3&end=1",
                  "start=1.2345", "start=3.999", "end=0.03", "end=0.05", "start=.5",
                  "start=0.04", "START=1&start=2",
                  "start=1.5000001", "start=2&end=2.1", "start=0&end=1",
                  "start=0.2&end=1.1", "start=0.33&end=0.41", "start=2.71&end=3.99"):
            same_cut(ports, "/video/%s.mp4?%s" % (name, q))
    # the file through open_file_cache (small files: from its memory)
    for q in ("start=1.5", "start=0.2&end=1.1"):
        for _ in range(2):
            same_cut(ports, "/cached/a.mp4?" + q)
    # with mp4_start_key_frame: from the key frame before, an edit list
    # hides the lead
    for q in ("start=1.5", "start=1", "start=2.7&end=3.5", "start=0.1"):
        rs, bs = same_cut(ports, "/keyframe/a.mp4?" + q)
    assert m.read_tracks(bs)[0]["samples"][0][4], "the video starts with a key frame"
    (_, bn), _ = answers(ports, "/keyframe/a.mp4?start=1.5")
    assert b"elst" in bn and bs.count(b"elst") == 1


def test_random_intervals_as_nginx(pair):
    """Seeded random starts and ends (to the millisecond or coarser, past
    the end too), with and without mp4_start_key_frame: the same status
    and, for a 200, the same samples and durations."""
    ports = pair("mp4.conf", FILES)
    rnd = random.Random(21)
    for _ in range(40):
        s = round(rnd.uniform(0, 4.2), rnd.choice((0, 1, 2, 3)))
        e = round(rnd.uniform(0, 4.2), rnd.choice((0, 1, 2, 3)))
        q = rnd.choice(("start=%s" % s, "end=%s" % e, "start=%s&end=%s" % (s, e)))
        path = "/%s/%s.mp4?%s" % (rnd.choice(("video", "keyframe")),
                                  rnd.choice(("a", "last", "wide")), q)
        (rn, bn), (rs, bs) = answers(ports, path)
        assert rn.status == rs.status, (path, rn, rs)
        if rn.status == 200 and bn != bs:      # the same bytes: the plain file
            same_cut(ports, path)


def test_what_stays_the_plain_file(pair):
    ports = pair("mp4.conf", FILES)
    for q in ("", "?end=0", "?start=abc", "?start=-1", "?end=abc",
              "?start=1e3", "?start=", "?start", "?end=-2", "?x=1",
              "?start=99999999999999999999"):
        r = same(ports, "GET", "/video/a.mp4" + q, also=ACCEPT + ("content-length",))
        assert r.status == 200 and r.body == GOOD, q
    same(ports, "HEAD", "/video/a.mp4", also=ACCEPT + ("content-length",), body=False)
    same(ports, "GET", "/video/a.mp4", ["Range: bytes=10-99"], also=ACCEPT)
    for path in ("/video/none.mp4?start=1", "/video/dir?start=1", "/video/dir/?start=1"):
        same(ports, "GET", path, also=ACCEPT)
    for method in ("POST", "PUT", "DELETE"):
        same(ports, method, "/video/a.mp4?start=1")


def test_head_range_and_conditions_of_a_cut(pair):
    ports = pair("mp4.conf", FILES)
    p = "/video/a.mp4?start=1.5"
    (rn, bn), (rs, bs) = answers(ports, p)
    assert len(bs) == len(bn)                  # the same moov size here: the same ETag
    for path in (p,):
        r = same(ports, "HEAD", path, also=ACCEPT + ("content-length", "etag"), body=False)
        assert r.header("Content-Length") == str(len(bs))
    for rng in ("bytes=0-99", "bytes=-50", "bytes=1000-", "bytes=%d-" % len(bs)):
        (xn, _), (xs, body) = answers(ports, p, ["Range: " + rng])
        assert xs.status == xn.status, (rng, xn, xs)
        assert xs.header("content-range") == xn.header("content-range"), rng
        if xs.status == 206:
            lo, hi = map(int, re.match(r"bytes (\d+)-(\d+)/", xs.header("content-range")).groups())
            assert body == bs[lo:hi + 1], rng
    for cond in ("If-None-Match: " + rs.header("ETag"),
                 "If-Modified-Since: " + rs.header("Last-Modified")):
        same(ports, "GET", p, [cond], also=ACCEPT)
    r = h.exchange(ports[1], h.request("GET", p, headers=["Range: bytes=0-9",
                                                          "If-Range: " + rs.header("ETag")]))
    assert (r.status, r.body) == (206, bs[:10]), r


def test_compact_sizes(pair):
    """stz2 (compact sample sizes): nginx 1.22 does not read it and sends
    a moov without the track's sizes; here it is read, and the cut is the
    same as of the file with stsz (sent as a stsz: docs/compat.md)."""
    ports = pair("mp4.conf", FILES)
    for q in ("start=1", "end=2.5", "start=0.7&end=3.3"):
        _, (ra, ba) = answers(ports, "/video/a.mp4?" + q)
        _, (rc, bc) = answers(ports, "/video/compact.mp4?" + q)
        assert rc.status == 200 and rc.header("content-length") == str(len(bc))
        ta, tc = m.read_tracks(ba), m.read_tracks(bc)
        assert [t["samples"] for t in tc] == [t["samples"] for t in ta], q
    (rn, bn), _ = answers(ports, "/video/compact.mp4?start=1")
    assert rn.status == 200 and bn.count(b"stsz") == 1 and b"stz2" not in bn


def test_keepalive_between_cuts(pair):
    ports = pair("mp4.conf", FILES)
    want = {q: answers(ports, "/video/a.mp4" + q)[1][1] for q in ("?start=1", "?end=1", "")}
    with h.Conn(ports[1]) as c:
        for q in ("?start=1", "?end=1", "", "?start=1"):
            c.send(h.request("GET", "/video/a.mp4" + q))
            r = c.read_response("GET")
            assert r.status == 200 and r.body == want[q], q
        c.send(h.request("GET", "/video/a.mp4?start=9"))
        assert c.read_response("GET").status == 500
        c.send(h.request("HEAD", "/video/a.mp4?start=1"))
        r = c.read_response("HEAD")
        assert r.status == 200 and r.header("Content-Length") == str(len(want["?start=1"]))


def error_lines(d):
    text = (d / "error.log").read_text(errors="replace")
    return [re.sub(r"^.*?\[error\] [^ ]+ (\*\d+ )?", "", x).split(", client:")[0]
            for x in text.splitlines() if "[error]" in x]


def test_errors_as_nginx(pair, tmp_path):
    ports = pair("mp4.conf", dict(FILES, **BAD))
    cases = [("/video/a.mp4?start=4", "no mp4 trak atoms were found"),
             ("/video/a.mp4?start=10", "mp4 start time exceeds file duration"),
             ("/video/a.mp4?end=0.01", "no data between start time and end time"),
             ("/video/a.mp4?start=1&end=1.01", "no data between start time and end time"),
             ("/tight/a.mp4?start=1", "mp4 moov atom is too large:3260, you may want to "
                                      "increase mp4_max_buffer_size"),
             ("/video/trunc-moov.mp4?start=1", "mp4 atom too large:3268"),
             ("/video/trunc-mdat.mp4?start=1", "mp4 atom too large"),
             ("/video/moov-size.mp4?start=1", "mp4 atom too large:2147483647"),
             ("/video/stco-count.mp4?start=1", "mp4 stco atom too small"),
             ("/video/stsc-zero.mp4?start=1", "zero number of entries in stsc atom"),
             ("/video/no-mdat.mp4?start=1", "no mp4 mdat atom was found"),
             ("/video/garbage.mp4?start=1", "mp4 atom too large")]
    for path, msg in cases:
        (rn, _), (rs, _) = answers(ports, path)
        assert (rn.status, rs.status) == (500, 500), (path, rn, rs)
        file = tmp_path / "root" / path.split("?")[0].replace("/tight/", "/video/").lstrip("/")
        for who in ("nginx", "scalwsd"):
            last = error_lines(tmp_path / who)[-1]
            assert msg in last and str(file) in last, (who, path, last)
        assert error_lines(tmp_path / "nginx")[-1] == error_lines(tmp_path / "scalwsd")[-1], path
    # the plain files are sent as they are
    for name, data in BAD.items():
        r, body = fetch(ports[1], "GET", "/" + name)
        assert (r.status, body) == (200, data), name


def test_configuration(tmp_path):
    conf = ("modules_dir %s;\nerror_log %s/e.log;\nevents { }\nhttp { access_log off;\n  server { listen 127.0.0.1:1;\n"
            "  location / { %s } } }\n")
    ok = ["mp4;", "mp4; mp4;", "mp4; mp4_buffer_size 1m; mp4_max_buffer_size 5m;",
          "mp4; mp4_start_key_frame on;"]
    bad = ["mp4 on;", "mp4_buffer_size;", "mp4_buffer_size x;", "mp4_start_key_frame yes;",
           # commercial-only in nginx 1.22: refused there and here
           "mp4; mp4_limit_rate on;", "mp4; mp4_limit_rate_after 30s;"]
    for text, want in [(t, 0) for t in ok] + [(t, 1) for t in bad]:
        f = tmp_path / "t.conf"
        f.write_text(conf % (h.MODULES, tmp_path, text))
        rc = subprocess.run([h.SCALWSD, "-t", "-c", str(f), "-p", str(tmp_path)],
                            capture_output=True, timeout=20).returncode
        assert (rc != 0) == bool(want), (text, rc)
