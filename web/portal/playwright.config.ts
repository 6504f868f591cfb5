import { defineConfig } from '@playwright/test';

// End-to-end tests in a real browser: Debian's Chromium driven by Playwright (no browser
// download), against `egs serve --demo` processes the tests start themselves (e2e/gateway.ts).
export default defineConfig({
  testDir: './e2e',
  timeout: 60_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1366, height: 860 },
    launchOptions: {
      executablePath: process.env.EGS_CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
