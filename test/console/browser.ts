// Shared by the console's browser tests: launching Debian's Chromium through playwright-core (failing, never
// skipping, when it cannot be launched), opening a page that records script errors and failed answers, and
// where screenshots go (test-results/, git-ignored).
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

let launching: Promise<Browser> | undefined;

async function launchChromium(): Promise<Browser> {
  const executablePath = process.env['CHROMIUM_PATH'] ?? CHROMIUM_CANDIDATES.find((path) => existsSync(path));
  if (executablePath === undefined) {
    throw new Error(
      `Chromium cannot be launched: none of ${CHROMIUM_CANDIDATES.join(', ')} exists (apt-get install -y chromium, or set CHROMIUM_PATH)`,
    );
  }
  try {
    // No sandbox: CI runs as root, where Chromium refuses its sandbox.
    return await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  } catch (error) {
    throw new Error(`Chromium cannot be launched from ${executablePath}: ${String(error)}`);
  }
}

/**
 * The one browser of a test file, launched on first use. Tests call it themselves rather than in beforeAll:
 * a failing hook would report the tests as skipped, and a missing Chromium must show as failed tests saying why.
 */
export function browser(): Promise<Browser> {
  launching ??= launchChromium();
  return launching;
}

/** Closes the browser if one was launched (for afterAll). */
export async function closeBrowser(): Promise<void> {
  const launched = launching;
  launching = undefined;
  await launched?.then(
    (open) => open.close(),
    () => undefined,
  );
}

export interface ConsolePage {
  readonly page: Page;
  /** Uncaught script errors. */
  readonly errors: string[];
  /** Every answer with status 400 or more, as `status METHOD path`. */
  readonly failed: string[];
}

/** Opens `url` in a new page of the shared browser. */
export async function openConsole(url: string, viewport = { width: 1440, height: 900 }): Promise<ConsolePage> {
  const page = await (await browser()).newPage({ viewport });
  const errors: string[] = [];
  const failed: string[] = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  page.on('response', (response) => {
    if (response.status() >= 400)
      failed.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
  });
  await page.goto(url);
  return { page, errors, failed };
}

/** Path of a screenshot under test-results/ (created when missing). */
export function screenshotPath(name: string): string {
  const results = join(ROOT, 'test-results');
  mkdirSync(results, { recursive: true });
  return join(results, name);
}
