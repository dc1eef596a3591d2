// End-to-end test of the search page: node e2e.mjs BASE_URL ALPHA_TOKEN BETA_TOKEN [SCREENSHOT.png]
// Drives Debian's Chromium (headless) with playwright-core against
// `sandgrep serve` on loopback (tests/web.rs sets it up). Exits non-zero on
// the first failed check.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [base, alpha, beta, screenshot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, colorScheme: 'light' });
  const page = await context.newPage();
  const text = (sel) => page.locator(sel).innerText();

  // Sign in: a wrong token is refused in place, the right one gets in.
  await page.goto(base + '/');
  await page.fill('#token', 'not-a-real-token-at-all');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('login-error').textContent.length > 0);
  assert.match(await text('#login-error'), /refused|unknown token/);
  await page.fill('#token', alpha);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#app:not([hidden])');

  // Search as you type: grouped by file, spans highlighted, counts per file.
  // `/` focuses the box from anywhere.
  await page.locator('#signout').focus();
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'q');
  await page.keyboard.type('needle');
  await page.waitForSelector('.file');
  assert.equal(await page.locator('mark').first().innerText(), 'needle');
  const files = await page.locator('.file h3 > span:first-child').allInnerTexts();
  assert.ok(files.length > 1 && files.every((f) => f.startsWith('alpha-')), files.join(','));
  assert.match(await page.locator('.file h3 .note').first().innerText(), /\d+ match/);
  assert.ok(await page.locator('.ln.ctx').count() > 0, 'context lines are shown');
  assert.match(await text('#summary'), /100 matches/);
  assert.match(await text('#summary'), /truncated/);

  // Load more through the cursor.
  await page.click('#more');
  await page.waitForFunction(() => /180 matches/.test(document.getElementById('summary').textContent));
  assert.ok(await page.locator('#more').isHidden());

  // Open a hit: the file's lines around it, the line highlighted; page down.
  const hit = page.locator('a.ln.hit').nth(3);
  const line = Number(await hit.getAttribute('data-line'));
  await hit.focus();
  await page.keyboard.press('Enter'); // the keyboard alone opens it
  await page.waitForSelector('#viewer-text .cur');
  assert.match(await text('#viewer-text .cur'), new RegExp('^' + line + '.*needle'));
  if (screenshot) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenshot });
  }
  const before = await text('#viewer-range');
  assert.match(before, /^lines \d+–\d+/);
  await page.click('#down');
  await page.waitForFunction((b) => document.getElementById('viewer-range').textContent !== b, before);
  assert.match(await text('#viewer-range'), /of 80$/);

  // Errors next to the control that caused them.
  await page.selectOption('#mode', 'regex');
  await page.fill('#q', 'a(');
  await page.waitForFunction(() => document.getElementById('search-error').textContent.length > 0);
  assert.match(await text('#search-error'), /invalid pattern/);
  await page.fill('#find', 'a[');
  await page.waitForFunction(() => document.getElementById('find-error').textContent.length > 0);
  assert.match(await text('#find-error'), /invalid glob/);

  // The file finder.
  await page.fill('#find', '**/alpha-1*.txt');
  await page.waitForFunction(() => document.querySelectorAll('#files a').length > 0);
  const found = await page.locator('#files a').allInnerTexts();
  assert.ok(found.every((f) => f.startsWith('alpha-1')), found.join(','));

  // Structural search from the same box.
  await page.selectOption('#mode', 'ast');
  await page.fill('#q', 'find($X)');
  await page.waitForSelector('.file');
  assert.match(await text('#results'), /\$X = "needle"/);

  // Another tenant's token sees only its own files.
  await page.click('#signout');
  assert.equal(await page.locator('.file').count(), 0, 'signing out leaves nothing behind');
  await page.fill('#token', beta);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#app:not([hidden])');
  await page.selectOption('#mode', 'literal');
  await page.fill('#q', 'needle');
  await page.waitForSelector('.file');
  const betaFiles = await page.locator('.file h3 > span:first-child').allInnerTexts();
  assert.ok(betaFiles.length > 0 && betaFiles.every((f) => f.startsWith('beta-')), betaFiles.join(','));

  // Dark mode follows the browser.
  const dark = await browser.newContext({ colorScheme: 'dark' });
  const dpage = await dark.newPage();
  await dpage.goto(base + '/');
  const bg = await dpage.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(17, 19, 24)');
  console.log('ok');
} finally {
  await browser.close();
}
