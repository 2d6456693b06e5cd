"""Drives the 3-D viewer page in headless Chromium through Playwright's Python API (browser: Debian's chromium).

Playwright here is only the driver (the ``playwright`` wheel of the ``test``
extra); it is pointed at the system's ``chromium`` and never downloads a
browser of its own.
"""

from __future__ import annotations

from pathlib import Path

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]


def drive_viewer(page_file, out_dir, t0: float, t1: float, chromium: str, layers: bool = False) -> dict:
    """Load the page, check it is ready, screenshot at ``t0``, play a moment, scrub to ``t1``, screenshot.

    Returns console messages with their types, page errors, requests made, the
    page's status and frame numbers. With ``layers``, also screenshots at ``t1``
    without the bodies and forces (``view1_bare.png``) and without the forces
    (``view1_noforces.png``).
    """
    from playwright.sync_api import sync_playwright

    out = {"console": [], "pageErrors": [], "requests": []}
    out_dir = Path(out_dir)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 900, "height": 640})
            page.on("console", lambda m: out["console"].append({"type": m.type, "text": m.text}))
            page.on("pageerror", lambda e: out["pageErrors"].append(str(e)))
            page.on("request", lambda r: None if r.url.startswith("file:") else out["requests"].append(r.url))
            page.goto(Path(page_file).resolve().as_uri() + f"#t={t0}")
            page.wait_for_function("document.body.dataset.status !== 'loading'", timeout=20000)
            out["status"] = page.evaluate("document.body.dataset.status")
            out["frames"] = page.evaluate("window.trackdynViewer ? window.trackdynViewer.frames : -1")
            out["frame0"] = page.evaluate("Number(document.body.dataset.frame)")
            out["follow"] = page.evaluate("window.trackdynViewer.state.follow")
            out["hasForces"] = page.evaluate("window.trackdynViewer.hasForces")
            page.screenshot(path=str(out_dir / "view0.png"))
            # play through the UI for a moment: the frame must advance
            page.click("#play")
            page.wait_for_timeout(400)
            out["framePlayed"] = page.evaluate("Number(document.body.dataset.frame)")
            page.evaluate("window.trackdynViewer.pause()")
            # scrub to t1 through the public hook, then screenshot
            page.evaluate("t => window.trackdynViewer.setTime(t)", float(t1))
            out["frame1"] = page.evaluate("Number(document.body.dataset.frame)")
            out["time1"] = page.evaluate("Number(document.body.dataset.time)")
            page.screenshot(path=str(out_dir / "view1.png"))
            if layers:
                page.evaluate("window.trackdynViewer.show({forces: false})")
                page.screenshot(path=str(out_dir / "view1_noforces.png"))
                page.evaluate("window.trackdynViewer.show({bodies: false})")
                page.screenshot(path=str(out_dir / "view1_bare.png"))
                page.evaluate("window.trackdynViewer.show({bodies: true, forces: true})")
                page.keyboard.press("f")  # the key toggles the forces off again
                out["forcesAfterKey"] = page.evaluate("window.trackdynViewer.state.forces")
            # orbit with the mouse and toggle follow: no errors
            page.mouse.move(450, 300)
            page.mouse.down()
            page.mouse.move(520, 260)
            page.mouse.up()
            page.click("#follow")
            out["statusEnd"] = page.evaluate("document.body.dataset.status")
        except Exception as err:  # reported to the test, which shows it
            out["driverError"] = repr(err)
        finally:
            browser.close()
    return out
