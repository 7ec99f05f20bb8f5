"""The admin console (GET /) in a real browser: Debian's chromium, headless,
driven by chromedriver through selenium. The page loads with no console
error, its charts move while a load runs, an upstream drain clicked on the
page shows in the API, a drain click turns /ready false; a screenshot of
the console is taken (docs/admin-console.png is one)."""
import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

import swsharness as h

webdriver = pytest.importorskip("selenium.webdriver")
if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
    pytest.skip("no chromium and chromedriver", allow_module_level=True)

from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

# SCALWS_SCREENSHOT_DIR=docs: the screenshot goes there (docs/admin-console.png
# was made so); else beside the test's server, leaving the tree as it is.
SCREENSHOT_DIR = os.environ.get("SCALWS_SCREENSHOT_DIR")


@pytest.fixture
def browser():
    profile = tempfile.mkdtemp(prefix="sws-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
              "--no-first-run", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
              "--window-size=1200,1400", "--user-data-dir=" + profile):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver"))
    drv = webdriver.Chrome(options=opts, service=service)
    drv.set_page_load_timeout(30)
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def api(port, path="/api/"):
    r = h.curl("http://127.0.0.1:%d%s" % (port, path))
    assert r.status == 200, r
    return json.loads(r.body)


def test_console(sws, browser):
    srv = sws(ports=3, http="""
        upstream back { server 127.0.0.1:@PORT@; server 127.0.0.1:@PORT2@; }
        proxy_cache_path @TMP@/cache keys_zone=one:1m;
        admin { listen 127.0.0.1:@PORT3@; drain_time 60s; }""",
              server="status_zone site;"
                     "location /up/ { status_zone up; proxy_pass http://back/; }"
                     "location /c/ { proxy_pass http://back/; proxy_cache one;"
                     " proxy_cache_valid 200 1h; }",
              servers="server { listen 127.0.0.1:@PORT2@; return 200 two; }")
    admin = srv.ports[2]
    r = h.curl("http://127.0.0.1:%d/" % admin)
    assert r.status == 200 and r.header("Content-Type") == "text/html; charset=utf-8"
    assert r.header("Content-Security-Policy").startswith("default-src 'self'")
    assert b"<script src=\"/console.js\">" in r.body
    assert h.curl("http://127.0.0.1:%d/console.js" % admin).status == 200

    browser.get("http://127.0.0.1:%d/" % admin)
    wait = WebDriverWait(browser, 30)
    wait.until(lambda d: d.find_element(By.ID, "ready").text == "ready")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#upstreams tbody tr")) == 2)

    # a load: the requests/s chart's last point goes above 0
    stop = threading.Event()

    def load():
        while not stop.is_set():
            h.curl("http://127.0.0.1:%d/up/respond" % srv.port)
            h.curl("http://127.0.0.1:%d/c/respond" % srv.port)   # hits after the first
            time.sleep(0.01)
    t = threading.Thread(target=load)
    t.start()
    try:
        def moving(d):
            last = d.find_element(By.ID, "rps").get_attribute("data-last")
            return last and float(last) > 0
        wait.until(moving)
        codes = browser.find_element(By.ID, "codes").get_attribute("data-last").split(",")
        assert float(codes[1]) > 0, codes                   # 2xx
        # the cache hit ratio chart: nearly every /c/ request is a hit
        wait.until(lambda d: float(d.find_element(By.ID, "hits").get_attribute("data-last"))
                   > 40)
        # a few points for the picture
        wait.until(lambda d: d.execute_script("return series.rps[0].length") >= 4)
        # the status zones' table: the server's and the location's
        def zone_rows(d):
            # read at once in the page: the table is redrawn every second
            return d.execute_script(
                "return [...document.querySelectorAll('#status-zones tbody tr')]"
                ".map(tr => [...tr.cells].map(td => td.textContent))")
        wait.until(lambda d: [r[:2] for r in zone_rows(d)] == [["site", "server"],
                                                               ["up", "location"]])
        assert int(zone_rows(browser)[1][2]) > 0
        shot = Path(SCREENSHOT_DIR or srv.tmp) / "admin-console.png"
        browser.save_screenshot(str(shot))
    finally:
        stop.set()
        t.join(10)
    assert shot.stat().st_size > 10000

    # an upstream server drained from the page
    second = "127.0.0.1:%d" % srv.ports[1]
    browser.find_element(
        By.CSS_SELECTOR, "button[data-server='%s'][data-state='draining']" % second).click()
    wait.until(lambda d: "200" in d.find_element(By.ID, "message").text)
    states = {s["server"]: s["state"] for s in api(admin, "/api/upstreams")["back"]["servers"]}
    assert states[second] == "draining", states

    # no errors in the page's console so far
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == [], errors

    # drain: /ready false at once, the page says so, the server still serves
    browser.find_element(By.ID, "drain").click()
    wait.until(lambda d: d.find_element(By.ID, "ready").text == "draining")
    assert h.curl("http://127.0.0.1:%d/ready" % admin).status == 503
    assert h.curl("http://127.0.0.1:%d/respond" % srv.port).status == 200


def test_console_on_a_phone(sws, browser):
    srv = sws(ports=2, http="admin { listen 127.0.0.1:@PORT2@; }")
    browser.set_window_size(390, 844)
    browser.get("http://127.0.0.1:%d/" % srv.ports[1])
    WebDriverWait(browser, 30).until(
        lambda d: d.find_element(By.ID, "ready").text == "ready")
    # nothing wider than the screen but the tables' own scrolling cards
    width = browser.execute_script("return document.documentElement.scrollWidth")
    inner = browser.execute_script("return window.innerWidth")
    assert width <= inner, (width, inner)
