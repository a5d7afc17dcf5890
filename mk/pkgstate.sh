#!/bin/sh
# Print a fingerprint of the installed state of the packages in mk/packages.txt (name, version,
# status), so that the build probes rerun when `make deps` or apt installs or upgrades one.
# Prints "none" where dpkg is absent: probes then rerun only when their inputs change.
here=$(dirname "$0")
command -v dpkg-query >/dev/null 2>&1 || { echo none; exit 0; }
# shellcheck disable=SC2046
dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\n' $(sed 's/#.*//' "$here/packages.txt") 2>/dev/null |
	cksum | cut -d' ' -f1
