#!/usr/bin/env python3
"""Says whether a PNG shows something: decodes it (8-bit grey, RGB or RGBA,
not interlaced; what Chromium writes) with zlib alone, and fails when fewer
than 0.2% of its pixels are non-white or it has fewer than 3 colours.
Usage: png_ink.py FILE.png; prints a one-line summary; exit 1 when blank."""
import struct
import sys
import zlib


def pixels(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})")
    raw, stride, bpp = zlib.decompress(idat), width * channels, channels
    rows, prev, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def main():
    try:
        width, height, channels, rows = pixels(sys.argv[1])
    except (OSError, ValueError, zlib.error, TypeError) as err:
        print(f"cannot read {sys.argv[1]}: {err}")
        sys.exit(1)
    colours, ink = set(), 0
    for row in rows:
        for x in range(0, len(row), channels):
            px = row[x:x + min(channels, 3)]
            colours.add(px)
            ink += any(v < 235 for v in px)
    share = ink / float(width * height)
    summary = f"{width}x{height} px, {100 * share:.1f}% ink, {len(colours)} colours"
    print(summary if share >= 0.002 and len(colours) >= 3 else "blank: " + summary)
    sys.exit(0 if share >= 0.002 and len(colours) >= 3 else 1)


if __name__ == "__main__":
    main()
