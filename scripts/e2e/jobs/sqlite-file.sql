-- preload-sqlite3 (tests/e2e): a table of text and blobs written, updated,
-- indexed, thinned and vacuumed into a file; the queries' output, the dump
-- and the file's digest must not change with uarch.
CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT, b BLOB);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000)
INSERT INTO t SELECT i, printf('%.*c', i % 300, 'x') || i, zeroblob(i % 700) FROM c;
UPDATE t SET b = CAST(s || s AS BLOB) WHERE id % 3 = 0;
CREATE INDEX ts ON t(s);
DELETE FROM t WHERE id % 7 = 0;
VACUUM;
SELECT count(*), sum(length(s)), sum(length(b)), max(s) FROM t;
SELECT id, substr(s, 1, 20), hex(substr(b, 1, 8)) FROM t ORDER BY s LIMIT 20 OFFSET 5000;
.dump
