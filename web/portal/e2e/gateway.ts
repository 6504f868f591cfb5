// Starts and stops real `egs serve --demo` processes for the end-to-end tests: each gets its
// own data directory (a fresh embedded SQLite database and its demo tokens) and port.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const BINARY = process.env.EGS_BIN ?? resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../target/debug/egs');

/** The identity provider for single sign-on: the tests' real OpenID Provider (oidc-provider). */
const PROVIDER_SCRIPT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../tests/oidc/provider.mjs');
const PROVIDER_MODULE = resolve(fileURLToPath(new URL('.', import.meta.url)), '../node_modules/oidc-provider/lib/index.js');
export const SSO_CLIENT = { id: 'egs', secret: 'egs-e2e-client-secret' };
/** Who signs in through it, and their groups. */
export const SSO_GROUPS = { erin: ['ml-researchers'] };

export class Gateway {
  private process: ChildProcess | null = null;
  private provider: ChildProcess | null = null;
  readonly dataDir: string;
  log = '';

  constructor(readonly port: number) {
    this.dataDir = mkdtempSync(join(tmpdir(), 'egs-e2e-'));
  }

  /** The identity provider's port: the gateway's, plus one. */
  get providerUrl(): string {
    return `http://127.0.0.1:${this.port + 1}`;
  }

  private async startProvider(): Promise<void> {
    if (this.provider) return;
    this.provider = spawn('node', [PROVIDER_SCRIPT], {
      env: {
        ...process.env,
        OIDC_PROVIDER_MODULE: PROVIDER_MODULE,
        PORT: String(this.port + 1),
        CLIENT_ID: SSO_CLIENT.id,
        CLIENT_SECRET: SSO_CLIENT.secret,
        REDIRECT_URIS: `${this.url}/auth/oidc/callback`,
        GROUPS: JSON.stringify(SSO_GROUPS),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.provider.stderr?.on('data', (chunk) => (this.log += chunk));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      try {
        if ((await fetch(`${this.providerUrl}/.well-known/openid-configuration`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`the OpenID Provider did not start:\n${this.log}`);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Starts the gateway (again, after `stop`, on the same data) and waits until it is ready. */
  async start(): Promise<void> {
    await this.startProvider();
    const secretFile = join(this.dataDir, 'oidc-client-secret');
    writeFileSync(secretFile, SSO_CLIENT.secret, { mode: 0o600 });
    const sso = ['--oidc-issuer', this.providerUrl, '--oidc-client-id', SSO_CLIENT.id, '--oidc-client-secret-file', secretFile];
    const child = spawn(BINARY, ['serve', '--demo', '--data-dir', this.dataDir, '--listen', `127.0.0.1:${this.port}`, ...sso], {
      // The tests' webhook receivers listen on loopback.
      env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'warn', EGS_NOTIFY_PRIVATE_TARGETS: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk) => (this.log += chunk));
    child.stderr?.on('data', (chunk) => (this.log += chunk));
    this.process = child;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`egs exited with ${child.exitCode}:\n${this.log}`);
      try {
        const response = await fetch(`${this.url}/readyz`);
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`egs did not become ready in 60 s:\n${this.log}`);
  }

  /** SIGTERM, and waits for the process to end. */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    this.process = null;
  }

  token(user: 'admin' | 'alice' | 'bob' | 'carol' | 'dave'): string {
    const file = user === 'admin' ? join(this.dataDir, 'admin.token') : join(this.dataDir, 'demo-tokens', `${user}.token`);
    return readFileSync(file, 'utf8').trim();
  }

  /** A GraphQL request as `user`, for setting up and checking what the browser shows. */
  async graphql<T = Record<string, unknown>>(user: Parameters<Gateway['token']>[0], query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const response = await fetch(`${this.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token(user)}` },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: T; errors?: { message: string }[] };
    if (body.errors?.length) throw new Error(body.errors.map((e) => e.message).join('; '));
    return body.data as T;
  }

  async dispose(): Promise<void> {
    await this.stop();
    this.provider?.kill();
    this.provider = null;
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
