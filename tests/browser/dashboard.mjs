// The dashboard in a real browser (issue 6): Debian's Chromium, headless, driven by playwright-core.
// Started by tests/tools/browser.rs, which runs the server and makes the two sign-ins; this script gets them in
// the environment: BASE_URL, ADMIN_EMAIL and ADMIN_ACCOUNT, OTHER_EMAIL and OTHER_ACCOUNT, PASSWORD, SCREENSHOTS (a
// folder), CHROMIUM (the executable).
// It exits non-zero on the first failed check.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { chromium } from "playwright-core";

const base = process.env.BASE_URL;
const shots = process.env.SCREENSHOTS;
const password = process.env.PASSWORD;
mkdirSync(shots, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  // Without the background-networking flags Chromium keeps trying to reach Google, which this network refuses.
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

const step = (name) => console.log(`step: ${name}`);

/** Every visible form control has a label (its own <label>, or aria-label). */
async function assertLabelled(page) {
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll("input:not([type=hidden]), select, textarea")]
      .filter((el) => el.labels.length === 0 && !el.getAttribute("aria-label"))
      .map((el) => el.outerHTML));
  assert.deepEqual(unlabelled, [], `controls without a label on ${page.url()}`);
}

async function shot(page, name) {
  await assertLabelled(page);
  await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
}

async function signIn(page, email) {
  await page.goto(`${base}/dashboard`);
  assert.match(page.url(), /\/dashboard\/sign-in$/, "signed-out visitors are sent to the sign-in page");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/dashboard\/keys$/);
}

async function callApi(key, urls, maxAgeHours = 0) {
  const response = await fetch(`${base}/v1/network/company-data`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ liUrls: urls, maxAgeHours }),
  });
  return { status: response.status, body: await response.json() };
}

const desktop = { viewport: { width: 1280, height: 800 } };
const admin = await (await browser.newContext(desktop)).newPage();

step("sign in");
await admin.goto(`${base}/dashboard/sign-in`);
await shot(admin, "sign-in");
// A wrong password is refused with a message, not a session.
await admin.getByLabel("Email").fill(process.env.ADMIN_EMAIL);
await admin.getByLabel("Password").fill("not the password at all");
await admin.getByRole("button", { name: "Sign in" }).click();
await admin.getByRole("alert").filter({ hasText: "wrong" }).waitFor();
await signIn(admin, process.env.ADMIN_EMAIL);
const cookies = await admin.context().cookies();
const session = cookies.find((c) => c.name === "cd_session");
assert.ok(session, "a session cookie is set");
assert.equal(session.httpOnly, true, "the session cookie is HttpOnly");
assert.equal(session.sameSite, "Strict", "the session cookie is SameSite=Strict");

step("create a key and read it once");
await admin.getByLabel("Name").fill("browser test");
await admin.getByRole("button", { name: "Create key" }).click();
const key = await admin.getByTestId("new-key").inputValue();
assert.match(key, /^cdk_[0-9A-Za-z]{40}$/);
await admin.getByRole("button", { name: "Copy" }).waitFor();
await shot(admin, "key-created");
await admin.goto(`${base}/dashboard/keys`);
assert.ok(!(await admin.content()).includes(key), "the full key is shown only once");
const row = admin.getByRole("row").filter({ hasText: "browser test" });
await row.getByText(`${key.slice(0, 12)}…${key.slice(-4)}`).waitFor();
await row.getByText("active").waitFor();

step("call the API with it");
const live = await callApi(key, ["https://www.linkedin.com/company/google"]);
assert.equal(live.status, 200, JSON.stringify(live.body));
assert.equal(live.body.results.length, 1);
const unresolved = await callApi(key, ["https://www.linkedin.com/company/no-such-company-anywhere"]);
assert.equal(unresolved.status, 200);
assert.equal(unresolved.body.unresolved.length, 1);

step("usage and ledger show it");
await admin.goto(`${base}/dashboard/usage`);
const totals = await admin.getByTestId("usage-totals").textContent();
assert.match(totals, /^2 requests \(2 live, 0 stored\), 1 companies returned, 1 unresolved, 1 credits\.$/, totals);
assert.equal(await admin.locator("svg.chart").count(), 3);
await shot(admin, "usage");
await admin.goto(`${base}/dashboard/credits`);
const charges = admin.getByTestId("ledger").getByRole("row").filter({ hasText: "browser test" });
assert.equal(await charges.count(), 2, "both requests are in the ledger with the key's name");
await charges.first().getByText("live").waitFor();
await shot(admin, "credits");
const csv = await admin.evaluate(async () => (await fetch("/dashboard/credits.csv")).text());
assert.match(csv.split("\n")[0], /^id,time,kind,key_id,key,urls_requested,urls_returned,mode,amount/);
assert.ok(csv.includes("browser test"), csv);

step("try it: every freshness window it offers returns records, at the price it states");
await admin.goto(`${base}/dashboard/try`);
const windows = await admin.locator("#try-window option").evaluateAll((options) =>
  options.map((option) => ({ value: option.value, label: option.textContent, price: option.dataset.price })));
assert.ok(windows.length >= 2 && windows.every((w) => w.price), JSON.stringify(windows));
for (const window of windows) {
  await admin.getByLabel("Page URLs").fill("https://www.linkedin.com/company/google");
  await admin.getByLabel("Key").selectOption({ label: `browser test (${key.slice(0, 12)}…${key.slice(-4)})` });
  await admin.getByLabel("Freshness").selectOption(window.value);
  await admin.getByText(`at most ${window.price} credits`).waitFor();
  await admin.getByRole("button", { name: "Run" }).click();
  await admin.getByTestId("try-cost").filter({ hasText: `Charged ${window.price} credits` }).waitFor();
  assert.match(await admin.getByTestId("try-json").textContent(), /"company_name": "Google"/, window.label);
}
await shot(admin, "try-it");

step("try it: the open-jobs count, ticked, comes in the record at the same price");
await admin.getByLabel("Freshness").selectOption(windows[0].value);
await admin.getByLabel("Open-jobs count").check();
await admin.getByRole("button", { name: "Run" }).click();
await admin.getByTestId("try-json").filter({ hasText: '"job_count_is_lower_bound"' }).waitFor();
assert.match(await admin.getByTestId("try-json").textContent(), /"job_count": \d+/);
assert.match(await admin.getByTestId("try-cost").textContent(), new RegExp(`Charged ${windows[0].price} credits`));
assert.ok(await admin.getByLabel("Open-jobs count").isChecked(), "the choice stays ticked");
await admin.getByLabel("Open-jobs count").uncheck();

step("try it: a website domain resolves to its page, with the evidence");
await admin.getByLabel("Each line is").selectOption("domain");
await admin.getByLabel("Page URLs").fill("audiense.com");
await admin.getByRole("button", { name: "Run" }).click();
await admin.getByTestId("try-json").filter({ hasText: '"method": "site_link"' }).waitFor();
assert.match(await admin.getByTestId("try-json").textContent(),
  /"li_url": "https:\/\/www\.linkedin\.com\/company\/audiense"/);

step("jobs: a CSV file loaded into the form starts a job, and the page follows it to the end");
await admin.goto(`${base}/dashboard/jobs`);
await admin.locator("#job-file").setInputFiles({
  name: "accounts.csv",
  mimeType: "text/csv",
  buffer: Buffer.from("name,linkedin\nGoogle,https://www.linkedin.com/company/google\n"),
});
await admin.waitForFunction(() => document.getElementById("job-urls").value.includes("/company/google"));
await admin.getByRole("button", { name: "Start job" }).click();
await admin.getByTestId("jobs").getByRole("row").filter({ hasText: "1 / 1" }).waitFor({ timeout: 20000 });
await shot(admin, "jobs");

step("admin grants credits");
await admin.goto(`${base}/dashboard/admin`);
await admin.getByLabel("Account", { exact: true }).first().waitFor();
await admin.locator("#grant-account").selectOption({ label: process.env.OTHER_ACCOUNT });
await admin.getByLabel("Credits", { exact: true }).fill("25");
await admin.getByRole("button", { name: "Grant" }).click();
await admin.getByRole("status").filter({ hasText: "Granted 25 credits" }).waitFor();
await shot(admin, "admin");
const adminAccount = new URL(
  await admin.getByRole("link", { name: process.env.ADMIN_ACCOUNT, exact: true }).getAttribute("href"), base,
).searchParams.get("account");
assert.match(adminAccount, /^\d+$/);

step("a forged form without the CSRF token is refused");
const forged = await admin.evaluate(async () => {
  const response = await fetch("/dashboard/keys", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "name=forged",
  });
  return response.status;
});
assert.equal(forged, 403);
await admin.goto(`${base}/dashboard/keys`);
assert.equal(await admin.getByRole("row").filter({ hasText: "forged" }).count(), 0);

step("revoke the key");
const revokeHref = await row.getByRole("link", { name: /^Revoke/ }).getAttribute("href");
assert.match(revokeHref, /^\/dashboard\/keys\/\d+\/revoke$/);
await row.getByRole("link", { name: /^Revoke/ }).click();
await shot(admin, "revoke-confirm");
await admin.getByRole("button", { name: "Revoke the key" }).click();
await admin.waitForURL(/\/dashboard\/keys$/);
await admin.getByRole("row").filter({ hasText: "browser test" }).getByText(/^revoked/).waitFor();
let status = 0;
for (let i = 0; i < 50 && status !== 401; i++) {
  status = (await callApi(key, ["https://www.linkedin.com/company/google"], 24)).status;
  if (status !== 401) await new Promise((r) => setTimeout(r, 200));
}
assert.equal(status, 401, "a revoked key stops working within seconds");

step("a second account cannot see the first one's keys");
const other = await (await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true })).newPage();
await signIn(other, process.env.OTHER_EMAIL);
assert.ok(!(await other.content()).includes("browser test"), "another account's key is listed");
await other.goto(`${base}/dashboard/keys?account=${adminAccount}`);
assert.ok(!(await other.content()).includes("browser test"), "?account= does not reach another account");
const foreignRevoke = await other.goto(`${base}${revokeHref}`);
assert.equal(foreignRevoke.status(), 404);
const adminPage = await other.goto(`${base}/dashboard/admin`);
assert.equal(adminPage.status(), 403);
await other.goto(`${base}/dashboard/credits`);
await other.getByTestId("balance").filter({ hasText: "25 credits" }).waitFor();
await shot(other, "credits-phone");

step("sign out");
await admin.getByRole("button", { name: "Sign out" }).click();
await admin.waitForURL(/\/dashboard\/sign-in$/);
await admin.goto(`${base}/dashboard/keys`);
assert.match(admin.url(), /\/dashboard\/sign-in$/, "after sign-out the dashboard asks to sign in again");

await browser.close();
console.log("all dashboard checks passed");
