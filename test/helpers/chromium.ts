/**
 * Headless Chromium for the browser tests (Debian's `chromium`, driven by playwright-core):
 * where it is, whether it is there (the tests skip, saying so, when it is not), and one way to
 * start it, with nothing that talks to the network on its own.
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

/** Starts headless Chromium; `args` are added to the quiet defaults. */
export async function launchChromium(args: readonly string[] = []): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      ...args,
    ],
  });
}
