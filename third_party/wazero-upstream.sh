#!/usr/bin/env bash
# make wazero-upstream: wazero's whole test suite (spec tests included) on
# the release cmdhost's copy is made from, with third_party/wazero.patch
# applied, after checking that every file of the copy is that tree's
# (third_party/wazero/CMDHOST.md). A few minutes; not part of make test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
version=$(cd "$root" && "$go" list -m -f '{{.Version}}' github.com/tetratelabs/wazero)
# The release's hash, as go.sum files record it (h1: the SHA-256 of its
# files' SHA-256 sums, golang.org/x/mod/sumdb/dirhash.Hash1). The module
# cache is trusted by go mod download once a module is in it; the tree is
# hashed here again before it is used, so that a cache that was changed
# since cannot pass for the release. Raise it with the version (CMDHOST.md,
# Updating).
want=h1:DuWcpNu/FzgEXgGBDp8J1Spc+CWOvvtvVyjKlaZopYU=
pinned=v1.12.0
[ "$version" = "$pinned" ] || { echo "go.mod asks for wazero $version; this script pins the hash of $pinned: update want and pinned" >&2; exit 1; }
src=$(cd "$root" && "$go" mod download -json "github.com/tetratelabs/wazero@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "wazero $version: not in the module cache" >&2; exit 1; }
got=h1:$(cd "$src" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | tr '\n' '\0' | xargs -0 sha256sum |
	sed "s|  |  github.com/tetratelabs/wazero@$version/|" | sha256sum | cut -d' ' -f1 | tr -d '\n' | sed 's/../\\x&/g' |
	xargs -0 printf '%b' | base64)
[ "$got" = "$want" ] || { echo "wazero $version in the module cache ($src) hashes to $got, not the release's $want: remove it (go clean -modcache) and run again" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -R "$src"/. "$work"
chmod -R u+w "$work"
(cd "$work" && patch -p1 --quiet --no-backup-if-mismatch <"$root/third_party/wazero.patch")
cd "$root/third_party/wazero"
bad=0
while IFS= read -r f; do
	if ! cmp -s "$f" "$work/$f"; then
		echo "third_party/wazero/${f#./} is not wazero $version's with the patch" >&2
		bad=1
	fi
done < <(find . -type f ! -name CMDHOST.md)
[ "$bad" = 0 ] || exit 1
echo "third_party/wazero is wazero $version with third_party/wazero.patch; running its tests"
cd "$work" && "$go" test ./...
