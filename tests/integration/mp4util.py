"""A writer of small ISO BMFF (.mp4) files for the mp4 module's tests, and
a reader that expands a file's sample tables into the list of its samples
(the tests compare what two servers send by these, not byte by byte).

The files have one video track (key frames every KEY_EVERY frames,
composition offsets as B-frames give) and one audio track; each sample's
bytes name it ("V00042....", "A00007...."), so that a chunk offset that
points at the wrong place is seen."""
import struct


def box(kind, *payload):
    data = b"".join(payload)
    return struct.pack(">I", 8 + len(data)) + kind + data


def full(kind, version, flags, *payload):
    return box(kind, struct.pack(">I", (version << 24) | flags), *payload)


MATRIX = struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)


class Track:
    def __init__(self, kind, timescale, deltas, sizes, per_chunk, keys=None, ctts=None):
        self.kind, self.timescale = kind, timescale
        self.deltas, self.sizes, self.keys, self.ctts = deltas, sizes, keys, ctts
        self.per_chunk = per_chunk          # samples in each chunk, in order
        self.tag = b"V" if kind == b"vide" else b"A"

    def sample_bytes(self, i):
        head = self.tag + b"%05d" % i
        return (head * (self.sizes[i] // len(head) + 1))[:self.sizes[i]]

    @property
    def duration(self):
        return sum(self.deltas)


def runs(values):
    out = []
    for v in values:
        if out and out[-1][1] == v:
            out[-1][0] += 1
        else:
            out.append([1, v])
    return out


def stbl(t, offsets, co64, stz2=False):
    entry = (box(b"avc1", bytes(6), struct.pack(">H", 1), bytes(16),
                 struct.pack(">HH", 320, 240), struct.pack(">II", 0x480000, 0x480000),
                 bytes(4), struct.pack(">H", 1), bytes(32), struct.pack(">Hh", 24, -1))
             if t.kind == b"vide" else
             box(b"mp4a", bytes(6), struct.pack(">H", 1), bytes(8),
                 struct.pack(">HHHH", 2, 16, 0, 0), struct.pack(">I", 44100 << 16)))
    parts = [full(b"stsd", 0, 0, struct.pack(">I", 1), entry)]
    r = runs(t.deltas)
    parts.append(full(b"stts", 0, 0, struct.pack(">I", len(r)),
                      b"".join(struct.pack(">II", n, v) for n, v in r)))
    if t.ctts is not None:
        r = runs(t.ctts)
        parts.append(full(b"ctts", 0, 0, struct.pack(">I", len(r)),
                          b"".join(struct.pack(">II", n, v) for n, v in r)))
    if t.keys is not None:
        parts.append(full(b"stss", 0, 0, struct.pack(">I", len(t.keys)),
                          b"".join(struct.pack(">I", k + 1) for k in t.keys)))
    entries, prev = [], None
    for c, n in enumerate(t.per_chunk):
        if n != prev:
            entries.append((c + 1, n, 1))
            prev = n
    parts.append(full(b"stsc", 0, 0, struct.pack(">I", len(entries)),
                      b"".join(struct.pack(">III", *e) for e in entries)))
    if stz2 and t.kind == b"soun":      # compact sizes, 16 bits each
        parts.append(full(b"stz2", 0, 0, struct.pack(">II", 16, len(t.sizes)),
                          b"".join(struct.pack(">H", s) for s in t.sizes)))
    else:
        parts.append(full(b"stsz", 0, 0, struct.pack(">II", 0, len(t.sizes)),
                          b"".join(struct.pack(">I", s) for s in t.sizes)))
    if co64:
        parts.append(full(b"co64", 0, 0, struct.pack(">I", len(offsets)),
                          b"".join(struct.pack(">Q", o) for o in offsets)))
    else:
        parts.append(full(b"stco", 0, 0, struct.pack(">I", len(offsets)),
                          b"".join(struct.pack(">I", o) for o in offsets)))
    return box(b"stbl", *parts)


def trak(t, track_id, offsets, co64, movie_scale, stz2=False):
    video = t.kind == b"vide"
    tkhd = full(b"tkhd", 0, 3, struct.pack(">III", 0, 0, track_id), bytes(4),
                struct.pack(">I", t.duration * movie_scale // t.timescale), bytes(8),
                struct.pack(">hhhH", 0, 0, 0 if video else 0x100, 0), MATRIX,
                struct.pack(">II", (320 << 16) if video else 0, (240 << 16) if video else 0))
    mdhd = full(b"mdhd", 0, 0, struct.pack(">IIII", 0, 0, t.timescale, t.duration),
                struct.pack(">HH", 0x55c4, 0))
    hdlr = full(b"hdlr", 0, 0, bytes(4), t.kind, bytes(12),
                b"VideoHandler\0" if video else b"SoundHandler\0")
    mhd = full(b"vmhd", 0, 1, bytes(8)) if video else full(b"smhd", 0, 0, bytes(4))
    dinf = box(b"dinf", full(b"dref", 0, 0, struct.pack(">I", 1), full(b"url ", 0, 1)))
    return box(b"trak", tkhd,
               box(b"mdia", mdhd, hdlr, box(b"minf", mhd, dinf, stbl(t, offsets, co64, stz2))))


def make_tracks(seconds=4, key_every=10):
    fps, vscale = 25, 12800
    nv = seconds * fps
    video = Track(b"vide", vscale, [512] * nv,
                  [120 + (i * 37) % 200 for i in range(nv)],
                  [5] * (nv // 5), keys=list(range(0, nv, key_every)),
                  ctts=[(0, 1024, 512)[i % 3] for i in range(nv)])
    ascale = 44100
    na = seconds * ascale // 1024
    chunks, left = [], na
    while left:
        n = min(8 if len(chunks) % 3 else 7, left)
        chunks.append(n)
        left -= n
    audio = Track(b"soun", ascale, [1024] * na,
                  [40 + (i * 13) % 60 for i in range(na)], chunks)
    return [video, audio]


def make_mp4(seconds=4, key_every=10, moov_last=False, co64=False, tracks=None, stz2=False):
    """The bytes of a file: ftyp, moov, mdat (or ftyp, mdat, moov)."""
    tracks = tracks or make_tracks(seconds, key_every)
    ftyp = box(b"ftyp", b"isom", struct.pack(">I", 0x200), b"isomiso2avc1mp41")
    # chunks interleaved by their first sample's time
    order = []
    for ti, t in enumerate(tracks):
        s, time = 0, 0
        for c, n in enumerate(t.per_chunk):
            order.append((time / t.timescale, ti, c, s, n))
            time += sum(t.deltas[s:s + n])
            s += n
    order.sort()
    payload, rel = [], {}
    pos = 0
    for _, ti, c, s, n in order:
        rel[(ti, c)] = pos
        for i in range(s, s + n):
            b = tracks[ti].sample_bytes(i)
            payload.append(b)
            pos += len(b)
    mdat_payload = b"".join(payload)
    movie_scale = 1000

    def moov_at(mdat_data_start):
        traks = [trak(t, i + 1, [mdat_data_start + rel[(i, c)] for c in range(len(t.per_chunk))],
                      co64, movie_scale, stz2) for i, t in enumerate(tracks)]
        dur = max(t.duration * movie_scale // t.timescale for t in tracks)
        mvhd = full(b"mvhd", 0, 0, struct.pack(">IIII", 0, 0, movie_scale, dur),
                    struct.pack(">IH", 0x10000, 0x100), bytes(10), MATRIX, bytes(24),
                    struct.pack(">I", len(tracks) + 1))
        return box(b"moov", mvhd, *traks)

    if moov_last:
        start = len(ftyp) + 8
        return ftyp + box(b"mdat", mdat_payload) + moov_at(start)
    size = len(moov_at(0))
    return ftyp + moov_at(len(ftyp) + size + 8) + box(b"mdat", mdat_payload)


# ---- reading ----

def boxes(data, pos=0, end=None):
    end = len(data) if end is None else end
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        head = 8
        if size == 1:
            size = struct.unpack(">Q", data[pos + 8:pos + 16])[0]
            head = 16
        elif size == 0:
            size = end - pos
        yield kind, pos + head, pos + size
        pos += size


def child(data, start, end, kind):
    for k, s, e in boxes(data, start, end):
        if k == kind:
            return s, e
    return None


def top(data):
    return [(k, s, e) for k, s, e in boxes(data)]


def read_tracks(data):
    """Each track of the file or response: {'kind', 'timescale', 'duration',
    'samples': [(dts, duration, cts_offset, size, key, bytes)]}."""
    moov = [(s, e) for k, s, e in boxes(data) if k == b"moov"][0]
    out = []
    for k, s, e in boxes(data, *moov):
        if k != b"trak":
            continue
        mdia = child(data, s, e, b"mdia")
        mdhd = child(data, *mdia, b"mdhd")
        ver = data[mdhd[0]]
        if ver == 1:
            scale, dur = struct.unpack(">IQ", data[mdhd[0] + 20:mdhd[0] + 32])
        else:
            scale, dur = struct.unpack(">II", data[mdhd[0] + 12:mdhd[0] + 20])
        hdlr = child(data, *mdia, b"hdlr")
        kind = data[hdlr[0] + 8:hdlr[0] + 12]
        stbl = child(data, *child(data, *mdia, b"minf"), b"stbl")
        tables = {kk: (ss, ee) for kk, ss, ee in boxes(data, *stbl)}

        def entries(name, fmt):
            if name not in tables:
                return None
            ss, _ = tables[name]
            n = struct.unpack(">I", data[ss + 4:ss + 8])[0]
            w = struct.calcsize(fmt)
            return [struct.unpack(fmt, data[ss + 8 + i * w:ss + 8 + (i + 1) * w]) for i in range(n)]
        deltas = [d for n, d in entries(b"stts", ">II") for _ in range(n)]
        ctts = entries(b"ctts", ">II")
        ctts = [o for n, o in ctts for _ in range(n)] if ctts is not None else [0] * len(deltas)
        stss = entries(b"stss", ">I")
        keys = {k[0] - 1 for k in stss} if stss is not None else None
        if b"stz2" in tables:
            ss, _ = tables[b"stz2"]
            assert data[ss + 7] == 16
            n = struct.unpack(">I", data[ss + 8:ss + 12])[0]
            sizes = [struct.unpack(">H", data[ss + 12 + 2 * i:ss + 14 + 2 * i])[0] for i in range(n)]
        else:
            ss, _ = tables[b"stsz"]
            fixed, n = struct.unpack(">II", data[ss + 4:ss + 12])
            sizes = ([fixed] * n if fixed else
                     [struct.unpack(">I", data[ss + 12 + 4 * i:ss + 16 + 4 * i])[0] for i in range(n)])
        if b"co64" in tables:
            offs = [o[0] for o in entries(b"co64", ">Q")]
        else:
            offs = [o[0] for o in entries(b"stco", ">I")]
        stsc = entries(b"stsc", ">III")
        samples, si, t = [], 0, 0
        for c, off in enumerate(offs):
            per = [e[1] for e in stsc if e[0] <= c + 1][-1]
            for _ in range(per):
                if si >= len(sizes):
                    break
                samples.append((t, deltas[si], ctts[si], sizes[si],
                                keys is None or si in keys, data[off:off + sizes[si]]))
                off += sizes[si]
                t += deltas[si]
                si += 1
        assert si == len(sizes) == len(deltas), (kind, si, len(sizes), len(deltas))
        out.append({"kind": kind, "timescale": scale, "duration": dur, "samples": samples})
    return out
