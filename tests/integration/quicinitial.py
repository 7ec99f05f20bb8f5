"""QUIC v1 Initial packets for the tests (RFC 9001 5): a real client's
Initial (a ClientHello of gtlsclient's) protected again under another
Destination Connection ID, so that each copy is a valid first packet of a
new connection that the server answers with a full handshake flight.

    again = with_new_dcid(initial, os.urandom(len_of_dcid))
"""
import struct

try:
    from cryptography.hazmat.primitives import hashes, hmac
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand
    MISSING = None
except ImportError:                     # packet_type() works without it
    MISSING = "python3-cryptography is missing"

INITIAL_SALT_V1 = bytes.fromhex("38762cf7f55934b34d179ae6a4c80cadccbb7f0a")


def _extract(salt, ikm):
    m = hmac.HMAC(salt, hashes.SHA256())
    m.update(ikm)
    return m.finalize()


def _expand_label(secret, label, length):
    full = b"tls13 " + label
    info = struct.pack("!HB", length, len(full)) + full + b"\x00"
    return HKDFExpand(hashes.SHA256(), length, info).derive(secret)


def client_keys(dcid):
    """(key, iv, hp) of the client's Initial packets for dcid."""
    secret = _expand_label(_extract(INITIAL_SALT_V1, dcid), b"client in", 32)
    return (_expand_label(secret, b"quic key", 16), _expand_label(secret, b"quic iv", 12),
            _expand_label(secret, b"quic hp", 16))


def _varint(data, i):
    """(value, next offset) of the variable-length integer at data[i]."""
    n = 1 << (data[i] >> 6)
    v = data[i] & 0x3f
    for b in data[i + 1:i + n]:
        v = (v << 8) | b
    return v, i + n


def _mask(hp, sample):
    enc = Cipher(algorithms.AES(hp), modes.ECB()).encryptor()
    return enc.update(sample) + enc.finalize()


def _parse(pkt):
    """(dcid, offset of the packet number, payload length field's value)."""
    assert pkt[0] & 0xf0 == 0xc0, "not a v1 Initial"
    i = 5
    dcid = pkt[i + 1:i + 1 + pkt[i]]
    i += 1 + pkt[i]
    i += 1 + pkt[i]                     # the source ID
    tlen, i = _varint(pkt, i)
    i += tlen                           # the token
    length, i = _varint(pkt, i)
    return dcid, i, length


def unprotect(pkt):
    """(header with the packet number in clear, packet number bytes,
    plaintext, what follows the packet in the datagram)."""
    dcid, pn_off, length = _parse(pkt)
    key, iv, hp = client_keys(dcid)
    mask = _mask(hp, pkt[pn_off + 4:pn_off + 20])
    first = pkt[0] ^ (mask[0] & 0x0f)
    pnlen = (first & 0x03) + 1
    pn = bytes(a ^ b for a, b in zip(pkt[pn_off:pn_off + pnlen], mask[1:1 + pnlen]))
    header = bytes([first]) + pkt[1:pn_off] + pn
    end = pn_off + length
    nonce = bytearray(iv)
    for k, b in enumerate(pn.rjust(12, b"\x00")):
        nonce[k] ^= b
    plain = AESGCM(key).decrypt(bytes(nonce), pkt[pn_off + pnlen:end], header)
    return header, pn, plain, pkt[end:]


def protect(header, pn, plain, dcid):
    """The packet of header (packet number in clear at its end) and
    plaintext, protected with the keys of dcid."""
    key, iv, hp = client_keys(dcid)
    nonce = bytearray(iv)
    for k, b in enumerate(pn.rjust(12, b"\x00")):
        nonce[k] ^= b
    sealed = AESGCM(key).encrypt(bytes(nonce), plain, header)
    pn_off = len(header) - len(pn)
    mask = _mask(hp, sealed[4 - len(pn):20 - len(pn)])
    first = header[0] ^ (mask[0] & 0x0f)
    pnp = bytes(a ^ b for a, b in zip(pn, mask[1:1 + len(pn)]))
    return bytes([first]) + header[1:pn_off] + pnp + sealed


def with_new_dcid(datagram, dcid):
    """The datagram's Initial under dcid (of the same length as the
    original's, so that the header keeps its size)."""
    header, pn, plain, rest = unprotect(datagram)
    old = header[6:6 + header[5]]
    assert len(dcid) == len(old)
    header = header[:6] + dcid + header[6 + len(old):]
    return protect(header, pn, plain, dcid) + rest


def packet_type(datagram):
    """'initial', 'retry', 'handshake', '0rtt' of a long header; 'short'
    or 'vn' (a version negotiation)."""
    if not datagram[0] & 0x80:
        return "short"
    if datagram[1:5] == b"\x00\x00\x00\x00":
        return "vn"
    return ("initial", "0rtt", "handshake", "retry")[(datagram[0] >> 4) & 0x03]
