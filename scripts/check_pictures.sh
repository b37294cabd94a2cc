#!/usr/bin/env bash
# Looks at the pictures as a person would: makes every kind of `attn explain`
# and `attn plot` picture from tiny runs (scripts/make_pictures.sh), checks
# each SVG is well-formed XML, renders it to PNG with headless Chromium
# (Debian's `chromium` package; installed here with apt-get when missing and
# running as root) and checks the PNG is not blank: enough non-white pixels
# and more than a couple of colours. Skips, saying so, when Chromium is not
# there and cannot be installed. Not part of CI (the XML check is: CTest
# pictures.well_formed).
# Usage: scripts/check_pictures.sh [attn binary] [work folder]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
attn=${1:-$root/build/bin/attn}
work=${2:-$(mktemp -d)}

find_chromium() { command -v chromium || command -v chromium-browser || true; }
browser=$(find_chromium)
if [[ -z $browser && $(id -u) == 0 ]] && command -v apt-get > /dev/null; then
  echo "check_pictures: chromium is missing; installing Debian's chromium package" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y chromium > "$work.apt.log" 2>&1 ||
    (apt-get update > /dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium > "$work.apt.log" 2>&1) ||
    true
  browser=$(find_chromium)
fi
if [[ -z $browser ]]; then
  echo "check_pictures: SKIP: no chromium, and it could not be installed (needs root and apt-get; see $work.apt.log" \
    "if it exists); the pictures were NOT rendered" >&2
  exit 0
fi

mapfile -t pictures < <("$root/scripts/make_pictures.sh" "$attn" "$work/made")
((${#pictures[@]} > 0)) || { echo "check_pictures: FAIL: no pictures were made" >&2; exit 1; }
mkdir -p "$work/png"
failed=0
for svg in "${pictures[@]}"; do
  name=$(echo "${svg#"$work/made/"}" | tr '/' '_')
  png=$work/png/${name%.svg}.png
  # The page size is the SVG's own (width and height attributes), capped.
  read -r width height < <(python3 - "$svg" << 'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print(min(int(float(root.get("width"))) + 1, 8000), min(int(float(root.get("height"))) + 1, 16000))
PY
) || { echo "check_pictures: FAIL: $svg is not well-formed XML" >&2; failed=1; continue; }
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$width,$height" \
    --screenshot="$png" "file://$svg" > "$work/chromium.log" 2>&1 || true
  if ! verdict=$(python3 "$root/scripts/png_ink.py" "$png"); then
    echo "check_pictures: FAIL: $svg: $verdict" >&2
    failed=1
    continue
  fi
  echo "check_pictures: ok $svg -> $png ($width x $height; $verdict)"
done
exit $failed
