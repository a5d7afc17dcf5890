#!/bin/sh
# Install the Debian packages in mk/packages.txt that are missing. Quiet when all are present;
# as root it runs apt-get, otherwise it prints the exact command to run.
set -eu
here=$(dirname "$0")
missing=
for p in $(sed 's/#.*//' "$here/packages.txt"); do
	s=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case $s in ii*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: missing packages:$missing (no apt-get here; install them with your package manager)" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run: sudo apt-get update && sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends$missing >&2
