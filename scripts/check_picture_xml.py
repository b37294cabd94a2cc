#!/usr/bin/env python3
"""Checks that every picture kind `attn explain` and `attn plot` make is a
well-formed SVG document (CTest pictures.well_formed; runs in CI).
Usage: check_picture_xml.py ATTN_BINARY WORK_FOLDER
Makes the pictures with scripts/make_pictures.sh, parses each with Python's
XML parser, and checks the root is <svg> and the explain pictures hold the
sentence's tokens (escaped) and a prediction, and the plots the step panels
of the run with a steps.jsonl. Exits 1 naming the first problem."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def main():
    attn, work = sys.argv[1], sys.argv[2]
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_pictures.sh")
    made = subprocess.run([script, attn, work], check=True, stdout=subprocess.PIPE, text=True)
    paths = made.stdout.split()
    if len(paths) < 12:
        sys.exit(f"check_picture_xml: FAIL: expected 12 pictures, got {len(paths)}: {paths}")
    for path in paths:
        try:
            root = ET.parse(path).getroot()
        except (ET.ParseError, OSError) as err:
            sys.exit(f"check_picture_xml: FAIL: {path} is not well-formed XML: {err}")
        if root.tag != SVG + "svg":
            sys.exit(f"check_picture_xml: FAIL: {path}: root element is {root.tag}, not svg")
        text = " ".join(t for t in root.itertext())
        if "/explain/" in path:
            wanted = ["prediction:", "with probability"]
            wanted += ["alpha", "&", "<", '"'] if path.endswith("sentence_1.svg") else ["first 60 of its 80 tokens"]
            for word in wanted:
                if word not in text:
                    sys.exit(f"check_picture_xml: FAIL: {path} does not show {word!r}")
        else:
            # Both plots hold the mtsa run, which has a step log.
            for word in ["training loss", "step", "gradient norm before clipping"]:
                if word not in text:
                    sys.exit(f"check_picture_xml: FAIL: {path} does not show {word!r}")
        print(f"check_picture_xml: ok {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
