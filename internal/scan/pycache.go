package scan

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// The analysis script's bytecode, cached. Compiling pyscan.py costs ~11 ms, more than
// the rest of a small plugin's analysis, so the interpreter runs the script's cached
// bytecode directly (python FILE.pyc: no import system, no source check):
//
//	<user cache>/hermes/pyscan/<script hash>/hermes_pyscan.py      the script
//	<user cache>/hermes/pyscan/<script hash>/<interpreter>.pyc     its bytecode
//
// The script hash keys the directory, so a changed script never runs old bytecode; the
// interpreter's path, size and modification time key the bytecode, so an upgraded
// interpreter compiles its own. The bytecode is written by the first run (pyBoot),
// atomically, with a CRC-32 and the length of its body in the two header words CPython
// skips when it runs a .pyc; hermes checks both before running it and otherwise runs
// the bootstrap again, which rewrites it. A cache that cannot be written leaves the
// script on the command line, compiled each time.

const pyModule = "hermes_pyscan"

var (
	scriptMu   sync.Mutex
	scriptDirs = map[string]string{} // content hash -> directory holding it ("" = unusable)
)

// pyBoot compiles the cached script, writes its bytecode for the next scan (any
// failure there only means no cache) and runs it. argv: script, bytecode path, and
// the script's own argument (the memory cap). The write happens before the script
// installs its sandbox; -B keeps the interpreter from writing anything else.
const pyBoot = `import sys, marshal
src, pyc = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    code = compile(f.read(), src, "exec", dont_inherit=True)
if sys.implementation.name == "cpython":
    import os, binascii, _frozen_importlib_external as fie
    tmp = "%s.%d.tmp" % (pyc, os.getpid())
    try:
        body = marshal.dumps(code)
        with open(tmp, "wb") as f:
            f.write(fie.MAGIC_NUMBER + bytes(4) + binascii.crc32(body).to_bytes(4, "little") +
                    len(body).to_bytes(4, "little") + body)
        os.replace(tmp, pyc)
    except Exception:
        try:
            os.remove(tmp)
        except Exception:
            pass
exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
`

// scriptDir writes the script once per content into a private directory of the user's
// cache (0700: nobody else can plant bytecode there) and returns it; "" when there is
// no usable cache, and the script then runs from the command line.
func scriptDir() string {
	sum := sha256.Sum256([]byte(pyScript))
	key := hex.EncodeToString(sum[:8])
	scriptMu.Lock()
	defer scriptMu.Unlock()
	if d, ok := scriptDirs[key]; ok {
		return d
	}
	scriptDirs[key] = ""
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	dir := filepath.Join(base, "hermes", "pyscan", key)
	file := filepath.Join(dir, pyModule+".py")
	if b, err := os.ReadFile(file); err != nil || string(b) != pyScript {
		if os.MkdirAll(dir, 0o700) != nil {
			return ""
		}
		tmp, err := os.CreateTemp(dir, ".tmp-")
		if err != nil {
			return ""
		}
		_, werr := tmp.WriteString(pyScript)
		if cerr := tmp.Close(); werr != nil || cerr != nil || os.Rename(tmp.Name(), file) != nil {
			_ = os.Remove(tmp.Name())
			return ""
		}
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm()&0o022 != 0 {
		return "" // writable by others: do not run bytecode from it
	}
	scriptDirs[key] = dir
	return dir
}

// pyArgs is the interpreter's command line for one analysis (python is its resolved
// path): the cached bytecode when it is whole, else the bootstrap that compiles the
// cached script and caches its bytecode, else (no cache) the script itself. pyc names
// the bytecode file run, "" for the other two.
func pyArgs(python string) (args []string, pyc string) {
	mem := strconv.Itoa(pyMemLimit)
	dir := scriptDir()
	if dir == "" {
		return []string{"-I", "-S", "-B", "-c", pyScript, mem}, ""
	}
	file := filepath.Join(dir, pyInterpreterKey(python)+".pyc")
	if pycWhole(file) {
		return []string{"-I", "-S", "-B", file, mem}, file
	}
	return []string{"-I", "-S", "-B", "-c", pyBoot, filepath.Join(dir, pyModule+".py"), file, mem}, ""
}

// pyInterpreterKey names the bytecode of one interpreter binary: bytecode is only
// valid for the interpreter version that wrote it.
func pyInterpreterKey(python string) string {
	id := python
	if st, err := os.Stat(python); err == nil {
		id += "\x00" + strconv.FormatInt(st.Size(), 10) + "\x00" + strconv.FormatInt(st.ModTime().UnixNano(), 10)
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// pycWhole checks a bytecode file as pyBoot wrote it: a CPython magic number (they
// all end in \r\n), then the body's CRC-32 and length in header words 3 and 4.
func pycWhole(file string) bool {
	b, err := os.ReadFile(file)
	if err != nil || len(b) < 16 || b[2] != '\r' || b[3] != '\n' {
		return false
	}
	body := b[16:]
	return int64(binary.LittleEndian.Uint32(b[12:16])) == int64(len(body)) &&
		binary.LittleEndian.Uint32(b[8:12]) == crc32.ChecksumIEEE(body)
}
