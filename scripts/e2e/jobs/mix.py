"""preload-python3 (tests/e2e): bytes, bytearray, memoryview, array,
struct, zlib and json at sizes around the copy ladder's steps; prints a
digest of everything, which must not change with uarch."""
import array, hashlib, json, random, struct, zlib
r = random.Random(1234)
data = bytes(r.getrandbits(8) for _ in range(1 << 18))
h = hashlib.sha256()
for n in (0, 1, 15, 16, 17, 63, 64, 255, 256, 4095, 4097, 65536, 200000):
    b = bytearray(data[:n]); b[n//3:n//3] = data[:n//2]; b *= 2
    m = memoryview(b)[1:]; h.update(bytes(m)); h.update(b.replace(b"\x00", b"ab"))
a = array.array("d", (r.random() for _ in range(50000))); a.reverse(); h.update(a.tobytes())
s = struct.pack("<1000Q", *range(1000)); h.update(s); h.update(zlib.compress(data * 4, 9))
j = json.dumps({str(i): [i, str(i) * 10, {"x": i / 7}] for i in range(5000)}, sort_keys=True)
h.update(j.encode()); assert json.loads(j)["4999"][0] == 4999
print(h.hexdigest(), len(j))
