package startmem

import (
	"syscall"
	"unsafe"
)

const (
	hugePageSize = 2 << 20
	// heapChunk is the Go runtime's unit of heap mapping (pallocChunkBytes):
	// the heap grows by mapping whole 4 MiB chunks.
	heapChunk = 4 << 20
	// madviseHugePage is MADV_HUGEPAGE (not in package syscall's constants).
	madviseHugePage = 14
)

var probe *[16]byte

// reserveAhead allocates (and drops) an object just over one heap chunk. The
// page allocator places it at the top of the heap, so the runtime maps the next
// chunks now, and the small objects that follow are carved from memory after
// it: memory that is untouched and can get huge pages. The object itself is
// never touched (fresh heap memory is known to be zero), so it costs address
// space only, until the first collection frees it.
//
//go:noinline
func reserveAhead() uintptr {
	big := make([]byte, heapChunk+8192)
	return uintptr(unsafe.Pointer(unsafe.SliceData(big))) + uintptr(len(big))
}

// adviseHugeHeap marks the heap memory that start-up allocations will use next
// as MADV_HUGEPAGE (Linux's default THP mode, "madvise", needs the advice).
// It relies on how the runtime lays out its heap only for speed: if the layout
// differs, the advice lands on memory used later or fails, and nothing else
// changes. Errors are ignored for the same reason (THP "never", old kernels).
func adviseHugeHeap() {
	probe = new([16]byte)
	heapTop := uintptr(unsafe.Pointer(probe))
	mappedEnd := heapTop&^(heapChunk-1) + 3*heapChunk
	from := reserveAhead() &^ (hugePageSize - 1)
	if from >= mappedEnd {
		return
	}
	// The raw call takes the range as plain numbers: it is address space the
	// runtime owns, not a Go object a pointer could name.
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, from, mappedEnd-from, madviseHugePage)
}
