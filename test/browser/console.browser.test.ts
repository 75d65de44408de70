// The console as a person uses it: Debian's Chromium (playwright-core, no browser download) against
// `npm run dev`. The steps build on each other (a session, then its chat, contacts, a campaign to
// them...), so they run in order in one page. Screenshots of every page go to <TEST_OUT_DIR>/browser/.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CHROMIUM } from "../../scripts/ensure-browser.ts";
import { baseUrl, call, newKey } from "../e2e/client.ts";

const SHOTS = resolve(process.env.TEST_OUT_DIR || ".tmp", "browser");
const XSS = `<img src=x onerror="window.__xss=1">`;
const PHONE = "+15550001234";

let browser: Browser;
let context: BrowserContext;
let page: Page;
let key: string;
let receiver: Server;
let receiverUrl: string;
const received: string[] = [];
/** Files the receiver serves as a sender's media server: `/media/slow.png` waits until `releaseSlow()`. */
const PNG_1PX = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
let releaseSlow: () => void = () => {};
const slowReleased = new Promise<void>((r) => (releaseSlow = r));
const cspViolations: string[] = [];
const pageErrors: string[] = [];
/** JavaScript the first page loaded (url -> gzipped bytes). */
const firstPageJs = new Map<string, number>();
/** The page's latest troubles (API answers >= 400, failed requests, console errors, sign-outs), for a failure's report. */
const trouble: string[] = [];
/** Steps started so far: every step after the first (which signs in) needs the console signed in. */
let stepsStarted = 0;

function noteTrouble(line: string): void {
  trouble.push(`${new Date().toISOString().slice(11, 23)} ${line}`);
  if (trouble.length > 25) trouble.shift();
}

/** Where the page is and what it shows, with its latest troubles: what a failure report needs to name a cause. */
async function pageState(): Promise<string> {
  const signInForm = await page.locator("#apikey").isVisible().catch(() => false);
  const text = await page
    .locator("body")
    .innerText({ timeout: 2_000 })
    .then((t) => t.replace(/\s+/g, " ").slice(0, 400))
    .catch((e: unknown) => `(unreadable: ${String(e).slice(0, 200)})`);
  return [`url: ${page.url()}`, `sign-in form shown: ${signInForm}`, `page text: ${text}`, "latest troubles:", ...(trouble.length ? trouble : ["(none)"])].join("\n  ");
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: resolve(SHOTS, `${name}.png`), fullPage: true });
}

async function go(label: string): Promise<void> {
  const toggle = page.getByRole("button", { name: "Menu" });
  if (await toggle.isVisible()) await toggle.click();
  await page.getByRole("navigation", { name: "Pages" }).getByRole("link", { name: label, exact: true }).click();
  await expect.poll(() => page.locator("h1").first().textContent()).toBeTruthy();
}

/**
 * Replaces the editor's text the way a person pastes it (a paste event CodeMirror handles). Typing
 * several lines through the browser's native contenteditable editing would have Chromium add style
 * attributes the page's CSP (rightly) blocks.
 */
async function pasteIntoEditor(text: string): Promise<void> {
  await page.locator(".cm-content").click();
  await page.keyboard.press("Control+a");
  await page.locator(".cm-content").evaluate((el, t) => {
    const data = new DataTransfer();
    data.setData("text/plain", t);
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

async function noXss(): Promise<void> {
  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
  expect(await page.locator('main img[src="x"]').count()).toBe(0);
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  receiver = createServer((req, res) => {
    if (req.url === "/media/slow.png") {
      void slowReleased.then(() => res.writeHead(200, { "Content-Type": "image/png" }).end(PNG_1PX));
      return;
    }
    if (req.url?.startsWith("/media/")) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("gone");
      return;
    }
    // an endpoint that is gone for good: the platform disables a webhook pointing here
    if (req.url === "/gone") {
      req.resume();
      res.writeHead(410, { "Content-Type": "text/plain" }).end("gone");
      return;
    }
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      received.push(body);
      res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  key = await newKey("pro");
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(`${m.text()} (${m.location().url}:${m.location().lineNumber}) at ${page.url()}`);
    if (m.type() === "error") noteTrouble(`console error: ${m.text().slice(0, 300)} at ${page.url()}`);
  });
  page.on("pageerror", (e) => {
    pageErrors.push(String(e));
    noteTrouble(`page error: ${String(e).slice(0, 300)}`);
  });
  page.on("requestfailed", (r) => noteTrouble(`${r.method()} ${new URL(r.url()).pathname} failed: ${r.failure()?.errorText ?? "?"}`));
  page.on("crash", () => noteTrouble("the page crashed"));
  // Any 401 signs the console out (dashboard/src/api.ts): say when it happens.
  await page.addInitScript(() => window.addEventListener("texmsg:unauthorized", () => console.error("texmsg:unauthorized: the console signs out")));
  page.on("response", async (r) => {
    if (r.status() >= 400) noteTrouble(`${r.request().method()} ${new URL(r.url()).pathname} -> ${r.status()}`);
    if (r.request().resourceType() === "script" && !firstPageJs.has(r.url()) && !page.url().includes("/latex")) {
      firstPageJs.set(r.url(), gzipSync(await r.body()).length);
    }
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => receiver?.close(r));
});

// The steps build on each other: once the console is signed out (or never signed in), every later step
// would wait out its timeouts one by one. Each fails at once instead, saying what the page shows and why.
beforeEach(async ({ onTestFailed }) => {
  onTestFailed(async () => console.error(`[browser] the page when the step failed:\n  ${await pageState()}`));
  if (stepsStarted++ === 0) return;
  if ((await page.locator('nav[aria-label="Pages"]').count()) > 0) return;
  throw new Error(`the console is not signed in any more, so this step cannot run:\n  ${await pageState()}`);
});

describe("browser console (Chromium against npm run dev)", () => {
  it("signs in with a pasted key (keyboard only), kept in sessionStorage and never in the URL or a cookie", async () => {
    await page.goto(baseUrl() + "/");
    await expect.poll(() => page.locator("#apikey").isVisible()).toBe(true);
    await shot("00-sign-in");
    await page.locator("#apikey").focus();
    await page.keyboard.type(key);
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByTestId("plan").textContent()).toBe("pro");
    await expect.poll(() => page.getByTestId("rate").textContent()).toMatch(/\d+ of \d+ requests left/);
    expect(page.url()).not.toContain(key);
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate(() => sessionStorage.getItem("texmsg.apiKey"))).toBe(key);
    await expect.poll(() => page.locator(".live").textContent(), { timeout: 15_000 }).toBe("Live");
    await shot("01-overview");
  });

  it("creates an API key whose secret is shown once, then revokes it", async () => {
    await page.locator("#key-name").fill("ci key");
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = await page.getByTestId("secret").textContent();
    expect(secret).toMatch(/^tmk_/);
    await page.getByRole("button", { name: "Done" }).click();
    expect(await page.getByTestId("secret").count()).toBe(0);
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Revoke key ci key" }).click();
    await expect.poll(() => page.locator("tr", { hasText: "ci key" }).textContent()).toContain("revoked");
  });

  it("creates a sandbox session and shows its live status", async () => {
    await go("Sessions");
    await page.locator("#ses-name").fill("browser sandbox");
    await page.getByRole("button", { name: "Create session" }).click();
    const row = page.locator("tr", { hasText: "browser sandbox" });
    await expect.poll(() => row.textContent(), { timeout: 15_000 }).toContain("WORKING");
    await shot("02-sessions");
  });

  it("shows a session's standing live: the sandbox is told it is restricted, then banned, then reinstated", async () => {
    const row = page.locator("tr", { hasText: "browser sandbox" });
    const id = (await row.getAttribute("data-session"))!;
    const health = (body: unknown) => call(`/api/sessions/${id}/sandbox/health`, { method: "POST", key, json: body }).then((r) => expect(r.status).toBe(200));
    expect(await row.getByTestId("session-health").count()).toBe(0);
    await health({ state: "restricted", restrictions: [{ type: "RESTRICTED_BIZ_INITIATED_MESSAGING", expiresAt: "2030-01-02T03:04:05.000Z" }] });
    // No reload: the row follows the session's events.
    await expect.poll(() => row.getByTestId("session-health").textContent()).toContain("Restricted by Meta: RESTRICTED_BIZ_INITIATED_MESSAGING until");
    await shot("02a-session-restricted");
    await health({ state: "banned" });
    await expect.poll(() => row.getByTestId("session-health").textContent()).toBe("Banned by Meta: the number cannot send");
    expect(await row.textContent()).toContain("WORKING");
    await health({ state: "ok" });
    await expect.poll(() => row.getByTestId("session-health").count()).toBe(0);
  });

  it("lists the session's templates and creates one: a broken rule is shown at its field, then PENDING turns APPROVED live", async () => {
    await page.getByRole("button", { name: "Templates of browser sandbox" }).click();
    const panel = page.getByRole("region", { name: "Templates of browser sandbox" });
    await expect.poll(() => panel.locator("h2").textContent()).toContain("Templates of browser sandbox");
    await panel.getByLabel("Name (lowercase, digits, _)").fill("Order Shipped");
    await panel.getByLabel("Body ({{1}}, {{2}}, ... for parameters)").fill(`Hi {{1}}, ${XSS} shipped`);
    await panel.getByLabel("Body examples (one per parameter, separated by |)").fill("Ada");
    await panel.getByRole("button", { name: "Create template" }).click();
    await expect.poll(() => panel.locator(".field-error").first().textContent()).toContain("lowercase letters, digits and underscores");
    await panel.getByLabel("Name (lowercase, digits, _)").fill("order_shipped");
    await panel.getByRole("button", { name: "Create template" }).click();
    const row = panel.locator("tr[data-template=order_shipped]");
    await expect.poll(() => row.textContent()).toContain("PENDING");
    await expect.poll(() => row.textContent(), { timeout: 20_000 }).toContain("APPROVED");
    expect(await row.textContent()).toContain("en_US");
    expect(await row.textContent()).toContain("UTILITY");
    await shot("02b-templates");
    await noXss();
  });

  it("sends a message whose ticks reach read, and shows a simulated inbound message (XSS payload as text)", async () => {
    await page.getByRole("link", { name: "browser sandbox" }).click();
    await page.locator("#chat-open").fill(PHONE);
    await page.getByRole("button", { name: "Open", exact: true }).click();
    await page.locator("#msg-text").fill(`hello ${XSS}`);
    await page.getByRole("button", { name: "Send", exact: true }).click();
    const out = page.locator(".bubble.out").last();
    await expect.poll(() => out.locator(".text").textContent()).toBe(`hello ${XSS}`);
    // sent -> delivered -> read, pushed over the event stream
    await expect.poll(() => out.locator(".ticks").getAttribute("data-status"), { timeout: 20_000 }).toBe("read");

    await page.locator("#sim-from").fill(PHONE);
    await page.locator("#sim-text").fill(`inbound ${XSS}`);
    await page.getByRole("button", { name: "Receive" }).click();
    await expect.poll(() => page.locator(".bubble.in .text").last().textContent(), { timeout: 15_000 }).toBe(`inbound ${XSS}`);
    // The session's chat list (GET /api/chats) follows the events: its last message, as text.
    await expect.poll(() => page.locator('[data-chat="15550001234@c.us"] .chat-preview').textContent()).toBe(`inbound ${XSS}`);
    // Open, so read: no unread badge once the read is recorded.
    await expect.poll(() => page.locator('[data-chat="15550001234@c.us"] .unread').count()).toBe(0);
    await noXss();
  });

  it("shows a chat's files as themselves: picture (full size on click), audio, document; placeholders while received or failed", async () => {
    // A picture, uploaded from the file picker (base64 to send-media), shown from the API as a blob.
    await page.locator("#msg-file").setInputFiles({ name: "dot.png", mimeType: "image/png", buffer: PNG_1PX });
    await page.getByRole("button", { name: "Send file" }).click();
    const img = page.locator(".bubble.out .media-image img").last();
    await expect.poll(() => img.evaluate((e: HTMLImageElement) => e.complete && e.naturalWidth)).toBe(1);
    const imgSrc = (await img.getAttribute("src"))!;
    expect(imgSrc).toMatch(/^blob:/);
    // Clicked once its receipts are in: each one pushed over the stream redraws the bubble, and a click
    // landing on the copy being replaced opens nothing (one run on a fresh clone lost it so).
    await expect.poll(() => page.locator(".bubble.out").last().locator(".ticks").getAttribute("data-status"), { timeout: 20_000 }).toBe("read");
    await img.click();
    const full = page.locator("dialog.media-full[open] img");
    await expect.poll(() => full.evaluate((e: HTMLImageElement) => e.complete && e.naturalWidth)).toBe(1);
    await page.keyboard.press("Escape");
    await expect.poll(() => page.locator("dialog.media-full").count()).toBe(0);

    // Audio with the browser's controls (a few silent MPEG frames: 128 kbit/s, 44.1 kHz, mono).
    const frame = Buffer.alloc(417);
    frame.set([0xff, 0xfb, 0x90, 0xc4]);
    await page.locator("#msg-file").setInputFiles({ name: "hush.mp3", mimeType: "audio/mpeg", buffer: Buffer.concat(Array(20).fill(frame)) });
    await page.getByRole("button", { name: "Send file" }).click();
    const audio = page.locator(".bubble.out .media-audio audio").last();
    await expect.poll(() => audio.evaluate((e: HTMLAudioElement) => e.controls && e.readyState >= 1 && e.duration > 0)).toBe(true);

    // A document: a link with its name and size that downloads the bytes.
    const notes = `notes ${XSS}\n`;
    await page.locator("#msg-file").setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from(notes) });
    await page.getByRole("button", { name: "Send file" }).click();
    const doc = page.locator(".bubble.out .media-document button").last();
    await expect.poll(() => doc.textContent()).toBe(`📄 notes.txt (${Buffer.byteLength(notes)} B)`);
    const [download] = await Promise.all([page.waitForEvent("download"), doc.click()]);
    expect(download.suggestedFilename()).toBe("notes.txt");
    const chunks: Buffer[] = [];
    for await (const c of (await download.createReadStream())!) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe(notes);

    // Received files: a placeholder while the session fetches the file, then the picture; a failed fetch says why.
    const sessionId = new URL(page.url()).searchParams.get("session")!;
    const inbound = (url: string, caption: string) =>
      call(`/api/sessions/${sessionId}/sandbox/inbound`, { method: "POST", key, json: { from: "15550001234@c.us", type: "image", media: { url }, caption } });
    const origin = new URL(receiverUrl).origin;
    expect((await inbound(`${origin}/media/slow.png`, "slow one")).status).toBe(201);
    const slow = page.locator(".bubble.in", { hasText: "slow one" });
    await expect.poll(() => slow.locator(".media").getAttribute("data-media-state")).toBe("pending");
    expect(await slow.locator("img").count()).toBe(0);
    expect(await slow.locator(".text").textContent()).toBe("slow one");
    await shot("03-chat-receiving");
    releaseSlow();
    await expect.poll(() => slow.locator("img").evaluate((e: HTMLImageElement) => e.complete && e.naturalWidth), { timeout: 30_000 }).toBe(1);
    expect(await slow.locator("img").getAttribute("src")).toMatch(/^blob:/);

    expect((await inbound(`${origin}/media/missing.png`, "lost one")).status).toBe(201);
    const lost = page.locator(".bubble.in", { hasText: "lost one" });
    await expect.poll(() => lost.locator(".media").getAttribute("data-media-state"), { timeout: 20_000 }).toBe("failed");
    // the reason may be drawn a moment after the state (seen on a loaded machine): wait for it too
    await expect.poll(() => lost.locator(".media").textContent()).toContain("HTTP 404");
    expect(await lost.locator("img").count()).toBe(0);
    await noXss();
    await shot("03-chat");

    // Off the page, the object URLs are revoked: the picture's no longer loads.
    await go("Sessions");
    const loads = (u: string) =>
      page.evaluate((src) => new Promise<boolean>((r) => Object.assign(new Image(), { onload: () => r(true), onerror: () => r(false), src })), u);
    expect(await loads(imgSrc)).toBe(false);
  });

  it("imports 50 contacts from CSV and shows the rejected rows by line", async () => {
    await go("Contacts");
    const rows = ["phone,name,email,tags"];
    for (let i = 0; i < 50; i++) rows.push(`+1555010${String(i).padStart(4, "0")},${i === 0 ? `"Eve ${XSS.replace(/"/g, '""')}"` : `Person ${i}`},,browser;vip`);
    rows.push("not-a-phone,Broken,,browser");
    await page.getByText("Import from CSV").click();
    await page.locator("#csv-text").fill(rows.join("\n"));
    await page.getByRole("button", { name: "Import", exact: true }).click();
    const report = page.getByTestId("import-report");
    await expect.poll(() => report.textContent(), { timeout: 20_000 }).toContain("50 created");
    expect(await report.textContent()).toContain("1 rejected");
    expect(await report.textContent()).toContain("Line 52:");
    await page.locator("#ct-tag").fill("browser");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => page.locator("tr[data-contact]").count()).toBe(50);
    await expect.poll(() => page.locator(".contact-name", { hasText: "Eve" }).textContent()).toBe(`Eve ${XSS}`);
    await noXss();
    await shot("04-contacts");
  });

  it("runs a campaign to them: field errors, live preview, progress bar to 100 %", async () => {
    await go("Campaigns");
    await page.getByRole("button", { name: "New campaign" }).click();
    await page.locator("#cp-name").fill("browser campaign");
    await page.getByText("Contacts with tags").click();
    await page.locator("#cp-tags").fill("browser");
    await page.locator("#cp-text").fill("Hi {{nope}}");
    await expect.poll(() => page.locator("#cp-text-err").textContent()).toContain("Unknown template variable");
    await page.locator("#cp-text").fill("Hi {{name|there}}, welcome!");
    const preview = page.getByTestId("campaign-preview");
    await expect.poll(() => preview.textContent()).toMatch(/^Hi .+, welcome!$/);
    // The preview follows the chosen contact, rendered as text.
    const eve = await page.locator("#cp-preview-for option", { hasText: "Eve" }).getAttribute("value");
    await page.locator("#cp-preview-for").selectOption(eve!);
    await expect.poll(() => preview.textContent()).toBe(`Hi Eve ${XSS}, welcome!`);
    await noXss();
    await page.getByRole("button", { name: "Create draft" }).click();
    await page.getByRole("button", { name: "Start", exact: true }).click();
    await expect.poll(() => page.getByTestId("campaign-pct").textContent(), { timeout: 45_000 }).toBe("100 %");
    expect(await page.locator(".progress").textContent()).toContain("50 recipients");
    await expect.poll(() => page.locator("#cp-detail").textContent(), { timeout: 15_000 }).toContain("completed");
    await shot("05-campaigns");
  });

  it("creates a webhook (secret once), sends a test and sees the delivery and its attempt in the log", async () => {
    await go("Webhooks");
    await page.locator("#wh-url").fill(receiverUrl);
    await page.getByLabel("contact.created").check();
    await page.locator("#wh-rate").fill("20");
    await page.getByRole("button", { name: "Create webhook" }).click();
    expect(await page.getByTestId("secret").textContent()).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "Done" }).click();
    await expect.poll(() => page.getByRole("table", { name: "Webhooks" }).textContent()).toContain("20/s");
    await page.getByRole("button", { name: "Send test" }).click();
    await expect.poll(() => page.getByRole("status").filter({ hasText: "Test delivered" }).count()).toBe(1);
    const delivery = page.locator("[data-delivery]").first();
    await expect.poll(() => delivery.textContent(), { timeout: 15_000 }).toContain("webhook.test");
    expect(await delivery.locator(".attempts li").first().textContent()).toContain("#1: 200");
    expect(received.some((b) => b.includes("webhook.test"))).toBe(true);
    await page.getByRole("button", { name: /^Retry delivery/ }).first().click();
    await expect.poll(() => delivery.locator(".attempts li").count(), { timeout: 15_000 }).toBe(2);
    await shot("06-webhooks");
  });

  it("shows a banner when the platform disables a webhook (410), with the way back", async () => {
    await go("Webhooks");
    const goneUrl = receiverUrl.replace(/\/hook$/, "/gone");
    const res = await call("/api/webhooks", { method: "POST", key, json: { url: goneUrl, events: ["contact.created"] } });
    expect(res.status).toBe(201);
    await call("/api/contacts", { method: "POST", key, json: { phone: "+15550009876", name: "Gone receiver" } });
    const banner = page.getByTestId("webhook-disabled-banner");
    // the live stream's webhook.disabled reloads the list; a visit of the page does too
    await expect.poll(async () => {
      if ((await banner.count()) === 0) {
        await go("Contacts");
        await go("Webhooks");
      }
      return banner.count();
    }, { timeout: 20_000 }).toBe(1);
    expect(await banner.textContent()).toContain(goneUrl);
    expect(await banner.textContent()).toContain("410 Gone");
    await shot("06b-webhook-disabled");
    await banner.getByRole("button", { name: "Enable" }).click();
    await expect.poll(() => banner.count()).toBe(0);
  });

  it("compiles a document and renders its first page; a broken one shows the error at its line", async () => {
    // First page JS budget, measured before the playground's lazy chunks load.
    const firstKb = [...firstPageJs.values()].reduce((a, b) => a + b, 0) / 1024;
    expect(firstPageJs.size).toBeGreaterThan(0);
    expect(firstKb).toBeLessThan(200);

    await go("LaTeX");
    await expect.poll(() => page.locator(".cm-content").isVisible(), { timeout: 20_000 }).toBe(true);
    await page.getByRole("button", { name: "Compile", exact: true }).click();
    await expect.poll(() => page.locator('[data-testid="pdf"] canvas[data-page="1"][data-rendered="true"]').count(), { timeout: 45_000 }).toBe(1);
    // Something was drawn: the canvas is not blank.
    const inked = await page.locator('canvas[data-page="1"]').evaluate((c: HTMLCanvasElement) => {
      const d = c.getContext("2d")!.getImageData(0, 0, c.width, c.height).data;
      let dark = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i]! < 128) dark++;
      return dark;
    });
    expect(inked).toBeGreaterThan(100);
    await shot("07-latex");

    // An extra file, sent along and \input by the main one (a missing file would be a 422).
    await page.getByText(/^Extra files/).click();
    await page.getByRole("button", { name: "Add a file" }).click();
    await page.locator("#xf-path-0").fill("greeting.tex");
    await page.locator("#xf-content-0").fill("Hello from an extra file.");
    await pasteIntoEditor("\\documentclass{article}\n\\begin{document}\n\\input{greeting}\n\\end{document}\n");
    await page.getByRole("button", { name: "Compile", exact: true }).click();
    await expect.poll(() => page.getByTestId("pdf").getAttribute("data-renders"), { timeout: 45_000 }).toBe("2");
    expect(await page.getByTestId("compile-error").count()).toBe(0);
    await page.getByRole("button", { name: "Remove greeting.tex" }).click();

    await pasteIntoEditor(`\\documentclass{article}\n\\begin{document}\nfine\n\\undefinedmacro ${XSS}\n\\end{document}\n`);
    await page.getByRole("button", { name: "Compile", exact: true }).click();
    const err = page.getByTestId("compile-error");
    await expect.poll(() => err.textContent(), { timeout: 45_000 }).toContain("at line 4");
    const marked = page.locator(".cm-line.cm-error-line");
    expect(await marked.count()).toBe(1);
    expect(await marked.textContent()).toContain("\\undefinedmacro");
    await page.getByText("Log", { exact: true }).click();
    expect(await page.locator("pre.log").textContent()).toContain("Undefined control sequence");
    await noXss();
    await shot("08-latex-error");
  });

  it("queues a background compile and the jobs list follows it to succeeded without Refresh", async () => {
    await pasteIntoEditor("\\documentclass{article}\\begin{document}async\\end{document}\n");
    const [queued] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/v1/compile/async") && r.request().method() === "POST"),
      page.getByRole("button", { name: "Compile in the background" }).click(),
    ]);
    const { id } = (await queued.json()) as { id: string };
    const row = page.locator("tbody tr", { hasText: id });
    await expect.poll(() => row.textContent(), { timeout: 45_000 }).toContain("succeeded");
    expect(await row.getByRole("button", { name: "Show PDF" }).count()).toBe(1);
    // Nothing left to change: the polling stops.
    await expect.poll(() => page.getByTestId("jobs-live").getAttribute("data-polling")).toBe("false");
    // Its progress was followed to the end: the log's lines, then the final status.
    await expect.poll(() => page.getByTestId("job-progress").getAttribute("data-status")).toBe("succeeded");
    await page.getByTestId("job-progress").getByText(/^Log \(/).click();
    expect(await page.getByTestId("job-log").textContent()).toContain("pdfTeX");
  });

  it("shows a background compile's progress while it runs, and Stop cancels it at once", async () => {
    await pasteIntoEditor("\\documentclass{article}\\begin{document}\\def\\x{\\x}\\x\\end{document}\n");
    // The job loops until its time limit; the longest one allowed, so that a slow start on a busy machine
    // cannot let the limit end it before Stop does (it then ends `failed`, not `cancelled`).
    await page.route("**/v1/compile/async", (route) => route.continue({ postData: JSON.stringify({ ...route.request().postDataJSON(), timeoutMs: 60_000 }) }));
    const [queued] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/v1/compile/async") && r.request().method() === "POST"),
      page.getByRole("button", { name: "Compile in the background" }).click(),
    ]);
    await page.unroute("**/v1/compile/async");
    const { id } = (await queued.json()) as { id: string };
    const progress = page.getByTestId("job-progress");
    await expect.poll(() => progress.textContent(), { timeout: 45_000 }).toContain(id);
    await expect.poll(() => page.getByTestId("job-step").textContent(), { timeout: 45_000 }).toContain("pass 1 of pdflatex");
    expect(await progress.getAttribute("data-status")).toBe("running");
    await shot("08b-latex-progress");
    const t = Date.now();
    await progress.getByRole("button", { name: "Stop" }).click();
    await expect.poll(() => progress.getAttribute("data-status")).toBe("cancelled");
    expect(Date.now() - t).toBeLessThan(10_000);
    expect(await progress.getByRole("button", { name: "Stop" }).count()).toBe(0);
    const row = page.locator("tbody tr", { hasText: id });
    await expect.poll(() => row.textContent()).toContain("cancelled");
    expect(await row.getByRole("button", { name: "Show PDF" }).count()).toBe(0);
  });

  it("works at 375 px wide, and ran without CSP violations or page errors", async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    for (const [label, name, loaded] of [
      ["Overview", "09-mobile-overview", "tbody tr"],
      ["Contacts", "10-mobile-contacts", "tr[data-contact]"],
      ["Campaigns", "11-mobile-campaigns", "tbody tr"],
    ] as const) {
      await go(label);
      await expect.poll(() => page.locator(loaded).count()).toBeGreaterThan(0);
      const wide = await page.evaluate(() =>
        Array.from(document.querySelectorAll("body *"))
          .filter((e) => e.getBoundingClientRect().right > 376 && !e.closest(".table-wrap"))
          .map((e) => `${e.tagName}.${e.className}`)
          .slice(0, 5),
      );
      expect(wide, label).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), label).toBeLessThanOrEqual(375);
      await shot(name);
    }
    // A reload of a client-side route is the page again (the Worker's fallback), still signed in (same tab).
    await page.reload();
    await expect.poll(() => page.locator("h1").textContent()).toBe("Campaigns");
    expect(new URL(page.url()).pathname).toBe("/campaigns");
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
