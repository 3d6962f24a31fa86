"""A PNG of an induce HTML page (or one sentence of it) from a headless Chromium, for the
pictures in docs/img/.  Needs `pip install 'induce[browser]'` and a Chromium binary.

    python scripts/screenshot.py page.html out.png [--sentence N] [--width PX]
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page")
    parser.add_argument("png")
    parser.add_argument("--sentence", type=int, help="only this sentence's section")
    parser.add_argument("--width", type=int, default=900)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": args.width, "height": 600})
        page.goto(Path(args.page).resolve().as_uri())
        if args.sentence:
            page.locator(f"#s{args.sentence}").screenshot(path=args.png)
        else:
            page.screenshot(path=args.png, full_page=True)
        browser.close()


if __name__ == "__main__":
    main()
