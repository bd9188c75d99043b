#!/usr/bin/env bash
# Checks reel as someone outside the clone gets it: packs it (npm pack, which builds dist/ through
# `prepare`), checks the tarball holds what the command needs and none of the development files,
# installs the tarball globally into a temporary prefix, and runs `reel --version`, the demo and
# `reel init` in empty folders with that prefix on the PATH. The install builds the native
# modules from source (no prebuilt binary is downloaded), so this takes minutes: .ci/run calls it,
# `npm test` does not. Prints one line when all is well; the install's log when it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "check-package: $*" >&2
  exit 1
}
started=$SECONDS

npm pack --silent --pack-destination "$tmp" >"$tmp/pack.log" 2>&1 || { cat "$tmp/pack.log" >&2; fail "npm pack failed"; }
tarball=$(echo "$tmp"/*.tgz)
[ -f "$tarball" ] || fail "npm pack wrote no tarball"

files=$(tar -tzf "$tarball" | sed 's#^package/##')
# What `reel` reads at run time: its entry, the build and its bundle, the schemas `reel init` points
# to, the sandbox's clips, and the example manifests (the demo's, and init's example image).
for needed in bin/reel.js dist/cli/main.js dist/bundle/main.js schemas/manifest.schema.json schemas/project.schema.json \
  assets/sandbox/result.mp4 manifests/mixed.yaml manifests/media/host.jpg; do
  grep -qxF "$needed" <<<"$files" || fail "the package lacks $needed (package.json's \"files\")"
done
extra=$(grep -E '^(src|test|bench|scripts|docs|\.ci|node_modules|out|\.reel)/|\.map$|^tsconfig|^vitest|^eslint' <<<"$files" || true)
[ -z "$extra" ] || fail "the package holds development files: $(head -3 <<<"$extra" | tr '\n' ' ')"

# better-sqlite3 would first try to download a prebuilt binary; build it from source instead, as the
# clone's own install does where no download can be had.
export npm_config_build_from_source=true
export JOBS=max # node-gyp compiles sqlite and the binding side by side
prefix="$tmp/prefix"
npm install --global --prefix "$prefix" --no-audit --no-fund "$tarball" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "npm install -g of the tarball failed"; }
export PATH="$prefix/bin:$PATH"
[ "$(command -v reel)" = "$prefix/bin/reel" ] || fail "the install put no reel command in $prefix/bin"

mkdir "$tmp/work"
cd "$tmp/work"
version=$(reel --version) || fail "reel --version failed"
[ "$version" = "reel $(node -p 'require(process.argv[1]).version' "$root/package.json")" ] ||
  fail "reel --version printed '$version'"

# The demo, as `npm run demo` in a clone: the package's example manifests copied to this folder.
cp -r "$prefix/lib/node_modules/reel/manifests" .
reel run --sandbox manifests/mixed.yaml >"$tmp/demo.log" 2>&1 || { cat "$tmp/demo.log" >&2; fail "the demo failed"; }
videos=$(find out -name '*.mp4' | wc -l)
[ "$videos" -eq 5 ] || { cat "$tmp/demo.log" >&2; fail "the demo made $videos videos, not 5"; }

# `reel init` copies the example's image and points at the schemas from the installed package.
cd "$tmp"
{ reel init project && cd project && reel run --sandbox manifests/; } >"$tmp/init.log" 2>&1 ||
  { cat "$tmp/init.log" >&2; fail "reel init, or the sandbox run of its project, failed"; }
videos=$(find out -name '*.mp4' | wc -l)
[ "$videos" -eq 2 ] || { cat "$tmp/init.log" >&2; fail "reel init's project made $videos videos, not 2"; }

echo "check-package: $(basename "$tarball") ($(wc -l <<<"$files") files) installed with npm install -g in $((SECONDS - started)) s; reel --version, the demo (5 videos) and reel init's project (2 videos) work outside the clone"
