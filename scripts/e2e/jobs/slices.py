"""The python-bytes program of scripts/bench-e2e.sh: slices of 512-4096 B
of a 64 KiB blob, joined, appended and copied N times (argument 1)."""
import random, sys
n = int(sys.argv[1])
r = random.Random(15)
blob = r.randbytes(65536)
spans = []
for _ in range(512):
    size = r.randint(512, 4096)
    start = r.randrange(65536 - size)
    spans.append((start, start + size))
total = 0
for _ in range(n):
    pieces = [blob[a:b] for a, b in spans]
    joined = b"".join(pieces)
    buf = bytearray()
    for p in pieces:
        buf += p
    view = memoryview(joined)
    copies = [bytes(view[a:b]) for a, b in spans]
    total += len(joined) + len(buf) + len(copies) + len(bytes(buf[1:]))
print(total)
