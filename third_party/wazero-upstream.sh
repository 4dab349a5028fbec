#!/usr/bin/env bash
# make wazero-upstream: wazero's whole test suite (spec tests included) on
# the release cmdhost's copy is made from, with third_party/wazero.patch
# applied, after checking that every file of the copy is that tree's
# (third_party/wazero/CMDHOST.md). A few minutes; not part of make test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
go=${GO:-go}
version=$(cd "$root" && "$go" list -m -f '{{.Version}}' github.com/tetratelabs/wazero)
src=$(cd "$root" && "$go" mod download -json "github.com/tetratelabs/wazero@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "wazero $version: not in the module cache" >&2; exit 1; }
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
