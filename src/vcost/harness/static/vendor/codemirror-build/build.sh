#!/usr/bin/env bash
# Rebuild ../codemirror.js (CodeMirror 6 + Python, as window.VcostEditor) from the npm registry.
# Versions are pinned in package.json / package-lock.json; the licences go to ../LICENSE-codemirror.txt.
set -euo pipefail
cd "$(dirname "$0")"
work=$(mktemp -d)
cp package.json package-lock.json entry.js "$work/"
(cd "$work" && npm ci --no-audit --no-fund --silent \
  && npx esbuild entry.js --bundle --minify --format=iife --target=es2019 --outfile=codemirror.js)
cp "$work/codemirror.js" ../codemirror.js
rm -rf "$work"
echo "wrote $(cd .. && pwd)/codemirror.js"
