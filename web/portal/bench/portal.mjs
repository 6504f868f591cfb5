// Portal benchmark (prints numbers, asserts nothing): a real `egs serve --demo` and Debian's
// Chromium on this machine.
//   1. cold load: a signed-in user opens /home in a fresh browser context; time until their
//      slices are on screen, and the bytes transferred;
//   2. event → screen: a GPR's detail page is open; the GPR's priority is changed over HTTP
//      N times; time from each mutation's answer to its event in the timeline.
// Run: cargo build --bin egs && node bench/portal.mjs   (EGS_BIN, EGS_CHROMIUM to override)
import { chromium } from '@playwright/test';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const binary = process.env.EGS_BIN ?? resolve(here, '../../../target/debug/egs');
const port = Number(process.env.EGS_BENCH_PORT ?? 18097);
const base = `http://127.0.0.1:${port}`;
const loads = Number(process.env.LOADS ?? 15);
const events = Number(process.env.EVENTS ?? 40);

const dataDir = mkdtempSync(join(tmpdir(), 'egs-bench-'));
const gateway = spawn(binary, ['serve', '--demo', '--data-dir', dataDir, '--listen', `127.0.0.1:${port}`], { stdio: 'ignore', env: { ...process.env, RUST_LOG: 'warn' } });
const token = (who) => readFileSync(who === 'admin' ? join(dataDir, 'admin.token') : join(dataDir, 'demo-tokens', `${who}.token`), 'utf8').trim();
async function gql(who, query, variables = {}) {
  const r = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token(who)}` }, body: JSON.stringify({ query, variables }) });
  const body = await r.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];
const fmt = (xs) => `p50 ${pct(xs, 50).toFixed(0)} ms · p90 ${pct(xs, 90).toFixed(0)} ms · max ${Math.max(...xs).toFixed(0)} ms (n=${xs.length})`;

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) break;
    } catch {}
    if (i > 300) throw new Error('gateway did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  const browser = await chromium.launch({ executablePath: process.env.EGS_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });

  // 1. Cold loads.
  const times = [];
  let bytes = 0;
  for (let i = 0; i < loads; i++) {
    const context = await browser.newContext();
    await context.addInitScript((t) => localStorage.setItem('egs.token', t), token('alice'));
    const page = await context.newPage();
    let transferred = 0;
    page.on('requestfinished', async (request) => {
      transferred += (await request.sizes()).responseBodySize; // as sent: gzip where it applies
    });
    const started = Date.now();
    await page.goto(`${base}/home`);
    await page.getByRole('table', { name: 'My slices' }).getByText('nlp-research').waitFor();
    times.push(Date.now() - started);
    await page.waitForLoadState('networkidle');
    await new Promise((r) => setTimeout(r, 100));
    bytes = transferred;
    await context.close();
  }
  console.log(`cold load of /home to the user's slices on screen: ${fmt(times)}; ${(bytes / 1024).toFixed(0)} KiB transferred (gzip)`);

  // 2. Event → screen.
  const { gprs } = await gql('alice', '{ gprs(first: 100) { nodes { id name } } }');
  const id = gprs.nodes.find((g) => g.name === 'eval-sweep').id;
  const context = await browser.newContext();
  await context.addInitScript((t) => localStorage.setItem('egs.token', t), token('alice'));
  const page = await context.newPage();
  await page.goto(`${base}/gprs/${id}`);
  const timeline = page.getByRole('list', { name: 'Timeline' });
  await timeline.getByText('QUEUED').first().waitFor();
  await page.getByTitle('Live updates').getByText('Live').waitFor();
  // The page records when each timeline entry first appears (same machine: same clock as here).
  await page.evaluate(() => {
    window.__seen = new Map();
    const list = document.querySelector('ol[aria-label="Timeline"]');
    const look = () => {
      for (const li of list.querySelectorAll('li')) if (!window.__seen.has(li.textContent)) window.__seen.set(li.textContent, Date.now());
    };
    look();
    new MutationObserver(look).observe(list, { childList: true, subtree: true, characterData: true });
  });
  const sent = [];
  for (let i = 0; i < events; i++) {
    const priority = 102 + i;
    await gql('admin', 'mutation($input: SetGprPriorityInput!) { setGprPriority(input: $input) { userErrors { message } } }', { input: { id, priority } });
    sent.push([priority, Date.now()]);
    await new Promise((r) => setTimeout(r, 150));
  }
  await timeline.getByText(`→ ${101 + events}`).waitFor({ timeout: 30_000 });
  const seen = await page.evaluate(() => [...window.__seen.entries()]);
  const latencies = sent.map(([priority, at]) => {
    const shown = seen.find(([text]) => text.includes('PRIORITY_CHANGED') && text.includes(`→ ${priority}`));
    return shown ? shown[1] - at : Number.NaN;
  });
  console.log(`priority change → its event in the open GPR's timeline: ${fmt(latencies.filter(Number.isFinite))}; missing ${latencies.filter((x) => !Number.isFinite(x)).length}`);
  await browser.close();
} finally {
  gateway.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dataDir, { recursive: true, force: true });
}
