package approval

import (
	"path"
	"strings"
)

// What a path is to the rules: a block device, /, a system or home directory,
// a file whose overwrite changes the system or Hermes policy.

func isBlockDevice(p string) bool { return blockDevice.MatchString(path.Clean(p)) }

// isRootPath: "/", "//", "/.", "/*", "/./..", ... any spelling the shell resolves to
// the root directory or everything in it.
func isRootPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	p = strings.TrimRight(p, "*")
	return path.Clean(p) == "/"
}

var systemDirs = map[string]bool{
	"/home": true, "/root": true, "/etc": true, "/usr": true, "/var": true, "/bin": true, "/sbin": true,
	"/boot": true, "/lib": true, "/lib64": true, "/lib32": true, "/opt": true, "/srv": true, "/dev": true,
	"/proc": true, "/sys": true,
}

func isSystemDir(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	p = strings.TrimSuffix(strings.TrimRight(p, "*"), "/")
	return systemDirs[path.Clean(p)]
}

func (pl *Places) isHomeDir(p string) bool {
	p = strings.TrimSuffix(strings.TrimRight(p, "*"), "/")
	if p == "~" || p == "$HOME" {
		return true
	}
	if home := pl.UserHome; home != "" && home != "/" && strings.HasPrefix(p, "/") && path.Clean(p) == path.Clean(home) {
		return true
	}
	return false
}

func isEtc(p string) bool {
	return strings.HasPrefix(path.Clean(p), "/etc/") || strings.HasPrefix(path.Clean(p), "/private/etc/") || path.Clean(p) == "/etc"
}

var sensitiveHome = []string{".ssh/", ".bashrc", ".zshrc", ".profile", ".bash_profile", ".zprofile", ".netrc", ".pgpass", ".npmrc", ".pypirc", ".hermes/config.yaml", ".hermes/.env", ".gnupg/", ".aws/credentials"}

// isSensitiveWrite: a target whose overwrite changes the system or the user's
// login, keys or Hermes policy (/etc, ~/.ssh, shell rc files, ~/.hermes/config.yaml).
func (pl *Places) isSensitiveWrite(p string) bool {
	if isEtc(p) || isBlockDevice(p) {
		return true
	}
	rel := ""
	switch {
	case strings.HasPrefix(p, "~/"):
		rel = p[2:]
	case strings.HasPrefix(p, "$HOME/"):
		rel = p[6:]
	default:
		if home := pl.UserHome; home != "" && home != "/" && strings.HasPrefix(p, home+"/") {
			rel = p[len(home)+1:]
		}
		for _, f := range pl.Policy {
			if path.Clean(p) == path.Clean(f) {
				return true
			}
		}
	}
	if rel == "" {
		return false
	}
	for _, s := range sensitiveHome {
		if rel == strings.TrimSuffix(s, "/") || strings.HasPrefix(rel, s) {
			return true
		}
	}
	return false
}
