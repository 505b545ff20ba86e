// preload-node (tests/e2e): Buffers cut, joined, copied, filled, gzipped
// and JSON; prints a digest, which must not change with uarch.
const zlib = require('zlib'), crypto = require('crypto');
let seed = 42; const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) & 255;
const src = Buffer.alloc(1 << 20); for (let i = 0; i < src.length; i++) src[i] = rnd();
const parts = []; for (let n = 0; n < 3000; n += 7) parts.push(src.subarray(n, n * 3));
const cat = Buffer.concat(parts); const copy = Buffer.alloc(cat.length); cat.copy(copy);
const filled = Buffer.alloc(123457, 'uarch'); const z = zlib.gzipSync(Buffer.concat([cat, filled]), {level: 9});
const back = zlib.gunzipSync(z); const obj = {}; for (let i = 0; i < 20000; i++) obj['k' + i] = [i, 'v'.repeat(i % 40)];
const js = JSON.stringify(obj); const h = crypto.createHash('sha256');
h.update(copy); h.update(z); h.update(back); h.update(js); h.update(Buffer.from(JSON.parse(js).k19999[1]));
console.log(h.digest('hex'), cat.length, z.length, js.length);
