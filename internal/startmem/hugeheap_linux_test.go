package startmem

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// The package's init has run in this test binary: heap pages handed out now must
// come from a mapping the kernel may back with huge pages. (A large object takes
// fresh pages; small ones may still fill spans begun before the init ran.)
func TestFreshHeapIsHugePageEligible(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" || strings.Contains(os.Getenv("GODEBUG"), "disablethp=1") {
		t.Skip("heap shaping is off when GOGC, GOMEMLIMIT or GODEBUG=disablethp=1 is set")
	}
	thp, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(thp), "[never]") {
		t.Skip("transparent huge pages are not available here")
	}
	obj := new([64 << 10]byte)
	addr := uint64(uintptr(unsafe.Pointer(obj)))
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inside := false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingRange(line); ok {
			inside = lo <= addr && addr < hi
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") {
			if !strings.Contains(line, " hg") {
				t.Fatalf("object at %#x is in a mapping without MADV_HUGEPAGE: %s", addr, line)
			}
			return
		}
	}
	t.Fatalf("no mapping of /proc/self/smaps holds %#x", addr)
}

func mappingRange(line string) (lo, hi uint64, ok bool) {
	field, _, _ := strings.Cut(line, " ")
	a, b, found := strings.Cut(field, "-")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseUint(a, 16, 64)
	hi, err2 := strconv.ParseUint(b, 16, 64)
	return lo, hi, err1 == nil && err2 == nil
}
