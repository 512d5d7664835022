#!/usr/bin/env python3
"""The MCP Apps example host (examples/apps_host/host.py) in headless Chromium, against
a real MCP Apps server from npm (@modelcontextprotocol/server-basic-vanillajs, tool
get-time). Checked:

  - the frame got exactly mcpc's Content-Security-Policy (and the host's sandbox
    policy beside it), sits in a sandbox without allow-same-origin (an opaque
    origin), and the policy is in force there (a fetch breaks connect-src);
  - the view rendered the time of the host's tool call (tool-input and tool-result
    reached it after its ui/initialize);
  - the view's button sent tools/call get-time through mcpc's relay, the server
    answered, and the view shows the time from that answer; its log message was
    passed on to the server;
  - a method a view may not ask (tools/list) comes back refused by the relay.

A screenshot of the page is kept in build/artifacts/apps-host.png, pass or fail.
Closes with "apps-host: N passed, N failed"; exits 1 on any failure.

Environment (from peers.env of tests/peers/install.sh): MCPC_PEERS_NODE,
MCPC_PEERS_APPS_SERVER; run with MCPC_PEERS_PLAYWRIGHT_PY (Playwright's venv).
MCPC_CHROMIUM: the browser (default: chromium on PATH). PYTHON runs the host (default
python3), with the binding from bindings/python/src and MCPC_LIBRARY if set."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect, sync_playwright

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHOT = os.path.join("build", "artifacts", "apps-host.png")
WAIT = 15.0  # seconds for any one condition; each takes well under one
DEADLINE = 120.0  # seconds for the whole test, should anything hang

passed = failed = 0


def check(name, ok, detail):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
    print(f"{'PASS' if ok else 'FAIL'} {name}: {detail}", flush=True)


def need(name, hint):
    value = os.environ.get(name)
    if not value:
        sys.exit(f"test_apps_host.py: {name} is not set: {hint}")
    return value


class Host:
    """host.py as a child process; its JSON events collected as they come."""

    def __init__(self, argv, env):
        self.events = []
        self.cond = threading.Condition()
        self.proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.stderr = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                event = {"event": "text", "text": line.rstrip()}
            with self.cond:
                self.events.append(event)
                self.cond.notify_all()
        with self.cond:
            self.events.append({"event": "exit"})
            self.cond.notify_all()

    def wait(self, pred, timeout=WAIT):
        """The first event that pred accepts, or None after timeout or the host's exit."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for event in self.events:
                    if pred(event):
                        return event
                left = end - time.monotonic()
                if left <= 0 or any(e["event"] == "exit" for e in self.events):
                    return None
                self.cond.wait(left)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return None
        return self.proc.returncode


def time_of(result):
    structured = (result or {}).get("structuredContent") or {}
    return structured.get("time")


def answered(name):
    """A host event: tools/call NAME relayed, and the server's result back."""
    return lambda e: (e["event"] == "message" and e.get("method") == "tools/call" and e.get("name") == name
                      and e.get("route") == "reply" and "result" in (e.get("reply") or {}))


# In the view's frame: the directive a fetch breaks, or what happened instead.
CSP_PROBE = """(wait) => new Promise((resolve) => {
  document.addEventListener("securitypolicyviolation", (e) => resolve(e.effectiveDirective), { once: true });
  fetch("/session").then(() => resolve("fetched"), () => setTimeout(() => resolve("failed, no violation"), wait));
})"""

# In the view's frame: a request the relay must refuse, and the answer that comes back.
REFUSED_PROBE = """(wait) => new Promise((resolve) => {
  setTimeout(() => resolve({ timeout: "no answer" }), wait);
  addEventListener("message", (e) => { if (e.data && e.data.id === "probe-list") resolve(e.data); });
  parent.postMessage({ jsonrpc: "2.0", id: "probe-list", method: "tools/list" }, "*");
})"""


def run_browser(chromium, url, called, host):
    initial = time_of(called["result"])
    with sync_playwright() as p:
        # The OS sandbox of Chromium's processes cannot start as root or without user
        # namespaces; the frame's sandbox, which is under test, is Blink's and stays.
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 900, "height": 800})
        try:
            with page.expect_response(lambda r: r.url.endswith("/view"), timeout=WAIT * 1000) as view_response:
                page.goto(url)
            policies = [h["value"] for h in view_response.value.headers_array()
                        if h["name"].lower() == "content-security-policy"]
            check("csp-is-mcpcs", policies == [called["csp"], "sandbox allow-scripts"],
                  f"the frame's policies {policies}; mcpc built {called['csp']!r}")

            frame_element = page.locator("iframe")
            check("frame-sandbox", frame_element.get_attribute("sandbox") == "allow-scripts",
                  f"sandbox={frame_element.get_attribute('sandbox')!r}")
            view = page.frame_locator("iframe")
            shown = view.locator("#server-time")
            try:
                expect(shown).to_have_text(initial, timeout=WAIT * 1000)
                check("view-rendered", True, f"the view shows the tool result's time {initial}")
            except AssertionError:
                check("view-rendered", False, f"the view shows {shown.text_content()!r}, not {initial!r}")
                return

            frame = next(f for f in page.frames if f.url.endswith("/view"))
            origin = frame.evaluate("() => self.origin")
            check("frame-opaque-origin", origin == "null", f"the view's origin is {origin!r}")
            violated = frame.evaluate(CSP_PROBE, 2000)
            check("csp-in-force", violated == "connect-src", f"a fetch from the view: {violated}")

            view.locator("#get-time-btn").click()
            event = host.wait(answered("get-time"))
            fresh = time_of((event or {}).get("reply", {}).get("result"))
            check("relay-to-server", event is not None and fresh is not None,
                  f"tools/call get-time relayed, the server answered {fresh}" if event
                  else "no tools/call get-time answered through the relay")
            if fresh is not None:
                try:
                    expect(shown).to_have_text(fresh, timeout=WAIT * 1000)
                    check("view-updated", fresh != initial, f"the view shows the relayed answer {fresh}")
                except AssertionError:
                    check("view-updated", False, f"the view shows {shown.text_content()!r}, not {fresh!r}")

            view.locator("#send-log-btn").click()
            logged = host.wait(lambda e: e["event"] == "message" and e.get("method") == "notifications/message")
            check("log-passed", (logged or {}).get("route") == "passed",
                  f"the view's log message: {logged}" if logged else "no log message from the view")

            refused = frame.evaluate(REFUSED_PROBE, WAIT * 1000)
            code = (refused.get("error") or {}).get("code")
            check("relay-refuses", code == -32601, f"tools/list from the view: {refused}")
        finally:
            os.makedirs(os.path.dirname(SHOT), exist_ok=True)
            try:
                page.screenshot(path=SHOT, full_page=True)
                print(f"screenshot: {os.path.abspath(SHOT)}", flush=True)
            except PlaywrightError as e:
                print(f"no screenshot: {e}", flush=True)
            browser.close()


def main():
    t0 = time.monotonic()
    os.chdir(ROOT)
    chromium = os.environ.get("MCPC_CHROMIUM") or shutil.which("chromium")
    if not chromium or not os.access(chromium, os.X_OK):
        print("FAIL chromium: no Chromium to run the view in; install the distribution's package "
              "(Debian: apt-get install chromium) or set MCPC_CHROMIUM to its path", flush=True)
        return 1
    node = need("MCPC_PEERS_NODE", "source the peers.env of tests/peers/install.sh")
    server = need("MCPC_PEERS_APPS_SERVER", "source the peers.env of tests/peers/install.sh")

    def give_up():
        print(f"FAIL deadline: the test did not end within {DEADLINE:.0f} s", flush=True)
        host.proc.kill()
        os._exit(1)  # Playwright's driver ends the browser when this process goes

    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "bindings", "python", "src"), PYTHONDONTWRITEBYTECODE="1")
    host = Host([os.environ.get("PYTHON") or "python3", "examples/apps_host/host.py", "--", node, server, "--stdio"],
                env)
    watchdog = threading.Timer(DEADLINE, give_up)
    watchdog.daemon = True
    watchdog.start()
    try:
        called = host.wait(lambda e: e["event"] == "called", timeout=60)
        listening = host.wait(lambda e: e["event"] == "listening")
        if called is None or listening is None:
            check("host-started", False, "host.py did not call the tool and listen; stderr:\n"
                  + "".join(host.stderr)[-2000:])
        else:
            check("host-called", time_of(called["result"]) is not None,
                  f"{called['tool']} gave {called['result']}; view {called['uri']}")
            run_browser(chromium, listening["url"], called, host)
    except PlaywrightError as e:
        check("browser", False, f"{e}".strip()[:2000])
    finally:
        code = host.stop()
        check("host-stopped", code == 0, f"host.py exited {code} (SIGTERM asks it for 0)")
        watchdog.cancel()
    print(f"took {time.monotonic() - t0:.1f} s")
    print(f"apps-host: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
