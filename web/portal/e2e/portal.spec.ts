// The portal in a real browser against a real `egs serve --demo`: the user and admin
// workflows end to end, live updates included, and a gateway restart in the middle of a
// session. Screenshots of the main screens go to web/screenshots/ (shown in the README).
import { expect, test, type Browser, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Gateway } from './gateway';

// The screenshots kept in the repo (and shown in the README) are refreshed on request, so a
// test run does not leave the working tree changed.
const SHOTS = fileURLToPath(new URL(process.env.EGS_SCREENSHOTS === '1' ? '../../screenshots/' : '../test-results/screenshots/', import.meta.url));
const gateway = new Gateway(Number(process.env.EGS_E2E_PORT ?? 18090));
type Who = Parameters<Gateway['token']>[0];

test.describe.configure({ mode: 'serial' });
test.beforeAll(async () => gateway.start());
test.afterAll(async () => gateway.dispose());
test.afterEach(async ({}, info) => {
  if (info.status !== info.expectedStatus) console.log(`gateway log:\n${gateway.log.slice(-4000)}`);
});

async function signIn(page: Page, who: Who) {
  await page.goto(`${gateway.url}/`);
  await page.getByLabel('Access token').fill(gateway.token(who));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

async function signedIn(browser: Browser, who: Who): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1366, height: 860 } })).newPage();
  await signIn(page, who);
  return page;
}

async function shot(page: Page, name: string) {
  await page.waitForLoadState('networkidle').catch(() => undefined);
  await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
}

async function gprId(name: string): Promise<string> {
  const data = await gateway.graphql<{ gprs: { nodes: { id: string; name: string }[] } }>('admin', '{ gprs(first: 100) { nodes { id name } } }');
  const found = data.gprs.nodes.find((g) => g.name === name);
  if (!found) throw new Error(`no GPR named ${name}`);
  return found.id;
}

test('a bad token is refused with a clear message', async ({ page }) => {
  await page.goto(`${gateway.url}/`);
  await page.getByLabel('Access token').fill('not-a-token');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Sign out' })).toHaveCount(0);
});

test('a user signs in and lands on their slices, GPRs and alerts', async ({ page }) => {
  await signIn(page, 'alice');
  await expect(page.getByRole('heading', { name: 'Home', exact: true })).toBeVisible();
  await expect(page.getByRole('table', { name: 'My slices' })).toContainText('nlp-research');
  await expect(page.getByRole('table', { name: 'Active GPRs' })).toContainText('llama-70b-finetune');
  // A reload keeps the session.
  await page.reload();
  await expect(page.getByRole('table', { name: 'My slices' })).toContainText('nlp-research');
  await shot(page, 'user-home');
});

test('Get wait time lists the pools the slice may use; picking one fills the form; submit creates the GPR', async ({ page }) => {
  await signIn(page, 'alice');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New GPR' }).click();
  await expect(page.getByRole('heading', { name: 'New GPR', exact: true })).toBeVisible();
  await page.getByLabel('Name', { exact: true }).fill('e2e-finetune');
  await page.getByLabel('Nodes', { exact: true }).fill('1');
  await page.getByLabel('Duration hours').fill('2');
  await page.getByRole('button', { name: 'Get wait time' }).click();
  const rows = page.getByRole('table', { name: 'Wait times' }).locator('tbody tr');
  await expect(rows.first()).toBeVisible();
  // nlp-research may use H100 and A100 pools only.
  await expect(rows.filter({ hasText: 'H100' })).not.toHaveCount(0);
  await expect(rows.filter({ hasText: 'A100' })).not.toHaveCount(0);
  await expect(rows.filter({ hasText: 'L40S' })).toHaveCount(0);
  await rows.filter({ hasText: 'H100' }).first().click();
  await expect(page.getByLabel('GPU shape')).toHaveValue('NVIDIA-H100-80GB-HBM3');
  await shot(page, 'user-create-gpr');
  await page.getByRole('button', { name: 'Submit GPR' }).click();
  await expect(page).toHaveURL(/\/gprs\/[^/]+$/);
  await expect(page.getByRole('list', { name: 'Timeline' })).toContainText('CREATED');
});

test('an admin bumps the priority and the user sees the queue reorder and the estimate move, live', async ({ page, browser }) => {
  await signIn(page, 'alice');
  await page.goto(`${gateway.url}/queue`);
  const queue = page.getByRole('table', { name: 'Queue' });
  const rows = queue.locator('tbody tr');
  const ours = rows.filter({ hasText: 'e2e-finetune' });
  // eval-sweep (priority 101) waits ahead of ours (100).
  await expect(rows.first()).toContainText('eval-sweep');
  await expect(ours).toBeVisible();
  const estimate = async () =>
    (await gateway.graphql<{ gpr: { estimatedStartAt: string } }>('alice', 'query($id: ID!) { gpr(id: $id) { estimatedStartAt } }', { id: await gprId('e2e-finetune') })).gpr.estimatedStartAt;
  const estimateBefore = await estimate();
  // The row shows that estimate in the viewer's zone.
  const estimateCell = ours.locator('td').nth(5);
  const shownBefore = await estimateCell.innerText();

  const admin = await signedIn(browser, 'admin');
  await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Global queue' }).click();
  await expect(admin.getByRole('heading', { name: 'Global queue', exact: true })).toBeVisible();
  await admin.getByLabel('Priority for e2e-finetune').fill('200');
  await admin.getByRole('row').filter({ hasText: 'e2e-finetune' }).getByRole('button', { name: 'Set priority' }).click();
  await expect(admin.getByRole('table', { name: 'Global queue' }).locator('tbody tr').first()).toContainText('e2e-finetune');
  await shot(admin, 'admin-global-queue');

  // No reload on the user's side: the queue subscription brings the new order and estimate.
  await expect(rows.first()).toContainText('e2e-finetune');
  const estimateAfter = await estimate();
  expect(Date.parse(estimateAfter)).toBeLessThan(Date.parse(estimateBefore));
  await expect.poll(() => estimateCell.innerText()).not.toBe(shownBefore);
  await shot(page, 'user-queue');
});

test('early release hands the nodes on: the waiting GPR is provisioned and its timeline updates live', async ({ page }) => {
  await signIn(page, 'alice');
  await page.goto(`${gateway.url}/gprs/${await gprId('e2e-finetune')}`);
  const timeline = page.getByRole('list', { name: 'Timeline' });
  await expect(timeline).toContainText('QUEUED');
  await expect(timeline).toContainText('PRIORITY_CHANGED');
  await expect(page.getByLabel('Time left')).toHaveCount(0);

  const other = await page.context().newPage();
  await other.goto(`${gateway.url}/queue`);
  const llama = other.getByRole('table', { name: 'Running' }).locator('tbody tr').filter({ hasText: 'llama-70b-finetune' });
  await llama.getByRole('button', { name: 'Early release' }).click();
  await llama.getByRole('button', { name: 'Confirm' }).click();

  // Back on the detail page, with no reload.
  await expect(timeline).toContainText('PROVISIONED', { timeout: 30_000 });
  await expect(page.getByLabel('Time left')).toBeVisible();
  await shot(page, 'user-gpr-detail');

  // The bell heard the same events, live; Escape closes it and gives the focus back.
  const bell = page.getByRole('banner').getByRole('button', { name: /^Notifications/ });
  await expect(bell).toHaveAccessibleName(/\d+ unread/);
  await bell.click();
  const panel = page.getByRole('dialog', { name: 'Notifications' });
  await expect(panel).toContainText('e2e-finetune');
  await expect(panel).toContainText('llama-70b-finetune');
  await page.keyboard.press('Escape');
  await expect(panel).toHaveCount(0);
  await expect(bell).toBeFocused();
  const llamaPhase = await gateway.graphql<{ gpr: { phase: string } }>('alice', 'query($id: ID!) { gpr(id: $id) { phase } }', { id: await gprId('llama-70b-finetune') });
  expect(['RELEASING', 'COMPLETED']).toContain(llamaPhase.gpr.phase);
});

test('a pending GPR is cancelled after confirmation', async ({ page }) => {
  await signIn(page, 'alice');
  await page.goto(`${gateway.url}/queue`);
  const row = page.getByRole('table', { name: 'Queue' }).locator('tbody tr').filter({ hasText: 'eval-sweep' });
  await row.getByRole('button', { name: 'Cancel' }).click();
  // Nothing happens before the confirmation.
  await row.getByRole('button', { name: 'Keep' }).click();
  await expect(row).toBeVisible();
  await row.getByRole('button', { name: 'Cancel' }).click();
  await row.getByRole('button', { name: 'Confirm' }).click();
  await expect(page.getByRole('row').filter({ hasText: 'eval-sweep' })).toHaveCount(0);
  const data = await gateway.graphql<{ gpr: { phase: string } }>('alice', 'query($id: ID!) { gpr(id: $id) { phase } }', { id: await gprId('eval-sweep') });
  expect(data.gpr.phase).toBe('CANCELLED');
});

// After the cancel above: eval-sweep was promised e2e-finetune's nodes, so until then the page
// rightly said it could not be extended at all.
test('a running GPR is extended after seeing how much fits; past the grace an admin approves it', async ({ page, browser }) => {
  await signIn(page, 'alice');
  const id = await gprId('e2e-finetune');
  const read = async () =>
    (await gateway.graphql<{ gpr: { extendedBy: string; extensionRequested: string | null } }>('alice', 'query($id: ID!) { gpr(id: $id) { extendedBy extensionRequested } }', { id })).gpr;
  await page.goto(`${gateway.url}/gprs/${id}`);
  await page.getByRole('button', { name: 'Extend…' }).click();
  const extend = page.getByRole('group', { name: 'Extend e2e-finetune' });
  await expect(extend).toContainText("30 m without an admin's approval");
  await extend.getByLabel('Extend by').selectOption({ label: '30 m' });
  await extend.getByRole('button', { name: 'Extend' }).click();
  await expect(page.getByText('Extended by 30 m.')).toBeVisible();
  expect(await read()).toEqual({ extendedBy: 'PT30M', extensionRequested: null });
  await expect(page.getByRole('list', { name: 'Timeline' })).toContainText('EXTENDED');

  // The grace is spent: an hour more waits for an admin.
  await page.getByRole('button', { name: 'Extend…' }).click();
  await extend.getByLabel('Extend by').selectOption({ label: '1 h' });
  await extend.getByRole('button', { name: 'Ask for approval' }).click();
  await expect(page.getByText("An extension by 1 h waits for an admin's decision.")).toBeVisible();
  expect(await read()).toEqual({ extendedBy: 'PT30M', extensionRequested: 'PT1H' });

  const admin = await signedIn(browser, 'admin');
  await admin.goto(`${gateway.url}/admin/queue`);
  const asked = admin.getByRole('table', { name: 'Waiting for approval' }).locator('tbody tr').filter({ hasText: 'e2e-finetune' });
  await expect(asked).toContainText('asks to extend its window by 1 h');
  await asked.getByRole('button', { name: 'Approve' }).click();
  await expect(asked).toHaveCount(0);
  expect(await read()).toEqual({ extendedBy: 'PT1H30M', extensionRequested: null });
  await admin.context().close();
});

test('events are searched from the bell and narrowed by kind on the Events page', async ({ page }) => {
  await signIn(page, 'alice');
  await page.getByRole('banner').getByRole('button', { name: /^Notifications/ }).click();
  await page.getByRole('searchbox', { name: 'Search all events' }).fill('extended by');
  await page.getByRole('dialog', { name: 'Notifications' }).getByRole('button', { name: 'Search' }).click();
  await expect(page).toHaveURL(/\/events\?text=extended%20by$/);
  const table = page.getByRole('table', { name: 'Events' });
  await expect(table).toContainText('e2e-finetune');
  await expect(table).toContainText('extended by alice');
  // Nothing of the other slices: vision's GPRs never show.
  await expect(table).not.toContainText('vit-pretrain');

  await page.getByLabel('Kind').selectOption('CANCELLED');
  await expect(page.getByText('No event matches.')).toBeVisible();
  await page.getByLabel('Text').fill('');
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(table).toContainText('eval-sweep');
  await expect(table.locator('tbody tr')).toHaveCount(1);
  await shot(page, 'user-events');
});

test('New GPR starts from a profile published to the slice; the GPR records it', async ({ page }) => {
  await signIn(page, 'alice');
  await page.goto(`${gateway.url}/gprs/new`);
  const profiles = page.getByRole('list', { name: 'Profiles' });
  await expect(profiles).toContainText('llm-finetune');
  await expect(profiles).toContainText('a100-notebook');
  await profiles.getByRole('button', { name: 'Use profile a100-notebook' }).click();
  await expect(page.getByText('Filled from a100-notebook')).toBeVisible();
  await expect(page.getByLabel('Duration hours')).toHaveValue('4');
  await expect(page.getByLabel('GPU shape')).toHaveValue('NVIDIA-A100-SXM4-80GB');
  await page.getByLabel('Name', { exact: true }).fill('e2e-notebook');
  // Workload hints travel with it and are shown on its page.
  await page.getByLabel('Model (optional)').fill('llama-3-8b');
  await page.getByLabel('Workload').selectOption('INTERACTIVE');
  await page.getByRole('button', { name: 'Submit GPR' }).click();
  await expect(page).toHaveURL(/\/gprs\/[^/]+$/);
  await expect(page.getByRole('list', { name: 'Timeline' })).toContainText('from template `a100-notebook`');
  await expect(page.getByText('llama-3-8b · interactive')).toBeVisible();
  const made = await gateway.graphql<{ gpr: { template: { name: string } | null; duration: string } }>(
    'alice',
    'query($id: ID!) { gpr(id: $id) { template { name } duration } }',
    { id: await gprId('e2e-notebook') },
  );
  expect(made.gpr).toEqual({ template: { name: 'a100-notebook' }, duration: 'PT4H' });
});

test('notifications: a webhook channel is made, tested, and hears of a new GPR', async ({ page }) => {
  const received: { milestone: string; headline: string }[] = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push(JSON.parse(body));
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((ready) => receiver.listen(0, '127.0.0.1', ready));
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  try {
    await signIn(page, 'alice');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notifications' }).click();
    await page.getByLabel('Kind').selectOption('WEBHOOK');
    await page.getByLabel('Name').fill('e2e hook');
    await page.getByLabel('URL').fill(`${url}/egs/hook`);
    await page.getByLabel('queued').check();
    await page.getByRole('button', { name: 'Create channel' }).click();
    await expect(page.getByText('Signing key, shown only now')).toBeVisible();
    const channel = page.getByRole('article', { name: 'Channel e2e hook' });
    // Only the origin is shown again: a webhook's path can be its secret.
    await expect(channel).toContainText(`Sends to ${url} (signed)`);
    await channel.getByRole('button', { name: 'Send a test message' }).click();
    await expect(channel.getByRole('status')).toHaveText('Test message delivered.');
    expect(received.map((r) => r.milestone)).toEqual(['TEST']);

    const me = await gateway.graphql<{ viewer: { memberships: { slice: { id: string; name: string } }[] } }>('alice', '{ viewer { memberships { slice { id name } } } }');
    const slice = me.viewer.memberships.find((m) => m.slice.name === 'nlp-research')!.slice;
    const create = 'mutation($input: CreateGprInput!) { createGpr(input: $input) { gpr { id } userErrors { message } } }';
    await gateway.graphql('alice', create, { input: { sliceId: slice.id, name: 'e2e-notified', nodeCount: 1, duration: '1h' } });
    await expect.poll(() => received.map((r) => r.milestone)).toContain('QUEUED');
    expect(received.find((r) => r.milestone === 'QUEUED')?.headline).toContain('e2e-notified');
    await page.reload();
    await channel.getByText(/Recent deliveries/).click();
    await expect(channel.getByRole('table', { name: 'Deliveries of e2e hook' })).toContainText('e2e-notified');
    await shot(page, 'user-notifications');
  } finally {
    receiver.close();
  }
});

test('GPUs: hot spots first, and a GPU dashboard whose charts receive new points live', async ({ page }) => {
  await signIn(page, 'alice');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'GPUs' }).click();
  await expect(page.getByRole('heading', { name: 'GPUs', exact: true })).toBeVisible();
  const firstGpu = page.locator('main table tbody tr').first().getByRole('link').first();
  await expect(firstGpu).toBeVisible();
  await shot(page, 'user-gpus');
  await firstGpu.click();
  const points = page.getByTestId('points-utilisation');
  await expect(points).toHaveText(/^\d+$/);
  const start = Number(await points.textContent());
  await expect.poll(async () => Number(await points.textContent()), { timeout: 20_000 }).toBeGreaterThan(start + 1);
  await shot(page, 'user-gpu-dashboard');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workloads' }).click();
  await expect(page.getByRole('article').first()).toBeVisible();
  await shot(page, 'user-workloads');
});

test('admin: dashboard, inventory with the schedule timeline, slices, tokens, approvals', async ({ page }) => {
  await signIn(page, 'admin');
  await expect(page.getByRole('heading', { name: 'Dashboard', exact: true })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Allocation by cluster' })).toContainText('gpu-east');
  await shot(page, 'admin-dashboard');

  const nav = page.getByRole('navigation', { name: 'Main' });
  await nav.getByRole('link', { name: 'Clusters' }).click();
  await page.getByRole('button', { name: 'gpu-east' }).click();
  await expect(page.getByRole('table', { name: 'Nodes of gpu-east' })).toContainText('east-h100-00');
  await expect(page.getByRole('link', { name: /e2e-finetune/ }).first()).toBeVisible();
  await shot(page, 'admin-clusters');

  await nav.getByRole('link', { name: 'Slices' }).click();
  await expect(page.getByRole('heading', { name: 'Slices', exact: true })).toBeVisible();
  await expect(page.getByRole('main')).toContainText('nlp-research');
  await shot(page, 'admin-slices');

  await nav.getByRole('link', { name: 'Tokens' }).click();
  await page.getByLabel('Name', { exact: true }).fill('e2e-ci-bot');
  await page.getByLabel('User', { exact: true }).selectOption({ label: 'alice (user)' });
  await page.getByRole('button', { name: 'Create token' }).click();
  const secret = page.getByRole('region', { name: 'New token secret' });
  await expect(secret).toContainText('shown only once');
  await expect(secret.getByLabel('Secret of e2e-ci-bot')).toHaveValue(/^eyJ/);
  await page.getByRole('button', { name: 'Done' }).click();
  const tokenRow = page.getByRole('table', { name: 'Tokens' }).locator('tbody tr').filter({ hasText: 'e2e-ci-bot' });
  await tokenRow.getByRole('button', { name: 'Revoke' }).click();
  await tokenRow.getByRole('button', { name: 'Confirm' }).click();
  // Revoked tokens leave the list unless asked for.
  await expect(tokenRow).toHaveCount(0);
  await page.getByLabel('Show revoked and expired').check();
  await expect(tokenRow).toBeVisible();
  await expect(tokenRow.getByRole('button', { name: 'Revoke' })).toHaveCount(0);
  const tokens = await gateway.graphql<{ tokens: { nodes: { name: string; revokedAt: string | null }[] } }>('admin', '{ tokens(first: 100) { nodes { name revokedAt } } }');
  expect(tokens.tokens.nodes.find((t) => t.name === 'e2e-ci-bot')?.revokedAt).toBeTruthy();
  await shot(page, 'admin-tokens');

  await nav.getByRole('link', { name: 'Global queue' }).click();
  const held = page.getByRole('row').filter({ hasText: 'detector-large' });
  await held.getByRole('button', { name: 'Approve' }).click();
  await expect(page.getByRole('table', { name: 'Global queue' })).toContainText('detector-large');
});

test('admin: a node is drained with its GPR evicted and requeued, then uncordoned', async ({ page }) => {
  await signIn(page, 'admin');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Clusters' }).click();
  await page.getByRole('button', { name: 'gpu-east' }).click();
  const table = page.getByRole('table', { name: 'Nodes of gpu-east' });
  const held = table.locator('tbody tr').filter({ has: page.getByRole('link', { name: 'e2e-finetune' }) }).first();
  const nodeName = (await held.locator('td').first().innerText()).split('\n')[0].trim();
  await held.getByRole('button', { name: 'Drain' }).click();
  const form = page.getByRole('form', { name: `Drain ${nodeName}` });
  await form.getByLabel('Reason').fill('e2e: replace a NIC');
  await form.getByLabel('evict e2e-finetune now (it is requeued)').check();
  await form.getByRole('button', { name: `Drain ${nodeName}` }).click();
  const row = table.locator('tbody tr').filter({ hasText: nodeName });
  await expect(row).toContainText('e2e: replace a NIC (admin)');
  await expect(row.getByRole('button', { name: 'Uncordon' })).toBeVisible();
  // Its owner is told why, and the GPR is back in the queue (or already on other nodes).
  const id = await gprId('e2e-finetune');
  await expect
    .poll(async () => {
      const seen = await gateway.graphql<{ gpr: { events: { nodes: { kind: string; message: string }[] } } }>(
        'alice',
        'query($id: ID!) { gpr(id: $id) { events(first: 100) { nodes { kind message } } } }',
        { id },
      );
      return seen.gpr.events.nodes.filter((e) => e.kind === 'EVICTED' || e.kind === 'REQUEUED').map((e) => e.kind);
    })
    .toEqual(['EVICTED', 'REQUEUED']);
  await expect(row).toContainText('cordoned');
  await shot(page, 'admin-maintenance');
  await row.getByRole('button', { name: 'Uncordon' }).click();
  await expect(row.getByRole('button', { name: 'Cordon' })).toBeVisible();
});

test('admin: maintenance is planned ahead on a node, listed, and cancelled', async ({ page }) => {
  await signIn(page, 'admin');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Clusters' }).click();
  await page.getByRole('button', { name: 'gpu-east' }).click();
  const form = page.getByRole('form', { name: 'Plan maintenance' });
  const nodeName = (await form.getByLabel('Node').locator('option').first().innerText()).trim();
  // Twenty days ahead, so no GPR of the other tests is moved by it.
  const local = (at: Date) => new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  const start = new Date(Date.now() + 20 * 24 * 3_600_000);
  await form.getByLabel('From').fill(local(start));
  await form.getByLabel('Until').fill(local(new Date(start.getTime() + 4 * 3_600_000)));
  await form.getByLabel('Reason').fill('e2e: swap a power supply');
  await form.getByRole('button', { name: 'Plan maintenance' }).click();
  const table = page.getByRole('table', { name: 'Maintenance windows' });
  const row = table.locator('tbody tr').filter({ hasText: 'e2e: swap a power supply' });
  await expect(row).toContainText(nodeName);
  await expect(row).toContainText('planned');
  const listed = await gateway.graphql<{ maintenanceWindows: { reason: string; node: { name: string } }[] }>(
    'alice',
    '{ maintenanceWindows { reason node { name } } }',
  );
  expect(listed.maintenanceWindows).toEqual([{ reason: 'e2e: swap a power supply', node: { name: nodeName } }]);
  await shot(page, 'admin-maintenance-windows');
  await row.getByRole('button', { name: 'Cancel' }).click();
  await row.getByRole('button', { name: 'Confirm' }).click();
  await expect(page.getByText('No maintenance planned on this cluster.')).toBeVisible();
});

test('admin: what-if weighs more nodes on the cluster page', async ({ page }) => {
  await signIn(page, 'admin');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Clusters' }).click();
  await page.getByRole('button', { name: 'gpu-east' }).click();
  await page.getByLabel('Change').selectOption('add');
  await page.getByLabel('Nodes', { exact: true }).fill('4');
  await page.getByRole('button', { name: 'Weigh it' }).click();
  // Either some waiting GPR would start sooner, or none waits in this cluster's pools.
  await expect(page.getByRole('table', { name: 'What would move' }).or(page.getByText('No waiting GPR would move.'))).toBeVisible();
  const moves = page.getByRole('table', { name: 'What would move' }).locator('tbody tr');
  for (const text of await moves.allInnerTexts()) expect(text).not.toContain('later');
  await shot(page, 'admin-what-if');
});

test('a user asks for a workspace; an admin approves it renamed; the user owns the new slice', async ({ page, browser }) => {
  await signIn(page, 'dave');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Workspaces' }).click();
  const form = page.getByRole('form', { name: 'Ask for a workspace' });
  await form.getByLabel('Slice name').fill('e2e-ws');
  await form.getByLabel('Purpose').fill('evaluate a new model');
  await form.getByRole('button', { name: 'Send request' }).click();
  await expect(page.getByRole('article', { name: 'Request e2e-ws' })).toContainText('pending');

  const admin = await signedIn(browser, 'admin');
  await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Requests' }).click();
  const request = admin.getByRole('article', { name: 'Request e2e-ws' });
  await request.getByLabel('Slice name for e2e-ws').fill('e2e-eval');
  await request.getByRole('button', { name: 'Approve' }).click();
  await expect(request).toContainText('approved');
  await expect(request).toContainText('Slice: e2e-eval');
  const me = await gateway.graphql<{ viewer: { memberships: { role: string; slice: { name: string } }[] } }>('dave', '{ viewer { memberships { role slice { name } } } }');
  expect(me.viewer.memberships).toContainEqual({ role: 'OWNER', slice: { name: 'e2e-eval' } });
  await page.reload();
  await expect(page.getByRole('article', { name: 'Request e2e-ws' })).toContainText('Slice: e2e-eval');

  // The admin turns on private workspaces: the next user made owns `<name>-private`.
  const policy = admin.getByRole('form', { name: 'Private workspaces' });
  await policy.getByRole('checkbox').check();
  await policy.getByLabel('Nodes per GPR').fill('1');
  await policy.getByRole('button', { name: 'Save' }).click();
  await expect(admin.getByText(/On: new users get a private workspace on gpu-east, up to 1 node per GPR/)).toBeVisible();
  await gateway.graphql('admin', 'mutation { createUser(input: { name: "gina" }) { user { id } } }');
  const gina = await gateway.graphql<{ slice: { members: { role: string; user: { name: string } }[]; policy: { maxNodesPerGpr: number } } }>(
    'admin',
    '{ slice(name: "gina-private") { members { role user { name } } policy { maxNodesPerGpr } } }',
  );
  expect(gina.slice.members).toEqual([{ role: 'OWNER', user: { name: 'gina' } }]);
  expect(gina.slice.policy.maxNodesPerGpr).toBe(1);
});

test('usage: an admin rolls up now, sees GPU-hours per day and per slice, and downloads the CSV; an owner sees their slice', async ({ page, browser }) => {
  await signIn(page, 'admin');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
  await page.getByRole('button', { name: 'Roll up now' }).click();
  const bySlice = page.getByRole('table', { name: 'Usage by slice' });
  // The demo's provisioned GPRs have been using their nodes since it started.
  await expect(bySlice).toContainText('nlp-research');
  await expect(page.getByRole('img', { name: /GPU-hours per day/ })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Waits by shape and priority' })).toBeVisible();
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download CSV' }).click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(/^egs-usage-all-by-slice-.*\.csv$/);
  const csv = readFileSync((await file.path())!, 'utf8');
  expect(csv.split('\n')[0]).toBe('slice,reserved_gpu_hours,used_gpu_hours,waiting_gpu_hours,gprs_started');
  expect(csv).toContain('nlp-research,');
  await shot(page, 'admin-usage');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dashboard' }).click();
  await expect(page.getByRole('img', { name: 'GPU-hours per day, last 14 days' })).toBeVisible();

  const owner = await signedIn(browser, 'alice');
  await owner.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage' }).click();
  const byUser = owner.getByRole('table', { name: 'Usage by user' });
  await expect(byUser).toBeVisible();
  await expect(owner.getByLabel('Slice')).toHaveValue(/.+/);
  await expect(owner.getByLabel('Slice').locator('option')).toHaveText(['nlp-research']);
});

test('single sign-on: an admin maps a group to a slice; a new user signs in at the identity provider and lands in it', async ({ page, browser }) => {
  await signIn(page, 'admin');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'SSO' }).click();
  const form = page.getByRole('form', { name: 'Add a group rule' });
  await form.getByLabel('Group').fill('ml-researchers');
  await form.getByLabel('Slice', { exact: true }).selectOption({ label: 'nlp-research' });
  await form.getByLabel('Role').selectOption('VIEWER');
  await form.getByRole('button', { name: 'Add rule' }).click();
  await expect(page.getByRole('table', { name: 'Group rules' })).toContainText('viewer in nlp-research');
  await shot(page, 'admin-sso');

  // erin has no EGS account yet: the identity provider's sign-in makes one.
  const erin = await (await browser.newContext({ viewport: { width: 1366, height: 860 } })).newPage();
  await erin.goto(`${gateway.url}/`);
  await erin.getByRole('link', { name: 'Sign in with single sign-on' }).click();
  await erin.locator('input[name="login"]').fill('erin');
  await erin.locator('input[name="password"]').fill('any password');
  await erin.getByRole('button', { name: 'Sign-in' }).click();
  await erin.getByRole('button', { name: 'Continue' }).click();
  await expect(erin.getByRole('button', { name: 'Sign out' })).toBeVisible();
  await expect(erin.getByText('erin', { exact: false }).first()).toBeVisible();
  await expect(erin.getByRole('table', { name: 'My slices' })).toContainText('nlp-research');
  expect(erin.url()).not.toContain('sso-token');
  const me = await gateway.graphql<{ users: { name: string; role: string }[] }>('admin', '{ users { name role } }');
  expect(me.users).toContainEqual({ name: 'erin', role: 'USER' });
});

test('single sign-on never sends the session token off this site, whatever return_to says', async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
  // Every request the browser makes, by origin: the token may only ever reach the gateway
  // (and the sign-in only the identity provider, both on loopback).
  const seen: string[] = [];
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.hostname !== '127.0.0.1') return route.abort();
    return route.continue();
  });
  const redirects: string[] = [];
  context.on('response', (response) => {
    const location = response.headers()['location'];
    if (location?.includes('sso-token')) redirects.push(new URL(location, response.url()).href);
  });
  context.on('request', (request) => seen.push(request.url()));
  const page = await context.newPage();
  // Browsers drop the tab: `/\t/evil.host/steal` would be read as `//evil.host/steal`.
  for (const bad of ['/%09/evil.host/steal', '/%0a/evil.host', '//evil.host', '/%5C/evil.host', 'https://evil.host/', '/%01x']) {
    await page.goto(`${gateway.url}/auth/oidc/login?return_to=${bad}`);
    await expect(page.getByRole('alert')).toContainText('not a page of this site');
    expect(new URL(page.url()).origin).toBe(gateway.url);
  }
  // A page of this site is kept through the whole sign-in.
  await page.goto(`${gateway.url}/auth/oidc/login?return_to=${encodeURIComponent('/queue')}`);
  await page.locator('input[name="login"]').fill('erin');
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
  // The queue page (which then opens the user's first slice's queue).
  expect(new URL(page.url()).pathname).toMatch(/^\/queue(\/|$)/);
  expect(page.url()).not.toContain('sso-token');
  // Nothing went to the would-be thief. The test identity provider's sign-in page asks for a
  // web font (aborted above); nothing else left loopback.
  expect(seen.filter((href) => new URL(href).hostname.endsWith('evil.host'))).toEqual([]);
  const elsewhere = seen.filter((href) => new URL(href).hostname !== '127.0.0.1');
  expect(elsewhere.filter((href) => !href.startsWith('https://fonts.googleapis.com/'))).toEqual([]);
  // The token travels only in the gateway's redirect, and only back to the gateway.
  expect(redirects.length).toBeGreaterThan(0);
  for (const target of redirects) expect(new URL(target).origin).toBe(gateway.url);
  await context.close();
});

test('after a gateway restart the portal reconnects and the timeline resumes with nothing lost', async ({ page }) => {
  await signIn(page, 'carol');
  const id = await gprId('vit-pretrain');
  await page.goto(`${gateway.url}/gprs/${id}`);
  const timeline = page.getByRole('list', { name: 'Timeline' });
  await expect(timeline).toContainText('PROVISIONED');
  const link = page.getByTitle('Live updates');
  await expect(link).toHaveText('Live');

  await gateway.stop();
  await expect(link).toHaveText('Reconnecting');
  await gateway.start();
  // Released while the browser may still be backing off: it must arrive all the same.
  await gateway.graphql('carol', 'mutation($id: ID!) { earlyReleaseGpr(input: { id: $id }) { userErrors { message } } }', { id });
  await expect(timeline).toContainText('EARLY_RELEASED', { timeout: 30_000 });
  await expect(link).toHaveText('Live');
  await expect(timeline).toContainText('COMPLETED', { timeout: 30_000 });
  await expect(timeline.locator('li').filter({ hasText: 'EARLY_RELEASED' })).toHaveCount(1);
});
