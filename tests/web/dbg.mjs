import { chromium } from 'playwright-core';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
for (const [w, q] of [[1400, 'ContainerCreate'], [390, 'ContainerCreate']]) {
const page = await (await browser.newContext({ viewport: { width: w, height: 900 } })).newPage();
page.on('pageerror', (e) => console.log('pageerror:', e.message));
await page.goto('http://127.0.0.1:7981/?q=' + q);
await page.fill('#token', 'moby-token-0123456789'); await page.keyboard.press('Enter');
await page.waitForSelector('.file');
await page.waitForTimeout(4000);
console.log(await page.locator('#summary').innerText());
console.log((await page.locator('.file h3 .path').allInnerTexts()).slice(0, 30).join('\n'));
await page.screenshot({ path: `/tmp/shots/moby-${w}.png` });
}
await browser.close();
