#!/usr/bin/env bash
# Install the Debian packages vcost's sandbox needs: bubblewrap (isolation) and Debian's
# python3 with pandas (what runs inside the sandbox); and chromium, the headless browser the
# harness's end-to-end tests drive through Playwright. Idempotent; needs root for apt.
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
/usr/bin/python3 -c 'import pandas' >/dev/null 2>&1 || need+=(python3-pandas)
command -v setpriv >/dev/null 2>&1 || need+=(util-linux)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "vcost: missing system packages: ${need[*]} (run: sudo apt-get install -y ${need[*]})." >&2
    echo "vcost: without them the sandbox falls back to weak isolation, with a warning." >&2
    exit 0
fi
echo "vcost: installing ${need[*]} with apt-get" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
