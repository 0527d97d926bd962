#!/bin/sh
# Installs the Debian packages named as arguments that are missing:
# with apt-get when root, otherwise prints the command to run.
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "every package pmcsh needs is installed ($#: $*)"
	exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing
else
	echo "missing packages:$missing" >&2
	echo "run: sudo apt-get install$missing" >&2
	exit 1
fi
