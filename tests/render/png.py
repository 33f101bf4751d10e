"""A small PNG reader (zlib and the five row filters) for screenshot checks:
8-bit greyscale, RGB, greyscale + alpha and RGBA, not interlaced. Enough to
read what Chromium writes; anything else raises ValueError."""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    rows: tuple[bytes, ...]      # unfiltered, one per scan line

    def pixel(self, x: int, y: int) -> tuple[int, ...]:
        c = self.channels
        return tuple(self.rows[y][x * c:(x + 1) * c])

    def rgb(self, x: int, y: int) -> tuple[int, int, int]:
        p = self.pixel(x, y)
        return (p[0], p[0], p[0]) if self.channels <= 2 else p[:3]


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(data: bytes) -> Image:
    if not data.startswith(SIGNATURE):
        raise ValueError("not a PNG file")
    pos, idat, header = len(SIGNATURE), [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat.append(chunk)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("no IHDR chunk")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    c = CHANNELS[colour]
    raw = zlib.decompress(b"".join(idat))
    stride = width * c
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        ftype, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if ftype == 1:
            for i in range(c, stride):
                line[i] = (line[i] + line[i - c]) & 0xFF
        elif ftype == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 0xFF
        elif ftype == 3:
            for i in range(stride):
                left = line[i - c] if i >= c else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif ftype == 4:
            for i in range(stride):
                left = line[i - c] if i >= c else 0
                up_left = prev[i - c] if i >= c else 0
                line[i] = (line[i] + _paeth(left, prev[i], up_left)) & 0xFF
        elif ftype != 0:
            raise ValueError(f"unknown row filter {ftype}")
        rows.append(bytes(line))
        prev = line
    return Image(width, height, c, tuple(rows))


def write_png(width: int, height: int, rgb_rows: list[bytes]) -> bytes:
    """An 8-bit RGB PNG of ``rgb_rows`` (each ``3 * width`` bytes), filter 0."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + r for r in rgb_rows)
    return (SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def grey_variance(img: Image, step: int = 4) -> float:
    """Variance of the grey level over a grid of pixels (every ``step``-th)."""
    vals = []
    for y in range(0, img.height, step):
        for x in range(0, img.width, step):
            r, g, b = img.rgb(x, y)
            vals.append((299 * r + 587 * g + 114 * b) / 1000)
    mean = sum(vals) / len(vals)
    return sum((v - mean) ** 2 for v in vals) / len(vals)
