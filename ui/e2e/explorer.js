'use strict';
// The graph explorer's browser test: playwright-core drives Debian's
// chromium against a test service that handlers' TestUIPlaywright started
// and seeded. It reads (all required):
//   KNOWMIND_UI_URL          the service, e.g. http://127.0.0.1:40123
//   KNOWMIND_UI_WRITE_TOKEN  a read+write kmt_ token of the seeded tenant
//   KNOWMIND_UI_READ_TOKEN   a read-only token of the same tenant
//   KNOWMIND_UI_IDS          JSON {client, workshop, address, newAddress}
//   KNOWMIND_UI_ARTIFACTS    folder for one screenshot per state
// and KNOWMIND_CHROMIUM (default /usr/bin/chromium). Exit 0 when every step
// held; 1 with the failed step otherwise.
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

const url = env('KNOWMIND_UI_URL');
const writeToken = env('KNOWMIND_UI_WRITE_TOKEN');
const readToken = env('KNOWMIND_UI_READ_TOKEN');
const ids = JSON.parse(env('KNOWMIND_UI_IDS'));
const artifacts = env('KNOWMIND_UI_ARTIFACTS');
const executablePath = process.env.KNOWMIND_CHROMIUM || '/usr/bin/chromium';
const stepTimeout = 30_000;

function check(cond, what) {
  if (!cond) throw new Error(what);
}

async function main() {
  fs.mkdirSync(artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run',
      '--disable-component-update', '--disable-sync'],
    timeout: stepTimeout,
  });
  let step = 'start';
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(stepTimeout);
    // Every uncaught exception and console error fails the test (CSP
    // violations are reported there), except the wrong token's 401.
    const problems = [];
    page.on('pageerror', (e) => problems.push(`exception: ${e.message}`));
    page.on('console', (m) => {
      if ((m.type() === 'error' || m.type() === 'warning') && !/status of 401/.test(m.text())) {
        problems.push(`console ${m.type()}: ${m.text()}`);
      }
    });
    const idle = () => page.waitForFunction(() => document.body.dataset.busy === '0');
    const text = (sel) => page.locator(sel).innerText();
    const shot = async (name) => {
      await page.waitForTimeout(150);
      await page.screenshot({ path: path.join(artifacts, name + '.png') });
      console.log(`ok ${name}`);
    };
    const graphNodes = () => page.evaluate(() => (document.getElementById('graph').dataset.nodes || '').split(' ').filter(Boolean));
    const details = (id) => page.locator(`#details[data-id="${id}"]`).waitFor();

    step = 'wrong token';
    await page.goto(url + '/ui');
    await page.locator('#token').fill('kmt_not-a-real-token');
    await page.locator('#token').press('Enter');
    await page.locator('#signin-error').waitFor();
    await idle();
    const msg = await text('#signin-error');
    check(msg.includes('not accepted (HTTP 401)'), `wrong token: message ${JSON.stringify(msg)}`);
    check(await page.evaluate(() => sessionStorage.length) === 0, 'wrong token: something was kept in sessionStorage');
    await shot('01-wrong-token');

    step = 'sign in';
    await page.locator('#token').fill(writeToken);
    await page.locator('#token').press('Enter');
    await page.locator('#app-view').waitFor();
    await idle();
    const kept = await page.evaluate(() => ({ token: sessionStorage.getItem('knowmind.token'), cookies: document.cookie, local: localStorage.length, href: location.href }));
    check(kept.token === writeToken && kept.cookies === '' && kept.local === 0 && !kept.href.includes('kmt_'),
      `token kept in sessionStorage only: ${JSON.stringify({ ...kept, token: kept.token === writeToken })}`);
    check(await text('#who') === 'signed in · read and write', 'who: ' + await text('#who'));
    await shot('02-signed-in');

    step = 'search';
    await page.locator('#query').fill('Adresse Müller');
    await page.locator('#query').press('Enter');
    await page.locator('#hits li').first().waitFor();
    await idle();
    const hits = await text('#hits');
    const scores = await page.locator('#hits .score').allInnerTexts();
    check(hits.includes('Adresse Müller GmbH') && scores.length >= 2 && /^[01]\.\d{3}$/.test(scores[1]),
      `hits ${JSON.stringify(hits)}, scores ${JSON.stringify(scores)}`);
    await shot('03-search');

    step = 'open a memory';
    await page.locator(`#hits button[data-id="${ids.newAddress}"]`).click();
    await details(ids.newAddress);
    await idle();
    let nodes = await graphNodes();
    check(nodes.length === 3 && nodes.includes(ids.client) && nodes.includes(ids.address),
      `graph nodes ${nodes}: want the address, its old version and the client`);
    check((await text('#d-content')).includes('Weender Landstraße 5'), 'content: ' + await text('#d-content'));
    const edges = await text('#d-edges');
    check(edges.includes('PART_OF→ Müller GmbH') && edges.includes('SUPERSEDES→'), 'relations: ' + edges);
    const versions = await page.evaluate(() => [...document.querySelectorAll('#d-versions li')]
      .map((li) => li.dataset.id + (li.classList.contains('shown') ? ' shown' : '')));
    check(versions.length === 2 && versions[0] === ids.address && versions[1] === ids.newAddress + ' shown',
      `timeline ${JSON.stringify(versions)}: want the superseded version, then the shown one`);
    check((await text('#d-versions')).includes('reason: umgezogen'), 'timeline lacks the update reason');
    check(await page.locator('#write-update').count() === 1, 'a write token sees no update form');
    await shot('04-memory');

    step = 'slider';
    const pos = await page.evaluate(() => {
      const s = window.knowmindExplorer, v = s.shown.versions;
      const at = (Date.parse(v[0].valid_from) + Date.parse(v[1].valid_from)) / 2;
      return Math.floor((at - s.range.min) / (s.range.max - s.range.min) * 1000);
    });
    await page.evaluate((p) => {
      const s = document.getElementById('asof');
      s.value = String(p);
      s.dispatchEvent(new Event('change'));
    }, pos);
    await details(ids.address);
    await idle();
    check((await text('#d-content')).includes('Hauptstraße 1'), 'as of before the update: ' + await text('#d-content'));
    nodes = await graphNodes();
    check(!nodes.includes(ids.newAddress) && nodes.includes(ids.client), `as of before the update: nodes ${nodes}`);
    check((await text('#asof-label')).startsWith('as of ') && (await text('#d-requested')).includes(ids.newAddress),
      'slider label / note: ' + await text('#asof-label'));
    check(await page.locator('#write-update').count() === 0, 'the past is not editable: no update form as of a time');
    await shot('05-as-of');

    step = 'sign out';
    await page.locator('#signout').click();
    await page.locator('#signin-view').waitFor();
    check(await page.evaluate(() => sessionStorage.getItem('knowmind.token') === null && document.getElementById('app-view').hidden),
      'after sign-out the token is still kept or the app still shown');
    await shot('06-signed-out');

    step = 'read-only token';
    await page.locator('#token').fill(readToken);
    await page.locator('#token').press('Enter');
    await page.locator('#app-view').waitFor();
    await idle();
    await page.locator('#query').fill('Müller GmbH');
    await page.locator('#query').press('Enter');
    await page.locator('#hits li').first().waitFor();
    await idle();
    await page.locator(`#hits button[data-id="${ids.client}"]`).click();
    await details(ids.client);
    await idle();
    const controls = await page.locator('#write-update, #write-slot *').count();
    check(await text('#who') === 'signed in · read-only' && controls === 0, `read-only token: ${controls} write controls`);
    check((await text('#d-tags')).includes('class:client'), 'tags: ' + await text('#d-tags'));
    const ents = await page.evaluate(() => [...document.querySelectorAll('#d-entities li')].map((li) => li.dataset.type + '/' + li.dataset.id + ' ' + li.textContent));
    check(JSON.stringify(ents) === JSON.stringify(['organisation/mueller-gmbh organisation: Müller GmbH', 'place/goettingen place: Göttingen']),
      'entities shown next to the tags: ' + JSON.stringify(ents));
    await shot('07-read-only');

    step = 'page problems';
    check(problems.length === 0, 'the page reported problems (CSP violations show here):\n' + problems.join('\n'));
    console.log(`ok all steps; screenshots in ${artifacts}`);
  } catch (e) {
    throw new Error(`${step}: ${e.message}`);
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(`FAIL ${e.message}`);
  process.exit(1);
});
