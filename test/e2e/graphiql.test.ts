import fs from 'node:fs';
import path from 'node:path';
import { chromium, Browser, Page } from 'playwright-core';
import { anEvent } from '../builders/event-input';
import { uniqueNamespace } from '../support/stores';
import { createToken, gqlOk, startTestApp, TestApp } from '../support/test-app';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.resolve(__dirname, '..', 'artifacts');

async function setQuery(page: Page, query: string): Promise<void> {
  await page.evaluate((q) => {
    const el = document.querySelector('.graphiql-query-editor .CodeMirror') as unknown as { CodeMirror: { setValue(v: string): void } };
    el.CodeMirror.setValue(q);
  }, query);
  // GraphiQL re-parses the editor (operation name, document) after a short debounce.
  await page.waitForTimeout(700);
}

async function resultText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.querySelector('.result-window .CodeMirror') as unknown as { CodeMirror: { getValue(): string } } | null;
    return el?.CodeMirror.getValue() ?? '';
  });
}

describe('GraphiQL in a real browser, offline', () => {
  let t: TestApp;
  let browser: Browser;
  const ns = uniqueNamespace('graphiql');
  let token: string;
  const offsite: string[] = [];

  beforeAll(async () => {
    if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH`);
    t = await startTestApp();
    token = (await createToken(t, [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }], 'browser-user')).token;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.stop();
  });

  it('loads from the service alone, runs a query and a subscription with a token', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    // Anything not served by our own server would be a CDN dependency: refuse it and remember it.
    await page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1' || url.hostname === 'localhost') return route.continue();
      offsite.push(url.toString());
      return route.abort();
    });
    await page.goto(`${t.url}/graphiql#token=${token}`);
    await page.waitForSelector('.graphiql-query-editor .CodeMirror', { timeout: 30_000 });

    await setQuery(page, 'query Me { viewer { name grants { namespacePattern capabilities } } }');
    await page.click('.graphiql-execute-button');
    await page.waitForFunction(
      () =>
        (document.querySelector('.result-window .CodeMirror') as unknown as { CodeMirror: { getValue(): string } } | null)?.CodeMirror.getValue().includes(
          'browser-user',
        ),
      null,
      { timeout: 20_000 },
    );
    expect(JSON.parse(await resultText(page))).toEqual({
      data: { viewer: { name: 'browser-user', grants: [{ namespacePattern: ns, capabilities: ['INGEST', 'READ', 'LIST'] }] } },
    });

    await setQuery(page, `subscription Live { eventIngested(namespace: "${ns}") { namespace content } }`);
    await page.click('.graphiql-execute-button');
    // Keep writing until the subscription (opened over graphql-ws with the same token) shows one.
    const deadline = Date.now() + 20_000;
    let i = 0;
    while (!(await resultText(page)).includes('hello from the browser test') && Date.now() < deadline) {
      await gqlOk(t.url, token, `mutation($input: [EventInput!]!) { ingestEvents(input: $input) { status } }`, {
        input: [anEvent(ns).withKey('browser', `b-${i++}`).saying('hello from the browser test').build()],
      });
      await page.waitForTimeout(500);
    }
    expect(JSON.parse(await resultText(page))).toEqual({ data: { eventIngested: { namespace: ns, content: 'hello from the browser test' } } });

    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'graphiql.png') });
    expect(offsite).toEqual([]);
    await page.close();
  });
});
