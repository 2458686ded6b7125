package urlscheme

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DesktopFile is the desktop entry's file name (also what xdg-mime is given).
const DesktopFile = "hermes-url-handler.desktop"

// MimeTypes are the scheme handlers the entry claims.
var MimeTypes = []string{"x-scheme-handler/hermes", "x-scheme-handler/hermes-dev"}

// ApplicationsDir is where per-user desktop entries live: $XDG_DATA_HOME/applications,
// else ~/.local/share/applications.
func ApplicationsDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "applications"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", fmt.Errorf("HOME is not set: cannot find ~/.local/share/applications")
	}
	return filepath.Join(home, ".local", "share", "applications"), nil
}

// DesktopEntry is the entry's text. It runs `<exe> open-url %u` in a terminal, so
// the confirmation the link needs has somewhere to be answered.
func DesktopEntry(exe string) string {
	var b strings.Builder
	b.WriteString("[Desktop Entry]\n")
	b.WriteString("Type=Application\n")
	b.WriteString("Name=Hermes plugin links\n")
	b.WriteString("Comment=Review and confirm hermes:// plugin install links\n")
	fmt.Fprintf(&b, "Exec=%s open-url --wait %%u\n", execArg(exe))
	b.WriteString("Terminal=true\n")
	b.WriteString("NoDisplay=true\n")
	b.WriteString("Categories=Utility;\n")
	b.WriteString("MimeType=" + strings.Join(MimeTypes, ";") + ";\n")
	return b.String()
}

// execArg quotes a program path for an Exec key (Desktop Entry Specification,
// "The Exec key"): reserved characters need double quotes, inside which ", `, $ and
// \ are backslash-escaped; the key's string value then escapes each backslash again.
// '%' is doubled so it is not read as a field code.
func execArg(p string) string {
	p = strings.ReplaceAll(p, "%", "%%")
	if !strings.ContainsAny(p, " \t\n\"'\\><~|&;$*?#()`") {
		return p
	}
	r := strings.NewReplacer(`"`, `\"`, "`", "\\`", `$`, `\$`, `\`, `\\`)
	quoted := `"` + r.Replace(p) + `"`
	return strings.ReplaceAll(quoted, `\`, `\\`)
}

// WriteDesktopEntry writes the entry into dir atomically (mode 0644) and returns its path.
func WriteDesktopEntry(dir, exe string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, DesktopFile)
	tmp, err := os.CreateTemp(dir, ".hermes-url-handler-*")
	if err != nil {
		return "", fmt.Errorf("write desktop entry: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(DesktopEntry(exe)); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write desktop entry: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write desktop entry: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write desktop entry: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("write desktop entry: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("write desktop entry: %w", err)
	}
	return path, nil
}
