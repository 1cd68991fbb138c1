// web/bench.mjs's CSV on the test device (lavapipe where there is no GPU): the DESIGN schema
// with the trailing of_limit column, the row's throughput over its operation's memory-bound
// limit (a scan moves a copy's bytes: vs_memcpy; memcpy's own row 1).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

test("bench.mjs --csv ends with of_limit, each scan's vs_memcpy", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuscan-bench-"));
  try {
    const csv = join(dir, "bench.csv");
    const bench = new URL("../bench.mjs", import.meta.url).pathname;
    await promisify(execFile)(process.execPath,
      [bench, "--algorithms", "csdldf,memcpy", "--sizes", "10:11", "--runs", "1", "--csv", csv],
      { timeout: 60000 });
    const [header, ...lines] = readFileSync(csv, "utf8").trimEnd().split("\n");
    const columns = header.split(",");
    assert.equal(columns.length, 20);
    assert.ok(header.endsWith(",insertions,of_limit"), header);
    assert.equal(lines.length, 4, "csdldf and memcpy at two sizes");
    for (const line of lines) {
      // No quoted fields here: neither lavapipe's nor a GPU's adapter name has a comma.
      const row = Object.fromEntries(line.split(",").map((v, i) => [columns[i], v]));
      assert.equal(line.split(",").length, 20, line);
      assert.ok(Number(row.of_limit) > 0, line);
      assert.equal(row.of_limit, row.algorithm === "memcpy" ? "1.0000" : row.vs_memcpy, line);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
