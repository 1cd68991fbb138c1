// web/bench.mjs as a command: --sizes as `gpuscan bench` reads it, every run validated, and a
// bad request refused in one line with exit status 2 before any device is opened.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const bench = fileURLToPath(new URL("../bench.mjs", import.meta.url));
const run = (...args) => spawnSync(process.execPath, [bench, ...args], { encoding: "utf8" });
const lines = (text) => text.split("\n").filter((l) => l && !l.startsWith("Warning:"));

test("bench refuses bad --sizes and --runs in one line, exit status 2", () => {
  for (const [args, pattern] of [
    [["--sizes", "1:x"], /--sizes '1:x' is neither LO:HI/],
    [["--sizes", "3:2"], /--sizes '3:2' is neither/],
    [["--sizes", "10:41"], /LO <= HI <= 40/],
    [["--sizes", "0"], /whole numbers from 1/],
    [["--sizes", "100,,4"], /--sizes '100,,4'/],
    [["--runs", "0"], /--runs '0' is not a whole number from 1/],
    [["--runs", "2.5"], /--runs '2.5'/],
  ]) {
    const r = run(...args);
    assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.deepEqual(lines(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr, pattern);
    assert.equal(r.stdout, "");
  }
});

test("--sizes N1,N2 times those sizes, and a lone N up to 40 is N elements, with a note", () => {
  const listed = run("--sizes", "1000,4099", "--runs", "1", "--algorithms", "memcpy,csdldf");
  assert.equal(listed.status, 0, listed.stderr);
  const rows = lines(listed.stdout).slice(1).map((l) => l.split(","));
  assert.deepEqual(rows.map((r) => [r[4], r[8], r[13]]),
    [["memcpy", "1000", "1"], ["csdldf", "1000", "1"], ["memcpy", "4099", "1"], ["csdldf", "4099", "1"]]);
  assert.doesNotMatch(listed.stderr, /note:/);
  const lone = run("--sizes", "12", "--runs", "1", "--algorithms", "memcpy");
  assert.equal(lone.status, 0, lone.stderr);
  assert.equal(lines(lone.stdout)[1].split(",")[8], "12");
  assert.match(lone.stderr, /note: --sizes 12 times n = 12 elements; for 2\^12 write --sizes 12:12/);
  const range = run("--sizes", "12:12", "--runs", "1", "--algorithms", "memcpy");
  assert.equal(lines(range.stdout)[1].split(",")[8], "4096");
  assert.doesNotMatch(range.stderr, /note:/);
});
