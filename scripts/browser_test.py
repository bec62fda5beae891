#!/usr/bin/python3
"""The guide as a reader's browser sees it: headless Chromium, driven through the DevTools
protocol (chromedriver and Selenium, Debian's chromium-driver and python3-selenium).

For every page of a rendered site, at 1280 and 390 CSS pixels wide:
- the page loads with no console error;
- it requests nothing outside the site folder (every request the browser makes is logged);
- every internal link resolves (the file exists, and a #fragment names an id on that page);
- every image loads and has a non-zero size;
- the page does not scroll horizontally (document.scrollingElement.scrollWidth <= innerWidth).

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
