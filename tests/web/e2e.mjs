// End-to-end test of the search page: node e2e.mjs BASE_URL ALPHA_TOKEN BETA_TOKEN SCREENSHOT_DIR
// (EXPECTED="MATCHES FILES" in the environment: what alpha's tree holds).
// Drives Debian's Chromium (headless) with playwright-core against
// `sandgrep serve` on loopback (tests/web.rs sets it up), at a desktop's and
// a phone's width, light and dark. Exits non-zero on the first failed check.
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const [base, alpha, beta, shots] = process.argv.slice(2);
const [total, totalFiles] = process.env.EXPECTED.split(' ').map(Number);
const num = (n) => n.toLocaleString('en-US');
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});

// What a person would see wrong without reading the text: overlapping boxes,
// a page wider than the window, cut-off placeholders, controls without a
// name, text below WCAG AA contrast.
async function layout(page, label) {
  const problems = await page.evaluate(() => {
    const out = [];
    const visible = (el) => {
      const r = el.getBoundingClientRect(), s = getComputedStyle(el);
      return r.width > 0 && r.height > 0 && s.visibility !== 'hidden';
    };
    const meet = (a, b) => {
      const x = a.getBoundingClientRect(), y = b.getBoundingClientRect();
      return x.left < y.right - 0.5 && y.left < x.right - 0.5 && x.top < y.bottom - 0.5 && y.top < x.bottom - 0.5;
    };
    for (const h of document.querySelectorAll('.file > h3')) {
      const [toggle, name, badge] = ['.toggle', '.path', '.badge'].map((s) => h.querySelector(s));
      if (meet(name, badge) || meet(toggle, name)) out.push('file name and badge overlap: ' + name.textContent);
      if (badge.getBoundingClientRect().right > h.getBoundingClientRect().right + 0.5) out.push('badge sticks out: ' + name.textContent);
    }
    const viewer = document.getElementById('viewer'), finder = document.getElementById('finder');
    if (visible(viewer) && visible(finder) && meet(viewer, finder)) out.push('the file finder and the viewer overlap');
    if (document.documentElement.scrollWidth > innerWidth + 1) out.push('page wider than the window: ' + document.documentElement.scrollWidth);
    const ctx = document.createElement('canvas').getContext('2d');
    for (const i of document.querySelectorAll('input[placeholder]')) {
      if (!visible(i) || !i.placeholder) continue;
      const s = getComputedStyle(i);
      ctx.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
      const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight) - (i.type === 'search' ? 16 : 0);
      if (ctx.measureText(i.placeholder).width > room) out.push(`placeholder cut off: "${i.placeholder}"`);
    }
    for (const c of document.querySelectorAll('button, input, select, a[href], [tabindex]')) {
      if (!visible(c)) continue;
      const by = c.getAttribute('aria-labelledby');
      const name = c.getAttribute('aria-label') || (c.labels && [...c.labels].map((l) => l.textContent).join('').trim())
        || c.textContent.trim() || c.title || (by && document.getElementById(by).textContent.trim());
      if (!name) out.push('a control without a name: ' + c.outerHTML.slice(0, 100));
    }
    const lum = (c) => {
      const [r, g, b] = c.match(/[\d.]+/g).slice(0, 3).map((v) => {
        v = Number(v) / 255;
        return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r + 0.7152 * g + 0.0722 * b;
    };
    const background = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor, m = c.match(/[\d.]+/g);
        if (m && (m.length < 4 || Number(m[3]) > 0)) return c;
      }
      return getComputedStyle(document.documentElement).backgroundColor;
    };
    const ratio = (fg, bg) => { const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x); return (a + 0.05) / (b + 0.05); };
    let checked = 0;
    for (const el of document.querySelectorAll('body *')) {
      const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!own || !visible(el) || el.closest(':disabled, .stale, [aria-hidden="true"]')) continue;
      const r = ratio(getComputedStyle(el).color, background(el));
      checked++;
      if (r < 4.5) out.push(`contrast ${r.toFixed(2)} < 4.5: "${el.textContent.trim().slice(0, 40)}" (${el.tagName.toLowerCase()}.${el.className})`);
    }
    for (const i of document.querySelectorAll('input[placeholder]')) {
      if (!visible(i) || i.disabled) continue;
      const r = ratio(getComputedStyle(i, '::placeholder').color, background(i));
      if (r < 4.5) out.push(`placeholder contrast ${r.toFixed(2)}: "${i.placeholder}"`);
    }
    if (checked < 5) out.push('contrast: only ' + checked + ' texts checked');
    return out;
  });
  assert.deepEqual(problems, [], label);
}

async function signIn(page, token) {
  await page.fill('#token', token);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#app:not([hidden])');
}

const summary = (page) => page.locator('#summary').innerText();
const waitSummary = (page, re) => page.waitForFunction((s) => new RegExp(s).test(document.getElementById('summary').textContent), re.source);
const paths = (page) => page.locator('.file h3 .path').allInnerTexts();

async function scenario(width, scheme, first) {
  const label = `${width}-${scheme}`;
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: scheme });
  const page = await context.newPage();
  const text = (sel) => page.locator(sel).innerText();
  await page.goto(base + '/');
  if (first) {
    // A wrong token is refused in place.
    await page.fill('#token', 'not-a-real-token-at-all');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('login-error').textContent.length > 0);
    assert.match(await text('#login-error'), /refused|unknown token/);
  }
  await signIn(page, alpha);
  await layout(page, label + ' signed in');
  // The filters fold away until asked for (or set).
  assert.ok(await page.locator('#include').isHidden());
  await page.click('#filters-toggle');
  assert.ok(await page.locator('#include').isVisible());
  await layout(page, label + ' filters open');
  await page.click('#filters-toggle');

  // `/` focuses the box from anywhere; search as you type.
  await page.locator('#signout').focus();
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'q');
  await page.keyboard.type('needle');
  await page.waitForSelector('.file');
  assert.equal(await page.locator('mark').first().innerText(), 'needle');
  const files = await paths(page);
  assert.ok(files.length > 1 && !files.some((f) => f.includes('beta')), files.join(','));

  // Totals from a count: every match and file, not the page's 100.
  await waitSummary(page, new RegExp(`^${num(total)} matches in ${num(totalFiles)} files`));
  assert.match(await summary(page), /showing the first 100 matches/);

  // Twelve copies of the same file fold into the first, the others one click away; so do
  // numbered versions side by side.
  assert.ok(files.includes('api/docs/v1.30.yaml') && !files.includes('api/docs/v1.31.yaml'), files.join(','));
  const same = page.locator('.file[data-path="api/docs/v1.30.yaml"] .same');
  assert.match(await same.innerText(), /Also in 11 similar files/);
  await same.locator('button').click();
  assert.equal(await same.locator('li a').count(), 11);
  assert.match(await same.locator('li').first().innerText(), /^api\/docs\/v1.31.yaml 2 matches$/);
  assert.ok(files.includes('notes/release-1.md') && !files.includes('notes/release-2.md'), files.join(','));
  assert.match(await page.locator('.file[data-path="notes/release-1.md"] .same').innerText(), /Also in 2 similar files/);
  assert.ok(files.includes('work/alpha-aa.txt') && files.includes('work/alpha-ab.txt'), files.join(','));

  // A line that is a hit and context of a neighbouring hit is drawn once, as a hit.
  const merged = page.locator('.file[data-path="merge.txt"] a.ln');
  const numbers = (await merged.evaluateAll((as) => as.map((a) => a.dataset.line + (a.classList.contains('hit') ? 'h' : 'c'))));
  assert.deepEqual(numbers, ['3c', '4c', '5h', '6h', '7c', '8h', '9c', '10c']);

  // A hit far right on a long line is on screen: the start of the line gives way.
  const far = await page.locator('.file[data-path="long/line.txt"]').evaluate((sec) => {
    const m = sec.querySelector('mark').getBoundingClientRect(), box = sec.querySelector('.lines').getBoundingClientRect();
    return [m.right <= box.right, sec.querySelector('a.ln').textContent];
  });
  assert.ok(far[0], 'the match is inside the results box');
  assert.match(far[1], /^1…word .*needle, far to the right$/);

  // The binary file skipped is a plain note, not an error.
  assert.match(await summary(page), /skipped: 1 binary/);
  const noteColor = await page.locator('#summary .note').first().evaluate((e) => getComputedStyle(e).color);
  const errColor = await page.locator('#search-error').evaluate((e) => getComputedStyle(e).color);
  assert.notEqual(noteColor, errColor);

  // Collapse all / expand all.
  await page.click('#fold-all');
  assert.equal(await page.locator('.file:not(.closed)').count(), 0);
  assert.equal(await page.locator('#fold-all').innerText(), 'Expand all');
  await page.click('#fold-all');
  assert.equal(await page.locator('.file.closed').count(), 0);

  // Where the matches are by file type, from the count; a chip keeps one type, a second click all.
  const chips = await page.locator('#facets button').allInnerTexts();
  assert.ok(chips.includes('.txt 154') && chips.includes('.yaml 24') && chips.includes('.md 3'), chips.join(','));
  await page.locator('#facets button[data-ext="md"]').click();
  await waitSummary(page, /^3 matches in 3 files/);
  assert.deepEqual(await paths(page), ['notes/release-1.md']);
  assert.equal(await page.locator('#facets button[aria-pressed="true"]').getAttribute('data-ext'), 'md');
  await page.locator('#facets button[data-ext="md"]').click();
  await waitSummary(page, new RegExp(`^${num(total)} matches`));

  // `t` goes to the file finder.
  await page.locator('#signout').focus();
  await page.keyboard.press('t');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'find');

  // The query is in the address: a reload keeps it.
  assert.match(page.url(), /\?q=needle/);
  await page.reload();
  await page.waitForSelector('.file');
  assert.equal(await page.inputValue('#q'), 'needle');
  await waitSummary(page, new RegExp(`^${num(total)} matches`));

  // Esc in the box clears nothing.
  await page.focus('#q');
  await page.keyboard.press('Escape');
  assert.equal(await page.inputValue('#q'), 'needle');

  // Keyboard: ↓ from the box into the results, ↓ again, Enter opens the viewer
  // with the match itself marked and in view.
  await page.focus('#q');
  await page.keyboard.press('ArrowDown');
  const focused = () => page.evaluate(() => document.activeElement.dataset.path + ':' + document.activeElement.dataset.line);
  const firstRow = await page.locator('#results a.ln').first().evaluate((a) => a.dataset.path + ':' + a.dataset.line);
  assert.equal(await focused(), firstRow, 'ArrowDown moves into the results');
  await page.keyboard.press('ArrowDown');
  const secondRow = await page.locator('#results a.ln').nth(1).evaluate((a) => a.dataset.path + ':' + a.dataset.line);
  assert.equal(await focused(), secondRow);
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'q', 'ArrowUp from the first line goes back to the box');
  // Go to a hit deep in a long file, then open it.
  const deep = page.locator('.file[data-path="work/alpha-aa.txt"] a.ln.hit[data-line="80"]');
  await deep.focus();
  await page.keyboard.press('Enter');
  await page.waitForSelector('#viewer-text .cur mark');
  assert.equal(await text('#viewer-text .cur mark'), 'needle');
  assert.match(await text('#viewer-text .cur'), /^80\s*let x80 = find\("needle", "aa"\);$/);
  const inView = await page.evaluate(() => {
    const m = document.querySelector('#viewer-text .cur mark').getBoundingClientRect();
    const v = document.getElementById('viewer-text').getBoundingClientRect();
    return m.top >= v.top && m.bottom <= v.bottom && m.left >= v.left && m.right <= v.right;
  });
  assert.ok(inView, 'the marked match is scrolled into view');
  assert.equal(await page.locator('#viewer-text').evaluate((b) => b.scrollLeft), 0, 'a short line keeps its start in view');
  await page.evaluate(() => window.scrollTo(0, 3000)); // the page scrolled: finder and viewer still apart
  await layout(page, label + ' viewer open, page scrolled');
  await page.evaluate(() => window.scrollTo(0, 0));
  assert.match(page.url(), /file=work%2Falpha-aa.txt&line=80/);
  await layout(page, label + ' viewer open');
  await page.screenshot({ path: `${shots}/${label}-viewer.png` });
  const range = await text('#viewer-range');
  await page.click('#up');
  await page.waitForFunction((b) => document.getElementById('viewer-range').textContent !== b, range);
  assert.match(await text('#viewer-range'), /^lines 1–60/);
  assert.equal(await page.locator('#viewer-text .cur').count(), 0, 'Earlier pages back; the opened line stays the hit');
  assert.match(page.url(), /line=80/);
  await page.keyboard.press('Escape');
  await page.waitForSelector('#viewer', { state: 'hidden' });

  // Every page: the summary speaks to people (no API words) after "Show more".
  await page.evaluate(() => window.scrollTo(0, 0));
  await layout(page, label + ' results');
  await page.screenshot({ path: `${shots}/${label}.png` });
  while (await page.locator('#more').isVisible()) {
    const before = await summary(page);
    await page.focus('#more');
    await page.keyboard.press('Enter');
    await page.waitForFunction((b) => document.getElementById('summary').textContent !== b
      && document.getElementById('results').getAttribute('aria-busy') === 'false', before);
  }
  assert.match(await summary(page), /skipped: 1 binary/, 'skipped counts cover every page, not the last one');
  assert.notEqual(await page.evaluate(() => document.activeElement.tagName), 'BODY', 'Show more by keyboard keeps focus');
  const words = await summary(page);
  assert.match(words, new RegExp(`^${num(total)} matches in ${num(totalFiles)} files`));
  assert.doesNotMatch(words, /cursor|truncat|max_results|next_|page/i);

  // A half-typed regex keeps the last results (dimmed) and says what is missing, in the user's terms.
  await page.click('#regex');
  await page.fill('#q', 'needle(');
  await page.waitForFunction(() => document.getElementById('search-error').textContent.length > 0);
  assert.match(await text('#search-error'), /unclosed group/);
  assert.doesNotMatch(await text('#search-error'), /\(\?:/);
  assert.ok(await page.locator('#results.stale .file').count() > 0, 'results stay while the pattern is incomplete');
  await page.fill('#q', 'need(le)');
  await page.waitForFunction(() => !document.getElementById('results').classList.contains('stale'));
  assert.equal(await text('#search-error'), '');

  // Back goes to the previous search.
  await page.goBack();
  await page.waitForFunction(() => document.getElementById('q').value !== 'need(le)');
  assert.match(await page.inputValue('#q'), /^needle\(?$/);

  // Skip generated & vendored: vendor/ drops out.
  await page.goto(base + '/?q=needle&include=vendor/**');
  await page.waitForSelector('.file');
  assert.deepEqual(await paths(page), ['vendor/lib/dep.go']);
  assert.ok(await page.locator('#include').isVisible(), 'a filter set in the address opens the filters');
  await page.check('#skipgen');
  await waitSummary(page, /^No matches/);
  assert.equal(await page.locator('#filters-toggle').innerText(), 'Filters (2)');
  assert.match(page.url(), /skipgen=1/);

  // Direction and control characters in names and lines are shown as their codes, never obeyed.
  await page.goto(base + '/?q=bidi-check');
  await page.waitForSelector('.file');
  const drawn = await page.locator('#results').innerText();
  assert.doesNotMatch(drawn, /[\u202e\u2066\u0001\u{e0000}-\u{e007f}]/u);
  assert.match(drawn, /\\u\{e0041\}/);
  assert.match(drawn, /trojan\/a\\u\{202e\}txt\.go\\u\{1\}/);
  assert.match(drawn, /bidi-check \\u\{202e\} \} \\u\{2066\} \\u\{e0041\} \*\//);
  await page.locator('#results a.ln.hit').first().click();
  await page.waitForSelector('#viewer-text .cur mark');
  assert.doesNotMatch(await page.locator('#viewer').innerText(), /[\u202e\u2066\u0001]/);
  await page.click('#close');

  // A custom include filter: no chips (a chip would overwrite it).
  await page.goto(base + '/?q=needle&include=api/**');
  await page.waitForSelector('.file');
  await waitSummary(page, /^24 matches/);
  assert.equal(await page.locator('#facets button').count(), 0);

  // An address with an open file: the viewer marks the search's hits once they are in.
  await page.goto(base + '/?q=needle&file=work/alpha-aa.txt&line=64');
  await page.waitForSelector('#viewer-text .cur mark');
  assert.equal(await text('#viewer-text .cur mark'), 'needle');
  // A new search that does not find that file closes the viewer: it never shows an earlier search's file.
  await page.fill('#q', 'zzq-found-nowhere-qzz');
  await waitSummary(page, /^No matches/);
  await page.waitForSelector('#viewer', { state: 'hidden' });
  assert.doesNotMatch(page.url(), /file=/);

  // A path too long for the width wraps beside its badge.
  await page.goto(base + '/?q=needle&include=src/**');
  await page.waitForSelector('.file');
  await layout(page, label + ' long path');

  // The file finder opens a file in the viewer.
  await page.fill('#find', '**/alpha-b*.txt');
  await page.waitForFunction(() => document.querySelectorAll('#files a').length > 0);
  const found = await page.locator('#files a').allInnerTexts();
  assert.ok(found.length && found.every((f) => f.startsWith('work/alpha-b')), found.join(','));
  await page.locator('#files a').first().click();
  await page.waitForSelector('#viewer:not([hidden]) #viewer-text .ln');
  await layout(page, label + ' finder and viewer');
  await page.click('#close');

  // Structural search: the text-only controls are off; metavariables shown.
  await page.selectOption('#mode', 'ast');
  assert.ok(await page.locator('#context').isDisabled() && await page.locator('#context').isHidden());
  assert.ok(await page.locator('#word').isDisabled());
  await page.fill('#q', 'find($X, $Y)');
  await page.fill('#include', '');
  await page.waitForFunction(() => /\$X = "needle"/.test(document.getElementById('results').textContent));
  await layout(page, label + ' structural');

  // Errors next to the control that caused them.
  await page.fill('#find', 'a[');
  await page.waitForFunction(() => document.getElementById('find-error').textContent.length > 0);
  assert.match(await text('#find-error'), /invalid glob/);

  if (first) {
    // Another tenant's token sees only its own files; signing out leaves nothing behind.
    await page.click('#signout');
    assert.equal(await page.locator('.file').count(), 0);
    assert.doesNotMatch(page.url(), /needle/);
    await signIn(page, beta);
    await page.fill('#q', 'needle');
    await page.waitForSelector('.file');
    const betaFiles = await paths(page);
    assert.ok(betaFiles.length > 0 && betaFiles.every((f) => f.startsWith('work/beta-')), betaFiles.join(','));
  }
  await context.close();
}

// Answers that arrive late, or after a sign-out, and history across sign-ins.
async function races() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const slow = (what) => async (route) => {
    if ((route.request().postData() || '').includes(what)) await new Promise((r) => setTimeout(r, 1500));
    await route.continue();
  };
  await page.route('**/v1/search-text', slow('"query":"bidi-check"'));
  await page.route('**/v1/list-files', slow('trojan'));
  await page.goto(base + '/');
  await signIn(page, alpha);

  // An older answer arriving after a newer one is not shown over it.
  await page.fill('#q', 'bidi-check');
  await page.waitForTimeout(400);
  await page.fill('#q', 'needle');
  await waitSummary(page, new RegExp(`^${num(total)} matches`));
  await page.waitForTimeout(1800);
  assert.ok(!(await paths(page)).some((p) => p.startsWith('trojan/')), 'the late answer is dropped');
  assert.match(await summary(page), new RegExp(`^${num(total)} matches`));

  // Typing on from a query replaces its history entry: Back goes to the search before, not to "needle ".
  await page.fill('#q', 'fold-check');
  await page.waitForFunction(() => document.querySelectorAll('.file').length === 2);
  // Numbered neighbours whose hits differ are not folded.
  assert.deepEqual(await paths(page), ['pkg/setup_ipv4.go', 'pkg/setup_ipv6.go']);
  await page.focus('#q');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('needle 8', { delay: 350 });
  await page.waitForSelector('.file[data-path="merge.txt"]');
  await page.goBack();
  await page.waitForFunction(() => document.getElementById('q').value === 'fold-check');

  // Signing out while a search and a file listing are on their way: nothing of theirs reaches the
  // next tenant's page, and Back does not replay the earlier tenant's searches.
  await page.fill('#q', 'bidi-check');
  await page.fill('#find', 'trojan');
  await page.waitForTimeout(500);
  await page.click('#signout');
  await signIn(page, beta);
  await page.waitForTimeout(2000);
  assert.doesNotMatch(await page.locator('#app').innerText(), /trojan|bidi|alpha|needle|merge/);
  await page.goBack();
  await page.waitForTimeout(500);
  assert.equal(await page.inputValue('#q'), '');
  assert.doesNotMatch(await page.locator('#app').innerText(), /alpha|needle|merge/);
  await context.close();
}

try {
  await races();
  await scenario(1400, 'light', true);
  await scenario(360, 'dark', false);
  await scenario(1400, 'dark', false);
  await scenario(360, 'light', false);
  console.log('ok');
} finally {
  await browser.close();
}
