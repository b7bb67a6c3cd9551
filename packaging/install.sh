#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make install / make uninstall (and the staging tree of make deb).
#
#   packaging/install.sh install|uninstall TOOL...
#
# with the directories in the environment (the Makefile passes them):
# DESTDIR, BINDIR, TOOLDIR (where the tool links go), MANDIR, BASHCOMPDIR,
# TOOL_LINKS / TOOL_COMPLETIONS (yes or no), and BINARY, the sonde to
# install (default build/sonde). With LIBDIR, INCLUDEDIR and PYTHONDIR set,
# libsonde-usdt (lib/usdt/) is installed too: its libraries, its header and
# its Python module (make install sets them; the .deb is sonde alone).
#
# One list, entries() below, says what goes where; install copies or links
# each entry and uninstall removes each one, so uninstall takes away exactly
# what install put there. Uninstall removes a link only if it still points
# at sonde (a file of that name from elsewhere is left alone) and whatever
# the TOOL_* settings, so links from an earlier install do not stay behind.
# Afterwards it removes the directories of the list that are left empty,
# up to PREFIX (never PREFIX itself, nor anything above it): all of them
# under a DESTDIR (a staging tree), only sonde's own (.../sonde/...) on the
# live system, where an empty share/man/man8 is not ours to take away.
set -eu

action=$1
shift

# kind mode destination source: one line per installed file
entries() {
	echo "file 755 $BINDIR/sonde ${BINARY:-build/sonde}"
	echo "file 644 $MANDIR/man8/sonde.8 build/man/sonde.8"
	for tool; do
		echo "file 644 $MANDIR/man8/sonde-$tool.8 build/man/sonde-$tool.8"
	done
	echo "file 644 $BASHCOMPDIR/sonde completion/sonde.bash"
	if [ -n "${LIBDIR:-}" ]; then
		echo "file 644 $LIBDIR/libsonde-usdt.so build/lib/libsonde-usdt.so"
		echo "file 644 $LIBDIR/libsonde-usdt.a build/lib/libsonde-usdt.a"
		echo "file 644 $INCLUDEDIR/sonde/usdt.h lib/usdt/include/sonde/usdt.h"
		echo "file 644 $PYTHONDIR/sonde_usdt.py lib/usdt/python/sonde_usdt.py"
	fi
	for tool; do
		# bash-completion loads completions/NAME for command NAME
		echo "link - $TOOLDIR/$tool $BINDIR/sonde"
		echo "completion - $BASHCOMPDIR/$tool $BASHCOMPDIR/sonde"
	done
}

# Paths with blanks would split in the list; refuse them up front.
for dir in "$DESTDIR" "$PREFIX" "$BINDIR" "$TOOLDIR" "$MANDIR" "$BASHCOMPDIR" \
	"${LIBDIR:-}" "${INCLUDEDIR:-}" "${PYTHONDIR:-}"; do
	case $dir in
	*[[:space:]]*) echo "install.sh: a directory with blanks is not supported: '$dir'" >&2; exit 1 ;;
	esac
done

wanted() {
	case $1 in
	link) [ "$TOOL_LINKS" != no ] ;;
	completion) [ "$TOOL_LINKS" != no ] && [ "$TOOL_COMPLETIONS" != no ] ;;
	*) true ;;
	esac
}

do_install() {
	entries "$@" | while read -r kind mode dest source; do
		wanted "$kind" || continue
		[ -d "$DESTDIR${dest%/*}" ] || mkdir -p "$DESTDIR${dest%/*}"
		case $kind in
		file) install -m "$mode" "$source" "$DESTDIR$dest" ;;
		# relative, so the tree can be moved (DESTDIR, a package)
		*) ln -sfr "$DESTDIR$source" "$DESTDIR$dest" ;;
		esac
	done
	links=$(wanted link && echo "$#" || echo 0)
	echo "installed $BINDIR/sonde, $(($# + 1)) man pages in $MANDIR/man8, bash completion" \
		"in $BASHCOMPDIR and $links tool links in $TOOLDIR${DESTDIR:+ (under $DESTDIR)}"
}

do_uninstall() {
	entries "$@" | while read -r kind mode dest source; do
		case $kind in
		file) echo "$DESTDIR$dest" ;;
		*)
			[ -L "$DESTDIR$dest" ] || continue
			case $(readlink "$DESTDIR$dest") in
			"${source##*/}" | */"${source##*/}") echo "$DESTDIR$dest" ;;
			esac
			;;
		esac
	done | xargs -r rm -f
	entries "$@" | while read -r kind mode dest source; do
		echo "${dest%/*}"
	done | sort -u | while read -r dir; do
		while [ "${dir#"$PREFIX"/}" != "$dir" ] && { [ -n "$DESTDIR" ] || [ "${dir%/sonde*}" != "$dir" ]; } &&
			rmdir "$DESTDIR$dir" 2>/dev/null; do
			dir=${dir%/*}
		done
	done
}

case $action in
install) do_install "$@" ;;
uninstall) do_uninstall "$@" ;;
*) echo "usage: install.sh install|uninstall TOOL..." >&2; exit 2 ;;
esac
