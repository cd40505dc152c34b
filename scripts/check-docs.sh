#!/usr/bin/env bash
# Checks README.md and docs/*.md: every relative link (pages and images, `](path)` and
# `<img src="path">`) names a file that exists, and every file in docs/images is under
# 400 KB. One line per problem; exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
import os, re, sys
problems = []
files = ['README.md'] + sorted(os.path.join('docs', f) for f in os.listdir('docs') if f.endswith('.md'))
link = re.compile(r'\]\(([^)\s]+)(?:\s+"[^"]*")?\)|<img\s[^>]*?src="([^"]+)"')
for md in files:
    text = open(md, encoding='utf-8').read()
    text = re.sub(r'```.*?```', '', text, flags=re.S)  # no links inside code blocks
    for m in link.finditer(text):
        target = m.group(1) or m.group(2)
        if re.match(r'^[a-z][a-z0-9+.-]*:', target) or target.startswith('#'):
            continue  # a URL, mailto: or an anchor on the same page
        path = target.split('#')[0]
        full = os.path.normpath(os.path.join(os.path.dirname(md), path))
        if not os.path.exists(full):
            problems.append(f'{md}: links {target}, which does not exist')
images = 'docs/images'
if os.path.isdir(images):
    for f in sorted(os.listdir(images)):
        size = os.path.getsize(os.path.join(images, f))
        if size >= 400 * 1024:
            problems.append(f'{images}/{f}: {size // 1024} KB, over 400 KB')
for p in problems:
    print(f'check-docs: {p}', file=sys.stderr)
sys.exit(1 if problems else 0)
PY
