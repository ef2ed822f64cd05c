#!/usr/bin/env bash
# Debian's own builds of rsyslog (with omelasticsearch) and syslog-ng (with http() and its SCL), for
# tests/shippers/. The two conflict as packages, so rsyslog is installed and syslog-ng is unpacked
# (apt-get download + dpkg -x) into SVC_TEST_SYSLOG_NG_DIR (default /opt/log-appliance-test/syslog-ng),
# where tests/support/shippers.ts runs it from; the shared libraries it links (libpcre3, libwrap0, …)
# are installed as packages, which conflict with nothing. Does nothing for what is already there.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
dest="${SVC_TEST_SYSLOG_NG_DIR:-/opt/log-appliance-test/syslog-ng}"
updated=0
update() { if [ "$updated" = 0 ]; then apt-get update -qq; updated=1; fi; }

if [ ! -x /usr/sbin/rsyslogd ] || ! ls /usr/lib/*/rsyslog/omelasticsearch.so >/dev/null 2>&1; then
  echo "== installing Debian's rsyslog and rsyslog-elasticsearch for the shipper tests"
  update
  apt-get install -y -qq rsyslog rsyslog-elasticsearch >/dev/null
fi
if [ ! -x /usr/sbin/syslog-ng ] && [ ! -x "$dest/usr/sbin/syslog-ng" ]; then
  echo "== unpacking Debian's syslog-ng into $dest for the shipper tests"
  update
  tmp="$(mktemp -d)"
  chmod 777 "$tmp" # apt-get download runs as _apt where it can
  (cd "$tmp" && apt-get download syslog-ng-core syslog-ng-mod-http syslog-ng-scl libivykis0 libnet1 >/dev/null 2>&1)
  mkdir -p "$dest"
  for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$dest"; done
  rm -rf "$tmp"
fi
# syslog-ng-core's and syslog-ng-mod-http's library dependencies (a fresh Debian has only some).
libs="libpcre3 libwrap0 libivykis0 libnet1 libjson-c5 libglib2.0-0 libcap2 libcurl4 libssl3"
if ! dpkg -s $libs >/dev/null 2>&1; then
  echo "== installing the libraries syslog-ng links for the shipper tests"
  update
  apt-get install -y -qq $libs >/dev/null
fi
