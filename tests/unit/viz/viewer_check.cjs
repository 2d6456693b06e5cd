// Drives the trackdyn 3-D viewer page in headless Chromium (playwright-core, Debian's /usr/bin/chromium).
// usage: node viewer_check.cjs PAGE.html OUT_DIR TIME0 TIME1
// Loads the page, checks it is ready, takes a screenshot at TIME0, plays the replay for a moment,
// jumps to TIME1, takes a second screenshot, and prints one JSON object: console messages with
// their types, page errors, the page's status and frame numbers.
const { chromium } = require("playwright-core");
const path = require("path");

(async () => {
  const [page_file, out_dir, t0, t1] = process.argv.slice(2);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
  });
  const out = { console: [], pageErrors: [], requests: [] };
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 640 } });
    page.on("console", (m) => out.console.push({ type: m.type(), text: m.text() }));
    page.on("pageerror", (e) => out.pageErrors.push(String(e)));
    page.on("request", (r) => { if (!r.url().startsWith("file:")) out.requests.push(r.url()); });
    await page.goto("file://" + path.resolve(page_file) + "#t=" + t0);
    await page.waitForFunction(() => document.body.dataset.status !== "loading", null, { timeout: 20000 });
    out.status = await page.evaluate(() => document.body.dataset.status);
    out.frames = await page.evaluate(() => window.trackdynViewer ? window.trackdynViewer.frames : -1);
    out.frame0 = await page.evaluate(() => Number(document.body.dataset.frame));
    await page.screenshot({ path: path.join(out_dir, "view0.png") });
    // play through the UI for a moment: the frame must advance
    await page.click("#play");
    await page.waitForTimeout(400);
    out.framePlayed = await page.evaluate(() => Number(document.body.dataset.frame));
    out.playing = await page.evaluate(() => window.trackdynViewer.state.playing);
    await page.evaluate(() => window.trackdynViewer.pause());
    // scrub to TIME1 through the public hook, then screenshot
    await page.evaluate((t) => window.trackdynViewer.setTime(t), Number(t1));
    out.frame1 = await page.evaluate(() => Number(document.body.dataset.frame));
    out.time1 = await page.evaluate(() => Number(document.body.dataset.time));
    await page.screenshot({ path: path.join(out_dir, "view1.png") });
    // orbit with the mouse and toggle follow: no errors
    await page.mouse.move(450, 300); await page.mouse.down(); await page.mouse.move(520, 260); await page.mouse.up();
    await page.check("#follow");
    out.statusEnd = await page.evaluate(() => document.body.dataset.status);
  } catch (e) {
    out.driverError = String(e);
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(out) + "\n");
})();
