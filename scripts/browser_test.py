#!/usr/bin/python3
"""The guide as a reader's browser sees it: headless Chromium, driven through the DevTools
protocol (chromedriver and Selenium, Debian's chromium-driver and python3-selenium).

For every page of a rendered site, at 1280 and 390 CSS pixels wide:
- the page loads with no console error;
- it requests nothing outside the site folder (every request the browser makes is logged);
- every internal link resolves (the file exists, and a #fragment names an id on that page);
- every image loads and has a non-zero size;
- the page does not scroll horizontally (document.scrollingElement.scrollWidth <= innerWidth);
- no chart (an image in the page's main column) reaches past the column's edges;
- the words a reader sees before opening any fold (<details>) stay within the page's budget:
  800 on the landing page, 1,500 on every other page.

Usage: browser_test.py SITE_DIR [--screenshots DIR]
Prints one line per problem and exits 1 if there is any, 0 otherwise (2 on bad usage).
"""

import json
import sys
import urllib.parse
from html.parser import HTMLParser
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

WIDTHS = (1280, 390)
# Words outside folds: the landing page answers in one screen or two, a technique page opens
# with its answer, its chart and its Burn call.
LANDING_WORDS = 800
PAGE_WORDS = 1500

# The words of the page's main column as a reader sees it unopened: innerText leaves out what
# is not rendered (the body of a closed <details>, an element hidden at this width); then the
# runs of non-space holding a letter or a digit.
VISIBLE_WORDS = """
return document.querySelector('main').innerText
  .split(/\\s+/).filter(w => /[A-Za-z0-9]/.test(w)).length;
"""


class Ids(HTMLParser):
    """The ids of an HTML page."""

    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)


def page_ids(path: Path, cache: dict) -> set:
    if path not in cache:
        parser = Ids()
        parser.feed(path.read_text(encoding="utf-8"))
        cache[path] = parser.ids
    return cache[path]


def driver() -> webdriver.Chrome:
    options = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--allow-file-access-from-files"):
        options.add_argument(arg)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def check_page(d, site: Path, page: Path, width: int, ids_cache: dict) -> list:
    problems = []
    name = f"{page.relative_to(site)} at {width} px"
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    d.get_log("browser")
    d.get_log("performance")
    d.get(page.resolve().as_uri())
    d.execute_script("return document.readyState")

    for entry in d.get_log("browser"):
        if entry.get("level") == "SEVERE":
            problems.append(f"{name}: console error: {entry.get('message')}")

    site_prefix = site.resolve().as_uri() + "/"
    for entry in d.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") != "Network.requestWillBeSent":
            continue
        url = message["params"]["request"]["url"]
        if url.startswith("data:"):
            continue
        if not url.startswith(site_prefix):
            problems.append(f"{name}: a request outside the site folder: {url}")

    hrefs = d.execute_script(
        "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
    for href in hrefs:
        parsed = urllib.parse.urlparse(href)
        if parsed.scheme in ("http", "https", "mailto"):
            continue
        if parsed.scheme != "file":
            problems.append(f"{name}: a link of scheme {parsed.scheme}: {href}")
            continue
        target = Path(urllib.parse.unquote(parsed.path))
        if not target.exists():
            problems.append(f"{name}: a broken link: {href}")
        elif parsed.fragment and target.suffix == ".html":
            if parsed.fragment not in page_ids(target, ids_cache):
                problems.append(f"{name}: a link to a missing anchor: {href}")

    images = d.execute_script(
        "return Array.from(document.images).map(i => {"
        "const r = i.getBoundingClientRect();"
        "return [i.getAttribute('src'), i.complete && i.naturalWidth > 0, r.width, r.height];})")
    for src, loaded, w, h in images:
        if not loaded:
            problems.append(f"{name}: an image that does not load: {src}")
        elif w <= 0 or h <= 0:
            problems.append(f"{name}: an image of zero size: {src}")

    charts = d.execute_script(
        "const m = document.querySelector('main').getBoundingClientRect();"
        "return Array.from(document.querySelectorAll('main img')).map(i => {"
        "const r = i.getBoundingClientRect();"
        "return [i.getAttribute('src'), r.left, r.right, r.width, m.left, m.right];})")
    for src, left, right, w, m_left, m_right in charts:
        if w > 0 and (left < m_left - 1 or right > m_right + 1):
            problems.append(
                f"{name}: a chart clipped by the column ({src}: {left:.0f} to {right:.0f} px "
                f"in {m_left:.0f} to {m_right:.0f} px)")

    if width == WIDTHS[0]:
        words = d.execute_script(VISIBLE_WORDS)
        budget = LANDING_WORDS if page.name == "index.html" else PAGE_WORDS
        if words > budget:
            problems.append(
                f"{page.relative_to(site)}: {words} words outside folds (budget {budget})")

    scroll_width, inner_width = d.execute_script(
        "return [document.scrollingElement.scrollWidth, window.innerWidth]")
    if scroll_width > inner_width:
        problems.append(
            f"{name}: the page scrolls horizontally ({scroll_width} px of content in "
            f"{inner_width} px)")
    return problems


def main(argv: list) -> int:
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--screenshots"):
        print("usage: browser_test.py SITE_DIR [--screenshots DIR]", file=sys.stderr)
        return 2
    site = Path(argv[1])
    pages = sorted(site.glob("*.html"))
    if not (site / "index.html").is_file():
        print(f"error: {site} holds no index.html", file=sys.stderr)
        return 2
    shots = Path(argv[3]) if len(argv) == 4 else None
    problems = []
    ids_cache = {}
    d = driver()
    try:
        for width in WIDTHS:
            for page in pages:
                problems += check_page(d, site, page, width, ids_cache)
            if shots:
                shots.mkdir(parents=True, exist_ok=True)
                d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                  {"width": width, "height": 1400, "deviceScaleFactor": 1,
                                   "mobile": False})
                d.get((site / "index.html").resolve().as_uri())
                d.save_screenshot(str(shots / f"index-{width}.png"))
    finally:
        d.quit()
    for p in problems:
        print(p)
    checked = len(pages) * len(WIDTHS)
    print(f"browser: {checked} page loads checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
