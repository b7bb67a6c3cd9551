#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make deb: a Debian binary package of what make install installs, built
# with dpkg-deb alone (no debhelper, no source package).
#
#   packaging/deb.sh BINARY VERSION ARCH OUTPUT TOOL...
#
# The files are staged by packaging/install.sh under build/deb/debian/sonde,
# the layout dpkg-shlibdeps expects, with PREFIX=/usr; then the binary is
# stripped, the man pages compressed, the copyright and a changelog put in
# /usr/share/doc/sonde, and DEBIAN/control filled in from
# packaging/debian/control.in: Depends from the libraries the binary links
# (dpkg-shlibdeps reads its DT_NEEDED entries and the shlibs of the
# packages that ship them) plus libssl3, which serve opens at run time,
# Built-Using for the static libiberty.
#
# The tool links go to /usr/lib/sonde/bin rather than /usr/bin: Debian's
# libbpf-tools ships most of the same names in /usr/sbin, and two packages
# must not put different programs under one command name (policy 10.1).
# For the same reason there are no completion files named after the tools.
#
# The version is the one `sonde --version` prints (SONDE_VERSION in
# src/main.c); the package is native (no Debian revision), so its changelog
# is changelog.gz and is written here, dated by the last commit
# (SOURCE_DATE_EPOCH), which also dates every file in the archive.
set -eu

binary=$1
version=$2
arch=$3
output=$4
shift 4

work=build/deb
pkg=$work/debian/sonde

reported=$("$binary" --version)
if [ "$reported" != "sonde $version" ]; then
	echo "deb.sh: $binary says '$reported', the Makefile read $version from src/main.c" >&2
	exit 1
fi
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH

umask 022
rm -rf "$work"
mkdir -p "$pkg/DEBIAN"
BINARY=$binary DESTDIR=$pkg PREFIX=/usr BINDIR=/usr/bin TOOLDIR=/usr/lib/sonde/bin MANDIR=/usr/share/man \
	BASHCOMPDIR=/usr/share/bash-completion/completions TOOL_LINKS=yes TOOL_COMPLETIONS=no \
	sh packaging/install.sh install "$@" > /dev/null

strip --strip-unneeded --remove-section=.comment --remove-section=.note "$pkg/usr/bin/sonde"
gzip -9n "$pkg"/usr/share/man/man8/*.8

doc=$pkg/usr/share/doc/sonde
mkdir -p "$doc"
install -m 644 packaging/debian/copyright "$doc/copyright"
maintainer=$(sed -n 's/^Maintainer: //p' packaging/debian/control.in)
{
	echo "sonde ($version) unstable; urgency=medium"
	echo
	echo "  * Built from the sonde source tree by make deb; see the git history"
	echo "    for the changes."
	echo
	echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} | gzip -9n > "$doc/changelog.gz"

# dpkg-shlibdeps wants a debian/control naming the package
printf 'Source: sonde\n\nPackage: sonde\nArchitecture: any\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O -edebian/sonde/usr/bin/sonde | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# serve opens libssl.so.3 itself when TLS or basic auth is configured
# (src/serve/openssl.h), so no DT_NEEDED entry names it
depends="$depends, libssl3"
built_using=$(dpkg-query -W -f='${source:Package} (= ${source:Version})' libiberty-dev)
installed_size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" \
	-e "s/@BUILT_USING@/$built_using/" -e "s/@INSTALLED_SIZE@/$installed_size/" \
	packaging/debian/control.in > "$pkg/DEBIAN/control"
(cd "$pkg" && find usr -type f | LC_ALL=C sort | xargs md5sum) > "$pkg/DEBIAN/md5sums"
chmod 644 "$pkg/DEBIAN/control" "$pkg/DEBIAN/md5sums"

dpkg-deb --root-owner-group -Zxz --build "$pkg" "$output" > /dev/null
echo "built $output (Depends: $depends)"
