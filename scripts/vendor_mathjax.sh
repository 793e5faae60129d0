#!/usr/bin/env bash
# Vendor MathJax 3 next to the executed book so the HTML renders its mathematics offline.
# Fetches the npm tarball (checksum-verified) and keeps only the combined TeX+MathML component, its fonts and its
# licence (Apache-2.0).
# Without npm (or on a checksum mismatch) it writes a small loader that takes MathJax from the CDN instead.
set -euo pipefail
dest=${1:?usage: vendor_mathjax.sh DEST_DIR}
version=3.2.2
sha256=1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09
[ -f "$dest/tex-mml-chtml.js" ] && [ -f "$dest/LICENSE" ] && [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$version" ] && exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$dest"
if command -v npm > /dev/null && (cd "$tmp" && npm pack --silent "mathjax@$version" > /dev/null 2>&1) \
   && echo "$sha256  $tmp/mathjax-$version.tgz" | sha256sum --check --status; then
  tar -xzf "$tmp/mathjax-$version.tgz" -C "$tmp" package/LICENSE package/es5/tex-mml-chtml.js package/es5/output/chtml/fonts
  rm -rf "$dest/output"
  mkdir -p "$dest/output/chtml"
  cp "$tmp/package/es5/tex-mml-chtml.js" "$tmp/package/LICENSE" "$dest/"  # MathJax is Apache-2.0: its licence travels with it
  cp -r "$tmp/package/es5/output/chtml/fonts" "$dest/output/chtml/"
  echo "$version" > "$dest/VERSION"
  echo "vendored MathJax $version into $dest"
else
  echo "warning: could not vendor MathJax $version (npm missing or checksum mismatch); the book loads it from the CDN" >&2
  cat > "$dest/tex-mml-chtml.js" <<JS
(function () { var s = document.createElement("script");
  s.src = "https://cdn.jsdelivr.net/npm/mathjax@$version/es5/tex-mml-chtml.js"; s.async = true;
  document.head.appendChild(s); })();
JS
fi
