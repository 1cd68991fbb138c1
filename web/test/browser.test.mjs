// The demo page (web/demo.html) in headless Chromium on SwiftShader, Chromium's CPU WebGPU:
// web/ is served on a loopback port, Chromium's console lines come back on its stderr
// (--enable-logging=stderr; --dump-dom would return before the GPU work ends), and the test
// reads the page's "gpuscan-demo:" lines: a checked scan with no mismatch, and benchmark rows.
// Skips, saying why, where /usr/bin/chromium (Debian package chromium) is missing.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const WEB = fileURLToPath(new URL("..", import.meta.url));
const TYPES = { ".html": "text/html", ".mjs": "text/javascript", ".js": "text/javascript" };

function serve() {
  const server = createServer((request, response) => {
    const path = normalize(join(WEB, new URL(request.url, "http://x").pathname));
    if (!path.startsWith(WEB) || path.includes("node_modules") || !existsSync(path) || !TYPES[extname(path)]) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": TYPES[extname(path)] }).end(readFileSync(path));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

test("the demo page scans and benchmarks in headless Chromium (SwiftShader)", { timeout: 300000 }, async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.skip(`no ${CHROMIUM}: install Debian's chromium (scripts/setup does)`);
    return;
  }
  const server = await serve();
  const profile = mkdtempSync(join(tmpdir(), "gpuscan-chromium-"));
  const url = `http://127.0.0.1:${server.address().port}/demo.html`;
  const browser = spawn(CHROMIUM, [
    "--headless=new", "--no-sandbox", "--enable-unsafe-webgpu", "--enable-unsafe-swiftshader",
    "--enable-logging=stderr", "--v=0", "--no-first-run", `--user-data-dir=${profile}`, url,
  ], { stdio: ["ignore", "ignore", "pipe"] });
  const lines = [];
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "done" line from the page in 240 s; it said: ${lines.join(" | ")}`)), 240000);
      let buffered = "";
      browser.stderr.on("data", (chunk) => {
        buffered += chunk;
        let at;
        while ((at = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, at);
          buffered = buffered.slice(at + 1);
          const m = /gpuscan-demo: (\{.*\})/.exec(line);
          if (!m) continue;
          const what = JSON.parse(m[1].replace(/\\"/g, '"'));
          lines.push(JSON.stringify(what));
          if (what.done) {
            clearTimeout(timer);
            resolve();
          }
        }
      });
      browser.on("exit", (code) => reject(new Error(`chromium exited (${code}) before the page was done: ${lines.join(" | ")}`)));
    });
  } finally {
    const exited = new Promise((resolve) => browser.once("exit", resolve));
    browser.kill();
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
    server.close();
    // Chromium's helper processes may still be writing the profile after the browser
    // exits (ENOTEMPTY seen in CI): a profile left behind in the temporary folder is no
    // reason to fail the test.
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch (e) {
      t.diagnostic(`could not remove ${profile}: ${e.code}`);
    }
  }
  for (const line of lines) t.diagnostic(line);
  const parsed = lines.map((l) => JSON.parse(l));
  const done = parsed.find((p) => p.done);
  assert.equal(done.ok, true, `the page reported: ${lines.join(" | ")}`);
  const check = parsed.find((p) => p.check);
  assert.equal(check.mismatches, 0);
  assert.equal(parsed.filter((p) => p.vs_memcpy > 0).length, 3, "three benchmark rows");
});
