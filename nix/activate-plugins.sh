#!/bin/sh
# activate-plugins.sh: link the NixOS module's extraPlugins into HERMES_HOME.
#
#   activate-plugins.sh PLUGINS_DIR [NAME=STORE_PATH ...]
#
# Each NAME=STORE_PATH becomes the link PLUGINS_DIR/nix-managed-NAME -> STORE_PATH
# (made, or remade when the path changed). Every other nix-managed-* link in
# PLUGINS_DIR is removed, so a plugin dropped from the configuration disappears
# on the next activation. Nothing else in PLUGINS_DIR is touched: plugins the
# user installed by hand stay.
#
# Everything is checked before anything changes: an entry without plugin.yaml
# (or plugin.yml), a bad or repeated NAME, or a non-link in the way of a link
# stops the script with a message and exit status 1, leaving the directory as
# it was (upstream deletes its links first and can stop halfway).
#
# HERMES_PLUGIN_OWNER=user:group, when set, is given to each link (chown -h).
set -eu

prefix=nix-managed-

die() {
	printf 'activate-plugins: %s\n' "$*" >&2
	exit 1
}

[ "$#" -ge 1 ] || die "usage: activate-plugins.sh PLUGINS_DIR [NAME=STORE_PATH ...]"
dir=$1
shift
[ -n "$dir" ] || die "PLUGINS_DIR is empty: pass \$HERMES_HOME/plugins"
if [ -e "$dir" ] && [ ! -d "$dir" ]; then
	die "$dir is not a directory: move it aside so the plugins directory can be made"
fi

# Pass 1: check every entry. Names are collected newline-separated (a valid
# name has no newline) for the duplicate check and the stale pass.
wanted=
for entry in "$@"; do
	case $entry in
	*=*) ;;
	*) die "entry '$entry' is not NAME=STORE_PATH" ;;
	esac
	name=${entry%%=*}
	path=${entry#*=}
	case $name in
	'' | .* | *[!A-Za-z0-9._+-]*)
		die "extraPlugins entry '$path' has the name '$name': a name is letters, digits and . _ + - (not starting with .); set the package's pname"
		;;
	esac
	[ -n "$path" ] || die "extraPlugins entry '$name' has an empty store path"
	if [ ! -f "$path/plugin.yaml" ] && [ ! -f "$path/plugin.yml" ]; then
		die "extraPlugins entry '$path' has no plugin.yaml: a plugin package must have its manifest at its root"
	fi
	case "
$wanted
" in
	*"
$name
"*) die "extraPlugins: duplicate plugin name '$name': give each package its own pname" ;;
	esac
	wanted="$wanted
$name"
	link="$dir/$prefix$name"
	if [ -e "$link" ] && [ ! -L "$link" ]; then
		die "$link exists and is not a link: it is not nix-managed, move it aside"
	fi
done

mkdir -p "$dir"

# Pass 2: remove the stale links. Only links: a directory that happens to be
# named nix-managed-* was put there by someone else.
for link in "$dir/$prefix"*; do
	[ -L "$link" ] || continue
	name=${link#"$dir/$prefix"}
	case "
$wanted
" in
	*"
$name
"*) continue ;;
	esac
	rm -f "$link"
	printf 'removed %s (no longer in extraPlugins)\n' "$link"
done

# Pass 3: make or remake the wanted links.
for entry in "$@"; do
	name=${entry%%=*}
	path=${entry#*=}
	link="$dir/$prefix$name"
	if [ -L "$link" ]; then
		if [ "$(readlink "$link")" = "$path" ]; then
			continue
		fi
		verb=relinked
	else
		verb=linked
	fi
	# -n: replace the old link itself rather than create one inside its target.
	ln -sfn "$path" "$link"
	if [ -n "${HERMES_PLUGIN_OWNER:-}" ]; then
		chown -h "$HERMES_PLUGIN_OWNER" "$link"
	fi
	printf '%s %s -> %s\n' "$verb" "$link" "$path"
done
