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
  800 on the landing page, 1,500 on every other page;
- at 390 px, every chart's text is drawn at 11 px or more as displayed (the SVG's font sizes
  times the image's displayed width over the SVG's own), and every decisive cell of a table
  (class `decisive`) that is shown lies within the viewport and within any box that scrolls
  it, so that no decisive column hides behind horizontal scrolling.

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
# The smallest chart text a phone shows, in CSS pixels.
MIN_CHART_TEXT = 11.0

# Each chart's file as shown (the <picture>'s choice at this width) and its displayed width.
SHOWN_CHARTS = """
return Array.from(document.querySelectorAll('main img')).map(i => [
  i.currentSrc || i.src, i.getBoundingClientRect().width]);
"""

# Decisive cells that are shown but lie outside the viewport, or outside a box that scrolls
# them sideways: [their text, left, right, the bound they cross].
HIDDEN_DECISIVE = """
const out = [];
for (const el of document.querySelectorAll('main .decisive')) {
  if (el.offsetParent === null) continue;
  const r = el.getBoundingClientRect();
  if (r.width === 0) continue;
  let lo = 0, hi = window.innerWidth;
  for (let a = el.parentElement; a; a = a.parentElement) {
    const o = getComputedStyle(a).overflowX;
    if (o === 'auto' || o === 'scroll' || o === 'hidden') {
      const b = a.getBoundingClientRect();
      lo = Math.max(lo, b.left); hi = Math.min(hi, b.right);
    }
  }
  if (r.left < lo - 1 || r.right > hi + 1) {
    out.push([el.textContent.trim().slice(0, 40), r.left, r.right, lo, hi]);
  }
}
return out;
"""
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

    if width < 500:
        problems += chart_text(d, site, name)
        for text, left, right, lo, hi in d.execute_script(HIDDEN_DECISIVE):
            problems.append(
                f"{name}: a decisive cell out of view ('{text}' at {left:.0f} to {right:.0f} "
                f"px, shown within {lo:.0f} to {hi:.0f} px)")

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


def svg_fonts(path: Path) -> tuple:
    """An SVG's own width and the font sizes of its text (plotters writes font-size attributes)."""
    import re
    text = path.read_text(encoding="utf-8")
    head = re.search(r'<svg[^>]*\bwidth="([0-9.]+)', text)
    sizes = [float(x) for x in re.findall(r'font-size="([0-9.]+)', text)]
    return (float(head.group(1)) if head else 0.0), sizes


def chart_text(d, site: Path, name: str) -> list:
    problems = []
    for src, shown in d.execute_script(SHOWN_CHARTS):
        path = Path(urllib.parse.unquote(urllib.parse.urlparse(src).path))
        if path.suffix != ".svg" or not path.exists() or shown <= 0:
            continue
        own, sizes = svg_fonts(path)
        if own <= 0 or not sizes:
            continue
        smallest = min(sizes) * shown / own
        if smallest < MIN_CHART_TEXT:
            problems.append(
                f"{name}: chart text at {smallest:.1f} px ({path.name}: {min(sizes):.0f} px "
                f"drawn {own:.0f} wide, shown {shown:.0f} wide)")
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
